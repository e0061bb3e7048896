//! The ledger file, `ledger.json` in the state directory, keyed by host name.
//!
//! Saving writes a temporary file in the same directory, syncs it, renames it over the old file
//! and syncs the directory. A rename within one file system replaces the name atomically, so a
//! reader (or the next start after a kill or a power cut) sees either the whole old file or the
//! whole new one, never a torn mix; syncing the data before the rename keeps the new name from
//! pointing at blocks not yet on disk, and syncing the directory makes the rename itself durable.
//! Writing the file in place would leave a truncated file behind a kill mid-write.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::ledger::{LedgerState, REOPEN_AFTER_MS};

pub const LEDGER_FILE: &str = "ledger.json";

/// Bumped when the stored shape changes in a way old readers would misread.
const FORMAT_VERSION: u32 = 1;

const STALE_TEMP_AGE: Duration = Duration::from_secs(60);

/// Keeps two saves of one process (two threads) from sharing a temporary name.
static SAVE_COUNTER: AtomicU64 = AtomicU64::new(0);

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("no state directory: set GPUFLEET_STATE_DIR or HOME")]
    NoStateDir,
    #[error("ledger {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("ledger {path} is not a ledger file ({message}); move it aside to start a new one")]
    Corrupt { path: PathBuf, message: String },
    #[error("ledger {path} was written by a newer gpufleet (format {version})")]
    NewerFormat { path: PathBuf, version: u32 },
}

/// Every host's stored ledger.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
        let bytes = match std::fs::read(&self.path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(LedgerBook::default());
            }
            Err(source) => return Err(self.io(source)),
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

    /// Replaces the file with `book`, atomically (see the module comment).
    pub fn save(&self, book: &LedgerBook) -> Result<(), StoreError> {
        let dir = match self.path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_owned(),
            _ => PathBuf::from("."),
        };
        std::fs::create_dir_all(&dir).map_err(|e| self.io(e))?;
        let mut bytes = serde_json::to_vec_pretty(book).map_err(|e| StoreError::Corrupt {
            path: self.path.clone(),
            message: e.to_string(),
        })?;
        bytes.push(b'\n');
        let temp = dir.join(format!(
            ".{LEDGER_FILE}.{}.{}.tmp",
            std::process::id(),
            SAVE_COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let written = write_synced(&temp, &bytes).and_then(|()| std::fs::rename(&temp, &self.path));
        if let Err(source) = written {
            // Best effort: the temporary file is ours and useless now.
            let _ = std::fs::remove_file(&temp);
            return Err(self.io(source));
        }
        sync_dir(&dir).map_err(|e| self.io(e))?;
        remove_stale_temps(&dir);
        Ok(())
    }

    /// Load, change, save. Returns what `change` returned.
    pub fn update<T>(&self, change: impl FnOnce(&mut LedgerBook) -> T) -> Result<T, StoreError> {
        let mut book = self.load()?;
        let out = change(&mut book);
        self.save(&book)?;
        Ok(out)
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

    fn io(&self, source: std::io::Error) -> StoreError {
        StoreError::Io {
            path: self.path.clone(),
            source,
        }
    }
}

fn write_synced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = OpenOptions::new().write(true).create_new(true).open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// A temporary file left by a writer killed mid-write is useless (the old file is still whole);
/// one older than a minute cannot belong to a save still in progress.
fn remove_stale_temps(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let prefix = format!(".{LEDGER_FILE}.");
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let stale = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|modified| modified.elapsed().ok())
            .is_some_and(|age| age > STALE_TEMP_AGE);
        if name.starts_with(&prefix) && name.ends_with(".tmp") && stale {
            // Best effort: another gpufleet may have removed it first.
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(unix)]
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Windows cannot open a directory as a file; NTFS journals the rename itself.
#[cfg(not(unix))]
fn sync_dir(_dir: &Path) -> std::io::Result<()> {
    Ok(())
}
