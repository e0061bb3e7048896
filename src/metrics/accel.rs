//! The vendor-neutral `gpufleet_gpu_*` series: every accelerator of every streaming host,
//! whoever made it, with a `vendor` label (`nvidia`, `huawei`, `amd`, `intel`, `mthreads`,
//! `cambricon`). NVIDIA GPUs keep dcgm-exporter's names as well (`fleet.rs`); a Huawei NPU or
//! an AMD GPU has only these, since dcgm's names mean NVIDIA's counters. Base units (ratio,
//! bytes, celsius, watts, hertz), and a value a device's tool does not report is left out,
//! never written as 0.

use crate::fleet::host::{GpuState, HostState};

use super::text::{Kind, Page};

const MIB_BYTES: f64 = 1024.0 * 1024.0;

struct Family {
    name: &'static str,
    help: &'static str,
    value: fn(&GpuState) -> Option<f64>,
}

const FAMILIES: &[Family] = &[
    Family {
        name: "gpufleet_gpu_utilization_ratio",
        help: "Compute utilization of the accelerator (0 to 1; AI Core on Ascend, GFX on AMD).",
        value: |g| g.latest.utilization_gpu_pct.map(|p| p / 100.0),
    },
    Family {
        name: "gpufleet_gpu_memory_used_bytes",
        help: "Accelerator memory in use (HBM on Ascend, VRAM on AMD).",
        value: |g| g.latest.memory_used_mib.map(|m| m as f64 * MIB_BYTES),
    },
    Family {
        name: "gpufleet_gpu_memory_total_bytes",
        help: "Accelerator memory in all.",
        value: |g| g.latest.memory_total_mib.map(|m| m as f64 * MIB_BYTES),
    },
    Family {
        name: "gpufleet_gpu_temperature_celsius",
        help: "Accelerator die temperature.",
        value: |g| g.latest.temperature_c,
    },
    Family {
        name: "gpufleet_gpu_power_watts",
        help: "Accelerator power draw.",
        value: |g| g.latest.power_draw_w,
    },
    Family {
        name: "gpufleet_gpu_core_clock_hertz",
        help: "Accelerator core clock (SM on NVIDIA).",
        value: |g| g.latest.clock_sm_mhz.map(|m| f64::from(m) * 1e6),
    },
];

/// The vendor-neutral families for the GPUs of `hosts` (the streaming ones).
pub(super) fn series(page: &mut Page, hosts: &[&HostState]) {
    for family in FAMILIES {
        let mut started = false;
        for host in hosts {
            for gpu in &host.gpus {
                let Some(value) = (family.value)(gpu) else {
                    continue;
                };
                if !started {
                    page.family(family.name, family.help, Kind::Gauge);
                    started = true;
                }
                sample(page, family.name, host, gpu, None, value);
            }
        }
    }
    let mut started = false;
    for host in hosts {
        for gpu in &host.gpus {
            let Some(health) = &gpu.latest.health else {
                continue;
            };
            if !started {
                page.family(
                    "gpufleet_gpu_health",
                    "1 for the health state the vendor tool prints (npu-smi: ok, warning, alarm, critical).",
                    Kind::Gauge,
                );
                started = true;
            }
            let state = health.word().to_lowercase();
            sample(page, "gpufleet_gpu_health", host, gpu, Some(&state), 1.0);
        }
    }
}

fn sample(
    page: &mut Page,
    name: &str,
    host: &HostState,
    gpu: &GpuState,
    state: Option<&str>,
    value: f64,
) {
    let latest = &gpu.latest;
    let index = latest.index.to_string();
    let mut labels: Vec<(&str, &str)> = vec![
        ("gpu", &index),
        ("vendor", latest.vendor.word()),
        ("model", &latest.name),
        ("pci_bus_id", &latest.bus_id),
    ];
    if let Some(state) = state {
        labels.push(("state", state));
    }
    labels.push(("instance", &host.name));
    page.sample(name, &labels, value);
}
