//! Keeping reports: `state_dir()/checks/<host>/<UTC time>.json`, one file per check, so a
//! later check of the same host can be shown next to the previous one.

use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::check::format::utc_parts;
use crate::check::report::CheckReport;
use crate::paths::state_dir;
use crate::state_file::{StateFile, StateFileError};

#[derive(Debug, Error)]
pub enum StorageError {
    #[error("{}", rust_i18n::t!("check_storage.no_state_dir"))]
    NoStateDir,
    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The report could not be written; the message names the path.
    #[error(transparent)]
    State(#[from] StateFileError),
    #[error("{}", rust_i18n::t!("check_storage.not_a_report", path = .path.display(), error = .source))]
    Parse {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
}

/// `state_dir()/checks`.
pub fn checks_dir() -> Result<PathBuf, StorageError> {
    state_dir()
        .map(|d| d.join("checks"))
        .ok_or(StorageError::NoStateDir)
}

/// Saves `report` under [`checks_dir`]; returns the file written.
pub fn save(report: &CheckReport) -> Result<PathBuf, StorageError> {
    save_under(&checks_dir()?, report)
}

/// The newest saved report of `host` under [`checks_dir`], if any.
pub fn load_latest(host: &str) -> Result<Option<CheckReport>, StorageError> {
    load_latest_under(&checks_dir()?, host)
}

/// The folder name of a host: its name with anything but letters, digits, `.`, `_`, `-` and
/// `@` replaced, so `user@host:22` or a name with a slash stays one safe path segment.
pub fn host_dir_name(host: &str) -> String {
    let name: String = host
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '@') {
                c
            } else {
                '_'
            }
        })
        .collect();
    match name.as_str() {
        "" | "." | ".." => format!("_{name}"),
        _ => name,
    }
}

/// `2026-11-29T13-38-35.123Z.json`: sorts by time as text, and has no `:` for other systems.
pub fn file_name(started_at_ms: u64) -> String {
    let (y, mo, d, h, mi, s, ms) = utc_parts(started_at_ms);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}-{mi:02}-{s:02}.{ms:03}Z.json")
}

/// Saves `report` as `root/<host>/<time>.json` through [`crate::state_file`]: written to a
/// temporary file and renamed, so a reader never sees half a report, private to the user, and
/// never over an older report of the same millisecond.
pub fn save_under(root: &Path, report: &CheckReport) -> Result<PathBuf, StorageError> {
    let dir = root.join(host_dir_name(&report.host));
    let path = dir.join(file_name(report.started_at_ms));
    let json = crate::check::render::render_json(report);
    StateFile::at(&path).create_new((json + "\n").as_bytes())?;
    Ok(path)
}

/// The newest report of `host` under `root` that reads back; files that do not parse (from
/// another version, or damaged) are passed over. `None` when the host has none.
pub fn load_latest_under(root: &Path, host: &str) -> Result<Option<CheckReport>, StorageError> {
    let dir = root.join(host_dir_name(host));
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(StorageError::Io { path: dir, source }),
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.extension().is_some_and(|x| x == "json")
                && !p
                    .file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with('.'))
        })
        .collect();
    files.sort();
    for path in files.iter().rev() {
        if let Ok(report) = load_file(path) {
            return Ok(Some(report));
        }
    }
    Ok(None)
}

/// Reads one saved report.
pub fn load_file(path: &Path) -> Result<CheckReport, StorageError> {
    let text = std::fs::read_to_string(path).map_err(|source| StorageError::Io {
        path: path.to_owned(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|source| StorageError::Parse {
        path: path.to_owned(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `gpufleet check` says where a report could not be kept: English as before, and in
    /// Chinese with the variables to set as they are written.
    #[test]
    fn no_state_directory_is_said_in_both_languages() {
        assert_eq!(
            StorageError::NoStateDir.to_string(),
            "no state directory to keep check reports in: set GPUFLEET_STATE_DIR or XDG_STATE_HOME"
        );
        let zh = rust_i18n::t!("check_storage.no_state_dir", locale = "zh-CN");
        assert_eq!(
            zh,
            "没有可保存验卡报告的状态目录：请设置 GPUFLEET_STATE_DIR 或 XDG_STATE_HOME"
        );
    }

    #[test]
    fn host_names_become_one_safe_segment() {
        assert_eq!(host_dir_name("h200-a"), "h200-a");
        assert_eq!(host_dir_name("root@1.2.3.4:2222"), "root@1.2.3.4_2222");
        assert_eq!(host_dir_name("../etc"), ".._etc");
        assert_eq!(host_dir_name(".."), "_..");
        assert_eq!(host_dir_name(""), "_");
    }

    #[test]
    fn file_names_sort_by_time() {
        assert_eq!(
            file_name(1_795_939_200_250),
            "2026-11-29T08-00-00.250Z.json"
        );
        assert!(file_name(1_795_939_200_250) < file_name(1_795_939_201_000));
    }
}
