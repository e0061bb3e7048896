//! The demo fleet's black box: each demo run (a console or `watch --demo`) records into a
//! scratch folder of its own, `blackbox/demo/run-<start>-<pid>`, because every run plays the
//! scenario again from its own start on a simulated clock: mixed in one box, runs made a
//! report's timeline go back and forth, its "last seen" fall after its window and its fault
//! start in an earlier run. A report reads the run of its own process (the console's `e`), or
//! else the newest run. Older runs are dropped when a run starts, the newest few kept.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Runs kept besides the one starting (another demo may still be running).
const RUNS_KEPT: usize = 3;
const RUN_PREFIX: &str = "run-";

/// This process's run folder, once it started one.
static THIS_RUN: OnceLock<PathBuf> = OnceLock::new();

/// The folder a demo run started at `started_ms` by process `pid` records into.
pub fn run_dir(demo_root: &Path, started_ms: u64, pid: u32) -> PathBuf {
    demo_root.join(format!("{RUN_PREFIX}{started_ms:020}-{pid}"))
}

/// The run folders under `demo_root`, oldest first (their names sort by start).
fn runs(demo_root: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(demo_root) else {
        return Vec::new();
    };
    let mut runs: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter(|e| e.file_name().to_string_lossy().starts_with(RUN_PREFIX))
        .map(|e| e.path())
        .collect();
    runs.sort();
    runs
}

/// The newest run under `demo_root`, if any.
pub fn newest_run(demo_root: &Path) -> Option<PathBuf> {
    runs(demo_root).pop()
}

/// Starts this process's run under `demo_root` (once; a second call returns the first run):
/// drops all but the newest [`RUNS_KEPT`] earlier runs, and the hosts' folders that demo runs
/// wrote straight into `demo_root` before runs had folders of their own.
pub fn start_run(demo_root: &Path, started_ms: u64) -> PathBuf {
    THIS_RUN
        .get_or_init(|| {
            prune(demo_root, RUNS_KEPT);
            run_dir(demo_root, started_ms, std::process::id())
        })
        .clone()
}

/// The run a report of this process reads: its own, or else the newest under `demo_root`
/// (`demo_root` itself when there is none, which then holds nothing).
pub fn run_to_read(demo_root: &Path) -> PathBuf {
    match THIS_RUN.get() {
        Some(run) => run.clone(),
        None => newest_run(demo_root).unwrap_or_else(|| demo_root.to_path_buf()),
    }
}

/// Removes everything under `demo_root` but the newest `keep` runs. Scratch data of the demo
/// only; what cannot be removed is left.
pub fn prune(demo_root: &Path, keep: usize) {
    let Ok(entries) = std::fs::read_dir(demo_root) else {
        return;
    };
    let kept: Vec<PathBuf> = runs(demo_root).into_iter().rev().take(keep).collect();
    for entry in entries.flatten() {
        let path = entry.path();
        if kept.contains(&path) || !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let _ = std::fs::remove_dir_all(&path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_run_has_its_own_folder_and_the_newest_is_read() {
        let root = tempfile::tempdir().expect("temp");
        let first = run_dir(root.path(), 1_000, 7);
        let second = run_dir(root.path(), 20_000, 3);
        assert_ne!(first, second);
        for run in [&second, &first] {
            std::fs::create_dir_all(run.join("gpu-a")).expect("mkdir");
        }
        assert_eq!(newest_run(root.path()), Some(second.clone()));
    }

    #[test]
    fn starting_a_run_keeps_only_the_newest_earlier_ones() {
        let root = tempfile::tempdir().expect("temp");
        // A host's folder written straight into the demo root by an older build.
        std::fs::create_dir_all(root.path().join("gpu-a")).expect("mkdir");
        let runs: Vec<PathBuf> = (1..=5)
            .map(|i| run_dir(root.path(), i * 1_000, 1))
            .collect();
        for run in &runs {
            std::fs::create_dir_all(run.join("gpu-a")).expect("mkdir");
        }
        prune(root.path(), 2);
        let mut left: Vec<PathBuf> = std::fs::read_dir(root.path())
            .expect("read")
            .flatten()
            .map(|e| e.path())
            .collect();
        left.sort();
        assert_eq!(left, runs[3..].to_vec());
    }
}
