//! The verdict of `gpufleet diagnose`: healthy (positive evidence of working GPUs and no
//! finding), findings, or nothing recognised; and the exit status of each.

use serde::Serialize;

use crate::diagnose::finding::Finding;
use crate::job::JobReport;

/// Exit status for a healthy verdict, the only one that exits 0.
pub const EXIT_HEALTHY: u8 = 0;
/// Exit status when anything was found.
pub const EXIT_FOUND: u8 = 1;
/// Exit status for input that could not be read (empty, unreadable); the caller's.
pub const EXIT_BAD_INPUT: u8 = 2;
/// Exit status when the text held nothing gpufleet recognises, neither a fault nor evidence of
/// working GPUs.
pub const EXIT_UNRECOGNISED: u8 = 3;

/// What to paste instead, shown with an unrecognised verdict, in the interface's language.
pub fn hint() -> String {
    rust_i18n::t!("diagnose_text.hint").into_owned()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// No finding, and the text shows working GPUs (an nvidia-smi report, `nvidia-smi -L`, a
    /// framework saying it uses the GPU) or is the log of a training run that is learning.
    Healthy,
    /// At least one finding.
    Findings,
    /// No finding and no sign of a GPU either: unrelated text, or too little of it.
    Unrecognised,
}

impl Verdict {
    pub fn of(findings: &[Finding], saw_working_gpus: bool) -> Self {
        if !findings.is_empty() {
            Verdict::Findings
        } else if saw_working_gpus {
            Verdict::Healthy
        } else {
            Verdict::Unrecognised
        }
    }

    pub fn word(self) -> &'static str {
        match self {
            Verdict::Healthy => "healthy",
            Verdict::Findings => "findings",
            Verdict::Unrecognised => "unrecognised",
        }
    }

    pub fn exit_code(self) -> u8 {
        match self {
            Verdict::Healthy => EXIT_HEALTHY,
            Verdict::Findings => EXIT_FOUND,
            Verdict::Unrecognised => EXIT_UNRECOGNISED,
        }
    }
}

/// The findings of a text and its verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnosis {
    pub verdict: Verdict,
    /// Most severe first; within a severity, root causes first.
    pub findings: Vec<Finding>,
    /// What the text said of a training job, when it was a training log.
    pub training: Option<JobReport>,
}

impl Diagnosis {
    pub fn new(findings: Vec<Finding>, saw_working_gpus: bool) -> Self {
        Self {
            verdict: Verdict::of(&findings, saw_working_gpus),
            findings,
            training: None,
        }
    }

    pub fn exit_code(&self) -> u8 {
        self.verdict.exit_code()
    }
}
