//! The wording of the findings AMD's own texts raise: the amdgpu kernel driver's lines (a ring
//! timeout, a GPU reset, an uncorrectable hardware error, the power-management firmware not
//! answering) and amd-smi's failure texts (driver not initialized, no GPU devices), as the
//! published samples in tests/fixtures/accel/ print them.

use rust_i18n::t;

use crate::diagnose::finding::{Finding, Severity};

pub const AMDGPU_RING_TIMEOUT: &str = "amdgpu_ring_timeout";
pub const AMDGPU_GPU_RESET: &str = "amdgpu_gpu_reset";
pub const AMDGPU_RAS_UNCORRECTABLE: &str = "amdgpu_ras_uncorrectable";
pub const AMDGPU_SMU_FAILED: &str = "amdgpu_smu_failed";
/// Finer labels of the `driver_not_loaded` and `no_devices` families, so a live host whose
/// amd-smi fails this way gets the AMD wording.
pub const DRIVER_NOT_LOADED_AMDGPU: &str = "driver_not_loaded_amdgpu";
pub const NO_DEVICES_AMDGPU: &str = "no_devices_amdgpu";

pub fn ring_timeout() -> Finding {
    Finding::new(
        AMDGPU_RING_TIMEOUT,
        Severity::Critical,
        t!("label_amd.ring_timeout.summary"),
        t!("label_amd.ring_timeout.action"),
    )
}

pub fn gpu_reset() -> Finding {
    Finding::new(
        AMDGPU_GPU_RESET,
        Severity::Critical,
        t!("label_amd.gpu_reset.summary"),
        t!("label_amd.gpu_reset.action"),
    )
}

pub fn ras_uncorrectable() -> Finding {
    Finding::new(
        AMDGPU_RAS_UNCORRECTABLE,
        Severity::Critical,
        t!("label_amd.ras_uncorrectable.summary"),
        t!("label_amd.ras_uncorrectable.action"),
    )
}

pub fn smu_failed() -> Finding {
    Finding::new(
        AMDGPU_SMU_FAILED,
        Severity::Critical,
        t!("label_amd.smu_failed.summary"),
        t!("label_amd.smu_failed.action"),
    )
}

pub fn driver_not_loaded() -> Finding {
    Finding::new(
        DRIVER_NOT_LOADED_AMDGPU,
        Severity::Critical,
        t!("label_amd.driver_not_loaded.summary"),
        t!("label_amd.driver_not_loaded.action"),
    )
}

pub fn no_devices() -> Finding {
    Finding::new(
        NO_DEVICES_AMDGPU,
        Severity::Critical,
        t!("label_amd.no_devices.summary"),
        t!("label_amd.no_devices.action"),
    )
}
