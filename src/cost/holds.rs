//! `gpufleet hold HOST`: a request, left in the state directory, that the process counting
//! down a host's auto-release cancel it. Holds are written and taken through
//! [`crate::state_file`] (locked read-modify-write, atomic, private), so a shell, a console and
//! a watcher never lose one.

use rust_i18n::t;
use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::state_file::{StateFile, StateFileError};
use crate::telemetry::TimestampMs;

pub const HOLDS_FILE: &str = "auto-release-holds.json";

#[derive(Debug, thiserror::Error)]
pub enum HoldError {
    #[error("{}", t!("ops.no_state"))]
    NoStateDir,
    #[error(transparent)]
    State(#[from] StateFileError),
    #[error("{}", t!("state_error.damaged_move_aside", path = .path.display(), message = .message))]
    Corrupt { path: PathBuf, message: String },
}

/// The holds not yet taken, by host: when each was asked for.
#[derive(Debug, Clone)]
pub struct HoldStore {
    path: PathBuf,
}

impl HoldStore {
    pub fn at(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// The file in the state directory.
    pub fn open_default() -> Result<Self, HoldError> {
        let dir = crate::paths::state_dir().ok_or(HoldError::NoStateDir)?;
        Ok(Self::at(dir.join(HOLDS_FILE)))
    }

    /// Asks for `host`'s countdown to be cancelled.
    pub fn hold(&self, host: &str, at_ms: TimestampMs) -> Result<(), HoldError> {
        self.change(|holds| {
            holds.insert(host.to_string(), at_ms);
        })
        .map(|_| ())
    }

    /// Every hold asked for, removed from the file.
    pub fn take_all(&self) -> Result<BTreeMap<String, TimestampMs>, HoldError> {
        let file = StateFile::at(&self.path);
        if file.read()?.is_none() {
            return Ok(BTreeMap::new());
        }
        self.change(std::mem::take)
    }

    fn change<T>(
        &self,
        edit: impl FnOnce(&mut BTreeMap<String, TimestampMs>) -> T,
    ) -> Result<T, HoldError> {
        let file = StateFile::at(&self.path);
        let locked = file.lock()?;
        let mut holds: BTreeMap<String, TimestampMs> = match locked.read()? {
            Some(bytes) => serde_json::from_slice(&bytes).map_err(|e| HoldError::Corrupt {
                path: self.path.clone(),
                message: e.to_string(),
            })?,
            None => BTreeMap::new(),
        };
        let out = edit(&mut holds);
        let bytes = serde_json::to_vec_pretty(&holds).map_err(|e| HoldError::Corrupt {
            path: self.path.clone(),
            message: e.to_string(),
        })?;
        locked.replace(&bytes)?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_are_kept_until_taken_once() {
        let dir = tempfile::tempdir().unwrap();
        let store = HoldStore::at(dir.path().join(HOLDS_FILE));
        assert!(store.take_all().unwrap().is_empty());
        store.hold("a100-1", 5).unwrap();
        store.hold("h100-2", 7).unwrap();
        let taken = store.take_all().unwrap();
        assert_eq!(taken.get("a100-1"), Some(&5));
        assert_eq!(taken.len(), 2);
        assert!(store.take_all().unwrap().is_empty(), "taken once");
    }
}
