//! The demo's non-NVIDIA cards: a reading keeps only what the vendor's tool prints, as the
//! link's parsers give it for a real host (`telemetry::accel`), so the views show `-` where
//! such a card reports nothing.

use crate::telemetry::GpuSample;
use crate::telemetry::accel::{Health, Vendor};

/// `sample` as `vendor`'s tool would report it: AMD's as `amd-smi monitor` prints it. For Huawei (`npu-smi info`): the NPU's name,
/// bus id, health, power, temperature, AI Core utilization and HBM used/total; no UUID, limit,
/// clock, P-state, fan, ECC or clock-event reason.
pub(super) fn vendor_view(vendor: Vendor, sample: GpuSample) -> GpuSample {
    if vendor == Vendor::Nvidia {
        return sample;
    }
    if vendor == Vendor::Amd {
        return amd_smi_monitor_view(sample);
    }
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
