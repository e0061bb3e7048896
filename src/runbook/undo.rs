//! What `undo` restores: each change a runbook made that can be reversed (a power limit and
//! the value it replaced), kept in a small JSON file beside the audit log until it is undone.
//! Changes go through [`crate::state_file`] (locked read-modify-write, atomic, private).

use rust_i18n::t;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::state_file::{Locked, StateFile, StateFileError};
use crate::telemetry::TimestampMs;

pub const UNDO_FILE: &str = "playbook-undo.json";

#[derive(Debug, Error)]
pub enum UndoError {
    /// The file could not be read, locked or written; the message names the path.
    #[error(transparent)]
    State(#[from] StateFileError),
    #[error("{}", t!("state_error.undo_damaged", path = .path.display(), message = .message))]
    Corrupt { path: PathBuf, message: String },
}

/// One reversible change, with every command already filled in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UndoRecord {
    pub at_ms: TimestampMs,
    pub host: String,
    pub runbook: String,
    /// The step whose change this reverses.
    pub step: String,
    /// What undoing does, e.g. "Restore GPU 0's power limit to 700.00 W".
    pub title: String,
    pub command: Vec<String>,
    /// A read that shows the change was reversed, and what it must print.
    pub verify: Vec<String>,
    pub expect: Option<String>,
    pub timeout_s: u64,
}

#[derive(Debug, Clone)]
pub struct UndoStore {
    path: PathBuf,
}

impl UndoStore {
    pub fn at(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// The store that goes with an audit log: the same directory.
    pub fn beside(audit_log: &Path) -> Self {
        let dir = audit_log.parent().unwrap_or(Path::new("."));
        Self::at(dir.join(UNDO_FILE))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every record, oldest first; a missing file holds none.
    pub fn all(&self) -> Result<Vec<UndoRecord>, UndoError> {
        self.parse(StateFile::at(&self.path).read()?)
    }

    fn parse(&self, bytes: Option<Vec<u8>>) -> Result<Vec<UndoRecord>, UndoError> {
        let Some(bytes) = bytes else {
            return Ok(Vec::new());
        };
        serde_json::from_slice(&bytes).map_err(|e| UndoError::Corrupt {
            path: self.path.clone(),
            message: e.to_string(),
        })
    }

    /// Load, change, save under the file's lock; a crash mid-write must not lose the way back.
    fn change(&self, edit: impl FnOnce(&mut Vec<UndoRecord>)) -> Result<(), UndoError> {
        let file = StateFile::at(&self.path);
        let locked = file.lock()?;
        let mut records = self.parse(locked.read()?)?;
        edit(&mut records);
        self.write(&locked, &records)
    }

    fn write(&self, locked: &Locked<'_>, records: &[UndoRecord]) -> Result<(), UndoError> {
        let text = serde_json::to_string_pretty(records).map_err(|e| UndoError::Corrupt {
            path: self.path.clone(),
            message: e.to_string(),
        })?;
        Ok(locked.replace(text.as_bytes())?)
    }

    /// Adds a record. A newer change to the same thing (host, runbook, step, command target)
    /// keeps the older record's command: undo goes back to the state before the first change.
    pub fn push(&self, record: UndoRecord) -> Result<(), UndoError> {
        self.change(|records| {
            let same = |r: &UndoRecord| {
                r.host == record.host
                    && r.runbook == record.runbook
                    && r.step == record.step
                    && r.verify == record.verify
            };
            if !records.iter().any(same) {
                records.push(record);
            }
        })
    }

    /// The newest record for `host`.
    pub fn latest(&self, host: &str) -> Result<Option<UndoRecord>, UndoError> {
        Ok(self.all()?.into_iter().rev().find(|r| r.host == host))
    }

    /// Forgets `record` once it has been undone.
    pub fn remove(&self, record: &UndoRecord) -> Result<(), UndoError> {
        self.change(|records| records.retain(|r| r != record))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(host: &str, value: &str) -> UndoRecord {
        UndoRecord {
            at_ms: 1,
            host: host.into(),
            runbook: "power-limit".into(),
            step: "apply".into(),
            title: "Restore".into(),
            command: vec!["nvidia-smi".into(), "-pl".into(), value.into()],
            verify: vec!["nvidia-smi".into()],
            expect: Some(value.into()),
            timeout_s: 30,
        }
    }

    #[test]
    fn the_first_change_is_what_undo_restores() {
        let dir = tempfile::tempdir().unwrap();
        let store = UndoStore::beside(&dir.path().join("audit.jsonl"));
        assert_eq!(store.latest("a").unwrap(), None);
        store.push(record("a", "700")).unwrap();
        store.push(record("a", "250")).unwrap();
        store.push(record("b", "300")).unwrap();
        let latest = store.latest("a").unwrap().unwrap();
        assert_eq!(latest.expect.as_deref(), Some("700"));
        store.remove(&latest).unwrap();
        assert_eq!(store.latest("a").unwrap(), None);
        assert!(store.latest("b").unwrap().is_some());
    }
}
