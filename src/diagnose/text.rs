//! Findings from any text a user pastes: nvidia-smi output and failure texts, kernel lines,
//! Python tracebacks (CUDA, PyTorch, NCCL, pynvml) and DCGM health messages.

use std::sync::LazyLock;

use crate::diagnose::finding::{Finding, Findings, label};
use crate::diagnose::kernel::{self, NoResolver};
use crate::diagnose::needles::NeedleSet;
use crate::diagnose::{labels, smi, smi_reading};
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
    let mut diagnoser = TextDiagnoser::default();
    for line in text.lines() {
        diagnoser.line(line);
    }
    diagnoser.finish()
}

/// [`diagnose_text`] a line at a time, for input read as a stream: memory stays bounded
/// however long the input is, and the findings are the same as for the whole text at once.
///
/// Each reader (kernel lines, line rules, the nvidia-smi formats) collects apart and the
/// collections are merged in a fixed order at the end, so which finding comes first and which
/// evidence lines are kept do not depend on how the readers' lines interleave.
#[derive(Default)]
pub struct TextDiagnoser {
    kernel: kernel::Collector,
    lines: Findings,
    smi: smi::Collector,
    /// The current line in lower case, kept to save an allocation per line.
    lower: String,
}

impl TextDiagnoser {
    /// Reads one line, without its line ending.
    pub fn line(&mut self, line: &str) {
        self.lower.clear();
        self.lower.push_str(line);
        self.lower.make_ascii_lowercase();
        let matcher = &*MATCHER;
        // One pass finds every phrase any reader looks for; a reader whose phrase is absent
        // (in any case) skips its own search.
        let hits = matcher.set.find(self.lower.as_bytes());
        if hits & matcher.kernel_bit != 0 {
            self.kernel.line(line);
        }
        classify_line(line, &self.lower, hits, &mut self.lines);
        let [table_header, query_flag, xml_start, xml_end] =
            matcher.smi_bits.map(|bit| hits & bit != 0);
        let hints = smi_reading::LineHints {
            table_header,
            query_flag,
            xml_start,
            xml_end,
        };
        self.smi.line(line, hints);
    }

    /// The findings, most severe first.
    pub fn finish(self) -> Vec<Finding> {
        let mut out = Findings::default();
        self.kernel.finish(&NoResolver, &mut out);
        out.absorb(self.lines);
        self.smi.finish(&mut out);
        out.into_sorted()
    }
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

/// Phrases no rule names but [`classify_failure`] looks for; a line without any of them (nor a
/// rule's needle) cannot be an nvidia-smi failure text, so the costlier case-blind scans of
/// `classify_failure` are skipped for it. Each phrase `classify_failure` matches contains one.
const FAILURE_ANCHORS: &[&str] = &[
    "unable to determine the device handle",
    "version mismatch",
    "couldn't communicate with the nvidia driver",
    "failed to initialize nvml",
    "gpu is lost",
    "has fallen off the bus",
    "no devices were found",
    "nvidia-smi has failed",
];

const THERMAL_NEEDLE: &str = "due to thermal violation";

/// What [`kernel::parse_line`] looks for, in lower case.
const KERNEL_NEEDLE: &str = "nvrm:";

/// The phrases of the nvidia-smi readers, in lower case, in the order of [`smi_reading::LineHints`].
const SMI_NEEDLES: [&str; 4] = [
    "volatile uncorr. ecc",
    "--query-",
    "<nvidia_smi_log",
    "</nvidia_smi_log>",
];

/// Every needle of [`LINE_RULES`], then the failure anchors, the thermal phrase and the other
/// readers' phrases, in one set; each rule knows its needles' bits.
struct LineMatcher {
    set: NeedleSet,
    rule_bits: Vec<u64>,
    failure_bits: u64,
    thermal_bit: u64,
    kernel_bit: u64,
    smi_bits: [u64; 4],
}

static MATCHER: LazyLock<LineMatcher> = LazyLock::new(|| {
    let mut needles: Vec<&'static str> = Vec::new();
    let mut rule_bits = Vec::with_capacity(LINE_RULES.len());
    for rule in LINE_RULES {
        rule_bits.push(NeedleSet::bits(needles.len(), rule.needles.len()));
        needles.extend(rule.needles);
    }
    let failure_bits = NeedleSet::bits(needles.len(), FAILURE_ANCHORS.len());
    needles.extend(FAILURE_ANCHORS);
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
    }
});

/// `lower` is `line` in ASCII lower case, `hits` the needles it holds.
fn classify_line(line: &str, lower: &str, hits: u64, out: &mut Findings) {
    let matcher = &*MATCHER;
    if hits == 0 {
        return;
    }
    let mut found: Vec<Finding> = LINE_RULES
        .iter()
        .zip(&matcher.rule_bits)
        .filter(|(_, bits)| hits & **bits != 0)
        .map(|(rule, _)| (rule.finding)().with_evidence(line))
        .collect();
    let failure = if hits & matcher.failure_bits != 0 {
        classify_failure(line)
    } else {
        None
    };
    match failure {
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
    if hits & matcher.thermal_bit != 0 {
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

#[cfg(test)]
mod tests {
    use super::*;

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
            assert_ne!(
                matcher.set.find(lower.as_bytes()) & matcher.failure_bits,
                0,
                "{text}"
            );
        }
    }

    #[test]
    fn every_needle_fits_the_set() {
        let count: usize = LINE_RULES.iter().map(|r| r.needles.len()).sum();
        let others = FAILURE_ANCHORS.len() + 2 + SMI_NEEDLES.len();
        assert!(count + others <= crate::diagnose::needles::MAX_NEEDLES);
        for rule in LINE_RULES {
            for needle in rule.needles {
                assert_eq!(*needle, needle.to_ascii_lowercase());
            }
        }
    }
}
