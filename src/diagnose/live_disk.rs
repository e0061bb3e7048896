//! Findings from a host's disks before anything fails, read from the newest `df` reading
//! ([`crate::fleet::disk::HostDisks`]):
//!
//! - `disk_nearly_full`: `/`, or a file system a job's working directory is on, is at least
//!   [`NEARLY_FULL`] full; the evidence says how long until it is full at the rate its use grew
//!   over the recent readings, when it grew.
//! - `shm_small`: `/dev/shm` holds at most [`SHM_DOCKER_DEFAULT_KIB`] (Docker's default) on a
//!   host with GPUs or jobs, or at most [`SHM_WITH_WORKERS_KIB`] while the jobs run PyTorch
//!   DataLoader workers, which pass every batch through it.
//!
//! A reading older than [`FRESH_MS`] says nothing (the link is down; the disk may have moved).

use rust_i18n::t;

use crate::diagnose::finding::Findings;
use crate::diagnose::labels_host;
use crate::fleet::host::HostState;
use crate::telemetry::df::{DiskPath, FsUsage};

/// The share used from which a disk is nearly full.
pub const NEARLY_FULL: f64 = 0.90;
/// Docker's default `/dev/shm` (`--shm-size` 64 MiB).
pub const SHM_DOCKER_DEFAULT_KIB: u64 = 64 * 1024;
/// `/dev/shm` too small for DataLoader workers.
pub const SHM_WITH_WORKERS_KIB: u64 = 1024 * 1024;
/// How old a reading may be and still be judged (readings come once a minute).
pub const FRESH_MS: u64 = 10 * 60_000;

/// The disk findings of `host` at `now_ms`.
pub fn disks(host: &HostState, now_ms: u64, out: &mut Findings) {
    let disks = &host.disks;
    let Some(at_ms) = disks.at_ms else {
        return;
    };
    if now_ms.saturating_sub(at_ms) > FRESH_MS {
        return;
    }
    let root_mount = disks.of(DiskPath::Root).map(|f| f.mount.clone());
    let mut full = None;
    for (fs, jobs) in disks.filesystems() {
        let watched = root_mount.as_deref() == Some(fs.mount.as_str()) || !jobs.is_empty();
        let Some(ratio) = fs.used_ratio() else {
            continue;
        };
        if !watched || ratio < NEARLY_FULL || is_shm(disks.of(DiskPath::Shm), fs) {
            continue;
        }
        let f = full.get_or_insert_with(labels_host::disk_nearly_full);
        let pct = crate::units::whole((ratio * 100.0).ceil());
        f.add_evidence(&t!(
            "live_evidence.disk_full",
            mount = fs.mount,
            fs = fs.filesystem,
            pct = pct,
            free = size(fs.avail_kib),
            total = size(fs.total_kib)
        ));
        if !jobs.is_empty() {
            let pids: Vec<String> = jobs.iter().map(u32::to_string).collect();
            f.add_evidence(&t!(
                "live_evidence.disk_jobs",
                mount = fs.mount,
                pids = pids.join(", ")
            ));
        }
        if let Some(rate) = disks.growth_kib_per_s(&fs.mount) {
            let ms = (fs.avail_kib as f64 / rate * 1000.0).min(u64::MAX as f64) as u64;
            f.add_evidence(&t!(
                "live_evidence.disk_fills",
                mount = fs.mount,
                left = crate::units::format_age(ms),
                rate = size((rate * 60.0) as u64)
            ));
        }
    }
    if let Some(f) = full {
        out.push(f);
    }
    if let Some(shm) = disks.of(DiskPath::Shm) {
        let workers = disks.loader_workers;
        let gpu_host = !host.gpus.is_empty() || !host.jobs.is_empty();
        let small = (gpu_host && shm.total_kib <= SHM_DOCKER_DEFAULT_KIB)
            || (workers > 0 && shm.total_kib <= SHM_WITH_WORKERS_KIB);
        if small {
            let mut f = labels_host::shm_small();
            f.add_evidence(&t!(
                "live_evidence.shm_size",
                mount = shm.mount,
                total = size(shm.total_kib),
                free = size(shm.avail_kib)
            ));
            if workers > 0 {
                f.add_evidence(&t!("live_evidence.shm_workers", n = workers));
            }
            out.push(f);
        }
    }
}

/// Whether `fs` is the file system of `/dev/shm` (judged by `shm_small`, not as a disk).
fn is_shm(shm: Option<&FsUsage>, fs: &FsUsage) -> bool {
    shm.is_some_and(|s| s.mount == fs.mount && s.mount != "/")
}

/// KiB as MiB under 10 GiB, GiB above.
fn size(kib: u64) -> String {
    let mib = kib as f64 / 1024.0;
    if mib < 10.0 * 1024.0 {
        let mib = crate::units::whole(mib);
        t!("live_evidence.size_mib", n = mib).into_owned()
    } else {
        let gib = crate::units::gib(kib / 1024);
        t!("live_evidence.size_gib", n = gib).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::HostEvent;
    use crate::telemetry::df::DiskUse;

    fn fs(mount: &str, total: u64, used: u64) -> FsUsage {
        FsUsage {
            filesystem: "overlay".into(),
            mount: mount.into(),
            total_kib: total,
            used_kib: used,
            avail_kib: total - used,
        }
    }

    fn host(uses: Vec<DiskUse>, workers: u32) -> HostState {
        let mut h = HostState::new("h", crate::fleet::FleetOptions::default().history_shape());
        h.apply(HostEvent::Disk {
            at_ms: 1_000,
            uses,
            loader_workers: workers,
        });
        h
    }

    fn labels(h: &HostState) -> Vec<String> {
        let mut out = Findings::default();
        disks(h, 2_000, &mut out);
        out.into_items().into_iter().map(|f| f.label).collect()
    }

    #[test]
    fn a_full_root_or_job_directory_is_nearly_full_and_other_disks_are_not() {
        let root = |used| DiskUse {
            path: DiskPath::Root,
            fs: fs("/", 1000, used),
        };
        assert_eq!(labels(&host(vec![root(900)], 0)), ["disk_nearly_full"]);
        assert!(labels(&host(vec![root(899)], 0)).is_empty());
        let job = DiskUse {
            path: DiskPath::JobCwd { pid: 7 },
            fs: fs("/workspace", 1000, 950),
        };
        assert_eq!(labels(&host(vec![root(10), job], 0)), ["disk_nearly_full"]);
    }

    #[test]
    fn shm_is_small_at_dockers_default_or_under_a_gib_with_workers() {
        let shm = |total| DiskUse {
            path: DiskPath::Shm,
            fs: fs("/dev/shm", total, 0),
        };
        // No GPU and no job: nothing to judge it by.
        assert!(labels(&host(vec![shm(65_536)], 0)).is_empty());
        assert_eq!(labels(&host(vec![shm(524_288)], 4)), ["shm_small"]);
        assert!(labels(&host(vec![shm(2 * 1_048_576)], 4)).is_empty());
        // A reading too old says nothing.
        let h = host(vec![shm(524_288)], 4);
        let mut out = Findings::default();
        disks(&h, 1_000 + FRESH_MS + 1, &mut out);
        assert!(out.into_items().is_empty());
    }
}
