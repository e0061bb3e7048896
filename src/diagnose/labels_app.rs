//! The wording of what programs report: CUDA runtime errors and NCCL failures. Whether the host
//! is to blame depends on what else the text shows, so [`blame`] rewrites these findings once
//! the whole text is read.

use rust_i18n::t;

use crate::diagnose::finding::{Cause, Finding, Findings, Severity, label};

pub fn cuda_illegal_address() -> Finding {
    Finding::new(
        label::CUDA_ILLEGAL_ADDRESS,
        Severity::Warning,
        t!("finding_text.cuda_illegal_address.summary"),
        t!("finding_text.cuda_illegal_address.action"),
    )
}

pub fn cuda_device_assert() -> Finding {
    Finding::new(
        label::CUDA_DEVICE_ASSERT,
        Severity::Warning,
        t!("finding_text.cuda_device_assert.summary"),
        t!("finding_text.cuda_device_assert.action"),
    )
}

pub fn cuda_device_busy() -> Finding {
    Finding::new(
        label::CUDA_DEVICE_BUSY,
        Severity::Warning,
        t!("finding_text.cuda_device_busy.summary"),
        t!("finding_text.cuda_device_busy.action"),
    )
}

pub fn cuda_launch_failure() -> Finding {
    Finding::new(
        label::CUDA_LAUNCH_FAILURE,
        Severity::Warning,
        t!("finding_text.cuda_launch_failure.summary"),
        t!("finding_text.cuda_launch_failure.action"),
    )
}

pub fn nccl_timeout() -> Finding {
    Finding::new(
        label::NCCL_TIMEOUT,
        Severity::Warning,
        t!("finding_text.nccl_timeout.summary"),
        t!("finding_text.nccl_timeout.action"),
    )
}

pub fn nccl_network() -> Finding {
    Finding::new(
        label::NCCL_NETWORK,
        Severity::Warning,
        t!("finding_text.nccl_network.summary"),
        t!("finding_text.nccl_network.action"),
    )
}

pub fn nccl_system() -> Finding {
    Finding::new(
        label::NCCL_SYSTEM,
        Severity::Warning,
        t!("finding_text.nccl_system.summary"),
        t!("finding_text.nccl_system.action"),
    )
}

/// Labels of host faults that explain a program's CUDA or NCCL failure.
fn is_gpu_fault(name: &str) -> bool {
    const FAULTS: &[&str] = &[
        label::GPU_LOST,
        label::ECC_UNCORRECTABLE,
        label::PCIE_AER_FATAL,
        label::NVSWITCH_SXID_FATAL,
        label::GSP_TIMEOUT,
        "xid_48",
        "xid_74",
        "xid_79",
        "xid_94",
        "xid_95",
        "xid_119",
        "xid_140",
    ];
    FAULTS.contains(&name)
}

/// Once the whole text is read: a CUDA error next to a GPU fault is the host's, and each NCCL
/// finding says what it most likely comes from.
pub fn blame(out: &mut Findings) {
    let items = out.items_mut();
    let gpu_fault = items
        .iter()
        .find(|f| is_gpu_fault(&f.label))
        .map(|f| f.label.clone());
    let network = items.iter().any(|f| f.label == label::NCCL_NETWORK);
    for f in items.iter_mut() {
        let name = f.label.as_str();
        if let Some(fault) = &gpu_fault
            && (name == label::CUDA_ILLEGAL_ADDRESS || name == label::CUDA_LAUNCH_FAILURE)
        {
            f.severity = Severity::Critical;
            f.summary = t!(
                "finding_text.blame.summary",
                summary = f.summary,
                fault = fault
            )
            .into_owned();
            f.action = t!("finding_text.blame.action", fault = fault).into_owned();
        }
        if !name.starts_with("nccl") {
            continue;
        }
        f.cause = if gpu_fault.is_some() {
            Some(Cause::PeerGpu)
        } else if name == label::NCCL_NETWORK || network {
            Some(Cause::Network)
        } else if name == label::NCCL_TIMEOUT {
            Some(Cause::Code)
        } else {
            f.cause
        };
    }
}
