//! The append-only audit log: one JSON line per action taken on a host (a runbook step that
//! ran, a release request, a power-limit change), flushed to disk before the action is reported.
//! Lines are appended through [`crate::state_file`]: one write each, synced, the file private.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::state_file::{StateFile, StateFileError};
use crate::telemetry::TimestampMs;

pub const AUDIT_FILE: &str = "audit.jsonl";

#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    #[error("{}", rust_i18n::t!("ops.no_state"))]
    NoStateDir,
    #[error("{}", rust_i18n::t!("audit_error.io", path = .path.display(), error = .source))]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The log could not be written; the message names the path.
    #[error(transparent)]
    State(#[from] StateFileError),
    #[error("{}", rust_i18n::t!("audit_error.corrupt", path = .path.display(), line = .line, message = .message))]
    Corrupt {
        path: PathBuf,
        line: usize,
        message: String,
    },
}

/// What kind of action an entry records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AuditKind {
    /// One step of a runbook; the log's word predates the name runbook and stays.
    #[serde(rename = "playbook_step")]
    RunbookStep,
    Backup,
    Release,
    AutoRelease,
    /// `gpufleet hold HOST`: an auto-release countdown asked to stop.
    AutoReleaseHold,
    HostKeyAccepted,
    /// `on_plateau = "stop-job"`: a signal sent to a job that stopped learning.
    StopJob,
    /// `gpufleet hold`: a dead-man switch pushed ahead or disarmed.
    DeadMan,
    /// A host's acceptance check, asked of the watcher by a console.
    Check,
}

/// One line of the log. `command` is what was shown to the user before it ran (argv joined, or
/// `METHOD URL`); it never carries a secret.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditEntry {
    pub at_ms: TimestampMs,
    pub host: String,
    pub kind: AuditKind,
    pub command: String,
    /// `ok`, `failed`, `refused`, `cancelled`, `dry_run`, `timeout`, or a provider's status.
    pub outcome: String,
    pub exit_status: Option<i32>,
    pub runbook: Option<String>,
    pub step: Option<String>,
    pub dry_run: bool,
    /// On a simulated demo host: nothing ran anywhere. Left out of the line when false.
    #[serde(default, skip_serializing_if = "is_false")]
    pub simulated: bool,
}

fn is_false(value: &bool) -> bool {
    !*value
}

/// The log file; appends are atomic per line (O_APPEND) and synced before returning.
#[derive(Debug, Clone)]
pub struct AuditLog {
    path: PathBuf,
}

impl AuditLog {
    pub fn at(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// The log in the state directory.
    pub fn open_default() -> Result<Self, AuditError> {
        let dir = crate::paths::state_dir().ok_or(AuditError::NoStateDir)?;
        Ok(Self::at(dir.join(AUDIT_FILE)))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn append(&self, entry: &AuditEntry) -> Result<(), AuditError> {
        let mut line = serde_json::to_string(entry).map_err(|e| AuditError::Corrupt {
            path: self.path.clone(),
            line: 0,
            message: e.to_string(),
        })?;
        line.push('\n');
        // One write of the whole line: with O_APPEND concurrent writers cannot interleave it.
        Ok(StateFile::at(&self.path).append(line.as_bytes())?)
    }

    /// Every entry, oldest first; a missing log is empty. A torn last line (power cut mid-write)
    /// is skipped, any other bad line is an error naming it.
    pub fn read_all(&self) -> Result<Vec<AuditEntry>, AuditError> {
        let file = match std::fs::File::open(&self.path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => {
                return Err(AuditError::Io {
                    path: self.path.clone(),
                    source,
                });
            }
        };
        let lines: Vec<String> = BufReader::new(file)
            .lines()
            .collect::<Result<_, _>>()
            .map_err(|source| AuditError::Io {
                path: self.path.clone(),
                source,
            })?;
        let last = lines.len();
        let mut out = Vec::with_capacity(last);
        for (i, line) in lines.iter().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str(line) {
                Ok(entry) => out.push(entry),
                Err(_) if i + 1 == last => {}
                Err(e) => {
                    return Err(AuditError::Corrupt {
                        path: self.path.clone(),
                        line: i + 1,
                        message: e.to_string(),
                    });
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(step: &str) -> AuditEntry {
        AuditEntry {
            at_ms: 1,
            host: "h".into(),
            kind: AuditKind::RunbookStep,
            command: "nvidia-smi -i 0 -pl 300".into(),
            outcome: "ok".into(),
            exit_status: Some(0),
            runbook: Some("power-limit".into()),
            step: Some(step.into()),
            dry_run: false,
            simulated: false,
        }
    }

    #[test]
    fn appends_one_line_per_entry_and_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let log = AuditLog::at(dir.path().join("sub/audit.jsonl"));
        log.append(&entry("a")).unwrap();
        log.append(&entry("b")).unwrap();
        let text = std::fs::read_to_string(log.path()).unwrap();
        assert_eq!(text.lines().count(), 2);
        let all = log.read_all().unwrap();
        assert_eq!(all, vec![entry("a"), entry("b")]);
    }

    #[test]
    fn a_torn_last_line_is_skipped_but_a_bad_middle_line_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let log = AuditLog::at(dir.path().join("audit.jsonl"));
        log.append(&entry("a")).unwrap();
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(log.path())
            .unwrap();
        std::io::Write::write_all(&mut f, b"{\"at_ms\":2,\"ho").unwrap();
        assert_eq!(log.read_all().unwrap().len(), 1);
        std::io::Write::write_all(&mut f, b"\n").unwrap();
        log.append(&entry("c")).unwrap();
        let err = log.read_all().unwrap_err().to_string();
        assert!(err.contains(":2:"), "{err}");
    }
}
