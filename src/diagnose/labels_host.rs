//! The wording of the host-side findings that are not Xids: the driver bringing up the card,
//! PCIe errors, the fabric manager, NVML in containers and the container runtime. Kept apart
//! from [`crate::diagnose::labels`] only for size; the same rules hold (one place per label).

use rust_i18n::t;

use crate::diagnose::finding::{Finding, Severity, label, runbook};

/// The host lost a GPU again: a fault that recurs is the host's, so release it.
pub fn gpu_lost_again() -> Finding {
    Finding::new(
        label::GPU_LOST_AGAIN,
        Severity::Warning,
        t!("finding_text.gpu_lost_again.summary"),
        t!("finding_text.gpu_lost_again.action"),
    )
}

pub fn gpu_init_failed() -> Finding {
    Finding::new(
        label::GPU_INIT_FAILED,
        Severity::Critical,
        t!("finding_text.gpu_init_failed.summary"),
        t!("finding_text.gpu_init.action"),
    )
    .with_runbook(runbook::GPU_LOST)
}

pub fn gpu_init_failed_gsp() -> Finding {
    Finding::new(
        label::GPU_INIT_FAILED_GSP,
        Severity::Critical,
        t!("finding_text.gpu_init_failed_gsp.summary"),
        t!("finding_text.gpu_init.action"),
    )
    .with_runbook(runbook::GPU_LOST)
}

pub fn gpu_init_failed_gfw_boot() -> Finding {
    Finding::new(
        label::GPU_INIT_FAILED_GFW_BOOT,
        Severity::Critical,
        t!("finding_text.gpu_init_failed_gfw_boot.summary"),
        t!("finding_text.gpu_init.action"),
    )
    .with_runbook(runbook::GPU_LOST)
}

pub fn driver_probe_failed() -> Finding {
    Finding::new(
        label::DRIVER_PROBE_FAILED,
        Severity::Critical,
        t!("finding_text.driver_probe_failed.summary"),
        t!("finding_text.driver_probe_failed.action"),
    )
    .with_runbook(runbook::GPU_LOST)
}

pub fn nouveau_conflict() -> Finding {
    Finding::new(
        label::NOUVEAU_CONFLICT,
        Severity::Critical,
        t!("finding_text.nouveau_conflict.summary"),
        t!("finding_text.nouveau_conflict.action"),
    )
    .with_runbook(runbook::DRIVER_LOST)
}

pub fn pcie_aer(fatal: bool) -> Finding {
    if fatal {
        return Finding::new(
            label::PCIE_AER_FATAL,
            Severity::Critical,
            t!("finding_text.pcie_aer_fatal.summary"),
            t!("finding_text.pcie_aer_fatal.action"),
        )
        .with_runbook(runbook::GPU_LOST);
    }
    Finding::new(
        label::PCIE_AER,
        Severity::Warning,
        t!("finding_text.pcie_aer.summary"),
        t!("finding_text.pcie_aer.action"),
    )
}

pub fn fabric_manager() -> Finding {
    Finding::new(
        label::FABRIC_MANAGER,
        Severity::Critical,
        t!("finding_text.fabric_manager.summary"),
        t!("finding_text.fabric_manager.action"),
    )
}

pub fn fabric_manager_not_ready() -> Finding {
    Finding::new(
        label::FABRIC_MANAGER_NOT_READY,
        Severity::Critical,
        t!("finding_text.fabric_manager_not_ready.summary"),
        t!("finding_text.fabric_manager_not_ready.action"),
    )
}

pub fn nvml_error_unknown() -> Finding {
    Finding::new(
        label::NVML_ERROR_UNKNOWN,
        Severity::Warning,
        t!("finding_text.nvml_error_unknown.summary"),
        t!("finding_text.nvml_error_unknown.action"),
    )
}

pub fn container_no_gpu_runtime() -> Finding {
    Finding::new(
        label::CONTAINER_NO_GPU_RUNTIME,
        Severity::Warning,
        t!("finding_text.container_no_gpu_runtime.summary"),
        t!("finding_text.container_no_gpu_runtime.action"),
    )
}

pub fn nvswitch_sxid_nonfatal() -> Finding {
    Finding::new(
        label::NVSWITCH_SXID,
        Severity::Info,
        t!("finding_text.nvswitch_sxid_nonfatal.summary"),
        t!("finding_text.nvswitch_sxid_nonfatal.action"),
    )
}

pub fn nvswitch_sxid_fatal() -> Finding {
    Finding::new(
        label::NVSWITCH_SXID_FATAL,
        Severity::Critical,
        t!("finding_text.nvswitch_sxid_fatal.summary"),
        t!("finding_text.nvswitch_sxid_fatal.action"),
    )
    .with_runbook(runbook::GPU_LOST)
}

pub fn gsp_timeout() -> Finding {
    Finding::new(
        label::GSP_TIMEOUT,
        Severity::Critical,
        t!("finding_text.gsp_timeout.summary"),
        t!("finding_text.gsp_timeout.action"),
    )
    .with_runbook(runbook::GPU_LOST)
}

/// The shell on the host found no `nvidia-smi` (exit status 127).
pub fn smi_missing() -> Finding {
    Finding::new(
        label::SMI_MISSING,
        Severity::Warning,
        t!("finding_text.smi_missing.summary"),
        t!("finding_text.smi_missing.action"),
    )
}

/// `/`, or the file system a job writes to, is nearly full.
pub fn disk_nearly_full() -> Finding {
    Finding::new(
        label::DISK_NEARLY_FULL,
        Severity::Warning,
        t!("finding_text.disk_nearly_full.summary"),
        t!("finding_text.disk_nearly_full.action"),
    )
}

/// `/dev/shm` is too small for the host's jobs.
pub fn shm_small() -> Finding {
    Finding::new(
        label::SHM_SMALL,
        Severity::Warning,
        t!("finding_text.shm_small.summary"),
        t!("finding_text.shm_small.action"),
    )
}

pub fn gsp_error() -> Finding {
    Finding::new(
        label::GSP_ERROR,
        Severity::Critical,
        t!("finding_text.gsp_error.summary"),
        t!("finding_text.gsp_timeout.action"),
    )
    .with_runbook(runbook::GPU_LOST)
}
