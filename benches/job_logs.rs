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

criterion_group!(benches, training_logs);
criterion_main!(benches);
