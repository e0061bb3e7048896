//! Finding the jobs behind a host's GPU processes: one small remote command, built only from
//! the process ids the process list gave (integers, never remote text), asks `/proc` for each
//! one's owner and age (`ps`), the CPU time it has used (`ps -o times=`, whole seconds, for the
//! engine's `input_bound` rule), command line, and whether its stdout and stderr are regular files
//! (a job started as `python train.py > train.log 2>&1`). What comes back is untrusted: each
//! line must name a process asked about, and every text is sanitized and cut.
//!
//! The probe also looks past the PIDs nvidia-smi listed (the scan):
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

use crate::fleet::job::{COMMAND_CHARS, JobProcess};
use crate::remote::quote::{CommandError, RemoteCommand, shell_quote};
use crate::remote::sanitize::sanitize;

/// Processes asked about in one probe (a host has a handful of GPU processes).
pub(crate) const MAX_PROBED: usize = 16;
/// Characters kept of a log's path.
const PATH_CHARS: usize = 256;
/// Digits a CPU time may have (`u64` seconds).
const CPU_DIGITS: usize = 19;

/// Which of a process's descriptors is its log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LogFd {
    Stdout,
    Stderr,
}

impl LogFd {
    pub(crate) fn number(self) -> u8 {
        match self {
            LogFd::Stdout => 1,
            LogFd::Stderr => 2,
        }
    }

    fn word(self) -> &'static str {
        match self {
            LogFd::Stdout => "stdout",
            LogFd::Stderr => "stderr",
        }
    }
}

/// A process found, with the descriptor its log can be read through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    pub(crate) process: JobProcess,
    pub(crate) log_fd: Option<LogFd>,
    /// It holds one of the configured log's files open for writing.
    pub(crate) writes_log: bool,
}

/// The probe for `pids` (at most [`MAX_PROBED`], each asked once), and the scan beyond them
/// (the scan, below). Per process it prints `PID ps ELAPSED USER`, `PID cpu SECONDS`, `PID cmd
/// ARGS` and `PID fd1 PATH` / `PID fd2 PATH` for a descriptor that is a regular file; a
/// process gone meanwhile prints nothing.
pub(crate) fn probe_command(pids: &[u32], scan: &Scan<'_>) -> Result<String, CommandError> {
    scan_args(
        RemoteCommand::new("sh").args(["-c", probe_script(pids).as_str()]),
        scan,
    )
}

/// The line between the process list and the probe in [`list_and_probe_command`]'s output.
/// No line of nvidia-smi's `--query-compute-apps` CSV (each begins with a PID) can be it.
pub(crate) const PROBE_MARKER: &str = "gpufleet-probe";

/// The process list (nvidia-smi with `list_args`, fixed words) and, once it succeeded, the probe
/// of `pids` (the jobs already known) in one command: a host whose jobs go on needs no channel
/// of its own for the probe every time its processes are listed. It prints the list, then
/// [`PROBE_MARKER`], then what [`probe_command`] prints; it exits with nvidia-smi's status when
/// that failed, printing no probe.
pub(crate) fn list_and_probe_command(
    list_args: &[String],
    pids: &[u32],
    scan: &Scan<'_>,
) -> Result<String, CommandError> {
    if list_args.iter().any(|a| a.contains('\0')) {
        return Err(CommandError::Nul { argument: None });
    }
    let mut list = String::from("\"$1\"");
    for arg in list_args {
        list.push(' ');
        list.push_str(&shell_quote(arg));
    }
    let script = format!(
        "{list} || exit $?\necho {PROBE_MARKER}\n{}",
        probe_script(pids)
    );
    scan_args(RemoteCommand::new("sh").args(["-c", script.as_str()]), scan)
}

/// The probe's script; `$1` is nvidia-smi, then the scan's arguments (see [`scan_args`]).
fn probe_script(pids: &[u32]) -> String {
    let mut list: Vec<u32> = pids.to_vec();
    list.sort_unstable();
    list.dedup();
    list.truncate(MAX_PROBED);
    let words: Vec<String> = list.iter().map(u32::to_string).collect();
    let words = words.join(" ");
    // Only integers are spliced in; `$(...)` output is joined onto one line and cut, and
    // printf's `%s` prints it as data. The nvidia-smi path, the log pattern and the flags are
    // the script's arguments.
    format!(
        "v=' '; d() {{ for p; do case $p in ''|*[!0-9]*) continue;; esac; case $v in *\" $p \"*) continue;; esac; v=\"$v$p \"; q=/proc/$p; [ -d $q ] || continue; \
         printf '%s ps %s\\n' $p \"$(ps -o etimes=,user= -p $p 2>/dev/null | head -c 128 | tr -s '\\n\\r\\t ' '    ')\"; \
         printf '%s cpu %s\\n' $p \"$(ps -o times= -p $p 2>/dev/null | head -c 32 | tr -d '\\n\\r\\t ')\"; \
         printf '%s cmd %s\\n' $p \"$(head -c 2048 $q/cmdline 2>/dev/null | tr '\\000\\n\\r' '   ')\"; \
         for k in 1 2; do [ -f $q/fd/$k ] && printf '%s fd%s %s\\n' $p $k \"$(readlink $q/fd/$k 2>/dev/null | head -c 1024 | tr '\\n\\r' '  ')\"; done; \
         done; }}\n\
         d {words}\n\
         m=; for p in {words}; do [ -d /proc/$p ] || m=\"$m $p\"; done\n\
         {SCAN_SCRIPT}\n\
         true"
    )
}

/// `sh -c SCRIPT` completed with the script's arguments: `$0` `sh`, `$1` nvidia-smi, `$2` the
/// log pattern, `$3` the flags and `$4` the PIDs scanned for before.
fn scan_args(sh: RemoteCommand, scan: &Scan<'_>) -> Result<String, CommandError> {
    sh.args(["sh", scan.nvidia_smi])
        .arg(scan.log_glob.unwrap_or(""))
        .arg(scan.flags())
        .arg(scan.scanned_word())
        .to_shell()
}

/// What one probe found: the processes, and the GPUs' minor numbers when it asked for them.
#[derive(Debug, Default)]
pub(crate) struct Probe {
    pub(crate) found: Vec<Found>,
    /// `Some` when `nvidia-smi -q` was asked (its answer may be empty).
    pub(crate) minors: Option<Vec<(u32, String)>>,
    /// The missing PIDs the scan looked for GPU devices' holders on behalf of.
    pub(crate) scanned: Vec<u32>,
}

/// The processes the probe's `lines` describe: those of `pids` in their order, then those the
/// scan found (holding a GPU device, writing the configured log) in the order it found them;
/// lines about anything else are ignored.
pub(crate) fn parse_probe(pids: &[u32], lines: &[String]) -> Probe {
    let mut probe = Probe::default();
    let mut scanned: Vec<(u32, Option<u32>)> = Vec::new();
    for line in lines {
        match scan_line(line) {
            Some(ScanLine::Device { pid, minor }) => scanned.push((pid, Some(minor))),
            Some(ScanLine::WritesLog { pid }) => scanned.push((pid, None)),
            Some(ScanLine::MinorsAsked) => probe.minors = Some(Vec::new()),
            Some(ScanLine::Scanned(pids)) => probe.scanned = pids,
            Some(ScanLine::Minor { minor, uuid }) => {
                if let Some(map) = probe.minors.as_mut()
                    && map.len() < MAX_SCAN_LINES
                    && !map.iter().any(|(m, _)| *m == minor)
                {
                    map.push((minor, uuid));
                }
            }
            None => {}
        }
    }
    let mut known: Vec<u32> = pids.to_vec();
    for (pid, _) in &scanned {
        if !known.contains(pid) && known.len() < pids.len() + MAX_PROBED {
            known.push(*pid);
        }
    }
    let found = &mut probe.found;
    for line in lines {
        let mut words = line.splitn(3, ' ');
        let (Some(pid), Some(key)) = (words.next(), words.next()) else {
            continue;
        };
        let rest = words.next().unwrap_or("").trim();
        let Ok(pid) = pid.parse::<u32>() else {
            continue;
        };
        if !known.contains(&pid) || key == "dev" || key == "log" {
            continue;
        }
        let i = match found.iter().position(|f| f.process.pid == pid) {
            Some(i) => i,
            None => {
                if found.len() >= 2 * MAX_PROBED {
                    continue;
                }
                found.push(Found {
                    process: JobProcess {
                        pid,
                        ..JobProcess::default()
                    },
                    log_fd: None,
                    writes_log: false,
                });
                found.len() - 1
            }
        };
        let entry = &mut found[i];
        match key {
            "ps" => {
                let mut fields = rest.split_whitespace();
                entry.process.elapsed_s = fields.next().and_then(|s| s.parse().ok());
                entry.process.user = fields.next().map(|u| cut(&sanitize(u), 64));
            }
            "cpu" => entry.process.cpu_s = cpu_seconds(rest),
            "cmd" => entry.process.command = cut(&sanitize(rest), COMMAND_CHARS),
            "fd1" | "fd2" => {
                let fd = if key == "fd1" {
                    LogFd::Stdout
                } else {
                    LogFd::Stderr
                };
                // Stdout first: `2>&1` makes both the same file.
                if entry.log_fd.is_none() {
                    entry.log_fd = Some(fd);
                    entry.process.log = Some(format!(
                        "{}: {}",
                        fd.word(),
                        cut(&sanitize(rest), PATH_CHARS)
                    ));
                }
            }
            _ => {}
        }
    }
    // What the scan said of each process described (a process it named but that printed no
    // details was gone by then: it is no job).
    for f in found.iter_mut() {
        for (pid, minor) in &scanned {
            if *pid != f.process.pid {
                continue;
            }
            match minor {
                Some(m) if !f.process.devices.contains(m) => f.process.devices.push(*m),
                Some(_) => {}
                None => f.writes_log = true,
            }
        }
        f.process.devices.sort_unstable();
    }
    found.sort_by_key(|f| {
        pids.iter()
            .position(|p| *p == f.process.pid)
            .unwrap_or(usize::MAX)
    });
    probe
}

/// `ps -o times=`'s answer: whole seconds, digits only; anything else is no answer.
fn cpu_seconds(text: &str) -> Option<u64> {
    let ok =
        !text.is_empty() && text.len() <= CPU_DIGITS && text.bytes().all(|b| b.is_ascii_digit());
    ok.then(|| text.parse().ok()).flatten()
}

fn cut(text: &str, chars: usize) -> String {
    text.chars().take(chars).collect()
}

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

    const SCAN: Scan<'static> = Scan {
        nvidia_smi: "nvidia-smi",
        log_glob: None,
        container: false,
        minors_known: false,
        scanned: &[],
    };

    #[test]
    fn the_probe_holds_only_the_integers_it_was_given() {
        let command = probe_command(&[42, 7, 42], &SCAN).expect("command");
        assert!(command.starts_with("sh -c '"), "{command}");
        assert!(command.contains("for p in 7 42;"), "{command}");
        // The nvidia-smi path, the pattern and the flags are the script's arguments, quoted.
        let scan = Scan {
            nvidia_smi: "/opt/x y/nvidia-smi; reboot",
            log_glob: Some("/root/run/*.log'; rm -rf ~; '"),
            ..SCAN
        };
        let command = probe_command(&[7], &scan).expect("command");
        assert!(
            command.ends_with(
                "' sh '/opt/x y/nvidia-smi; reboot' '/root/run/*.log'\\''; rm -rf ~; '\\''' - ''"
            ),
            "{command}"
        );
    }

    /// Runs a command line as the host's shell would, with `nvidia-smi` a script printing
    /// `list` and exiting `status`.
    fn run_on_host(list: &str, status: i32, line: impl Fn(&Scan<'_>) -> String) -> (i32, String) {
        let dir = tempfile::tempdir().expect("temp");
        let smi = dir.path().join("nvidia-smi");
        std::fs::write(&smi, format!("#!/bin/sh\nprintf '{list}'\nexit {status}\n")).expect("fake");
        std::fs::set_permissions(&smi, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .expect("mode");
        let smi = smi.to_string_lossy().into_owned();
        let scan = Scan {
            nvidia_smi: &smi,
            ..SCAN
        };
        let out = std::process::Command::new("sh")
            .args(["-c", &line(&scan)])
            .output()
            .expect("sh");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    }

    #[test]
    fn the_process_list_carries_the_probe_of_known_jobs_after_its_marker() {
        let me = std::process::id();
        let list = format!("{me}, python3, 873, GPU-1\\n");
        let (status, out) = run_on_host(&list, 0, |scan| {
            list_and_probe_command(&crate::remote::link::smi::apps_args(), &[me], scan)
                .expect("command")
        });
        assert_eq!(status, 0, "{out}");
        let lines: Vec<String> = out.lines().map(str::to_string).collect();
        let marker = lines.iter().position(|l| l == PROBE_MARKER).expect(&out);
        assert_eq!(
            lines[..marker],
            [format!("{me}, python3, 873, GPU-1")],
            "{out}"
        );
        // What follows is the probe: the same answer a probe of its own gives.
        let found = parse_probe(&[me], &lines[marker + 1..]).found;
        assert_eq!(found.len(), 1, "{out}");
        assert!(found[0].process.elapsed_s.is_some(), "{out}");
        assert!(!found[0].process.command.is_empty(), "{out}");
        let (_, alone) = run_on_host(&list, 0, |scan| probe_command(&[me], scan).expect("probe"));
        let alone: Vec<String> = alone.lines().map(str::to_string).collect();
        assert_eq!(parse_probe(&[me], &alone).found.len(), 1);
        // A list that failed prints no probe, and its status is nvidia-smi's.
        let (status, out) = run_on_host("No devices were found\\n", 9, |scan| {
            list_and_probe_command(&crate::remote::link::smi::apps_args(), &[me], scan)
                .expect("command")
        });
        assert_eq!(status, 9, "{out}");
        assert!(!out.contains(PROBE_MARKER), "{out}");
    }

    #[test]
    fn probe_lines_become_jobs_and_lines_about_other_processes_are_ignored() {
        let lines: Vec<String> = [
            "1307 ps 15 root",
            "1307 cpu 14",
            "1307 cmd python3 hf_long.py ",
            "1307 fd1 /root/run/hf_long.log",
            "1307 fd2 /root/run/hf_long.log",
            "999 cmd rm -rf /",
            "x cmd junk",
            "1307 cmd \u{1b}]0;title\u{7}again",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let found = parse_probe(&[1307], &lines).found;
        assert_eq!(found.len(), 1);
        let job = &found[0];
        assert_eq!(job.process.elapsed_s, Some(15));
        assert_eq!(job.process.user.as_deref(), Some("root"));
        assert_eq!(job.process.cpu_s, Some(14));
        assert_eq!(job.log_fd, Some(LogFd::Stdout));
        assert_eq!(
            job.process.log.as_deref(),
            Some("stdout: /root/run/hf_long.log")
        );
        // The last word wins, and no escape survives.
        assert!(!job.process.command.contains('\u{1b}'));
    }

    #[test]
    fn a_cpu_time_is_whole_seconds_or_nothing() {
        for (answer, want) in [
            ("0", Some(0)),
            ("3671", Some(3671)),
            ("", None),
            ("-5", None),
            ("1:02", None),
            ("12 34", None),
            ("99999999999999999999", None),
        ] {
            let lines = vec![format!("7 cpu {answer}")];
            let found = parse_probe(&[7], &lines).found;
            assert_eq!(found[0].process.cpu_s, want, "{answer:?}");
        }
    }

    #[test]
    fn processes_the_scan_names_are_jobs_with_their_devices_and_the_minors_are_read() {
        let lines: Vec<String> = [
            "scanned 549",
            "12 dev 0",
            "12 dev 3",
            "12 dev 0",
            "30 log",
            "44 dev 1",
            "12 ps 20 root",
            "12 cmd python3 train.py",
            "30 ps 5 root",
            "30 cmd python3 starting.py",
            "minors",
            "gpu 0 GPU-a",
            "gpu 3 GPU-d",
            "gpu 3 GPU-other",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        // 549 is what nvidia-smi listed: not in this /proc, so it printed nothing.
        let probe = parse_probe(&[549], &lines);
        let pids: Vec<u32> = probe.found.iter().map(|f| f.process.pid).collect();
        // 44 was named but printed no details: it was gone by then.
        assert_eq!(pids, vec![12, 30]);
        assert_eq!(probe.found[0].process.devices, vec![0, 3]);
        assert!(!probe.found[0].writes_log);
        assert!(probe.found[1].writes_log);
        assert!(probe.found[1].process.devices.is_empty());
        assert_eq!(
            probe.minors,
            Some(vec![(0, "GPU-a".to_string()), (3, "GPU-d".to_string())])
        );
        // Without the `minors` line, `gpu` lines are not believed.
        assert_eq!(probe.scanned, vec![549]);
        let probe = parse_probe(&[549], &lines[..10]);
        assert_eq!(probe.minors, None);
    }

    /// The probe run by this machine's own `sh` (what sshd would run): a process holding a
    /// file open for writing that matches the pattern is found, one reading it is not.
    #[test]
    fn the_probe_runs_and_finds_the_writer_of_the_configured_log() {
        let dir = tempfile::tempdir().expect("temp");
        let log = dir.path().join("run.log");
        std::fs::write(&log, "").expect("log");
        let spawn = |redirect: &str| {
            std::process::Command::new("sh")
                .arg("-c")
                .arg(format!("exec sleep 60 {redirect}'{}'", log.display()))
                .spawn()
                .expect("sleep")
        };
        let mut writer = spawn("3>>");
        let mut reader = spawn("3<");
        std::thread::sleep(std::time::Duration::from_millis(300));
        let glob = format!("{}/*.log", dir.path().display());
        let scan = Scan {
            log_glob: Some(&glob),
            ..SCAN
        };
        let command = probe_command(&[], &scan).expect("command");
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(&command)
            .output()
            .expect("probe");
        let _ = writer.kill();
        let _ = reader.kill();
        let _ = writer.wait();
        let _ = reader.wait();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let lines: Vec<String> = text.lines().map(str::to_string).collect();
        let probe = parse_probe(&[], &lines);
        let pids: Vec<u32> = probe.found.iter().map(|f| f.process.pid).collect();
        assert_eq!(pids, vec![writer.id()], "{text}");
        assert!(probe.found[0].writes_log);
        assert!(
            probe.found[0].process.command.starts_with("sleep 60"),
            "{text}"
        );
    }

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
