//! How a link found a job's process: through nvidia-smi's process list, through the
//! GPU device files it holds open when the listed PIDs are not in the host's `/proc` (a
//! container), or through the configured log it writes before it is on any GPU (a job
//! starting). Kept apart from [`crate::fleet::job`] so the link and the engine share one word.

use serde::{Deserialize, Serialize};

/// How a job's process was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobFound {
    /// nvidia-smi's process list names its PID (now, or it did while the process lives).
    #[default]
    ProcessList,
    /// It holds `/dev/nvidiaN` open while the PIDs nvidia-smi lists are not in this
    /// `/proc` (nvidia-smi names them as the machine outside the container sees them).
    Device,
    /// It writes the log the config names (`[[hosts.jobs]] log`) and is on no GPU yet: a job
    /// starting (imports, data, set-up).
    Log,
}

impl JobFound {
    /// Whether the word is the default one, so records leave it out.
    pub fn is_default(&self) -> bool {
        *self == JobFound::ProcessList
    }
}
