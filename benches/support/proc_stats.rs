//! What the fleet benchmark reads from `/proc`: a process's CPU time and peak memory, CPU time
//! per group of threads, and how many TCP connections a process holds to a port.

use std::collections::{BTreeMap, HashSet};

/// User + system CPU seconds of process `pid` (`self` for this one), from `/proc/<pid>/stat`.
pub fn cpu_seconds(pid: &str) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name (which may hold spaces) start after the last ')'.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = fields.get(11..13).map_or(0.0, |f| {
        f.iter().filter_map(|v| v.parse::<f64>().ok()).sum()
    });
    ticks / 100.0
}

/// A `/proc/<pid>/status` figure in kB (`VmHWM` is the peak resident set, `VmRSS` the current).
pub fn status_kb(pid: &str, key: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.split(':').next() == Some(key))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0)
}

/// The group a thread's name belongs to: `ssh-*` threads are the links; otherwise the name
/// without a trailing `-N` (`worker-3` and `worker-12` are one group).
fn thread_group(comm: &str) -> String {
    let comm = comm.trim();
    if comm.starts_with("ssh-") {
        return "ssh links".to_string();
    }
    match comm.rsplit_once(['-', '_', '#']) {
        Some((base, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
            base.to_string()
        }
        _ => comm.to_string(),
    }
}

/// CPU seconds of each thread of this process (id, group, seconds), from the nanosecond run time in
/// `/proc/self/task/*/schedstat` (the tick counts in `stat` round each short-lived burst of a
/// link thread away). The loop and drawing run on the thread named after the binary.
pub fn cpu_by_thread() -> Vec<(String, String, f64)> {
    let mut threads = Vec::new();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return threads;
    };
    for task in tasks.flatten() {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        let schedstat = std::fs::read_to_string(task.path().join("schedstat")).unwrap_or_default();
        let ns: f64 = schedstat
            .split_whitespace()
            .next()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0);
        let tid = task.file_name().to_string_lossy().to_string();
        threads.push((tid, thread_group(&comm), ns / 1e9));
    }
    threads
}

/// The CPU each group spent between two [`cpu_by_thread`] readings, thread by thread (a
/// thread that started in between counts from zero). A thread that ended in between takes
/// its time with it: that share is what the process's own figure has beyond these groups.
pub fn cpu_between(
    start: &[(String, String, f64)],
    end: Vec<(String, String, f64)>,
) -> Vec<(String, f64)> {
    let mut sums: BTreeMap<String, f64> = BTreeMap::new();
    for (tid, group, end_s) in end {
        let before = start
            .iter()
            .find(|(t, _, _)| *t == tid)
            .map_or(0.0, |(_, _, s)| *s);
        *sums.entry(group).or_default() += end_s - before;
    }
    sums.into_iter().collect()
}

/// Established TCP connections that process `pid` holds to `127.0.0.1:port` (its sockets,
/// matched by inode in `/proc/net/tcp`).
pub fn connections_to(pid: &str, port: u16) -> usize {
    let mut inodes = HashSet::new();
    if let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) {
        for fd in fds.flatten() {
            if let Ok(target) = std::fs::read_link(fd.path()) {
                let target = target.to_string_lossy().to_string();
                if let Some(inode) = target
                    .strip_prefix("socket:[")
                    .and_then(|t| t.strip_suffix(']'))
                {
                    inodes.insert(inode.to_string());
                }
            }
        }
    }
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap_or_default();
    let remote = format!("0100007F:{port:04X}");
    table
        .lines()
        .skip(1)
        .filter(|row| {
            let cols: Vec<&str> = row.split_whitespace().collect();
            // sl, local, remote, state (01 = established), ..., inode is the tenth column.
            cols.get(2) == Some(&remote.as_str())
                && cols.get(3) == Some(&"01")
                && cols.get(9).is_some_and(|inode| inodes.contains(*inode))
        })
        .count()
}

/// The soft limit on open files of this process, from `/proc/self/limits`.
pub fn open_files_limit() -> Option<u64> {
    std::fs::read_to_string("/proc/self/limits")
        .ok()?
        .lines()
        .find(|l| l.starts_with("Max open files"))?
        .split_whitespace()
        .nth(3)?
        .parse()
        .ok()
}

pub fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}
