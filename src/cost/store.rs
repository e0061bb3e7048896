//! The ledger file, `ledger.json` in the state directory, keyed by host name.
//!
//! Every save goes through [`crate::state_file`]: a read-modify-write under the file's lock,
//! written to a temporary file, synced and renamed over the old one, private to the user. Two
//! gpufleet processes saving at once (a console and several `release` runs) therefore never
//! lose each other's records, and a kill or power cut mid-write leaves the whole old file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::ledger::{LedgerState, REOPEN_AFTER_MS};
use crate::state_file::{Locked, StateFile, StateFileError};

pub const LEDGER_FILE: &str = "ledger.json";

/// Bumped when the stored shape changes in a way old readers would misread.
const FORMAT_VERSION: u32 = 1;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{}", rust_i18n::t!("ops.no_state"))]
    NoStateDir,
    #[error("{}", rust_i18n::t!("ledger_error.corrupt", path = .path.display(), message = .message))]
    Corrupt { path: PathBuf, message: String },
    #[error("{}", rust_i18n::t!("ledger_error.newer", path = .path.display(), version = .version))]
    NewerFormat { path: PathBuf, version: u32 },
    /// The file could not be read, locked or written; the message names the path.
    #[error(transparent)]
    State(#[from] StateFileError),
}

/// Every host's stored ledger.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LedgerBook {
    pub version: u32,
    pub hosts: BTreeMap<String, LedgerState>,
}

impl Default for LedgerBook {
    fn default() -> Self {
        Self {
            version: FORMAT_VERSION,
            hosts: BTreeMap::new(),
        }
    }
}

/// The ledger file.
#[derive(Debug, Clone)]
pub struct LedgerStore {
    path: PathBuf,
}

impl LedgerStore {
    pub fn at(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// `ledger.json` in the state directory.
    pub fn open_default() -> Result<Self, StoreError> {
        let dir = crate::paths::state_dir().ok_or(StoreError::NoStateDir)?;
        Ok(Self::at(dir.join(LEDGER_FILE)))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The stored ledgers; a missing file is an empty book.
    pub fn load(&self) -> Result<LedgerBook, StoreError> {
        let bytes = StateFile::at(&self.path).read()?;
        self.parse(bytes)
    }

    fn parse(&self, bytes: Option<Vec<u8>>) -> Result<LedgerBook, StoreError> {
        let Some(bytes) = bytes else {
            return Ok(LedgerBook::default());
        };
        let book: LedgerBook = serde_json::from_slice(&bytes).map_err(|e| StoreError::Corrupt {
            path: self.path.clone(),
            message: e.to_string(),
        })?;
        if book.version > FORMAT_VERSION {
            return Err(StoreError::NewerFormat {
                path: self.path.clone(),
                version: book.version,
            });
        }
        Ok(book)
    }

    /// Replaces the file with `book` (under the lock, atomically).
    pub fn save(&self, book: &LedgerBook) -> Result<(), StoreError> {
        let file = StateFile::at(&self.path);
        let locked = file.lock()?;
        self.write(&locked, book)
    }

    fn write(&self, locked: &Locked<'_>, book: &LedgerBook) -> Result<(), StoreError> {
        let mut bytes = serde_json::to_vec_pretty(book).map_err(|e| StoreError::Corrupt {
            path: self.path.clone(),
            message: e.to_string(),
        })?;
        bytes.push(b'\n');
        Ok(locked.replace(&bytes)?)
    }

    /// Load, change, save, all under the file's lock, so a concurrent writer's change is
    /// never overwritten. Returns what `change` returned.
    pub fn update<T>(&self, change: impl FnOnce(&mut LedgerBook) -> T) -> Result<T, StoreError> {
        let file = StateFile::at(&self.path);
        let locked = file.lock()?;
        let mut book = self.parse(locked.read()?)?;
        let out = change(&mut book);
        self.write(&locked, &book)?;
        Ok(out)
    }

    /// Whether a release could be recorded now: the lock can be taken, the stored ledger
    /// parses, and the directory takes a new file. Checked before a provider is asked to
    /// release, so money is never spent on a release the ledger would then forget.
    pub fn check_recordable(&self) -> Result<(), StoreError> {
        let file = StateFile::at(&self.path);
        let locked = file.lock()?;
        self.parse(locked.read()?)?;
        Ok(locked.check_writable()?)
    }

    /// Saves a running console's ledgers without undoing a release another gpufleet process
    /// (`gpufleet release`) recorded meanwhile: a host released on disk but open in `book`
    /// keeps the stored, released ledger, unless `book` saw it working again
    /// [`REOPEN_AFTER_MS`] after that release. Hosts only on disk are kept. Returns what was
    /// written, from which the caller resumes its ledgers.
    pub fn save_merging(&self, book: &LedgerBook) -> Result<LedgerBook, StoreError> {
        self.update(|stored| {
            let mut merged = book.clone();
            for (host, on_disk) in &stored.hosts {
                let Some(released) = &on_disk.released else {
                    continue;
                };
                let replace = match merged.hosts.get(host) {
                    None => true,
                    Some(mine) => {
                        mine.released.is_none()
                            && mine.accounted_to_ms.is_none_or(|to| {
                                to < released.at_ms.saturating_add(REOPEN_AFTER_MS)
                            })
                    }
                };
                if replace {
                    merged.hosts.insert(host.clone(), on_disk.clone());
                }
            }
            for (host, on_disk) in &stored.hosts {
                merged
                    .hosts
                    .entry(host.clone())
                    .or_insert_with(|| on_disk.clone());
            }
            *stored = merged.clone();
            merged
        })
    }
}
