//! The wording of every finding that is not an Xid: summary, severity, rented-host action and
//! runbook, kept in one place so pasted text and live samples say the same thing.

use rust_i18n::t;

use crate::diagnose::finding::{Finding, Severity, label, runbook};
use crate::telemetry::LostReason;

pub fn gpu_lost() -> Finding {
    Finding::new(
        label::GPU_LOST,
        Severity::Critical,
        t!("finding_text.gpu_lost.summary"),
        t!("finding_text.gpu_lost.action"),
    )
    .with_runbook(runbook::GPU_LOST)
}

pub fn driver_not_loaded() -> Finding {
    Finding::new(
        label::DRIVER_NOT_LOADED,
        Severity::Critical,
        t!("finding_text.driver_not_loaded.summary"),
        t!("finding_text.driver_not_loaded.action"),
    )
    .with_runbook(runbook::DRIVER_LOST)
}

pub fn driver_lib_mismatch() -> Finding {
    Finding::new(
        label::DRIVER_LIB_MISMATCH,
        Severity::Critical,
        t!("finding_text.driver_lib_mismatch.summary"),
        t!("finding_text.driver_lib_mismatch.action"),
    )
    .with_runbook(runbook::DRIVER_LOST)
}

pub fn no_devices() -> Finding {
    Finding::new(
        label::NO_DEVICES,
        Severity::Critical,
        t!("finding_text.no_devices.summary"),
        t!("finding_text.no_devices.action"),
    )
    .with_runbook(runbook::GPU_LOST)
}

pub fn nvml_error() -> Finding {
    Finding::new(
        label::NVML_ERROR,
        Severity::Warning,
        t!("finding_text.nvml_error.summary"),
        t!("finding_text.nvml_error.action"),
    )
}

/// The finding for a host whose GPUs could no longer be read.
pub fn for_lost_reason(reason: LostReason) -> Finding {
    match reason {
        LostReason::GpuLost => gpu_lost(),
        LostReason::DriverNotLoaded => driver_not_loaded(),
        LostReason::DriverLibraryMismatch => driver_lib_mismatch(),
        LostReason::NoDevices => no_devices(),
        LostReason::SmiMissing => crate::diagnose::labels_host::smi_missing(),
        LostReason::Other => nvml_error(),
    }
}

pub fn ecc_uncorrectable() -> Finding {
    Finding::new(
        label::ECC_UNCORRECTABLE,
        Severity::Critical,
        t!("finding_text.ecc_uncorrectable.summary"),
        t!("finding_text.ecc_uncorrectable.action"),
    )
    .with_runbook(runbook::ECC_REMAP)
}

pub fn remap_failed() -> Finding {
    Finding::new(
        label::ECC_UNCORRECTABLE,
        Severity::Critical,
        t!("finding_text.remap_failed.summary"),
        t!("finding_text.remap_failed.action"),
    )
    .with_runbook(runbook::ECC_REMAP)
}

pub fn row_remap_pending() -> Finding {
    Finding::new(
        label::ROW_REMAP_PENDING,
        Severity::Warning,
        t!("finding_text.row_remap_pending.summary"),
        t!("finding_text.row_remap_pending.action"),
    )
    .with_runbook(runbook::ECC_REMAP)
}

pub fn retired_pages_pending() -> Finding {
    Finding::new(
        label::ROW_REMAP_PENDING,
        Severity::Warning,
        t!("finding_text.retired_pages_pending.summary"),
        t!("finding_text.retired_pages_pending.action"),
    )
    .with_runbook(runbook::ECC_REMAP)
}

pub fn thermal_throttle(hardware: bool) -> Finding {
    let (severity, summary) = if hardware {
        (
            Severity::Critical,
            t!("finding_text.thermal_throttle.summary_hardware"),
        )
    } else {
        (
            Severity::Warning,
            t!("finding_text.thermal_throttle.summary_software"),
        )
    };
    Finding::new(
        label::THERMAL_THROTTLE,
        severity,
        summary,
        t!("finding_text.thermal_throttle.action"),
    )
    .with_runbook(runbook::THROTTLE)
}

pub fn power_brake() -> Finding {
    Finding::new(
        label::POWER_BRAKE,
        Severity::Critical,
        t!("finding_text.power_brake.summary"),
        t!("finding_text.power_brake.action"),
    )
    .with_runbook(runbook::THROTTLE)
}

pub fn power_throttle() -> Finding {
    Finding::new(
        label::POWER_THROTTLE,
        Severity::Warning,
        t!("finding_text.power_throttle.summary"),
        t!("finding_text.power_throttle.action"),
    )
    .with_runbook(runbook::POWER_LIMIT)
}

pub fn oom() -> Finding {
    Finding::new(
        label::OOM,
        Severity::Warning,
        t!("finding_text.oom.summary"),
        t!("finding_text.oom.action"),
    )
}

/// Out of memory for an inference server's KV cache (vLLM): the memory it may take is set by
/// `gpu_memory_utilization`, so the advice differs from a training job's.
pub fn oom_kv_cache() -> Finding {
    Finding::new(
        label::OOM,
        Severity::Warning,
        t!("finding_text.oom_kv_cache.summary"),
        t!("finding_text.oom_kv_cache.action"),
    )
}

pub fn cuda_arch_mismatch() -> Finding {
    Finding::new(
        label::CUDA_ARCH_MISMATCH,
        Severity::Warning,
        t!("finding_text.cuda_arch_mismatch.summary"),
        t!("finding_text.cuda_arch_mismatch.action"),
    )
    .with_runbook(runbook::CUDA_MISMATCH)
}

pub fn driver_too_old() -> Finding {
    Finding::new(
        label::DRIVER_TOO_OLD,
        Severity::Warning,
        t!("finding_text.driver_too_old.summary"),
        t!("finding_text.driver_too_old.action"),
    )
    .with_runbook(runbook::CUDA_MISMATCH)
}

pub fn nccl_error() -> Finding {
    Finding::new(
        label::NCCL_ERROR,
        Severity::Warning,
        t!("finding_text.nccl_error.summary"),
        t!("finding_text.nccl_error.action"),
    )
}

pub fn idle_billing() -> Finding {
    Finding::new(
        label::IDLE_BILLING,
        Severity::Warning,
        t!("finding_text.idle_billing.summary"),
        t!("finding_text.idle_billing.action"),
    )
}

pub fn stale() -> Finding {
    Finding::new(
        label::STALE,
        Severity::Warning,
        t!("finding_text.stale.summary"),
        t!("finding_text.stale.action"),
    )
}
