//! The catalogue of phrases a line can hold and the finding each one means: one table for
//! pasted text and for the kernel lines the live console receives, searched in one pass per
//! line (see [`crate::diagnose::needles`]).

use std::sync::LazyLock;

use crate::diagnose::finding::Finding;
use crate::diagnose::needles::{Bits, NeedleSet};
use crate::diagnose::{
    labels, labels_amd, labels_app, labels_ascend, labels_container, labels_host, labels_job,
    labels_mthreads,
};

/// What a rule reads from its line besides the phrase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detail {
    None,
    /// The GPU's PCI address after `GPU ` (`NVRM: GPU 0000:98:00.0: RmInitAdapter failed!`).
    Pci,
    /// NCCL's rank, host and peer.
    Nccl,
    /// A PCIe AER line: which device, corrected or not.
    Aer,
    /// Only when the line also says the service failed.
    Failed,
    /// An NVSwitch SXid: only its `Fatal` / `Non-fatal` line, which says which it is.
    Sxid,
    /// "No space left on device" and its kin: shared memory when the line names `/dev/shm` or
    /// a PyTorch shared-memory file, else the disk.
    Space,
    /// A loss-scaler line: only once the scale it reduces to is at its floor (1 or less).
    LossScale,
    /// A socket error, only on a line NCCL wrote.
    NcclSocket,
    /// Only on a line of an Ascend NPU's black-box log (`hisi_logs/device-N/`), whose NPU it
    /// names: the same words on a host's own log are host memory.
    AscendKbox,
    /// Only on a line the amdgpu driver wrote; the device is its `amdgpu 0000:68:00.0:`.
    Amdgpu,
}

/// Lower-case phrases and the finding they mean. Every rule is tried on every line, so one
/// line can raise several findings: "NCCL WARN Cuda failure 'out of memory'" is both an NCCL
/// error and an OOM.
pub struct Rule {
    pub needles: &'static [&'static str],
    pub finding: fn() -> Finding,
    pub detail: Detail,
}

const fn rule(needles: &'static [&'static str], finding: fn() -> Finding) -> Rule {
    Rule {
        needles,
        finding,
        detail: Detail::None,
    }
}

const fn with(needles: &'static [&'static str], finding: fn() -> Finding, detail: Detail) -> Rule {
    Rule {
        needles,
        finding,
        detail,
    }
}

fn aer_corrected() -> Finding {
    labels_host::pcie_aer(false)
}

pub const LINE_RULES: &[Rule] = &[
    // Huawei Ascend: npu-smi's dcmi failures, an NPU's black-box ECC log, CANN's lost heartbeat.
    rule(
        &["dcmi module initialize failed"],
        labels_ascend::dcmi_init_failed,
    ),
    rule(
        &["dcmi model initialized failed, because the device is used"],
        labels_ascend::device_in_use,
    ),
    with(
        &["multi-bit ecc"],
        labels_ascend::hbm_ecc,
        Detail::AscendKbox,
    ),
    rule(
        &[
            "device_absent/abnormal(el0001)",
            "reason=lost heartbeat",
            "lost heartbeat.[func:",
        ],
        labels_ascend::lost_heartbeat,
    ),
    // pynvml, go-nvml, NVML constants and the Rust nvml-wrapper panic: texts classify_failure
    // does not cover because they name the error code instead of the nvidia-smi message.
    rule(
        &[
            "nvmlerror_gpuislost",
            "error_gpu_is_lost",
            "gpu lost from the bus",
        ],
        labels::gpu_lost,
    ),
    rule(
        &[
            "nvmlerror_drivernotloaded",
            "drivernotloaded",
            "error_driver_not_loaded",
            "found no nvidia driver on your system",
        ],
        labels::driver_not_loaded,
    ),
    rule(
        &[
            "nvmlerror_librmversionmismatch",
            "lib_rm_version_mismatch",
            // The kernel's own words for a user-space driver of another version.
            "nvrm: api mismatch",
            "api mismatch: the client",
        ],
        labels::driver_lib_mismatch,
    ),
    rule(
        &[
            "cuda out of memory",
            "cuda error: out of memory",
            "outofmemoryerror",
            "cuda_error_out_of_memory",
            "cudaerrormemoryallocation",
            "cuda failure 'out of memory'",
            // Older PyTorch (THC) and TensorFlow's allocator.
            "error (2) : out of memory",
            "oom when allocating tensor",
            "ran out of memory trying to allocate",
        ],
        labels::oom,
    ),
    // vLLM: the KV cache does not fit what `gpu_memory_utilization` leaves.
    rule(
        &[
            "no available memory for the cache blocks",
            "stored in kv cache",
            "available kv cache memory",
            "not enough kv cache",
        ],
        labels::oom_kv_cache,
    ),
    rule(
        &[
            "no kernel image is available for execution",
            "is not compatible with the current pytorch installation",
            "no longer supports this gpu because it is too old",
            "cudaerrornokernelimagefordevice",
            "cuda_error_no_binary_for_gpu",
        ],
        labels::cuda_arch_mismatch,
    ),
    rule(
        &[
            "nvidia driver on your system is too old",
            "cuda driver version is insufficient for cuda runtime version",
            "cudaerrorinsufficientdriver",
        ],
        labels::driver_too_old,
    ),
    rule(
        &[
            "forward compatibility was attempted on non supported hw",
            "cudaerrorcompatnotsupportedondevice",
            "cuda_error_compat_not_supported_on_device",
        ],
        labels_container::driver_too_old_compat,
    ),
    rule(
        &[
            "uncorrectable ecc error encountered",
            "cuda_error_ecc_uncorrectable",
            "cudaerroreccuncorrectable",
        ],
        labels::ecc_uncorrectable,
    ),
    // CUDA runtime errors.
    rule(
        &[
            "an illegal memory access was encountered",
            "cudaerrorillegaladdress",
            "cuda_error_illegal_address",
        ],
        labels_app::cuda_illegal_address,
    ),
    rule(
        &[
            "device-side assert triggered",
            "cudaerrorassert",
            "cuda_error_assert",
        ],
        labels_app::cuda_device_assert,
    ),
    rule(
        &[
            "busy or unavailable",
            "cudaerrordevicesunavailable",
            "cuda_error_devices_unavailable",
        ],
        labels_app::cuda_device_busy,
    ),
    rule(
        &[
            "unspecified launch failure",
            "cudaerrorlaunchfailure",
            "cuda_error_launch_failed",
        ],
        labels_app::cuda_launch_failure,
    ),
    rule(
        &[
            "system not yet initialized",
            "cudaerrorsystemnotready",
            "cuda_error_system_not_ready",
        ],
        labels_host::fabric_manager_not_ready,
    ),
    with(
        &["nvidia-fabricmanager.service"],
        labels_host::fabric_manager,
        Detail::Failed,
    ),
    // NCCL: the finer kinds first; the generic `nccl_error` only stands where none applies.
    with(
        &[
            "caught collective operation timeout",
            "watchdog timeout",
            "some nccl operations have failed or timed out",
            "heartbeat monitor timed out",
        ],
        labels_app::nccl_timeout,
        Detail::Nccl,
    ),
    with(
        &[
            "ncclremoteerror",
            "remote process exited or there was a network error",
            "connection closed by remote peer",
            "socketprogress",
            "got completion from peer",
        ],
        labels_app::nccl_network,
        Detail::Nccl,
    ),
    // NCCL's INFO lines report socket errors too (retries, then the failure): a trace with one
    // is a network fault even when no line says WARN.
    with(
        &[
            "connection reset by peer",
            "connection refused",
            "connection timed out",
            "no route to host",
            "software caused connection abort",
            "broken pipe",
        ],
        labels_app::nccl_network,
        Detail::NcclSocket,
    ),
    with(
        &["unhandled system error", "ncclsystemerror"],
        labels_app::nccl_system,
        Detail::Nccl,
    ),
    with(
        &[
            "nccl error",
            "ncclunhandledcudaerror",
            "ncclinternalerror",
            "ncclinvalidusage",
            "ncclinvalidargument",
            "nccl warn",
        ],
        labels::nccl_error,
        Detail::Nccl,
    ),
    // The driver bringing up the card.
    with(
        &["rminitadapter failed", "rm_init_adapter failed"],
        labels_host::gpu_init_failed,
        Detail::Pci,
    ),
    rule(
        &[
            "cannot initialize gsp firmware rm",
            "cannot proceed with booting gsp",
        ],
        labels_host::gpu_init_failed_gsp,
    ),
    rule(
        &["_kgsplogrpctimeout", "_kgspisheartbeattimedout"],
        labels_host::gsp_timeout,
    ),
    rule(
        &["failed to wait for gfw_boot", "failed to wait for gfw boot"],
        labels_host::gpu_init_failed_gfw_boot,
    ),
    rule(
        &[
            "probe routine was not called",
            "kernel driver in use: nouveau",
        ],
        labels_host::nouveau_conflict,
    ),
    rule(
        &[
            "probe routine failed for",
            "none of the nvidia devices were initialized",
        ],
        labels_host::driver_probe_failed,
    ),
    with(&["pcie bus error", "aer:"], aer_corrected, Detail::Aer),
    // Moore Threads' driver: its GPU debug dump and a kernel warning inside the module.
    rule(&["mtgpu dbg: end", "[mtgpu]"], labels_mthreads::mtgpu_fault),
    with(
        &["sxid ("],
        labels_host::nvswitch_sxid_nonfatal,
        Detail::Sxid,
    ),
    // Containers.
    rule(
        &["could not select device driver"],
        labels_host::container_no_gpu_runtime,
    ),
    rule(
        &["failed to initialize nvml: unknown error"],
        labels_host::nvml_error_unknown,
    ),
    rule(
        &[
            "nvidia-container-cli: initialization error",
            "load library failed: libnvidia-ml",
            "nvidia-container-cli: mount error",
        ],
        labels_container::container_runtime_failed,
    ),
    rule(
        &[
            "insufficient shared memory",
            "is killed by signal: bus error",
            "unexpected bus error encountered in worker",
            "out of shared memory",
            "error while creating shared memory segment",
            "unable to allocate shared memory",
            "unable to open shared memory object",
        ],
        labels_container::shm_too_small,
    ),
    with(
        &[
            "no space left on device",
            "errno 28",
            "storagefull",
            "enospc",
            "disk quota exceeded",
            "not enough free disk space",
            "pytorchstreamwriter failed writing file",
        ],
        labels_container::disk_full,
        Detail::Space,
    ),
    // Which GPU the process sees.
    rule(
        &[
            "invalid device ordinal",
            "cudaerrorinvaliddevice",
            "cuda_error_invalid_device",
            "nvidia-container-cli: device error",
        ],
        labels_container::invalid_device_ordinal,
    ),
    rule(
        &[
            "no cuda gpus are available",
            "setting the available devices to be zero",
            "no cuda-capable device is detected",
            "cudaerrornodevice",
            "cuda_error_no_device",
            "torch.cuda.is_available() is false",
        ],
        labels_container::no_cuda_gpus,
    ),
    rule(
        &["cublas_status_not_initialized"],
        labels_container::cublas_init_failed,
    ),
    // A training run that diverged.
    rule(
        &[
            "loss is nan",
            "loss is inf",
            "'loss': nan",
            "'loss': inf",
            "loss=nan",
            "loss: nan",
            "'grad_norm': nan",
            "minimum loss scale reached",
            "current loss scale already at minimum",
        ],
        labels_job::loss_nan,
    ),
    with(
        &["reducing loss scale to", "attempted loss scale:"],
        labels_job::loss_nan,
        Detail::LossScale,
    ),
    // AMD: the amdgpu kernel driver's lines and amd-smi's failure texts.
    with(
        &[", signaled seq=", "reset failed", "mes failed to respond"],
        labels_amd::ring_timeout,
        Detail::Amdgpu,
    ),
    with(
        &["gpu reset begin!", "vram is lost due to gpu reset"],
        labels_amd::gpu_reset,
        Detail::Amdgpu,
    ),
    with(
        &["uncorrectable hardware error("],
        labels_amd::ras_uncorrectable,
        Detail::Amdgpu,
    ),
    with(
        &[
            "failed to send message 0x",
            "failed to disable all smu features",
        ],
        labels_amd::smu_failed,
        Detail::Amdgpu,
    ),
    rule(
        &["driver not initialized (amdgpu not found in modules)"],
        labels_amd::driver_not_loaded,
    ),
    rule(
        &["unable to detect any gpu devices, check amdgpu"],
        labels_amd::no_devices,
    ),
];

/// Phrases no rule names but [`crate::telemetry::smi_csv::classify_failure`] looks for; a line
/// without any of them (nor a rule's needle) cannot be an nvidia-smi failure text, so the
/// costlier case-blind scans of `classify_failure` are skipped for it. Each phrase
/// `classify_failure` matches contains one.
pub const FAILURE_ANCHORS: &[&str] = &[
    "unable to determine the device handle",
    "version mismatch",
    "couldn't communicate with the nvidia driver",
    "failed to initialize nvml",
    "gpu is lost",
    "has fallen off the bus",
    "no devices were found",
    "nvidia-smi has failed",
];

pub const THERMAL_NEEDLE: &str = "due to thermal violation";

/// What [`crate::diagnose::kernel::parse_line`] looks for, in lower case.
pub const KERNEL_NEEDLE: &str = "nvrm:";

/// The phrases of the nvidia-smi readers, in lower case, in the order of
/// [`crate::diagnose::smi_reading::LineHints`].
pub const SMI_NEEDLES: [&str; 4] = [
    "volatile uncorr. ecc",
    "--query-",
    "<nvidia_smi_log",
    "</nvidia_smi_log>",
];

/// Lines that show working GPUs without being an nvidia-smi report: `nvidia-smi -L`, the
/// start-up lines of PyTorch Lightning, the driver loading in a clean `dmesg` (NVRM's banner,
/// nvidia-uvm, nvidia-drm).
pub const WORKING_GPU_NEEDLES: &[&str] = &[
    "(uuid: gpu-",
    "gpu available: true (cuda)",
    "you are using a cuda device",
    "nvrm: loading nvidia unix",
    "nvidia-uvm: loaded the uvm driver",
    "initialized nvidia-drm",
];

/// Every needle of [`LINE_RULES`], then the failure anchors and the other readers' phrases, in
/// one set; each rule knows its needles' bits.
pub struct LineMatcher {
    pub set: NeedleSet,
    pub rule_bits: Vec<Bits>,
    pub failure_bits: Bits,
    pub thermal_bit: Bits,
    pub kernel_bit: Bits,
    pub smi_bits: [Bits; 4],
    pub working_bits: Bits,
}

pub static MATCHER: LazyLock<LineMatcher> = LazyLock::new(|| {
    let mut needles: Vec<&'static str> = Vec::new();
    let mut rule_bits = Vec::with_capacity(LINE_RULES.len());
    for rule in LINE_RULES {
        rule_bits.push(NeedleSet::bits(needles.len(), rule.needles.len()));
        needles.extend(rule.needles);
    }
    let failure_bits = NeedleSet::bits(needles.len(), FAILURE_ANCHORS.len());
    needles.extend(FAILURE_ANCHORS);
    let working_bits = NeedleSet::bits(needles.len(), WORKING_GPU_NEEDLES.len());
    needles.extend(WORKING_GPU_NEEDLES);
    let mut one = |needle: &'static str| {
        let bit = NeedleSet::bits(needles.len(), 1);
        needles.push(needle);
        bit
    };
    let thermal_bit = one(THERMAL_NEEDLE);
    let kernel_bit = one(KERNEL_NEEDLE);
    let smi_bits = SMI_NEEDLES.map(&mut one);
    LineMatcher {
        set: NeedleSet::new(&needles),
        rule_bits,
        failure_bits,
        thermal_bit,
        kernel_bit,
        smi_bits,
        working_bits,
    }
});

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::smi_csv::classify_failure;

    /// The texts `classify_failure` recognises: each must pass the anchor check, or its finding
    /// would be lost.
    #[test]
    fn every_failure_text_has_an_anchor() {
        let texts = [
            "Failed to initialize NVML: Driver/library version mismatch",
            "NVML: NVML/RM version mismatch",
            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.",
            "Failed to initialize NVML: Driver Not Loaded",
            "Unable to determine the device handle for GPU 0000:3B:00.0: GPU is lost.",
            "Unable to determine the device handle for GPU0000:3B:00.0: Unknown Error",
            "GPU 0000:3b:00.0 has fallen off the bus.",
            "No devices were found",
            "Failed to initialize NVML: Insufficient Permissions",
            "Unable to determine the device handle for gpu 0000:3b:00.0: Not Supported",
        ];
        let matcher = &*MATCHER;
        for text in texts {
            assert!(classify_failure(text).is_some(), "{text}");
            let lower = text.to_ascii_lowercase();
            assert!(
                matcher
                    .set
                    .find(lower.as_bytes())
                    .meets(matcher.failure_bits),
                "{text}"
            );
        }
    }

    #[test]
    fn every_needle_fits_the_set_and_is_lower_case() {
        let count: usize = LINE_RULES.iter().map(|r| r.needles.len()).sum();
        let others = FAILURE_ANCHORS.len() + WORKING_GPU_NEEDLES.len() + 2 + SMI_NEEDLES.len();
        assert!(count + others <= crate::diagnose::needles::MAX_NEEDLES);
        for needle in LINE_RULES.iter().flat_map(|r| r.needles) {
            assert_eq!(*needle, needle.to_ascii_lowercase());
        }
    }
}
