//! Where log lines go. The watcher writes structured lines (`tracing`, `key=value` fields, no
//! colour) on stderr, for a pipe or journald. The console owns the terminal, so it writes the
//! same lines to `gpufleet.log` in the state directory (private to the user, rotated once past
//! [`ROTATE_AT_BYTES`] when a console starts). `-v` adds debug detail, `-vv` everything; the
//! watcher's `-q` keeps only warnings and errors.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use tracing::Level;

/// The console's log file, in the state directory.
pub const LOG_FILE_NAME: &str = "gpufleet.log";

/// A log file past this size when a console starts becomes `gpufleet.log.1` (the one before is
/// dropped), so the log never grows without bound.
pub const ROTATE_AT_BYTES: u64 = 8 * 1024 * 1024;

/// The level for a verbosity: the number of `-v` minus `-q` (0: info).
fn level(verbosity: i8) -> Level {
    match verbosity {
        i8::MIN..=-1 => Level::WARN,
        0 => Level::INFO,
        1 => Level::DEBUG,
        _ => Level::TRACE,
    }
}

/// Log lines on stderr (the watcher, and commands with nobody else on stderr).
pub fn to_stderr(verbosity: i8) {
    let subscriber = tracing_subscriber::fmt()
        .with_writer(io::stderr)
        .with_ansi(false)
        .with_target(false)
        .with_max_level(level(verbosity))
        .finish();
    // A second call (tests running the watcher twice in one process) keeps the first one.
    let _ = tracing::subscriber::set_global_default(subscriber);
}

/// Log lines to `dir/gpufleet.log` (the console): the file is created private (0600) in a
/// private directory and appended to. Returns the file's path; an error when it cannot be
/// opened, in which case nothing is logged and the caller says so once.
pub fn to_file(dir: &Path, verbosity: i8) -> io::Result<PathBuf> {
    let path = dir.join(LOG_FILE_NAME);
    let file = open_rotated(&path)?;
    let subscriber = tracing_subscriber::fmt()
        .with_writer(Mutex::new(file))
        .with_ansi(false)
        .with_target(false)
        .with_max_level(level(verbosity))
        .finish();
    let _ = tracing::subscriber::set_global_default(subscriber);
    log_panics();
    Ok(path)
}

/// Opens `path` for appending, after moving a file past [`ROTATE_AT_BYTES`] aside.
fn open_rotated(path: &Path) -> io::Result<File> {
    if let Some(dir) = path.parent() {
        crate::state_file::create_private_dir(dir)?;
    }
    if std::fs::metadata(path).is_ok_and(|m| m.len() > ROTATE_AT_BYTES) {
        let mut old = path.as_os_str().to_owned();
        old.push(".1");
        std::fs::rename(path, PathBuf::from(old))?;
    }
    OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
}

/// A panic goes to the log too (the terminal may be gone by the time anyone looks), then to
/// the hook that was there before (which restores the terminal and prints it).
fn log_panics() {
    let before = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        tracing::error!(panic = %info, "gpufleet panicked");
        before(info);
    }));
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_log_file_is_private_and_appended_to() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state").join(LOG_FILE_NAME);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "earlier line\n").unwrap();
        let mut file = open_rotated(&path).unwrap();
        io::Write::write_all(&mut file, b"new line\n").unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, "earlier line\nnew line\n");
        let fresh = dir.path().join("fresh").join(LOG_FILE_NAME);
        drop(open_rotated(&fresh).unwrap());
        let mode = std::fs::metadata(&fresh).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "a new log file is private");
    }

    #[test]
    fn a_log_past_the_limit_is_moved_aside_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LOG_FILE_NAME);
        std::fs::write(&path, vec![b'x'; ROTATE_AT_BYTES as usize + 1]).unwrap();
        drop(open_rotated(&path).unwrap());
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 0, "a fresh file");
        let old = dir.path().join(format!("{LOG_FILE_NAME}.1"));
        assert_eq!(
            std::fs::metadata(&old).unwrap().len(),
            ROTATE_AT_BYTES + 1,
            "the old log is kept once"
        );
    }
}
