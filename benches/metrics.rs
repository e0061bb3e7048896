//! `/metrics` for a fleet of 50 hosts x 8 GPUs (400 GPUs, every field known): how long one page
//! takes to render (goal: at most 2 ms) and how large it is.

use criterion::{Criterion, criterion_group, criterion_main};

use gpufleet::fleet::{Fleet, FleetOptions, HostEvent};
use gpufleet::metrics::render;
use gpufleet::telemetry::{ClockEventReasons, GpuSample, HostInfo};

const HOSTS: usize = 50;
const GPUS: u32 = 8;

fn sample(index: u32) -> GpuSample {
    GpuSample {
        index,
        uuid: format!("GPU-{index:08x}-5c2c-0250-11900475bb5a").into(),
        name: "NVIDIA H200".into(),
        bus_id: format!("00000000:{:02X}:00.0", 0x18 + index).into(),
        memory_total_mib: Some(143_771),
        memory_used_mib: Some(81_234),
        utilization_gpu_pct: Some(97.0),
        utilization_memory_pct: Some(41.0),
        temperature_c: Some(61.0),
        temperature_memory_c: Some(55.0),
        power_draw_w: Some(612.5),
        power_limit_w: Some(700.0),
        clock_sm_mhz: Some(1_980),
        clock_mem_mhz: Some(3_201),
        clock_event_reasons: Some(ClockEventReasons(0)),
        driver_version: Some("580.159.04".into()),
        ..GpuSample::default()
    }
}

fn fleet() -> Fleet {
    let names: Vec<String> = (0..HOSTS).map(|i| format!("h200-{i:02}")).collect();
    let now_ms = 1_800_000_000_000;
    let mut fleet = Fleet::new(names, FleetOptions::default(), now_ms);
    for host in 0..HOSTS {
        fleet.apply(host, HostEvent::Connected(HostInfo::default()));
        for gpu in 0..GPUS {
            fleet.apply(
                host,
                HostEvent::Sample {
                    at_ms: now_ms,
                    gpu: sample(gpu),
                },
            );
        }
    }
    fleet.refresh_findings();
    fleet.money_tick();
    fleet
}

fn bench_metrics(c: &mut Criterion) {
    let fleet = fleet();
    let page = render(&fleet);
    let gpu_lines = page
        .lines()
        .filter(|l| l.starts_with("DCGM_FI_DEV_GPU_UTIL{"))
        .count();
    assert_eq!(gpu_lines, HOSTS * GPUS as usize, "every GPU is on the page");
    eprintln!(
        "metrics page: {} bytes, {} lines",
        page.len(),
        page.lines().count()
    );
    c.bench_function("metrics/render_50_hosts_x_8_gpus", |b| {
        b.iter(|| render(std::hint::black_box(&fleet)))
    });
}

criterion_group!(benches, bench_metrics);
criterion_main!(benches);
