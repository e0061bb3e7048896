//! The one writer of gpufleet's state files (ledger, undo records, check reports, audit log).
//!
//! - **Private**: files are created `0600` and directories `0700`; a file written again is
//!   tightened to `0600`, and so is its directory when it is ours (same owner as the lock file
//!   we just created, not sticky like `/tmp`, not the home directory). The ledger, the audit log
//!   and undo records name hosts, prices and provider instance ids.
//! - **Locked**: a read-modify-write holds an exclusive advisory lock (`flock`) on a lock file
//!   beside the data file, `.<name>.lock`, from the read to the rename, so several gpufleet
//!   processes (a console, `release` runs, a watcher) never lose each other's changes. The lock
//!   file is never renamed over, so every process locks the same inode. Taking the lock waits
//!   at most [`LOCK_WAIT`]; a holder that long is stuck, and the caller is told so.
//! - **Atomic**: the new contents go to a temporary file in the same directory (created by the
//!   `tempfile` crate), which is synced, renamed over the old name, and the directory synced.
//!   A reader, or the next start after a kill or a power cut, sees the whole old file or the
//!   whole new one, never a torn mix.
//!
//! Readers need no lock: a rename replaces the name atomically.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a writer waits for another process's lock before giving up.
pub const LOCK_WAIT: Duration = Duration::from_secs(10);

const LOCK_POLL: Duration = Duration::from_millis(5);

/// A temporary file left by a writer killed mid-write is useless (the old file is still whole);
/// one older than a minute cannot belong to a save still in progress.
const STALE_TEMP_AGE: Duration = Duration::from_secs(60);

#[derive(Debug, thiserror::Error)]
pub enum StateFileError {
    #[error("{}", rust_i18n::t!("state_file_error.dir", path = .path.display(), error = .source))]
    Dir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}", rust_i18n::t!("state_file_error.lock", path = .path.display(), error = .source))]
    Lock {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{}",
        rust_i18n::t!("state_file_error.busy", path = .path.display(), seconds = .waited.as_secs())
    )]
    Busy { path: PathBuf, waited: Duration },
    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// One state file, by path.
#[derive(Debug, Clone)]
pub struct StateFile {
    path: PathBuf,
}

/// The file's lock, held until dropped; writing through it is the only way to replace the file.
#[derive(Debug)]
pub struct Locked<'a> {
    file: &'a StateFile,
    // Dropping the handle releases the lock.
    _lock: File,
}

impl StateFile {
    pub fn at(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The directory the file lives in (`.` for a bare name).
    pub fn dir(&self) -> PathBuf {
        match self.path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_owned(),
            _ => PathBuf::from("."),
        }
    }

    fn name(&self) -> String {
        self.path
            .file_name()
            .map_or_else(|| "state".to_string(), |n| n.to_string_lossy().into_owned())
    }

    fn lock_path(&self) -> PathBuf {
        self.dir().join(format!(".{}.lock", self.name()))
    }

    /// The file's bytes; `None` when it does not exist.
    pub fn read(&self) -> Result<Option<Vec<u8>>, StateFileError> {
        match std::fs::read(&self.path) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(self.io(source)),
        }
    }

    /// Creates the directory if needed and takes the file's lock, waiting at most
    /// [`LOCK_WAIT`].
    pub fn lock(&self) -> Result<Locked<'_>, StateFileError> {
        self.lock_within(LOCK_WAIT)
    }

    /// [`Self::lock`] with another wait.
    pub fn lock_within(&self, wait: Duration) -> Result<Locked<'_>, StateFileError> {
        let dir = self.dir();
        create_private_dir(&dir).map_err(|source| StateFileError::Dir {
            path: dir.clone(),
            source,
        })?;
        let lock_path = self.lock_path();
        let lock_err = |source| StateFileError::Lock {
            path: lock_path.clone(),
            source,
        };
        let lock = private_options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock_path)
            .map_err(lock_err)?;
        let started = Instant::now();
        loop {
            match lock.try_lock() {
                Ok(()) => break,
                Err(std::fs::TryLockError::WouldBlock) if started.elapsed() < wait => {
                    std::thread::sleep(LOCK_POLL);
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(StateFileError::Busy {
                        path: lock_path,
                        waited: started.elapsed(),
                    });
                }
                Err(std::fs::TryLockError::Error(source)) => return Err(lock_err(source)),
            }
        }
        tighten_dir(&dir, &lock);
        Ok(Locked {
            file: self,
            _lock: lock,
        })
    }

    /// Writes a file that must not exist yet (a report named by its time), atomically and
    /// privately. No lock: nobody else writes that name.
    pub fn create_new(&self, bytes: &[u8]) -> Result<(), StateFileError> {
        let dir = self.dir();
        create_private_dir(&dir).map_err(|source| StateFileError::Dir {
            path: dir.clone(),
            source,
        })?;
        let temp = self.write_temp(&dir, bytes)?;
        temp.persist_noclobber(&self.path)
            .map_err(|e| self.io(e.error))?;
        sync_dir(&dir).map_err(|source| self.io(source))
    }

    /// Appends `bytes` with one `write` (O_APPEND, so lines of concurrent writers never
    /// interleave) and syncs them. No lock: an append is not a read-modify-write.
    pub fn append(&self, bytes: &[u8]) -> Result<(), StateFileError> {
        let dir = self.dir();
        create_private_dir(&dir).map_err(|source| StateFileError::Dir {
            path: dir.clone(),
            source,
        })?;
        let mut file = private_options()
            .create(true)
            .append(true)
            .open(&self.path)
            .map_err(|source| self.io(source))?;
        tighten_file(&file).map_err(|source| self.io(source))?;
        file.write_all(bytes).map_err(|source| self.io(source))?;
        file.sync_data().map_err(|source| self.io(source))
    }

    fn write_temp(
        &self,
        dir: &Path,
        bytes: &[u8],
    ) -> Result<tempfile::NamedTempFile, StateFileError> {
        // tempfile creates the file 0600 with a fresh random name.
        let mut temp = tempfile::Builder::new()
            .prefix(&format!(".{}.", self.name()))
            .suffix(".tmp")
            .tempfile_in(dir)
            .map_err(|source| self.io(source))?;
        temp.write_all(bytes).map_err(|source| self.io(source))?;
        temp.as_file()
            .sync_all()
            .map_err(|source| self.io(source))?;
        Ok(temp)
    }

    fn io(&self, source: std::io::Error) -> StateFileError {
        StateFileError::Io {
            path: self.path.clone(),
            source,
        }
    }
}

impl Locked<'_> {
    /// The file's bytes as they are under the lock; `None` when it does not exist.
    pub fn read(&self) -> Result<Option<Vec<u8>>, StateFileError> {
        self.file.read()
    }

    /// Replaces the file with `bytes` atomically (see the module comment).
    pub fn replace(&self, bytes: &[u8]) -> Result<(), StateFileError> {
        let file = self.file;
        let dir = file.dir();
        let temp = file.write_temp(&dir, bytes)?;
        temp.persist(&file.path).map_err(|e| file.io(e.error))?;
        sync_dir(&dir).map_err(|source| file.io(source))?;
        remove_stale_temps(&dir, &file.name());
        Ok(())
    }

    /// Checks that the directory takes a new file (full disk, read-only mount, lost
    /// permission), by creating and removing a temporary one; nothing is replaced.
    pub fn check_writable(&self) -> Result<(), StateFileError> {
        let file = self.file;
        let temp = file.write_temp(&file.dir(), b"")?;
        temp.close().map_err(|source| file.io(source))
    }
}

/// A lock held for as long as a process runs (the one process that auto-releases hosts). The
/// file says who holds it, so the others can say so.
#[derive(Debug)]
pub struct ProcessLock {
    _file: File,
}

impl ProcessLock {
    /// Takes the lock at `path` for this process, described as `who`; `Err` with the holder's
    /// description when another process has it.
    pub fn try_take(path: &Path, who: &str) -> Result<Self, String> {
        if let Some(dir) = path.parent() {
            create_private_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        let mut file = private_options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        match file.try_lock() {
            Ok(()) => {
                // Ours now: say who we are for the others.
                let _ = file.set_len(0);
                let _ = std::io::Seek::rewind(&mut file);
                let _ = writeln!(file, "{who} (pid {})", std::process::id());
                let _ = file.sync_data();
                Ok(Self { _file: file })
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                let holder = std::fs::read_to_string(path).unwrap_or_default();
                let holder = holder.trim();
                Err(if holder.is_empty() {
                    rust_i18n::t!("state_file_error.someone").into_owned()
                } else {
                    crate::remote::sanitize(holder)
                })
            }
            Err(std::fs::TryLockError::Error(e)) => Err(format!("{}: {e}", path.display())),
        }
    }
}

/// Opens `path` for appending (the black box's segments): created `0600`, never through a
/// symbolic link, and an existing file loses its group and other bits.
pub fn open_private_append(path: &Path) -> std::io::Result<File> {
    let mut options = private_options();
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NOFOLLOW);
    let file = options.append(true).create(true).open(path)?;
    tighten_file(&file)?;
    Ok(file)
}

/// Takes group and other bits away from an open file of ours (a recording appended to).
pub fn tighten(file: &File) -> std::io::Result<()> {
    tighten_file(file)
}

/// Creates `dir` and its missing parents, each `0700`.
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

fn private_options() -> OpenOptions {
    #[cfg_attr(not(unix), allow(unused_mut))]
    let mut options = OpenOptions::new();
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options
}

/// An existing file keeps the mode it was created with; take group and other bits away.
#[cfg(unix)]
fn tighten_file(file: &File) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mode = file.metadata()?.permissions().mode();
    if mode & 0o077 != 0 {
        file.set_permissions(std::fs::Permissions::from_mode(mode & 0o700))?;
    }
    Ok(())
}

#[cfg(not(unix))]
fn tighten_file(_file: &File) -> std::io::Result<()> {
    Ok(())
}

/// Makes `dir` `0700` when it is gpufleet's own: owned by whoever owns `ours` (the lock file
/// this process just opened), not sticky (`/tmp`), and not the home directory. Best effort: a
/// directory we may not change stays as it is, and the files in it are private anyway.
#[cfg(unix)]
fn tighten_dir(dir: &Path, ours: &File) {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let (Ok(meta), Ok(mine)) = (std::fs::metadata(dir), ours.metadata()) else {
        return;
    };
    let mode = meta.permissions().mode();
    let sticky = mode & 0o1000 != 0;
    let home = std::env::var_os("HOME")
        .is_some_and(|home| std::fs::canonicalize(home).ok() == std::fs::canonicalize(dir).ok());
    if meta.uid() == mine.uid() && !sticky && !home && mode & 0o077 != 0 {
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode & 0o700));
    }
    let _ = tighten_file(ours);
}

#[cfg(not(unix))]
fn tighten_dir(_dir: &Path, _ours: &File) {}

/// How deep [`tighten_tree`] goes (`blackbox/demo/<run>/<host>/<segment>` is five down).
const TIGHTEN_DEPTH: usize = 8;

/// Makes everything under the state directory `root` private, as this version creates it:
/// folders `0700`, files `0600` (an older version left some `0644`/`0755`: the black box, its
/// segments and lock files, `gpufleet.log`). Never follows a symbolic link: links are left as
/// they are, and each entry is opened with `O_NOFOLLOW` and changed through its descriptor.
/// Only a root that is gpufleet's own is walked: owned by this user, not sticky, not the home
/// directory. Best effort: what cannot be opened or changed stays as it is. Returns how many
/// entries were changed.
#[cfg(unix)]
pub fn tighten_tree(root: &Path) -> usize {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::symlink_metadata(root) else {
        return 0;
    };
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    let sticky = std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o1000 != 0;
    let home = std::env::var_os("HOME")
        .is_some_and(|home| std::fs::canonicalize(home).ok() == std::fs::canonicalize(root).ok());
    if !meta.is_dir() || meta.uid() != me || sticky || home {
        return 0;
    }
    tighten_entry(root, true, 0)
}

#[cfg(not(unix))]
pub fn tighten_tree(_root: &Path) -> usize {
    0
}

/// Tightens `path` (a folder when `dir`) and, for a folder, what is in it; the count changed.
#[cfg(unix)]
fn tighten_entry(path: &Path, dir: bool, depth: usize) -> usize {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let mut flags = libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK;
    if dir {
        flags |= libc::O_DIRECTORY;
    }
    let Ok(file) = OpenOptions::new().read(true).custom_flags(flags).open(path) else {
        return 0;
    };
    let Ok(meta) = file.metadata() else {
        return 0;
    };
    // Opened as what it was listed as: a folder, or a plain file (not a device or a pipe).
    if meta.is_dir() != dir || !(meta.is_dir() || meta.is_file()) {
        return 0;
    }
    let mode = meta.permissions().mode();
    let want = if dir { 0o700 } else { 0o600 };
    let mut changed = 0;
    if mode & 0o7777 != want
        && file
            .set_permissions(std::fs::Permissions::from_mode(want))
            .is_ok()
    {
        changed += 1;
    }
    if dir && depth < TIGHTEN_DEPTH {
        let Ok(entries) = std::fs::read_dir(path) else {
            return changed;
        };
        for entry in entries.flatten() {
            // The entry's own type: a symbolic link is neither, and is left alone.
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() || kind.is_file() {
                changed += tighten_entry(&entry.path(), kind.is_dir(), depth + 1);
            }
        }
    }
    changed
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

/// Removes temporary files of `name` left by writers killed mid-write.
fn remove_stale_temps(dir: &Path, name: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let prefix = format!(".{name}.");
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let file_name = file_name.to_string_lossy();
        if !(file_name.starts_with(&prefix) && file_name.ends_with(".tmp")) {
            continue;
        }
        let stale = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|modified| modified.elapsed().ok())
            .is_some_and(|age| age > STALE_TEMP_AGE);
        if stale {
            // Best effort: another gpufleet may have removed it first.
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
    }

    #[test]
    fn a_new_file_and_its_new_directories_are_private() {
        let root = tempfile::tempdir().unwrap();
        let file = StateFile::at(root.path().join("a/b/ledger.json"));
        file.lock().unwrap().replace(b"{}\n").unwrap();
        assert_eq!(std::fs::read(file.path()).unwrap(), b"{}\n");
        assert_eq!(mode(file.path()), 0o600);
        assert_eq!(mode(&root.path().join("a")), 0o700);
        assert_eq!(mode(&root.path().join("a/b")), 0o700);
        assert_eq!(mode(&root.path().join("a/b/.ledger.json.lock")), 0o600);
    }

    #[test]
    fn an_existing_open_file_and_its_directory_are_tightened_when_written() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("state");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let ledger = dir.join("ledger.json");
        let audit = dir.join("audit.jsonl");
        for path in [&ledger, &audit] {
            std::fs::write(path, b"old\n").unwrap();
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
        StateFile::at(&ledger)
            .lock()
            .unwrap()
            .replace(b"new\n")
            .unwrap();
        StateFile::at(&audit).append(b"line\n").unwrap();
        assert_eq!(mode(&ledger), 0o600);
        assert_eq!(mode(&audit), 0o600);
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(std::fs::read(&audit).unwrap(), b"old\nline\n");
    }

    #[test]
    fn a_sticky_shared_directory_is_left_as_it_is() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("shared");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o1777)).unwrap();
        StateFile::at(dir.join("ledger.json"))
            .lock()
            .unwrap()
            .replace(b"x")
            .unwrap();
        assert_eq!(mode(&dir), 0o1777);
        assert_eq!(mode(&dir.join("ledger.json")), 0o600);
    }

    #[test]
    fn a_held_lock_keeps_a_second_writer_out_and_says_so() {
        let root = tempfile::tempdir().unwrap();
        let path = root.path().join("ledger.json");
        let first = StateFile::at(&path);
        let held = first.lock().unwrap();
        let second = StateFile::at(&path);
        let err = second.lock_within(Duration::from_millis(50)).unwrap_err();
        assert!(matches!(err, StateFileError::Busy { .. }), "{err}");
        assert!(err.to_string().contains(".ledger.json.lock"), "{err}");
        drop(held);
        second.lock_within(Duration::from_millis(50)).unwrap();
    }

    #[test]
    fn concurrent_read_modify_writes_lose_nothing() {
        let root = tempfile::tempdir().unwrap();
        let path = root.path().join("counter");
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let path = path.clone();
                std::thread::spawn(move || {
                    let file = StateFile::at(&path);
                    for _ in 0..25 {
                        let locked = file.lock().unwrap();
                        let n: u32 = locked
                            .read()
                            .unwrap()
                            .map_or(0, |b| String::from_utf8(b).unwrap().parse().unwrap());
                        locked.replace((n + 1).to_string().as_bytes()).unwrap();
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "200");
        let leftovers: Vec<_> = std::fs::read_dir(root.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }

    #[test]
    fn create_new_never_overwrites() {
        let root = tempfile::tempdir().unwrap();
        let file = StateFile::at(root.path().join("r/report.json"));
        file.create_new(b"one").unwrap();
        assert!(file.create_new(b"two").is_err());
        assert_eq!(std::fs::read(file.path()).unwrap(), b"one");
        assert_eq!(mode(file.path()), 0o600);
    }

    #[cfg(unix)]
    #[test]
    fn tightening_leaves_a_shared_sticky_folder_and_its_files_alone() {
        let dir = tempfile::tempdir().expect("temp");
        let shared = dir.path().join("shared");
        std::fs::create_dir(&shared).expect("dir");
        let file = shared.join("someone-elses.txt");
        std::fs::write(&file, "x").expect("file");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).expect("chmod");
        assert_eq!(tighten_tree(&shared), 0);
        assert_eq!(mode(&shared), 0o1777);
        assert_eq!(mode(&file), 0o644);
        // The same folder without the sticky bit is gpufleet's to tighten.
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        assert_eq!(tighten_tree(&shared), 2);
        assert_eq!(mode(&shared), 0o700);
        assert_eq!(mode(&file), 0o600);
    }
}
