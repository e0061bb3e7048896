//! Throughput of the nvidia-smi CSV stream parser on the real lines captured under load.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
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

criterion_group!(benches, stream);
criterion_main!(benches);
