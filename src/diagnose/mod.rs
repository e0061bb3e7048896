//! Triage: findings from live samples, kernel lines and pasted text, the Xid catalog, and the
//! text and JSON reports `gpufleet diagnose` prints.
//!
//! Each finding has a stable label (`gpu_lost`, `xid_79`, `power_throttle`, ...), a severity,
//! the evidence that raised it, what it means, what to do on a rented host, and the runbook
//! that walks the fix.

pub mod finding;
pub mod kernel;
pub mod labels;
pub mod live;
pub mod recovery;
pub mod render;
pub mod rules;
mod smi;
pub mod text;
pub mod xid;

use thiserror::Error;

pub use finding::{Finding, Findings, Severity};
pub use live::{LiveOptions, live_findings};
pub use render::{EXIT_BAD_INPUT, EXIT_FOUND, EXIT_HEALTHY, exit_code, render_json, render_text};
pub use text::diagnose_text;

/// Why pasted input cannot be diagnosed (the caller exits with [`EXIT_BAD_INPUT`]).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum InputError {
    #[error("the input is empty: paste nvidia-smi output, kernel lines or an error message")]
    Empty,
    #[error("the input is not UTF-8 text (invalid byte at offset {offset})")]
    NotUtf8 { offset: usize },
}

/// Checks raw input bytes before [`diagnose_text`]: UTF-8 and not blank.
pub fn decode_input(bytes: &[u8]) -> Result<&str, InputError> {
    let text = std::str::from_utf8(bytes).map_err(|e| InputError::NotUtf8 {
        offset: e.valid_up_to(),
    })?;
    if text.trim().is_empty() {
        return Err(InputError::Empty);
    }
    Ok(text)
}
