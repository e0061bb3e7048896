//! Throughput of the training-log reader (`gpufleet::job::JobLog`) on the real logs of
//! `tests/fixtures/training-logs/`, repeated to 50 MB (goal: 50 MB/s or more), and of
//! `gpufleet diagnose` on the same bytes (the line catalogue and the job reader together).

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use gpufleet::diagnose::{ReadLimits, diagnose_reader};
use gpufleet::job::{JobLog, JobOptions};

const LOGS: &[&[u8]] = &[
    include_bytes!("../tests/fixtures/training-logs/hf_plateau.log"),
    include_bytes!("../tests/fixtures/training-logs/hf_full.log"),
    include_bytes!("../tests/fixtures/training-logs/hf_lora.log"),
    include_bytes!("../tests/fixtures/training-logs/lightning.log"),
    include_bytes!("../tests/fixtures/training-logs/plain.log"),
    include_bytes!("../tests/fixtures/training-logs/slowdata.log"),
];

const LOG_BYTES: usize = 50_000_000;

fn training_logs(c: &mut Criterion) {
    let mut log: Vec<u8> = Vec::with_capacity(LOG_BYTES + 128 * 1024);
    while log.len() < LOG_BYTES {
        for part in LOGS {
            log.extend_from_slice(part);
        }
    }
    let mut group = c.benchmark_group("job_log");
    group.throughput(Throughput::Bytes(log.len() as u64));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(5));
    // As a follower reads it: 64 KiB at a time.
    group.bench_function("feed/50MB_training_logs", |b| {
        b.iter(|| {
            let mut job = JobLog::new(JobOptions::default());
            for chunk in log.chunks(64 * 1024) {
                job.feed(black_box(chunk));
            }
            job.finish();
            black_box(job.report())
        })
    });
    let limits = ReadLimits::default();
    group.bench_function("diagnose/50MB_training_logs", |b| {
        b.iter(|| black_box(diagnose_reader(black_box(log.as_slice()), &limits)))
    });
    group.finish();
}

/// What the console does with each read of a followed log (`fleet_ssh --job-logs` reads every
/// host's `hf_plateau.log` 5 s at a time, ~4 KB): the engine's `HostJobs::log_at`, which feeds
/// the reader, rebuilds the job's report and works out its findings.
fn followed_log_reads(c: &mut Criterion) {
    use gpufleet::fleet::job::{HostJobs, JobProcess};
    let log = LOGS[0];
    let chunks: Vec<&str> = log
        .chunks(4 * 1024)
        .map(|c| std::str::from_utf8(c).unwrap_or(""))
        .collect();
    let mut group = c.benchmark_group("job_log_followed");
    group.throughput(Throughput::Bytes(4 * 1024));
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("log_at/4KB_read_of_hf_plateau", |b| {
        let mut jobs = HostJobs::default();
        let process = JobProcess {
            pid: 7,
            elapsed_s: Some(60),
            command: "python3 train.py".into(),
            ..JobProcess::default()
        };
        jobs.listed(0, vec![process]);
        let mut i = 0usize;
        let mut at_ms = 0u64;
        b.iter(|| {
            // The log loops, as the bench's writer replays it.
            let restart = i == 0;
            jobs.log_at(7, restart, black_box(chunks[i % chunks.len()]), at_ms);
            i = (i + 1) % chunks.len();
            at_ms += 5_000;
        })
    });
    group.finish();
}

criterion_group!(benches, training_logs, followed_log_reads);
criterion_main!(benches);
