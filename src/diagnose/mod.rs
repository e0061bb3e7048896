//! Triage: findings from live samples, kernel lines and pasted text, the Xid catalog, and the
//! text and JSON reports `gpufleet diagnose` prints.
//!
//! Each finding has a stable label (`gpu_lost`, `xid_79`, `power_throttle`, ...), a severity,
//! the evidence that raised it, what it means, what to do on a rented host, and the runbook
//! that walks the fix. A finer label keeps its family's name as a prefix (`nccl_timeout`,
//! `gpu_init_failed_gsp`), so scripts matching a family by prefix keep working. A pasted text
//! gets a [`Verdict`]: healthy only with positive evidence of working GPUs.

pub mod accel;
mod amd_view;
pub mod finding;
pub mod input;
pub mod job_base;
pub mod kernel;
pub mod labels;
pub mod labels_amd;
pub mod labels_app;
pub mod labels_ascend;
pub mod labels_container;
pub mod labels_fit;
pub mod labels_host;
pub mod labels_job;
pub mod labels_mthreads;
mod line_detail;
pub mod line_rules;
pub mod live;
pub mod live_disk;
pub mod live_earlier;
pub mod live_fit;
pub mod live_jobs;
pub mod live_window;
mod needles;
pub mod order;
pub mod pci;
pub mod recovery;
pub mod render;
mod render_training;
pub mod rules;
mod smi;
mod smi_query;
mod smi_reading;
pub mod text;
pub mod training;
pub mod verdict;
pub mod xid;

use std::borrow::Cow;

pub use finding::{Cause, Finding, Findings, Severity};
pub use input::{InputReport, ReadLimits, diagnose_reader};
pub use live::{LiveOptions, live_findings, live_findings_judged};
pub use render::{render_json, render_text};
pub use text::{TextDiagnoser, diagnose, diagnose_text};
pub use verdict::{
    Diagnosis, EXIT_BAD_INPUT, EXIT_FOUND, EXIT_HEALTHY, EXIT_UNRECOGNISED, Verdict,
};

/// Why pasted input cannot be diagnosed (the caller exits with [`EXIT_BAD_INPUT`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputError {
    Empty,
    Read(String),
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InputError::Empty => f.write_str(&rust_i18n::t!("diagnose_text.input_empty")),
            InputError::Read(why) => {
                f.write_str(&rust_i18n::t!("diagnose_text.input_read", why = why))
            }
        }
    }
}

impl std::error::Error for InputError {}

/// Raw input bytes as text for [`diagnose_text`]: bytes that are not UTF-8 become U+FFFD (a
/// log with one bad byte is still a log); blank input is an error.
pub fn decode_input(bytes: &[u8]) -> Result<Cow<'_, str>, InputError> {
    let text = String::from_utf8_lossy(bytes);
    if text.trim().is_empty() {
        return Err(InputError::Empty);
    }
    Ok(text)
}
