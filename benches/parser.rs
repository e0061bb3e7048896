//! Throughput of the nvidia-smi CSV stream parser on the real lines captured under load, and
//! of `gpufleet diagnose` on a 50 MB log made of real captures (goal: 50 MB in 1 s or less).

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use gpufleet::diagnose::{ReadLimits, diagnose_reader};
use gpufleet::telemetry::smi_csv::{FieldLayout, QUERY_FIELDS, classify_failure, parse_gpu_line};

const STREAM: &str = include_str!("../tests/fixtures/nvidia-smi/h200-driver-580/stream_load.txt");

fn stream(c: &mut Criterion) {
    let layout = FieldLayout::new(QUERY_FIELDS);
    let lines: Vec<&str> = STREAM.lines().collect();
    let mut group = c.benchmark_group("smi_csv");
    // Elements are lines, so criterion reports lines per second.
    group.throughput(Throughput::Elements(lines.len() as u64));
    group.measurement_time(Duration::from_secs(3));
    group.bench_function("parse_gpu_line/stream_load", |b| {
        b.iter(|| {
            for line in &lines {
                let parsed = parse_gpu_line(&layout, black_box(line));
                black_box(&parsed);
            }
        })
    });
    // The stream source may screen every line for failure texts before parsing it.
    group.bench_function("classify_then_parse/stream_load", |b| {
        b.iter(|| {
            for line in &lines {
                let line = black_box(*line);
                if classify_failure(line).is_none() {
                    black_box(&parse_gpu_line(&layout, line));
                }
            }
        })
    });
    group.finish();
}

/// Real captures, repeated: kernel logs (healthy and with Xids), the nvidia-smi table, `-q`
/// text, the CSV stream under load, PyTorch output and a traceback.
const LOG_PARTS: &[&str] = &[
    include_str!("../tests/fixtures/diagnose/healthy/dmesg_nvidia_h200.txt"),
    include_str!("../tests/fixtures/diagnose/healthy/torch.txt"),
    include_str!("../tests/fixtures/diagnose/healthy/smi.txt"),
    include_str!("../tests/fixtures/diagnose/healthy/smi_q.txt"),
    include_str!("../tests/fixtures/diagnose/healthy/stream_load.txt"),
    include_str!("../tests/fixtures/diagnose/kernel/xid13_109_dmesg_ctime.txt"),
    include_str!("../tests/fixtures/diagnose/traceback/torch_cuda_oom.txt"),
];

const LOG_BYTES: usize = 50_000_000;

fn diagnose_log(c: &mut Criterion) {
    let mut log = String::with_capacity(LOG_BYTES + 64 * 1024);
    while log.len() < LOG_BYTES {
        for part in LOG_PARTS {
            log.push_str(part);
        }
    }
    let limits = ReadLimits::default();
    let mut group = c.benchmark_group("diagnose");
    group.throughput(Throughput::Bytes(log.len() as u64));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("reader/50MB_log", |b| {
        b.iter(|| black_box(diagnose_reader(black_box(log.as_bytes()), &limits)))
    });
    group.finish();
}

criterion_group!(benches, stream, diagnose_log);
criterion_main!(benches);
