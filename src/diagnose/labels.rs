//! The wording of every finding that is not an Xid: summary, severity, rented-host action and
//! runbook, kept in one place so pasted text and live samples say the same thing.

use crate::diagnose::finding::{Finding, Severity, label, runbook};
use crate::telemetry::LostReason;

pub fn gpu_lost() -> Finding {
    Finding::new(
        label::GPU_LOST,
        Severity::Critical,
        "A GPU has fallen off the bus or is otherwise inaccessible (NVML: GPU is lost); nothing \
         can use it until the host restarts.",
        "Reboot the instance (a GPU reset cannot bring back a GPU that fell off the bus). If it \
         happens again on this host, release the host and rent another; give the provider the \
         kernel Xid lines.",
    )
    .with_runbook(runbook::GPU_LOST)
}

pub fn driver_not_loaded() -> Finding {
    Finding::new(
        label::DRIVER_NOT_LOADED,
        Severity::Critical,
        "The NVIDIA kernel driver is not loaded, so no program can use the GPUs.",
        "Usually a kernel update without a rebuilt driver module: check `lsmod | grep nvidia` and \
         `dmesg | grep NVRM`, then reboot the instance. If it persists, reinstall the driver for \
         the running kernel, or release the host and rent one with a working image.",
    )
    .with_runbook(runbook::DRIVER_LOST)
}

pub fn driver_lib_mismatch() -> Finding {
    Finding::new(
        label::DRIVER_LIB_MISMATCH,
        Severity::Critical,
        "The NVIDIA user-space library and the loaded kernel module are different versions \
         (typically the driver package was upgraded while the old module stayed loaded).",
        "Compare `cat /proc/driver/nvidia/version` with the NVML library version, then reboot \
         the instance (with root and nothing using the GPUs, unloading and reloading the nvidia \
         modules also works). Jobs already running may keep working until then.",
    )
    .with_runbook(runbook::DRIVER_LOST)
}

pub fn no_devices() -> Finding {
    Finding::new(
        label::NO_DEVICES,
        Severity::Critical,
        "The NVIDIA driver is loaded but reports no GPUs.",
        "Check `dmesg | grep -e NVRM -e RmInitAdapter` for a GPU that failed to initialise, then \
         reboot the instance. If the GPU is still missing, release the host and rent another.",
    )
    .with_runbook(runbook::GPU_LOST)
}

pub fn nvml_error() -> Finding {
    Finding::new(
        label::NVML_ERROR,
        Severity::Warning,
        "nvidia-smi / NVML could not read the GPUs, for a reason other than a lost GPU or a \
         missing driver.",
        "Inside a container this is usually lost access to the GPU device nodes (after a \
         systemd reload) or missing permissions: recreate the container. If nvidia-smi fails the \
         same way on the host itself, check the kernel log for Xid errors and reboot the \
         instance.",
    )
}

/// The finding for a host whose GPUs could no longer be read.
pub fn for_lost_reason(reason: LostReason) -> Finding {
    match reason {
        LostReason::GpuLost => gpu_lost(),
        LostReason::DriverNotLoaded => driver_not_loaded(),
        LostReason::DriverLibraryMismatch => driver_lib_mismatch(),
        LostReason::NoDevices => no_devices(),
        LostReason::Other => nvml_error(),
    }
}

pub fn ecc_uncorrectable() -> Finding {
    Finding::new(
        label::ECC_UNCORRECTABLE,
        Severity::Critical,
        "The GPU reported uncorrectable ECC memory errors; programs on it can fail or compute \
         wrong results until it is reset.",
        "Stop the jobs on this GPU and reboot the instance to reset it; if errors come back, \
         release the host and rent another.",
    )
    .with_runbook(runbook::ECC_REMAP)
}

pub fn remap_failed() -> Finding {
    Finding::new(
        label::ECC_UNCORRECTABLE,
        Severity::Critical,
        "GPU memory row remapping has failed: the card has run out of spare memory rows, which \
         NVIDIA treats as an RMA case.",
        "Release the host and rent another; tell the provider the GPU reports a row remapping \
         failure.",
    )
    .with_runbook(runbook::ECC_REMAP)
}

pub fn row_remap_pending() -> Finding {
    Finding::new(
        label::ROW_REMAP_PENDING,
        Severity::Warning,
        "A GPU memory row is waiting to be remapped; it takes effect at the next GPU reset. \
         Running work is not affected.",
        "Reboot the instance (GPU reset) when the GPU is idle. If rows keep going pending after \
         reboots, release the host and rent another.",
    )
    .with_runbook(runbook::ECC_REMAP)
}

pub fn retired_pages_pending() -> Finding {
    Finding::new(
        label::ROW_REMAP_PENDING,
        Severity::Warning,
        "GPU memory pages are pending retirement; until a reboot they can still be allocated.",
        "Reboot the instance when the GPU is idle; this is fixed by a reboot and needs no \
         hardware service.",
    )
    .with_runbook(runbook::ECC_REMAP)
}

pub fn thermal_throttle(hardware: bool) -> Finding {
    let (severity, summary) = if hardware {
        (
            Severity::Critical,
            "The GPU is hot enough that the hardware thermal slowdown engaged (clocks cut by half \
             or more).",
        )
    } else {
        (
            Severity::Warning,
            "The GPU is slowing its clocks to stay under its maximum operating temperature.",
        )
    };
    Finding::new(
        label::THERMAL_THROTTLE,
        severity,
        summary,
        "Cooling on this host is not keeping up (fans, airflow, thermal paste): you pay full \
         price for reduced speed. Report it to the provider; if it persists under normal load, \
         release the host and rent another.",
    )
    .with_runbook(runbook::THROTTLE)
}

pub fn power_brake() -> Finding {
    Finding::new(
        label::POWER_BRAKE,
        Severity::Critical,
        "The external power brake is asserted (e.g. by the system power supply): the hardware \
         cuts clocks by half or more.",
        "A platform power problem only the provider can fix: report it, and if it persists, \
         release the host and rent another.",
    )
    .with_runbook(runbook::THROTTLE)
}

pub fn power_throttle() -> Finding {
    Finding::new(
        label::POWER_THROTTLE,
        Severity::Warning,
        "The software power cap is holding the GPU back although the power draw is far below \
         what the card is built for.",
        "Read the limits (`nvidia-smi -q -d POWER`): if the enforced limit was lowered, raise it \
         back towards the default with root (`nvidia-smi -i <gpu> -pl <watts>`); in a container \
         without that right, ask the provider.",
    )
    .with_runbook(runbook::POWER_LIMIT)
}

pub fn oom() -> Finding {
    Finding::new(
        label::OOM,
        Severity::Warning,
        "A CUDA program ran out of GPU memory.",
        "Not a host fault: lower the batch size or sequence length, stop other processes on the \
         GPU, or rent a GPU with more memory (PyTorch: \
         PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True helps with fragmentation). If the GPU \
         shows little memory in use, check `nvidia-smi -q -d ECC`: a GPU with uncorrectable ECC \
         errors can refuse allocations.",
    )
}

pub fn cuda_arch_mismatch() -> Finding {
    Finding::new(
        label::CUDA_ARCH_MISMATCH,
        Severity::Warning,
        "The CUDA program has no kernel for this GPU's architecture (compute capability); the \
         driver is fine.",
        "Install a build that includes this GPU's architecture (compare \
         `torch.cuda.get_arch_list()` with `torch.cuda.get_device_capability()`; e.g. cu128 or \
         newer PyTorch wheels for sm_120), or rebuild extensions with the right \
         TORCH_CUDA_ARCH_LIST. A driver update does not fix this.",
    )
    .with_runbook(runbook::CUDA_MISMATCH)
}

pub fn driver_too_old() -> Finding {
    Finding::new(
        label::DRIVER_TOO_OLD,
        Severity::Warning,
        "The NVIDIA driver supports an older CUDA version than the program was built for.",
        "Install a build for the driver's CUDA version (the \"CUDA Version\" in the nvidia-smi \
         header), or run on an image with a newer driver; on a host you control, upgrade the \
         driver.",
    )
    .with_runbook(runbook::CUDA_MISMATCH)
}

pub fn nccl_error() -> Finding {
    Finding::new(
        label::NCCL_ERROR,
        Severity::Warning,
        "NCCL (multi-GPU communication) reported an error.",
        "Rerun with NCCL_DEBUG=INFO to find the first failing call; \"unhandled cuda error\" \
         usually hides a CUDA error (often out of memory) printed just before it. Check the \
         kernel log for Xid or NVLink errors: if there are any, act on those findings.",
    )
}

pub fn idle_billing() -> Finding {
    Finding::new(
        label::IDLE_BILLING,
        Severity::Warning,
        "Every GPU on this host has been idle for a while, and the host is billed all the same.",
        "If nothing should be running, back up what you need and stop or release the instance; \
         otherwise check why the job is not using the GPUs.",
    )
}

pub fn stale() -> Finding {
    Finding::new(
        label::STALE,
        Severity::Warning,
        "No fresh data from this host: the numbers shown are old.",
        "gpufleet keeps reconnecting. If it stays stale, look at the instance in the provider's \
         console: it may have been stopped, preempted or lost its network.",
    )
}
