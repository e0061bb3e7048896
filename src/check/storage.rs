//! Keeping reports: `state_dir()/checks/<host>/<UTC time>.json`, one file per check, so a
//! later check of the same host can be shown next to the previous one. The host's folder is
//! named as the black box names its own ([`crate::paths::host_dir_name`]: one per exact name);
//! reports an older gpufleet kept under its lossy name are still read.

use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::check::format::utc_parts;
use crate::check::report::CheckReport;
use crate::paths::{host_dir_name, legacy_host_dir_name, state_dir};
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

/// The newest report of `host` under `root` that reads back, from its folder or the folder an
/// older gpufleet kept it in (which other hosts' names may share: only `host`'s own reports
/// count); files that do not parse (from another version, or damaged) are passed over. `None`
/// when the host has none.
pub fn load_latest_under(root: &Path, host: &str) -> Result<Option<CheckReport>, StorageError> {
    let mut files = reports_under(&root.join(host_dir_name(host)))?;
    if let Some(legacy) = legacy_host_dir_name(host) {
        files.extend(reports_under(&root.join(legacy))?);
    }
    // By file name, the report's UTC time, newest last.
    files.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
    for path in files.iter().rev() {
        if let Ok(report) = load_file(path)
            && report.host == host
        {
            return Ok(Some(report));
        }
    }
    Ok(None)
}

/// The report files in `dir` (none when it does not exist), in no order.
fn reports_under(dir: &Path) -> Result<Vec<PathBuf>, StorageError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(StorageError::Io {
                path: dir.to_owned(),
                source,
            });
        }
    };
    Ok(entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.extension().is_some_and(|x| x == "json")
                && !p
                    .file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with('.'))
        })
        .collect())
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

    fn report(host: &str, started_at_ms: u64) -> CheckReport {
        CheckReport {
            schema: crate::check::report::SCHEMA_VERSION,
            host: host.to_string(),
            target: "local".to_string(),
            started_at_ms,
            duration_ms: 0,
            gpufleet_version: "0.1.0".to_string(),
            expect: Default::default(),
            settings: Default::default(),
            driver_version: None,
            cuda_version: None,
            torch_version: None,
            torch_cuda: None,
            gpus: Vec::new(),
            checks: Vec::new(),
            status: crate::check::report::Status::Pass,
            exit_code: 0,
        }
    }

    /// Two hosts whose names differ only in punctuation keep their reports apart: each reads
    /// back its own, however recent the other's.
    #[test]
    fn hosts_differing_in_punctuation_keep_their_own_reports() {
        let root = tempfile::tempdir().expect("temp dir");
        let slash = save_under(root.path(), &report("a/b", 1_795_939_200_000)).expect("saved");
        let under = save_under(root.path(), &report("a_b", 1_795_939_300_000)).expect("saved");
        assert_ne!(slash.parent(), under.parent());
        for (host, at) in [("a/b", 1_795_939_200_000), ("a_b", 1_795_939_300_000)] {
            let latest = load_latest_under(root.path(), host).expect("read");
            assert_eq!(
                latest.map(|r| (r.host, r.started_at_ms)),
                Some((host.to_string(), at))
            );
        }
    }

    /// A report an older gpufleet kept under the lossy name is still read, and only by its
    /// own host; a newer one under the new name comes first.
    #[test]
    fn reports_under_the_old_folder_name_still_read() {
        let root = tempfile::tempdir().expect("temp dir");
        let old = root.path().join("root@1.2.3.4_2222");
        std::fs::create_dir_all(&old).expect("old folder");
        let json = crate::check::render::render_json(&report("root@1.2.3.4:2222", 1_000));
        std::fs::write(old.join(file_name(1_000)), json).expect("old report");
        let latest = load_latest_under(root.path(), "root@1.2.3.4:2222").expect("read");
        assert_eq!(latest.map(|r| r.started_at_ms), Some(1_000));
        assert_eq!(
            load_latest_under(root.path(), "root@1.2.3.4_2222").expect("read"),
            None,
            "another host's report in the shared old folder"
        );
        save_under(root.path(), &report("root@1.2.3.4:2222", 2_000)).expect("saved");
        let latest = load_latest_under(root.path(), "root@1.2.3.4:2222").expect("read");
        assert_eq!(latest.map(|r| r.started_at_ms), Some(2_000));
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
