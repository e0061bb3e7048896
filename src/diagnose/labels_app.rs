//! The wording of what programs report: CUDA runtime errors and NCCL failures. Whether the host
//! is to blame depends on what else the text shows, so [`blame`] rewrites these findings once
//! the whole text is read.

use crate::diagnose::finding::{Cause, Finding, Findings, Severity, label};

pub fn cuda_illegal_address() -> Finding {
    Finding::new(
        label::CUDA_ILLEGAL_ADDRESS,
        Severity::Warning,
        "A CUDA kernel accessed memory it must not (illegal memory access); almost always a bug \
         in the program or one of its libraries.",
        "Your code: rerun with CUDA_LAUNCH_BLOCKING=1 (or under compute-sanitizer) to find the \
         kernel. Only if the kernel log shows Xid 79, 48, 94 or 95 at the same time is the host \
         to blame.",
    )
}

pub fn cuda_device_assert() -> Finding {
    Finding::new(
        label::CUDA_DEVICE_ASSERT,
        Severity::Warning,
        "A device-side assertion failed in a CUDA kernel, most often an index out of range (a \
         label >= the number of classes, an embedding index past the vocabulary).",
        "Your code, not the host: rerun with CUDA_LAUNCH_BLOCKING=1, or on the CPU, to see the \
         failing index; the CUDA context is unusable until the process restarts.",
    )
}

pub fn cuda_device_busy() -> Finding {
    Finding::new(
        label::CUDA_DEVICE_BUSY,
        Severity::Warning,
        "CUDA could not get a GPU: the devices are busy or unavailable (compute mode Exclusive \
         with another process on the GPU, MIG enabled without an instance, or a GPU in an error \
         state).",
        "Check `nvidia-smi` for the compute mode and other processes (and `nvidia-smi -q | grep \
         -i -e mig -e compute`); stop the other process or choose another GPU. If the GPU shows \
         Xid errors or needs a reset, reboot the instance.",
    )
}

pub fn cuda_launch_failure() -> Finding {
    Finding::new(
        label::CUDA_LAUNCH_FAILURE,
        Severity::Warning,
        "A CUDA kernel failed with \"unspecified launch failure\": it crashed or was killed by \
         the driver (a bug, a watchdog timeout, or a GPU fault).",
        "Rerun with CUDA_LAUNCH_BLOCKING=1. If it repeats with known-good code, or the kernel log \
         shows Xid errors, reboot the instance and rent another host if it persists.",
    )
}

pub fn nccl_timeout() -> Finding {
    Finding::new(
        label::NCCL_TIMEOUT,
        Severity::Warning,
        "An NCCL collective did not finish within its timeout (the PyTorch watchdog stopped the \
         job): one rank stopped taking part.",
        "Find the rank that stopped first: look for a GPU fault (Xid, lost GPU) or a crash on \
         every host at that time. With none, suspect the code (ranks calling different \
         collectives, one rank stuck in data loading); rerun with NCCL_DEBUG=INFO and \
         TORCH_NCCL_TRACE_BUFFER_SIZE set.",
    )
}

pub fn nccl_network() -> Finding {
    Finding::new(
        label::NCCL_NETWORK,
        Severity::Warning,
        "NCCL lost a connection to a peer (socket closed or reset, InfiniBand completion error, \
         or the remote process exited).",
        "Check whether the peer process crashed first (its own log) and whether the hosts can \
         reach each other on the NCCL interface (NCCL_SOCKET_IFNAME). Repeated network errors \
         between rented hosts are the provider's network: report them.",
    )
}

pub fn nccl_system() -> Finding {
    Finding::new(
        label::NCCL_SYSTEM,
        Severity::Warning,
        "NCCL hit an \"unhandled system error\": a system call or library it relies on (socket, \
         shared memory, InfiniBand verbs) failed.",
        "Rerun with NCCL_DEBUG=INFO and read the first WARN line; in containers, too little \
         shared memory (`--shm-size`) or missing InfiniBand devices are common causes.",
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
            f.summary = format!(
                "{} The same text shows a GPU fault ({fault}): here the host is to blame.",
                f.summary
            );
            f.action = format!(
                "Act on the {fault} finding (reboot the instance, and release the host if it \
                 recurs); the program is not at fault."
            );
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
