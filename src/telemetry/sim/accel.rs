//! The demo's non-NVIDIA cards: a reading keeps only what the vendor's tool prints, as the
//! link's parsers give it for a real host (`telemetry::accel`), so the views show `-` where
//! such a card reports nothing.

use crate::telemetry::GpuSample;
use crate::telemetry::accel::{Health, Vendor};

/// `sample` as `vendor`'s tool would report it: AMD's as `amd-smi monitor` prints it. For Huawei (`npu-smi info`): the NPU's name,
/// bus id, health, power, temperature, AI Core utilization and HBM used/total; no UUID, limit,
/// clock, P-state, fan, ECC or clock-event reason. Moore Threads (`mthreads-gmi`) has no power
/// or health either; Cambricon (`cnmon`) adds the power cap and the fan (0 % on the passively
/// cooled MLU370, as printed) and has no health word.
/// For Intel (`xpu-smi dump`, as the published Flex 170 dump prints it): power and core clock
/// only; the dump has no name, bus id, memory or driver column, and its utilization and
/// temperature cells are blank.
pub(super) fn vendor_view(vendor: Vendor, sample: GpuSample) -> GpuSample {
    if vendor == Vendor::Nvidia {
        return sample;
    }
    if vendor == Vendor::Amd {
        return amd_smi_monitor_view(sample);
    }
    if vendor == Vendor::Intel {
        return GpuSample {
            index: sample.index,
            vendor,
            power_draw_w: sample.power_draw_w,
            clock_sm_mhz: sample.clock_sm_mhz,
            ..GpuSample::default()
        };
    }
    let limit = sample.power_limit_w;
    let huawei = huawei_view(vendor, sample);
    match vendor {
        Vendor::Mthreads => GpuSample {
            power_draw_w: None,
            health: None,
            ..huawei
        },
        Vendor::Cambricon => GpuSample {
            power_limit_w: limit,
            fan_speed_pct: Some(0.0),
            health: None,
            ..huawei
        },
        _ => huawei,
    }
}

fn huawei_view(vendor: Vendor, sample: GpuSample) -> GpuSample {
    GpuSample {
        index: sample.index,
        vendor,
        name: sample.name,
        bus_id: sample.bus_id,
        memory_total_mib: sample.memory_total_mib,
        memory_used_mib: sample.memory_used_mib,
        utilization_gpu_pct: sample.utilization_gpu_pct,
        temperature_c: sample.temperature_c,
        power_draw_w: sample.power_draw_w,
        health: Some(Health::Ok),
        driver_version: sample.driver_version,
        ..GpuSample::default()
    }
}

/// AMD (`amd-smi monitor`): power, die and memory temperature, GFX clock, GFX and memory
/// activity, and VRAM used/total; no name, bus id, UUID, limit, memory clock, fan, health or
/// driver version.
fn amd_smi_monitor_view(sample: GpuSample) -> GpuSample {
    GpuSample {
        index: sample.index,
        vendor: Vendor::Amd,
        memory_total_mib: sample.memory_total_mib,
        memory_used_mib: sample.memory_used_mib,
        utilization_gpu_pct: sample.utilization_gpu_pct,
        utilization_memory_pct: sample.utilization_memory_pct,
        temperature_c: sample.temperature_c,
        temperature_memory_c: sample.temperature_memory_c,
        power_draw_w: sample.power_draw_w,
        clock_sm_mhz: sample.clock_sm_mhz,
        ..GpuSample::default()
    }
}
