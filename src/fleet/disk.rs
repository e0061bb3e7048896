//! A host's disks as the engine keeps them: the newest `df` reading (which file system holds
//! `/`, `/dev/shm` and each job's working directory) and, per mount point, the space used at
//! each of the recent readings, so that how fast a disk fills can be told.

use std::collections::VecDeque;

use crate::telemetry::TimestampMs;
use crate::telemetry::df::{DiskPath, DiskUse, FsUsage};

/// Readings of a mount's use kept (one a minute: half an hour).
const KEPT: usize = 30;
/// Mount points followed at once.
const MAX_MOUNTS: usize = 16;

/// What the host's disks were at the newest reading, and how their use moved before it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HostDisks {
    /// The newest reading; empty before the first.
    pub uses: Vec<DiskUse>,
    pub at_ms: Option<TimestampMs>,
    /// The jobs' PyTorch DataLoader workers at the newest reading.
    pub loader_workers: u32,
    /// Per mount point, `(at_ms, used_kib)` of the recent readings, oldest first.
    trend: Vec<(String, VecDeque<(TimestampMs, u64)>)>,
}

impl HostDisks {
    /// Takes a reading.
    pub fn read(&mut self, at_ms: TimestampMs, uses: Vec<DiskUse>, loader_workers: u32) {
        self.loader_workers = loader_workers;
        let mut seen: Vec<&str> = Vec::new();
        for u in &uses {
            let mount = u.fs.mount.as_str();
            if seen.contains(&mount) {
                continue;
            }
            seen.push(mount);
            let i = match self.trend.iter().position(|(m, _)| m == mount) {
                Some(i) => i,
                None if self.trend.len() < MAX_MOUNTS => {
                    self.trend.push((mount.to_string(), VecDeque::new()));
                    self.trend.len() - 1
                }
                None => continue,
            };
            let points = &mut self.trend[i].1;
            if points.back().is_some_and(|(t, _)| *t >= at_ms) {
                continue;
            }
            if points.len() == KEPT {
                points.pop_front();
            }
            points.push_back((at_ms, u.fs.used_kib));
        }
        self.trend.retain(|(m, _)| seen.contains(&m.as_str()));
        self.uses = uses;
        self.at_ms = Some(at_ms);
    }

    /// The file system holding `path` at the newest reading.
    pub fn of(&self, path: DiskPath) -> Option<&FsUsage> {
        self.uses.iter().find(|u| u.path == path).map(|u| &u.fs)
    }

    /// Each file system once (by mount point), with the jobs whose directory is on it.
    pub fn filesystems(&self) -> Vec<(&FsUsage, Vec<u32>)> {
        let mut out: Vec<(&FsUsage, Vec<u32>)> = Vec::new();
        for u in &self.uses {
            let i = match out.iter().position(|(f, _)| f.mount == u.fs.mount) {
                Some(i) => i,
                None => {
                    out.push((&u.fs, Vec::new()));
                    out.len() - 1
                }
            };
            if let DiskPath::JobCwd { pid } = u.path {
                out[i].1.push(pid);
            }
        }
        out
    }

    /// KiB a second the mount's use grew over the recent readings; `None` without two
    /// readings or when it did not grow.
    pub fn growth_kib_per_s(&self, mount: &str) -> Option<f64> {
        let (_, points) = self.trend.iter().find(|(m, _)| m == mount)?;
        let (t0, u0) = *points.front()?;
        let (t1, u1) = *points.back()?;
        let secs = t1.saturating_sub(t0) as f64 / 1000.0;
        (secs > 0.0 && u1 > u0).then(|| (u1 - u0) as f64 / secs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(used: u64) -> DiskUse {
        DiskUse {
            path: DiskPath::Root,
            fs: FsUsage {
                filesystem: "overlay".into(),
                mount: "/".into(),
                total_kib: 1_000_000,
                used_kib: used,
                avail_kib: 1_000_000 - used,
            },
        }
    }

    #[test]
    fn growth_is_measured_over_the_readings_kept() {
        let mut d = HostDisks::default();
        d.read(0, vec![root(100_000)], 0);
        assert_eq!(d.growth_kib_per_s("/"), None);
        d.read(60_000, vec![root(160_000)], 0);
        d.read(120_000, vec![root(220_000)], 0);
        assert_eq!(d.growth_kib_per_s("/"), Some(1_000.0));
        // A disk that shrinks does not grow.
        d.read(180_000, vec![root(10_000)], 0);
        assert_eq!(d.growth_kib_per_s("/"), None);
    }
}
