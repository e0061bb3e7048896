//! The wording of what rented containers report most: a `/dev/shm` too small for the data
//! loader, a full disk, a process that asks for a GPU it does not see or sees none, the NVIDIA
//! container runtime failing, CUDA forward compatibility refused, and cuBLAS unable to start.
//! The same rules hold as in [`crate::diagnose::labels`]: one place per label.

use rust_i18n::t;

use crate::diagnose::finding::{Finding, Severity, label, runbook};

pub fn shm_too_small() -> Finding {
    Finding::new(
        label::SHM_TOO_SMALL,
        Severity::Warning,
        t!("finding_text.shm_too_small.summary"),
        t!("finding_text.shm_too_small.action"),
    )
}

pub fn disk_full() -> Finding {
    Finding::new(
        label::DISK_FULL,
        Severity::Warning,
        t!("finding_text.disk_full.summary"),
        t!("finding_text.disk_full.action"),
    )
}

pub fn invalid_device_ordinal() -> Finding {
    Finding::new(
        label::INVALID_DEVICE_ORDINAL,
        Severity::Warning,
        t!("finding_text.invalid_device_ordinal.summary"),
        t!("finding_text.invalid_device_ordinal.action"),
    )
}

pub fn no_cuda_gpus() -> Finding {
    Finding::new(
        label::NO_CUDA_GPUS,
        Severity::Warning,
        t!("finding_text.no_cuda_gpus.summary"),
        t!("finding_text.no_cuda_gpus.action"),
    )
}

/// `nvidia-container-cli` failed while setting up a container's GPUs (it could not load
/// `libnvidia-ml`, for instance): the same label as a runtime that cannot select the driver.
pub fn container_runtime_failed() -> Finding {
    Finding::new(
        label::CONTAINER_NO_GPU_RUNTIME,
        Severity::Warning,
        t!("finding_text.container_runtime_failed.summary"),
        t!("finding_text.container_runtime_failed.action"),
    )
}

pub fn driver_too_old_compat() -> Finding {
    Finding::new(
        label::DRIVER_TOO_OLD_COMPAT,
        Severity::Warning,
        t!("finding_text.driver_too_old_compat.summary"),
        t!("finding_text.driver_too_old_compat.action"),
    )
    .with_runbook(runbook::CUDA_MISMATCH)
}

pub fn cublas_init_failed() -> Finding {
    Finding::new(
        label::CUBLAS_INIT_FAILED,
        Severity::Warning,
        t!("finding_text.cublas_init_failed.summary"),
        t!("finding_text.cublas_init_failed.action"),
    )
}
