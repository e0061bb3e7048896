//! Where gpufleet keeps state (ledger, audit log, check reports): the XDG state directory, or
//! `GPUFLEET_STATE_DIR` when set (tests and users who keep state elsewhere).

use std::path::{Path, PathBuf};

/// The environment variable that overrides the state directory.
pub const STATE_DIR_ENV: &str = "GPUFLEET_STATE_DIR";

/// `$GPUFLEET_STATE_DIR`, else `$XDG_STATE_HOME/gpufleet` (usually `~/.local/state/gpufleet`).
pub fn state_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os(STATE_DIR_ENV).filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    let dirs = directories::ProjectDirs::from("", "", "gpufleet")?;
    dirs.state_dir()
        .map(|d| d.to_owned())
        .or_else(|| Some(dirs.data_local_dir().to_owned()))
}

/// `~/x` -> `<home>/x`; config files keep `~` so they stay portable between machines.
pub fn expand_tilde(path: &Path, home: Option<&Path>) -> PathBuf {
    match (path.strip_prefix("~"), home) {
        (Ok(rest), Some(home)) => home.join(rest),
        _ => path.to_path_buf(),
    }
}
