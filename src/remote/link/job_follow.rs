//! Following a job's log over the link's session: after each process list the
//! GPU processes, and the jobs found before, are probed (`job_find.rs`; with the processes
//! holding GPU devices when the listed PIDs are not in `/proc`, and those writing the configured
//! log, its scan) and sent as `HostEvent::Jobs` (a job has ended when its process is
//! gone); the first one whose
//! stdout or stderr is a regular file has its log read back, a bounded tail of
//! [`TAIL_BYTES`] first (the run's history so far, so a one-shot `snapshot` knows it too),
//! then, on a followed link, what it adds, until the process exits (`tail --pid`).
//!
//! The log is named as `/proc/PID/fd/N`, built from the integers the process list gave, so no
//! remote text ever reaches a command line. Its text is untrusted: it goes to the engine as
//! `HostEvent::JobLog` only to be parsed (`crate::job::JobLog` keeps no control character or
//! escape), in chunks of at most [`CHUNK_BYTES`]; the link holds one chunk at a time.

use std::sync::Arc;
use std::time::Duration;

use crate::fleet::HostEvent;
use crate::fleet::job::JobProcess;
use crate::fleet::job_found::JobFound;
use crate::remote::error::RemoteError;
use crate::remote::link::channel_run::{Budget, RunEvent};
use crate::remote::link::flood::OTHER_BUDGET;
use crate::remote::link::job_find::{self, LogFd};
use crate::remote::link::job_find::{MAX_SCAN_LINES, Scan, gpus_of};
use crate::remote::link::job_watch::MAX_SCANNED;
use crate::remote::link::mux::{Mux, Slot};
use crate::remote::link::session_state::{SessionState, keep};
use crate::remote::link::smi;
use crate::remote::link::{Link, Mode};
use crate::remote::quote::{CommandError, RemoteCommand};
use crate::telemetry::source::now_ms;
use crate::words::Words;

/// The recent part of a log read back at connect: enough for a long run's history of
/// losses and evaluations (a 3,000-step `Trainer` log is 58 KB).
pub(crate) const TAIL_BYTES: u64 = 4 * 1024 * 1024;
/// Text the link gathers before handing it to the engine.
const CHUNK_BYTES: usize = 64 * 1024;
/// Lines the probe may print: five per process, for those asked about and those the scan
/// found, and the scan's own lines (`job_find.rs`).
const MAX_PROBE_LINES: usize = 5 * 2 * job_find::MAX_PROBED + 2 * MAX_SCAN_LINES + 1;
/// What a log may send per second: the whole tail at once, and a log's own pace after it.
const LOG_BUDGET: Budget = Budget {
    window: Duration::from_secs(1),
    lines: 200_000,
    bytes: 2 * TAIL_BYTES,
};

/// `tail` of job `pid`'s descriptor: its last [`TAIL_BYTES`], then, when following
/// (`Some(every_s)`), what it adds until the process exits, every `every_s` seconds (see
/// [`follow_script`]).
pub(crate) fn tail_command(
    pid: u32,
    fd: LogFd,
    follow: Option<u32>,
) -> Result<String, CommandError> {
    let file = format!("/proc/{pid}/fd/{}", fd.number());
    let Some(every_s) = follow else {
        return RemoteCommand::new("tail")
            .args(["-c", &TAIL_BYTES.to_string(), &file])
            .to_shell();
    };
    let script = follow_script(&format!("-c {TAIL_BYTES} -f --pid={pid} \"$1\""), every_s);
    RemoteCommand::new("sh")
        .args(["-c", script.as_str(), "sh", file.as_str()])
        .to_shell()
}

/// How often a followed log is read while someone has the job's host open: its progress on
/// screen is at most this late.
pub(crate) const FOLLOW_LOOKED_AT_S: u32 = 5;
/// How often it is read otherwise (the fleet's view, the watcher): a run's step, loss and
/// findings half a minute late change nothing a renter decides (the process list that tells a
/// job ended runs as often), and each read is a packet and a wake-up of the link and of the
/// console, which cost fifty followed logs a quarter more of the console's CPU at 5 s.
pub(crate) const FOLLOW_UNWATCHED_S: u32 = 30;

/// A shell line that `exec`s `tail {args}` reading what the file adds every `every_s` seconds,
/// not at every write: a training log's progress bar rewrites itself ten times a second, and
/// each write followed at once was a packet and a wake-up of the link (fifty hosts' logs cost
/// the console a third more CPU). GNU tail follows with inotify, so it is asked to poll
/// (`---disable-inotify`, which it has had since 2009) where it knows the flag; other tails
/// (busybox) poll anyway, every `-s` seconds. `args` are integers and fixed words only.
fn follow_script(args: &str, every_s: u32) -> String {
    format!(
        "if tail ---disable-inotify --version >/dev/null 2>&1; then \
         exec tail ---disable-inotify -s {every_s} {args}; fi; \
         exec tail -s {every_s} {args}"
    )
}

/// `tail` of the newest regular file matching the config's `glob` (a shell pattern, expanded
/// on the host with `IFS` empty, so only `*`, `?` and `[...]` act; it is passed as an argument,
/// never spliced into the script), read for job `pid`. Exits 3, printing nothing, when no file
/// matches.
pub(crate) fn configured_tail_command(
    glob: &str,
    pid: u32,
    follow: Option<u32>,
) -> Result<String, CommandError> {
    let tail = match follow {
        Some(every_s) => follow_script(
            &format!("-c {TAIL_BYTES} -f --pid={pid} -- \"$f\""),
            every_s,
        ),
        None => format!("exec tail -c {TAIL_BYTES} -- \"$f\""),
    };
    let script = format!(
        "IFS=; set -- $1; f=; for c in \"$@\"; do [ -f \"$c\" ] || continue; \
         if [ -z \"$f\" ] || [ \"$c\" -nt \"$f\" ]; then f=$c; fi; done; \
         [ -n \"$f\" ] || exit 3; {tail}"
    );
    RemoteCommand::new("sh")
        .args(["-c", script.as_str(), "sh", glob])
        .to_shell()
}

impl Link {
    /// The process list's command. With jobs known (and no probe of its own running), their
    /// probe rides along (`job_find::list_and_probe_command`): a host whose job goes on opens
    /// no second channel each time its processes are listed.
    pub(crate) fn processes_command(
        &self,
        mux: &Mux,
        st: &mut SessionState,
    ) -> Result<Arc<str>, CommandError> {
        st.job.list_ended();
        let mut known: Vec<u32> = st.job.listed.iter().flatten().copied().collect();
        known.sort_unstable();
        known.dedup();
        known.truncate(job_find::MAX_PROBED);
        if known.is_empty() || mux.running(Slot::JobProbe) {
            return smi::apps_command(&self.opts.nvidia_smi).map(Arc::from);
        }
        let scan = self.scan(st);
        let command: Arc<str> =
            job_find::list_and_probe_command(&smi::apps_args(), &known, &scan)?.into();
        st.job.list_probe = true;
        st.job.probing = known;
        st.job.probe_lines.clear();
        Ok(command)
    }

    /// A line of the process list: the list's own before the probe's marker, the probe's after.
    pub(crate) fn on_processes_line(&mut self, st: &mut SessionState, line: String) {
        if st.job.past_marker {
            if st.job.probe_lines.len() < MAX_PROBE_LINES {
                st.job.probe_lines.push(line);
            }
        } else if st.job.list_probe && line == job_find::PROBE_MARKER {
            st.job.past_marker = true;
        } else {
            keep(&mut st.apps_lines, line);
        }
    }

    /// The process list named `pids`. When it carried the probe of every one of them, that
    /// probe is the answer; a process new to the list (a job starting) is probed anew.
    pub(crate) fn jobs_listed(
        &mut self,
        mux: &mut Mux,
        st: &mut SessionState,
        pids: Vec<u32>,
    ) -> Result<(), RemoteError> {
        let carried = st.job.list_probe && st.job.past_marker;
        st.job.list_ended();
        if carried
            && !mux.running(Slot::JobProbe)
            && pids.iter().all(|p| st.job.probing.contains(p))
        {
            st.job.reported = pids;
            return self.on_probe_done(mux, st);
        }
        self.find_jobs(mux, st, pids)
    }

    /// What the probe's scan goes by (`job_find.rs`).
    fn scan<'a>(&'a self, st: &'a SessionState) -> Scan<'a> {
        Scan {
            nvidia_smi: &self.opts.nvidia_smi,
            log_glob: self.host.job_log.as_deref(),
            container: st.job.container,
            minors_known: st.job.minors.is_some(),
            scanned: &st.job.scanned,
        }
    }

    /// The process list came back: probe its processes, and the jobs found before that are
    /// no longer on the GPUs (a job between phases still runs: it has ended only when its
    /// process is gone); say when none is left.
    fn find_jobs(
        &mut self,
        mux: &mut Mux,
        st: &mut SessionState,
        mut pids: Vec<u32>,
    ) -> Result<(), RemoteError> {
        if mux.running(Slot::JobProbe) {
            return Ok(());
        }
        st.job.reported = pids.clone();
        pids.extend(st.job.listed.iter().flatten());
        pids.sort_unstable();
        pids.dedup();
        pids.truncate(job_find::MAX_PROBED);
        // With a configured log the probe runs on a host without GPU processes too: the
        // process writing that log is a job starting.
        if pids.is_empty() && self.host.job_log.is_none() {
            if st.job.listed.as_ref().is_none_or(|l| !l.is_empty()) {
                st.job.listed = Some(Vec::new());
                self.emit_or_hold(
                    st,
                    HostEvent::Jobs {
                        at_ms: now_ms(),
                        jobs: Vec::new(),
                    },
                );
            }
            return Ok(());
        }
        let scan = self.scan(st);
        let command = job_find::probe_command(&pids, &scan)?;
        mux.start(Slot::JobProbe, &command, OTHER_BUDGET)?;
        st.job.probing = pids;
        st.job.probe_lines.clear();
        Ok(())
    }

    /// Whether the job slots still have work a one-shot reading waits for.
    pub(crate) fn jobs_busy(mux: &Mux) -> bool {
        mux.running(Slot::JobProbe) || mux.running(Slot::JobLog)
    }

    pub(crate) fn on_job_event(
        &mut self,
        slot: Slot,
        event: RunEvent,
        mux: &mut Mux,
        st: &mut SessionState,
    ) -> Result<(), RemoteError> {
        match (slot, event) {
            (Slot::JobProbe, RunEvent::Line(line))
                if st.job.probe_lines.len() < MAX_PROBE_LINES =>
            {
                st.job.probe_lines.push(line);
            }
            (Slot::JobProbe, RunEvent::Line(_)) => {}
            (Slot::JobProbe, RunEvent::Exited { .. }) => self.on_probe_done(mux, st)?,
            (Slot::JobProbe, _) => st.job.probe_lines.clear(),
            (Slot::JobLog, RunEvent::Bytes(bytes)) => {
                st.job.pending.extend_from_slice(&bytes);
                if st.job.pending.len() >= CHUNK_BYTES {
                    self.flush_job_log(st);
                }
            }
            (Slot::JobLog, RunEvent::Exited { status }) => {
                self.flush_job_log(st);
                // `tail --pid` ends when the job does: list the processes now, so its end is
                // known at once rather than at the next scheduled list.
                if self.mode == Mode::Follow {
                    st.processes_due = Some(std::time::Instant::now());
                }
                if let Some((pid, _)) = st.job.following.take()
                    && status != Some(0)
                    && self.mode == Mode::Follow
                    && !st.job.configured
                {
                    // Unreadable (or `tail` without `--pid`): not retried this session.
                    st.job.given_up.push(pid);
                }
            }
            (Slot::JobLog, RunEvent::Refused(why)) => {
                if let Some((pid, _)) = st.job.following.take() {
                    st.job.given_up.push(pid);
                }
                self.notice_once(job_log_refused(&why));
            }
            (Slot::JobLog, RunEvent::Flooded(_)) => {
                st.job.pending.clear();
                if let Some((pid, _)) = st.job.following.take() {
                    st.job.given_up.push(pid);
                }
                self.notice_once(job_log_flood());
            }
            _ => {}
        }
        Ok(())
    }

    fn on_probe_done(&mut self, mux: &mut Mux, st: &mut SessionState) -> Result<(), RemoteError> {
        let lines = std::mem::take(&mut st.job.probe_lines);
        let pids = std::mem::take(&mut st.job.probing);
        let probe = job_find::parse_probe(&pids, &lines);
        if probe.minors.is_some() {
            st.job.minors = probe.minors;
        }
        st.job.scanned.extend(probe.scanned);
        let over = st.job.scanned.len().saturating_sub(MAX_SCANNED);
        st.job.scanned.drain(..over);
        let found = probe.found;
        let mut jobs: Vec<JobProcess> = Vec::with_capacity(found.len());
        for f in &found {
            let mut job = f.process.clone();
            let before = st.job.found.iter().find(|(p, _, _)| *p == job.pid);
            job.found = if st.job.reported.contains(&job.pid) {
                JobFound::ProcessList
            } else if !job.devices.is_empty() {
                st.job.container = true;
                JobFound::Device
            } else if let Some((_, before, devices)) = before {
                // Between phases, or the scan did not run: what was found before holds.
                if job.devices.is_empty() {
                    job.devices = devices.clone();
                }
                *before
            } else if f.writes_log {
                JobFound::Log
            } else {
                JobFound::ProcessList
            };
            if job.found == JobFound::Device {
                job.gpus = gpus_of(&job.devices, st.job.minors.as_deref().unwrap_or(&[]));
            }
            jobs.push(job);
        }
        st.job.found = jobs
            .iter()
            .map(|j| (j.pid, j.found, j.devices.clone()))
            .collect();
        // No job's output is a file: the config's log is the job's that writes it, else the
        // first job's.
        let writer = found.iter().position(|f| f.writes_log).unwrap_or(0);
        if !found.iter().any(|f| f.log_fd.is_some())
            && let (Some(glob), Some(job)) = (&self.host.job_log, jobs.get_mut(writer))
        {
            job.log = Some(format!("config: {glob}"));
        }
        let unchanged = jobs.is_empty() && st.job.listed.as_ref().is_some_and(Vec::is_empty);
        st.job.listed = Some(jobs.iter().map(|j| j.pid).collect());
        if !unchanged {
            self.emit_or_hold(
                st,
                HostEvent::Jobs {
                    at_ms: now_ms(),
                    jobs,
                },
            );
        }
        if let Some((pid, _)) = st.job.following
            && found.iter().any(|f| f.process.pid == pid)
        {
            return Ok(());
        }
        let next = found.iter().find_map(|f| {
            let fd = f.log_fd?;
            (!st.job.given_up.contains(&f.process.pid)).then_some((f.process.pid, fd))
        });
        let (pid, fd) = match (next, &self.host.job_log) {
            (Some((pid, fd)), _) => (pid, Some(fd)),
            (None, Some(_)) => match found.get(writer) {
                Some(f) => (f.process.pid, None),
                None => return Ok(()),
            },
            (None, None) => return Ok(()),
        };
        self.start_tail(mux, st, pid, fd, self.follow_every_s())
    }

    /// How often the followed log is read now: often while someone has the host open.
    fn follow_every_s(&self) -> u32 {
        if self.backlog.looked_at() {
            FOLLOW_LOOKED_AT_S
        } else {
            FOLLOW_UNWATCHED_S
        }
    }

    /// Reads job `pid`'s log: descriptor `fd`, or the config's log when `None`; followed every
    /// `every_s` seconds on a followed link. Whatever read a log before is stopped, and the
    /// engine reads this one from its start (its tail).
    fn start_tail(
        &mut self,
        mux: &mut Mux,
        st: &mut SessionState,
        pid: u32,
        fd: Option<LogFd>,
        every_s: u32,
    ) -> Result<(), RemoteError> {
        let follow = (self.mode == Mode::Follow).then_some(every_s);
        let command = match (fd, &self.host.job_log) {
            (Some(fd), _) => tail_command(pid, fd, follow)?,
            (None, Some(glob)) => configured_tail_command(glob, pid, follow)?,
            (None, None) => return Ok(()),
        };
        mux.start_passing_bytes(Slot::JobLog, &command, LOG_BUDGET)?;
        st.job.pending.clear();
        st.job.following = Some((pid, false));
        st.job.following_fd = fd;
        st.job.every_s = every_s;
        st.job.configured = fd.is_none();
        Ok(())
    }

    /// Someone opened the host whose job's log is followed, or left it: the log is read again
    /// at the pace that suits (its tail first, so the screen has the run's progress at once).
    pub(crate) fn retune_job_log(
        &mut self,
        mux: &mut Mux,
        st: &mut SessionState,
    ) -> Result<(), RemoteError> {
        let every_s = self.follow_every_s();
        if self.mode != Mode::Follow || st.job.every_s == every_s || !mux.running(Slot::JobLog) {
            return Ok(());
        }
        let Some((pid, _)) = st.job.following else {
            return Ok(());
        };
        self.start_tail(mux, st, pid, st.job.following_fd, every_s)
    }

    /// Hands the log text gathered so far to the engine (after each round, and whenever a
    /// chunk is full).
    pub(crate) fn flush_job_log(&mut self, st: &mut SessionState) {
        if st.job.pending.is_empty() {
            return;
        }
        let Some((pid, started)) = st.job.following.as_mut() else {
            st.job.pending.clear();
            return;
        };
        // Only the start of a character came: it waits for the rest, and nothing is sent (a
        // log that stops on half a character would otherwise send an empty read every round).
        let Some(text) = utf8_chunk(&mut st.job.pending) else {
            return;
        };
        let restart = !*started;
        *started = true;
        let pid = *pid;
        self.emit_or_hold(
            st,
            HostEvent::JobLog {
                at_ms: now_ms(),
                pid,
                restart,
                text,
            },
        );
    }
}

/// The text of `pending`, the log's bytes as they came: all of them but a character cut at
/// their end, which stays in `pending` for the next read to finish; `None` when that part of
/// a character is all there is. Bytes that are not UTF-8 become U+FFFD (the reader keeps no
/// control character either).
fn utf8_chunk(pending: &mut Vec<u8>) -> Option<String> {
    let keep = unfinished_char(pending);
    if keep == pending.len() {
        return None;
    }
    let rest = pending.split_off(pending.len() - keep);
    let bytes = std::mem::replace(pending, rest);
    Some(match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

/// How many bytes at the end of `bytes` begin a character that is not finished yet (0 to 3).
fn unfinished_char(bytes: &[u8]) -> usize {
    let n = bytes.len();
    for back in 1..=n.min(3) {
        let b = bytes[n - back];
        if b & 0xC0 != 0x80 {
            let needs = match b {
                0xF0.. => 4,
                0xE0.. => 3,
                0xC0.. => 2,
                _ => 1,
            };
            return if needs > back { back } else { 0 };
        }
    }
    0
}

fn job_log_flood() -> Words {
    Words::new("link_notice.job_log_flood")
}

fn job_log_refused(why: &Words) -> Words {
    Words::new("link_notice.job_log_refused").put_words("why", why.clone())
}

#[cfg(test)]
mod tests {
    //! Tests of `job_follow`: reading a followed log's bytes, and the scripts that follow it.

    use super::*;

    #[test]
    fn a_character_cut_between_two_reads_is_kept_for_the_next() {
        let bar = "loss 0.5 |███| 3/9\r".as_bytes();
        for cut in 0..=bar.len() {
            let mut pending = bar[..cut].to_vec();
            let mut text = utf8_chunk(&mut pending).unwrap_or_default();
            pending.extend_from_slice(&bar[cut..]);
            text.push_str(&utf8_chunk(&mut pending).unwrap_or_default());
            assert_eq!(text.as_bytes(), bar, "cut at {cut}");
            assert!(pending.is_empty());
        }
        let mut bad = b"a\xff\xfeb".to_vec();
        assert_eq!(utf8_chunk(&mut bad).as_deref(), Some("a\u{fffd}\u{fffd}b"));
    }

    #[test]
    fn half_a_character_alone_is_no_text_to_send_until_the_rest_comes() {
        let mut pending = "█".as_bytes()[..2].to_vec();
        for _ in 0..3 {
            assert_eq!(utf8_chunk(&mut pending), None, "nothing whole yet");
            assert_eq!(pending.len(), 2, "the start waits");
        }
        pending.push("█".as_bytes()[2]);
        assert_eq!(utf8_chunk(&mut pending).as_deref(), Some("█"));
        assert!(pending.is_empty());
    }

    #[test]
    fn a_configured_log_is_an_argument_of_the_script_never_part_of_it() {
        let command =
            configured_tail_command("/root/run/*.log'; rm -rf ~; '", 12, Some(5)).expect("command");
        // The script is one quoted word, `sh` the next, the pattern the last, quoted whole.
        assert!(
            command.ends_with(" sh '/root/run/*.log'\\''; rm -rf ~; '\\'''"),
            "{command}"
        );
        assert!(
            command.contains("tail ---disable-inotify -s 5 -c 4194304 -f --pid=12 --"),
            "{command}"
        );
    }

    #[test]
    fn the_tail_names_the_descriptor_by_its_pid_only() {
        let follow = tail_command(1307, LogFd::Stdout, Some(FOLLOW_UNWATCHED_S)).expect("command");
        assert!(
            follow.ends_with(" sh /proc/1307/fd/1"),
            "the file is the script's argument: {follow}"
        );
        assert!(
            follow.contains("exec tail -s 30 -c 4194304 -f --pid=1307 \"$1\""),
            "{follow}"
        );
        assert_eq!(
            tail_command(7, LogFd::Stderr, None).expect("command"),
            "tail -c 4194304 /proc/7/fd/2"
        );
    }

    /// The followed log reaches the link every few seconds, not at each of the progress bar's
    /// ten rewrites a second (run through this machine's own `sh` and `tail`).
    #[test]
    fn a_followed_log_is_read_once_a_second_not_at_every_write() {
        use std::io::{Read, Write};
        use std::time::Instant;
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("train.log");
        std::fs::write(&path, "start\n").expect("log");
        let script = follow_script(&format!("-c {TAIL_BYTES} -f \"$1\""), FOLLOW_LOOKED_AT_S);
        let mut tail = std::process::Command::new("sh")
            .args(["-c", script.as_str(), "sh"])
            .arg(&path)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("sh");
        let mut out = tail.stdout.take().expect("stdout");
        let writer_path = path.clone();
        let writer = std::thread::spawn(move || {
            let mut log = std::fs::OpenOptions::new()
                .append(true)
                .open(writer_path)
                .expect("open");
            for step in 0..30 {
                write!(log, "step {step}\r").expect("write");
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        // Count the reads that bring something, until the last write is seen.
        let started = Instant::now();
        let mut reads = 0;
        let mut seen = String::new();
        let mut buf = [0u8; 4096];
        while started.elapsed() < Duration::from_secs(15) && !seen.contains("step 29") {
            let n = out.read(&mut buf).expect("read");
            if n == 0 {
                break;
            }
            reads += 1;
            seen.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
        let _ = tail.kill();
        let _ = tail.wait();
        writer.join().expect("writer");
        assert!(seen.contains("start"), "{seen:?}");
        assert!(seen.contains("step 29"), "{seen:?}");
        // Thirty writes over three seconds: read at every write they would be about thirty.
        assert!(reads <= 4, "{reads} reads for 30 writes");
    }
}
