//! A host's file systems as `df -P -k` reports them: which path was asked about (`/`,
//! `/dev/shm`, a job's working directory) and the size, use and free space of the file system
//! holding it.
//!
//! `-P` is POSIX's portable format (POSIX.1-2017, IEEE Std 1003.1-2017, `df`, STDOUT with
//! `-P`): a header, then one line per file system, `"%s %d %d %d %d%% %s\n"` (name, total,
//! used, free in 1024-byte units with `-k`, percentage used, mount point). The name and the
//! mount point may hold spaces, so a line is read around its four numbers. Remote output is
//! untrusted: the texts are sanitized and cut, and a line that is not this format is no reading.

use serde::Serialize;

use crate::telemetry::TimestampMs;

/// Characters kept of a file system's name or mount point.
const TEXT_CHARS: usize = 256;

/// What a reading asked `df` about. Built only from fixed paths and process ids (integers),
/// so no remote text ever becomes part of the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "path", rename_all = "snake_case")]
pub enum DiskPath {
    /// The root file system.
    Root,
    /// `/dev/shm`, the shared memory PyTorch's DataLoader workers pass batches through.
    Shm,
    /// The working directory of the job with this process id (`/proc/PID/cwd`).
    JobCwd { pid: u32 },
}

impl DiskPath {
    /// The path given to `df`.
    pub fn arg(self) -> String {
        match self {
            DiskPath::Root => "/".to_string(),
            DiskPath::Shm => "/dev/shm".to_string(),
            DiskPath::JobCwd { pid } => format!("/proc/{pid}/cwd"),
        }
    }

    /// The path back from [`DiskPath::arg`]'s text; `None` for anything else.
    pub fn from_arg(text: &str) -> Option<DiskPath> {
        match text {
            "/" => Some(DiskPath::Root),
            "/dev/shm" => Some(DiskPath::Shm),
            _ => {
                let pid = text.strip_prefix("/proc/")?.strip_suffix("/cwd")?;
                let digits =
                    !pid.is_empty() && pid.len() <= 10 && pid.bytes().all(|b| b.is_ascii_digit());
                digits
                    .then(|| pid.parse().ok())
                    .flatten()
                    .map(|pid| DiskPath::JobCwd { pid })
            }
        }
    }
}

/// One file system as one `df -P -k` line gives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FsUsage {
    /// The file system's name (`overlay`, `/dev/vda1`, `shm`), sanitized.
    pub filesystem: String,
    /// Where it is mounted, sanitized.
    pub mount: String,
    pub total_kib: u64,
    pub used_kib: u64,
    pub avail_kib: u64,
}

impl FsUsage {
    /// The share in use as `df` counts its capacity: used / (used + available), 0 to 1 (space
    /// reserved for root is neither). `None` for an empty file system.
    pub fn used_ratio(&self) -> Option<f64> {
        let room = self.used_kib.saturating_add(self.avail_kib);
        (room > 0).then(|| self.used_kib as f64 / room as f64)
    }
}

/// The file system holding one path asked about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DiskUse {
    #[serde(flatten)]
    pub path: DiskPath,
    #[serde(flatten)]
    pub fs: FsUsage,
}

/// One reading of a host's disks, the paths in the order they were asked.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DiskReading {
    pub at_ms: TimestampMs,
    pub uses: Vec<DiskUse>,
}

/// A data line of `df -P -k`; `None` for the header and anything that is not the format.
pub fn parse_df_line(line: &str) -> Option<FsUsage> {
    let words: Vec<&str> = line.split_whitespace().collect();
    // name, total, used, free, capacity%, mount: at least six words.
    if words.len() < 6 {
        return None;
    }
    // The first run of four numbers whose last is a percentage, after at least one word.
    let at = (1..words.len().saturating_sub(4)).find(|&i| {
        let n = |w: &str| !w.is_empty() && w.len() <= 20 && w.bytes().all(|b| b.is_ascii_digit());
        n(words[i])
            && n(words[i + 1])
            && n(words[i + 2])
            && words[i + 3].strip_suffix('%').is_some_and(n)
    })?;
    let number = |w: &str| w.parse::<u64>().ok();
    let total_kib = number(words[at])?;
    let used_kib = number(words[at + 1])?;
    let avail_kib = number(words[at + 2])?;
    // The mount point is the rest of the line after the percentage, spaces and all.
    let capacity = words[at + 3];
    let rest = &line[line.find(&format!(" {capacity}"))? + capacity.len() + 1..];
    let mount = rest.trim();
    let name = words[..at].join(" ");
    if mount.is_empty() {
        return None;
    }
    Some(FsUsage {
        filesystem: cut(&name),
        mount: cut(mount),
        total_kib,
        used_kib,
        avail_kib,
    })
}

fn cut(text: &str) -> String {
    crate::remote::sanitize(text)
        .chars()
        .take(TEXT_CHARS)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/df")
            .join(name);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    fn lines(name: &str) -> Vec<FsUsage> {
        fixture(name).lines().filter_map(parse_df_line).collect()
    }

    #[test]
    fn a_containers_overlay_root_and_dockers_default_shm_are_read() {
        let root = lines("container_root_97.txt");
        assert_eq!(
            root,
            vec![FsUsage {
                filesystem: "overlay".into(),
                mount: "/".into(),
                total_kib: 204_800,
                used_kib: 198_000,
                avail_kib: 6_800,
            }]
        );
        let ratio = root[0].used_ratio().expect("ratio");
        assert!((ratio - 198_000.0 / 204_800.0).abs() < 1e-9, "{ratio}");
        let shm = lines("container_shm_64m.txt");
        assert_eq!(shm.len(), 1);
        assert_eq!(
            (shm[0].mount.as_str(), shm[0].total_kib),
            ("/dev/shm", 65_536)
        );
        assert_eq!(shm[0].used_ratio(), Some(0.0));
    }

    #[test]
    fn a_hosts_lines_come_one_per_argument_and_errors_are_no_reading() {
        let all = lines("host_all.txt");
        let mounts: Vec<&str> = all.iter().map(|f| f.mount.as_str()).collect();
        assert_eq!(mounts, ["/", "/dev/shm", "/"]);
        assert_eq!(all[0].filesystem, "/dev/vda");
        assert!(lines("missing_path.txt").is_empty());
        // The header alone is no reading.
        assert!(lines("host_root.txt").len() == 1);
    }

    #[test]
    fn names_and_mount_points_with_spaces_survive_and_escapes_do_not() {
        let f = parse_df_line("my disk 100 40 60 40% /mnt/my \u{1b}[2Jdata").expect("line");
        assert_eq!(f.filesystem, "my disk");
        assert_eq!(f.mount, "/mnt/my data");
        assert_eq!((f.total_kib, f.used_kib, f.avail_kib), (100, 40, 60));
        for bad in [
            "",
            "Filesystem     1024-blocks  Used Available Capacity Mounted on",
            "x 1 2 3 4% ",
            "x 1 2 three 4% /",
            "x 1 2 3 4 /",
            "x 1 2 3 99999999999999999999999% /",
        ] {
            assert_eq!(parse_df_line(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn paths_go_to_df_and_come_back_only_in_their_own_forms() {
        for path in [
            DiskPath::Root,
            DiskPath::Shm,
            DiskPath::JobCwd { pid: 4242 },
        ] {
            assert_eq!(DiskPath::from_arg(&path.arg()), Some(path));
        }
        for bad in [
            "/proc/x/cwd",
            "/proc//cwd",
            "/tmp",
            "/proc/1/cwd/..",
            "/proc/99999999999/cwd",
        ] {
            assert_eq!(DiskPath::from_arg(bad), None, "{bad}");
        }
    }
}
