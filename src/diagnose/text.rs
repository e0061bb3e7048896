//! Findings from any text a user pastes: nvidia-smi output and failure texts, kernel lines,
//! Python tracebacks (CUDA, PyTorch, NCCL, pynvml) and DCGM health messages.

use crate::diagnose::finding::{Finding, Findings, label};
use crate::diagnose::kernel::{self, NoResolver};
use crate::diagnose::{labels, smi};
use crate::telemetry::LostReason;
use crate::telemetry::smi_csv::classify_failure;

/// Findings that say why NVML failed; with one of them, the generic `nvml_error` adds nothing.
const NVML_LABELS: &[&str] = &[
    label::GPU_LOST,
    label::DRIVER_NOT_LOADED,
    label::DRIVER_LIB_MISMATCH,
    label::NO_DEVICES,
];

/// Classifies `text` and returns its findings, most severe first; none means healthy.
///
/// Every source of evidence is read from the same text, so a paste can mix a traceback, a dmesg
/// excerpt and nvidia-smi output. One finding per label and GPU; its evidence lists the first
/// lines that showed it. A lone `ERR!` or `[Unknown Error]` field is not a finding: nvidia-smi
/// prints those for one unreadable field of a working GPU.
pub fn diagnose_text(text: &str) -> Vec<Finding> {
    let mut out = Findings::default();
    kernel::collect(text.lines(), &NoResolver, &mut out);
    for line in text.lines() {
        classify_line(line, &mut out);
    }
    smi::collect(text, &mut out);
    out.into_sorted()
}

/// Lower-case substrings and the finding they mean. Every rule is tried on every line, so one
/// line can raise several findings: "NCCL WARN Cuda failure 'out of memory'" is both an NCCL
/// error and an OOM.
struct Rule {
    needles: &'static [&'static str],
    finding: fn() -> Finding,
}

const LINE_RULES: &[Rule] = &[
    Rule {
        // pynvml, go-nvml, NVML constants and the Rust nvml-wrapper panic: texts classify_failure
        // does not cover because they name the error code instead of the nvidia-smi message.
        needles: &[
            "nvmlerror_gpuislost",
            "error_gpu_is_lost",
            "gpu lost from the bus",
        ],
        finding: labels::gpu_lost,
    },
    Rule {
        needles: &[
            "nvmlerror_drivernotloaded",
            "drivernotloaded",
            "error_driver_not_loaded",
            "found no nvidia driver on your system",
        ],
        finding: labels::driver_not_loaded,
    },
    Rule {
        needles: &["nvmlerror_librmversionmismatch", "lib_rm_version_mismatch"],
        finding: labels::driver_lib_mismatch,
    },
    Rule {
        needles: &[
            "cuda out of memory",
            "cuda error: out of memory",
            "outofmemoryerror",
            "cuda_error_out_of_memory",
            "cudaerrormemoryallocation",
            "cuda failure 'out of memory'",
        ],
        finding: labels::oom,
    },
    Rule {
        needles: &[
            "no kernel image is available for execution",
            "is not compatible with the current pytorch installation",
            "no longer supports this gpu because it is too old",
            "cudaerrornokernelimagefordevice",
            "cuda_error_no_binary_for_gpu",
        ],
        finding: labels::cuda_arch_mismatch,
    },
    Rule {
        needles: &[
            "nvidia driver on your system is too old",
            "cuda driver version is insufficient for cuda runtime version",
            "cudaerrorinsufficientdriver",
        ],
        finding: labels::driver_too_old,
    },
    Rule {
        needles: &[
            "nccl error",
            "ncclunhandledcudaerror",
            "ncclsystemerror",
            "ncclinternalerror",
            "ncclinvalidusage",
            "ncclinvalidargument",
            "ncclremoteerror",
            "nccl warn",
        ],
        finding: labels::nccl_error,
    },
    Rule {
        needles: &[
            "uncorrectable ecc error encountered",
            "cuda_error_ecc_uncorrectable",
            "cudaerroreccuncorrectable",
        ],
        finding: labels::ecc_uncorrectable,
    },
];

fn classify_line(line: &str, out: &mut Findings) {
    let lower = line.to_ascii_lowercase();
    let mut found: Vec<Finding> = LINE_RULES
        .iter()
        .filter(|rule| rule.needles.iter().any(|n| lower.contains(n)))
        .map(|rule| (rule.finding)().with_evidence(line))
        .collect();
    match classify_failure(line) {
        // "Failed to initialize nvml: DriverNotLoaded" is generic to nvidia-smi's texts but
        // names its cause: the specific finding stands alone.
        Some(LostReason::Other)
            if found
                .iter()
                .any(|f| NVML_LABELS.contains(&f.label.as_str())) => {}
        Some(reason) => found.push(labels::for_lost_reason(reason).with_evidence(line)),
        None => {}
    }
    out.extend(found);
    // DCGM health: "Detected clocks event due to thermal violation in GPU 2. ..."
    if lower.contains("due to thermal violation") {
        let gpu = lower
            .split("in gpu ")
            .nth(1)
            .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|n| n.parse().ok());
        out.push(
            labels::thermal_throttle(false)
                .on_gpu(gpu)
                .with_evidence(line),
        );
    }
}
