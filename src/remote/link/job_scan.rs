//! The part of the job probe (`job_find.rs`) that looks past the PIDs nvidia-smi listed:
//!
//! - **Containers.** nvidia-smi names processes as the machine outside a container sees them,
//!   so inside one its PIDs may not be in `/proc`. When a listed PID is missing and nvidia-smi,
//!   asked again, still lists it (not a process that just exited), the processes holding a GPU
//!   device file (`/dev/nvidiaN`, N the GPU's minor number) open are the jobs. Monitoring
//!   programs that hold the devices too (nvidia-smi itself, nvidia-persistenced, DCGM, Xorg) are
//!   left out. Once per session `nvidia-smi -q` tells which GPU (UUID) has which minor number.
//! - **Jobs starting.** With `[[hosts.jobs]] log` configured, the process that holds one of
//!   the pattern's files open for writing is the job, before it is on any GPU.
//!
//! Without a configured log nothing else marks a job starting: a process holding
//! `/dev/nvidiactl` but not yet listed looks cheap, but a training script opens it only when it
//! initialises CUDA, a moment before nvidia-smi lists it anyway (its imports and data set-up
//! come before and hold no NVIDIA file), while monitoring tools (nvidia-smi, nvtop, gpustat,
//! DCGM, a notebook that imported torch) hold it for as long as they run: it would hold an idle
//! host and miss the set-up it is meant for.
//!
//! Both read `/proc/*/fd` with one `ls -lq` through one `awk`, a fixed script: the config's
//! pattern and the nvidia-smi path reach it only as positional arguments, the PIDs only as
//! integers. What it prints is bounded (at most [`MAX_SCAN_LINES`] lines of each kind) and
//! parsed as untrusted text: integers, and UUIDs of letters, digits and dashes.

/// Lines of each kind the scan prints at most (holders, writers, GPUs).
pub(crate) const MAX_SCAN_LINES: usize = 64;
/// Characters a GPU UUID may have (`GPU-` and 36, or a MIG device's longer form).
const UUID_CHARS: usize = 96;

/// What the probe looks for beyond the PIDs it is given.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scan<'a> {
    /// The host's nvidia-smi (the configured path): asked again about a PID missing from
    /// `/proc`, and for the GPUs' minor numbers.
    pub(crate) nvidia_smi: &'a str,
    /// The config's log pattern: a process writing one of its files is a job.
    pub(crate) log_glob: Option<&'a str>,
    /// This session found jobs through their devices before: a missing PID is a container's,
    /// nvidia-smi is not asked again.
    pub(crate) container: bool,
    /// The GPUs' minor numbers are known: `nvidia-smi -q` is not run again.
    pub(crate) minors_known: bool,
    /// Missing PIDs this session already scanned for: not scanned for again (a job found then
    /// is asked about by its own PID; a PID that led nowhere leads nowhere again).
    pub(crate) scanned: &'a [u32],
}

impl Scan<'_> {
    /// The flags word the script reads as `$3`: fixed letters only.
    pub(crate) fn flags(&self) -> String {
        let mut flags = String::from("-");
        if self.container {
            flags.push('c');
        }
        if self.minors_known {
            flags.push('m');
        }
        flags
    }

    /// The PIDs the script reads as `$4`: integers joined by spaces.
    pub(crate) fn scanned_word(&self) -> String {
        let words: Vec<String> = self.scanned.iter().map(u32::to_string).collect();
        words.join(" ")
    }
}

/// The scan, run after the listed PIDs were probed (`$m` holds those missing from `/proc`,
/// `d` is the probe's function that describes processes). `$1` is nvidia-smi, `$2` the log
/// pattern (empty without one), `$3` the flags, `$4` the PIDs scanned for before. It prints
/// `scanned PID...` for the missing PIDs it scans for.
pub(crate) const SCAN_SCRIPT: &str = r#"s=; for p in $m; do case " $4 " in *" $p "*) ;; *) s="$s $p";; esac; done; m=$s
if [ -n "$m" ]; then case $3 in *c*) ;; *) l=" $("$1" --query-compute-apps=pid --format=csv,noheader 2>/dev/null | head -n 256 | sed 's/[^0-9].*//' | tr '\n' ' ')"; s=; for p in $m; do case $l in *" $p "*) s="$s $p";; esac; done; m=$s;; esac; fi
[ -n "$m" ] && echo "scanned$m"
if [ -n "$m$2" ]; then
f=$({ if [ -n "$2" ]; then IFS=; set -- $2; unset IFS; for c; do [ -f "$c" ] && readlink -f -- "$c"; done | head -n 64 | sed 's/^/L /'; fi; ls -lq /proc/[0-9]*/fd 2>/dev/null; } | awk -v dev="$m" '
function cm(p,  c, f) { f = "/proc/" p "/comm"; c = ""; getline c < f; close(f); return c }
function wr(p, x,  f, l, v) { f = "/proc/" p "/fdinfo/" x; v = ""; while ((getline l < f) > 0) { if (l ~ /^flags:/) { v = l; break } } close(f); sub(/^flags:[ \t]*/, "", v); return v != "" && substr(v, length(v)) % 4 != 0 }
function out(s) { if (!(s in seen)) { seen[s] = 1; print s; if (++k >= 64) exit } }
!h && /^L \// { w[substr($0, 3)] = 1; next }
/^\/proc\/[0-9]+\/fd:$/ { h = 1; split($0, a, "/"); p = a[3]; next }
p == "" { next }
{ i = index($0, " -> "); if (!i) next; t = substr($0, i + 4); x = substr($0, 1, i - 1); sub(/.* /, "", x) }
dev != "" && t ~ /^\/dev\/nvidia[0-9]+$/ { if (cm(p) !~ /^(nvidia-smi|nvidia-persiste|nv-hostengine|nvidia-cuda-mps|dcgm-exporter|Xorg)$/) out(p " dev " substr(t, 12)); next }
(t in w) && wr(p, x) { out(p " log") }')
[ -n "$f" ] && printf '%s\n' "$f"
d $(printf '%s\n' "$f" | awk '{ print $1 }' | sort -un | head -n 16)
case $3 in *m*) ;; *) case $f in *" dev "*) echo minors; "$1" -q 2>/dev/null | awk '/^GPU [0-9A-Fa-f]/ { u = "" } /^[ \t]*GPU UUID[ \t]*:/ { u = $NF } /^[ \t]*Minor Number[ \t]*:/ { if (u != "") print "gpu " $NF " " u; u = "" }' | head -n 64;; esac;; esac
fi"#;

/// One line the scan printed, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ScanLine {
    /// Process `pid` holds `/dev/nvidia{minor}` open.
    Device { pid: u32, minor: u32 },
    /// Process `pid` holds one of the configured log's files open for writing.
    WritesLog { pid: u32 },
    /// `nvidia-smi -q` was asked for the minor numbers (its answer follows, maybe nothing).
    MinorsAsked,
    /// The GPU with `uuid` has minor number `minor`.
    Minor { minor: u32, uuid: String },
    /// The scan looked for the holders of GPU devices on behalf of these missing PIDs.
    Scanned(Vec<u32>),
}

/// `line` as a scan line, or `None` when it is none (a process's details, or junk).
pub(crate) fn scan_line(line: &str) -> Option<ScanLine> {
    let words: Vec<&str> = line.split(' ').collect();
    match words.as_slice() {
        ["minors"] => Some(ScanLine::MinorsAsked),
        ["scanned", pids @ ..] if !pids.is_empty() => Some(ScanLine::Scanned(
            pids.iter()
                .take(MAX_SCAN_LINES)
                .map(|p| number(p))
                .collect::<Option<Vec<u32>>>()?,
        )),
        ["gpu", minor, uuid] => {
            let ok = !uuid.is_empty()
                && uuid.len() <= UUID_CHARS
                && uuid.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
            ok.then_some(())?;
            Some(ScanLine::Minor {
                minor: number(minor)?,
                uuid: (*uuid).to_string(),
            })
        }
        [pid, "dev", minor] => Some(ScanLine::Device {
            pid: number(pid)?,
            minor: number(minor)?,
        }),
        [pid, "log"] => Some(ScanLine::WritesLog { pid: number(pid)? }),
        _ => None,
    }
}

/// A decimal `u32`, digits only.
fn number(word: &str) -> Option<u32> {
    (!word.is_empty() && word.len() <= 10 && word.bytes().all(|b| b.is_ascii_digit()))
        .then(|| word.parse().ok())
        .flatten()
}

/// The GPUs (UUIDs) of `minors`, as `map` numbers them; those it does not know are left out.
pub(crate) fn gpus_of(minors: &[u32], map: &[(u32, String)]) -> Vec<String> {
    let mut gpus: Vec<String> = minors
        .iter()
        .filter_map(|m| map.iter().find(|(n, _)| n == m).map(|(_, u)| u.clone()))
        .collect();
    gpus.dedup();
    gpus
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_lines_are_integers_and_plain_uuids_or_nothing() {
        assert_eq!(
            scan_line("12 dev 3"),
            Some(ScanLine::Device { pid: 12, minor: 3 })
        );
        assert_eq!(scan_line("12 log"), Some(ScanLine::WritesLog { pid: 12 }));
        assert_eq!(scan_line("minors"), Some(ScanLine::MinorsAsked));
        assert_eq!(
            scan_line("scanned 549 7"),
            Some(ScanLine::Scanned(vec![549, 7]))
        );
        assert_eq!(
            scan_line("gpu 0 GPU-67e6a1fd-a60b-985c-12e3-e9316c8ff001"),
            Some(ScanLine::Minor {
                minor: 0,
                uuid: "GPU-67e6a1fd-a60b-985c-12e3-e9316c8ff001".into()
            })
        );
        for junk in [
            "12 dev -1",
            "12 dev 3 4",
            "x dev 3",
            "99999999999 dev 1",
            "gpu 0 GPU-\u{1b}[2J",
            "gpu 0 GPU-a;reboot",
            "gpu x GPU-a",
            "12 ps 15 root",
            "scanned",
            "scanned 5 x",
            "",
        ] {
            assert_eq!(scan_line(junk), None, "{junk:?}");
        }
    }

    #[test]
    fn devices_map_to_the_gpus_nvidia_smi_numbers_and_unknown_minors_to_none() {
        let map = vec![(0, "GPU-a".to_string()), (3, "GPU-d".to_string())];
        assert_eq!(gpus_of(&[3], &map), vec!["GPU-d".to_string()]);
        assert_eq!(gpus_of(&[0, 3], &map).len(), 2);
        assert!(gpus_of(&[5], &map).is_empty());
        assert!(gpus_of(&[0], &[]).is_empty());
    }

    #[test]
    fn flags_are_fixed_letters() {
        let scan = Scan {
            nvidia_smi: "nvidia-smi",
            log_glob: None,
            container: true,
            minors_known: true,
            scanned: &[549, 7],
        };
        assert_eq!(scan.flags(), "-cm");
        assert_eq!(scan.scanned_word(), "549 7");
        let scan = Scan {
            container: false,
            minors_known: false,
            ..scan
        };
        assert_eq!(scan.flags(), "-");
    }
}
