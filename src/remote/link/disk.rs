//! A host's disks, read once a minute and at connect: one short command runs `df -P -k` for
//! `/`, `/dev/shm` and the working directory of each job on the GPUs (`/proc/PID/cwd`), and
//! its answer becomes a [`crate::fleet::HostEvent::Disk`] (the session's timers start it,
//! `session.rs`).
//!
//! The command is built only from [`DiskPath`]s (fixed paths and process ids, integers); the
//! paths are the script's arguments, quoted by [`RemoteCommand`], and each answer is marked
//! with the path it belongs to, so a path `df` cannot read (a job that just ended) shifts
//! nothing. A `df` stuck on a dead network mount is cut after a few seconds where the host has
//! `timeout`. With jobs on the GPUs it also counts their PyTorch DataLoader workers (child
//! processes named `pt_data_worker`), which pass batches through `/dev/shm`.

use std::time::Duration;

use crate::remote::quote::{CommandError, RemoteCommand};
use crate::telemetry::df::{DiskPath, DiskUse, parse_df_line};

/// How often a followed host's disks are read.
pub(crate) const DISK_INTERVAL: Duration = Duration::from_secs(60);
/// Job directories asked about in one reading.
const MAX_JOB_PATHS: usize = 8;
/// The line before each path's answer.
const MARKER: &str = "gpufleet-df";
/// A DataLoader worker's line: `gpufleet-worker PPID`.
const WORKER: &str = "gpufleet-worker";
/// The process name PyTorch gives its DataLoader worker processes.
const WORKER_NAME: &str = "pt_data_worker";
/// Worker lines read at most.
const MAX_WORKER_LINES: usize = 256;

/// The `df` run for `paths`, one `df -P -k` per path after a marker line naming it.
pub(crate) fn disk_command(paths: &[DiskPath]) -> Result<String, CommandError> {
    let jobs = paths.iter().any(|p| matches!(p, DiskPath::JobCwd { .. }));
    let workers = if jobs {
        format!(
            "ps -e -o ppid=,comm= 2>/dev/null | awk '$2 == \"{WORKER_NAME}\" {{ print \"{WORKER}\", $1 }}' | head -n {MAX_WORKER_LINES}\n"
        )
    } else {
        String::new()
    };
    let script = format!(
        "t=; command -v timeout >/dev/null 2>&1 && t='timeout 10'\n\
         for p; do printf '{MARKER} %s\\n' \"$p\"; $t df -P -k -- \"$p\" 2>/dev/null; done\n\
         {workers}true"
    );
    RemoteCommand::new("sh")
        .args(["-c", script.as_str(), "sh"])
        .args(paths.iter().map(|p| p.arg()))
        .to_shell()
}

/// The paths a reading asks about: `/`, `/dev/shm`, then the jobs' directories.
pub(crate) fn disk_paths(job_pids: &[u32]) -> Vec<DiskPath> {
    let mut pids = job_pids.to_vec();
    pids.sort_unstable();
    pids.dedup();
    pids.truncate(MAX_JOB_PATHS);
    [DiskPath::Root, DiskPath::Shm]
        .into_iter()
        .chain(pids.into_iter().map(|pid| DiskPath::JobCwd { pid }))
        .collect()
}

/// What a reading's output said so far.
#[derive(Debug, Default)]
pub(crate) struct DiskRun {
    /// The path whose answer the next data line is.
    current: Option<DiskPath>,
    uses: Vec<DiskUse>,
    /// The parent process of each DataLoader worker seen.
    worker_parents: Vec<u32>,
}

impl DiskRun {
    /// One line of the output: a marker, a header, or a path's file system.
    pub(crate) fn line(&mut self, line: &str) {
        if let Some(rest) = line.strip_prefix(WORKER).and_then(|r| r.strip_prefix(' ')) {
            if let Ok(ppid) = rest.trim().parse::<u32>()
                && self.worker_parents.len() < MAX_WORKER_LINES
            {
                self.worker_parents.push(ppid);
            }
            return;
        }
        if let Some(rest) = line.strip_prefix(MARKER).and_then(|r| r.strip_prefix(' ')) {
            self.current = DiskPath::from_arg(rest);
            return;
        }
        let Some(path) = self.current else {
            return;
        };
        if let Some(fs) = parse_df_line(line) {
            // A path's first file system line is its answer.
            self.current = None;
            if self.uses.len() < MAX_JOB_PATHS + 2 && !self.uses.iter().any(|u| u.path == path) {
                self.uses.push(DiskUse { path, fs });
            }
        }
    }

    /// The file systems found, and how many DataLoader workers the jobs asked about have.
    pub(crate) fn finish(self) -> (Vec<DiskUse>, u32) {
        let jobs: Vec<u32> = self
            .uses
            .iter()
            .filter_map(|u| match u.path {
                DiskPath::JobCwd { pid } => Some(pid),
                _ => None,
            })
            .collect();
        let workers = self
            .worker_parents
            .iter()
            .filter(|p| jobs.contains(p))
            .count();
        (self.uses, u32::try_from(workers).unwrap_or(u32::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_holds_only_fixed_paths_and_process_ids() {
        let command = disk_command(&disk_paths(&[42, 7, 42])).expect("command");
        assert!(command.starts_with("sh -c '"), "{command}");
        assert!(
            command.ends_with("' sh / /dev/shm /proc/7/cwd /proc/42/cwd"),
            "{command}"
        );
    }

    /// The command run by this machine's own `sh` and `df`: each path's answer is found
    /// after its marker, and a path `df` cannot read (a process that is gone) is skipped.
    #[test]
    fn the_command_runs_here_and_its_answer_is_read_per_path() {
        let me = std::process::id();
        let paths = vec![
            DiskPath::Root,
            DiskPath::Shm,
            DiskPath::JobCwd { pid: me },
            DiskPath::JobCwd { pid: u32::MAX - 1 },
        ];
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(disk_command(&paths).expect("command"))
            .output()
            .expect("sh");
        assert!(out.status.success());
        let text = String::from_utf8_lossy(&out.stdout);
        let mut run = DiskRun::default();
        for line in text.lines() {
            run.line(line);
        }
        let (uses, _) = run.finish();
        let asked: Vec<DiskPath> = uses.iter().map(|u| u.path).collect();
        assert_eq!(
            asked,
            vec![DiskPath::Root, DiskPath::Shm, DiskPath::JobCwd { pid: me }],
            "{text}"
        );
        assert_eq!(uses[0].fs.mount, "/", "{text}");
        assert!(uses[0].fs.total_kib > 0, "{text}");
    }

    #[test]
    fn lines_without_a_marker_or_for_a_path_not_asked_are_ignored() {
        let mut run = DiskRun::default();
        for line in [
            "overlay 204800 198000 6800 97% /",
            "gpufleet-df /etc/passwd",
            "overlay 204800 198000 6800 97% /",
            "gpufleet-df /dev/shm",
            "Filesystem     1024-blocks  Used Available Capacity Mounted on",
            "shm                  65536     0     65536       0% /dev/shm",
            "shm                  1     0     1       0% /elsewhere",
            "gpufleet-df /proc/12/cwd",
            "overlay 204800 198000 6800 97% /",
            "gpufleet-worker 12",
            "gpufleet-worker 12",
            "gpufleet-worker 13",
            "gpufleet-worker x",
        ] {
            run.line(line);
        }
        let (uses, workers) = run.finish();
        // Only the workers of a job asked about count.
        assert_eq!(workers, 2);
        assert_eq!(uses.len(), 2);
        assert_eq!(uses[0].path, DiskPath::Shm);
        assert_eq!(uses[0].fs.total_kib, 65_536);
    }
}
