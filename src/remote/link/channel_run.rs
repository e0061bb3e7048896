//! One remote command on one channel, driven without blocking: open, exec, read lines, close,
//! exit status. A link steps several of these in turn on one session, so a quiet channel never
//! holds up a busy one.
//!
//! What one job may take in is bounded: a line longer than `MAX_LINE_BYTES` is discarded, one
//! step reads at most `MAX_STEP_BYTES`, and a command that sends more lines or bytes in a window
//! than its [`Budget`] allows is reported as flooding and its channel closed (the host's own
//! window then holds what it still sends, until it sees the close).

use std::io::{ErrorKind, Read, Write};
use std::time::{Duration, Instant};

use ssh2::{Channel, ErrorCode, ExtendedData, Session};

use crate::remote::error::RemoteError;
use crate::remote::link::run_shell::RunShell;
use crate::remote::quote::CommandError;
use crate::words::Words;

const LIBSSH2_ERROR_EAGAIN: i32 = -37;
/// Codes that concern one channel (refused open, denied exec), not the whole connection.
const CHANNEL_LEVEL: [i32; 3] = [-21, -22, -32];
/// A line longer than this is discarded whole, so a host that never ends a line cannot grow
/// memory without bound.
const MAX_LINE_BYTES: usize = 64 * 1024;
/// What one step reads at most, so one busy channel cannot hold the others (and the events of a
/// round) up without bound.
const MAX_STEP_BYTES: usize = 64 * 1024;

/// How much output a command may send per window before it counts as flooding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Budget {
    pub window: Duration,
    pub lines: u32,
    pub bytes: u64,
}

/// What a flooding command sent in the window that went over its budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Flood {
    pub lines: u32,
    pub bytes: u64,
    pub window: Duration,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RunEvent {
    /// One line of output (stdout and stderr merged), without its line ending.
    Line(String),
    /// Output as it came, for a job whose reader cuts it itself ([`ChannelRun::pass_bytes`]).
    Bytes(Vec<u8>),
    /// The command ended; `None` when the server sent no exit status (killed by a signal).
    Exited { status: Option<i32> },
    /// The server refused the channel or the exec; the connection itself is fine.
    Refused(Words),
    /// The command sent more than its budget allows; its channel is being closed and the job
    /// ends without an `Exited`.
    Flooded(Flood),
}

pub(crate) enum StepError {
    Refused(Words),
    Session(RemoteError),
}

enum Phase {
    Opening,
    Merging(Channel),
    Starting(Channel),
    Reading(Channel),
    Closing { channel: Channel, close_sent: bool },
    Done,
}

pub(crate) struct ChannelRun {
    command: String,
    phase: Phase,
    partial: Vec<u8>,
    /// The line being read went past `MAX_LINE_BYTES`: the rest of it is dropped.
    overlong: bool,
    budget: Budget,
    window_end: Option<Instant>,
    window_lines: u32,
    window_bytes: u64,
    flooded: bool,
    /// Closing because gpufleet asked (cancel, flood): nothing more is reported.
    quiet: bool,
    /// A liveness probe: the channel is opened and closed again, nothing runs.
    probe: bool,
    /// Output is handed on as it comes, not cut into lines ([`ChannelRun::pass_bytes`]).
    raw: bool,
    /// A long-lived shell running one request after another ([`ChannelRun::shell`]).
    shell: Option<RunShell>,
}

fn again(e: &ssh2::Error) -> bool {
    e.code() == ErrorCode::Session(LIBSSH2_ERROR_EAGAIN)
}

/// `e` while doing `context` (an `ssh_context.*` text): the channel refused, or the session lost.
fn classify(context: &'static str, e: &ssh2::Error) -> StepError {
    match e.code() {
        ErrorCode::Session(code) if CHANNEL_LEVEL.contains(&code) => StepError::Refused(
            Words::new("ssh_context.failed")
                .put_words("context", Words::new(context))
                .put("message", e.message()),
        ),
        _ => StepError::Session(RemoteError::ssh(context, e)),
    }
}

impl ChannelRun {
    pub(crate) fn new(command: String, budget: Budget) -> Self {
        Self {
            command,
            phase: Phase::Opening,
            partial: Vec::new(),
            overlong: false,
            budget,
            window_end: None,
            window_lines: 0,
            window_bytes: 0,
            flooded: false,
            quiet: false,
            probe: false,
            raw: false,
            shell: None,
        }
    }

    /// A long-lived shell on its own channel (`run_shell.rs`): each [`ChannelRun::ask`] runs one
    /// command, whose lines come as [`RunEvent::Line`] and whose end comes as
    /// [`RunEvent::Exited`], while the channel stays open for the next.
    pub(crate) fn shell(budget: Budget) -> Result<Self, CommandError> {
        let shell = RunShell::new();
        let command = shell.command()?;
        Ok(Self {
            shell: Some(shell),
            ..Self::new(command, budget)
        })
    }

    /// Hands a shell its next command (a quoted command line) with the budget of that run;
    /// false when this is no shell, it is closing, a run is in hand, or the command could not be
    /// told from its end (the caller runs it on a channel of its own).
    pub(crate) fn ask(&mut self, command: &str, budget: Budget) -> bool {
        if self.quiet || matches!(self.phase, Phase::Closing { .. } | Phase::Done) {
            return false;
        }
        let Some(shell) = self.shell.as_mut() else {
            return false;
        };
        if !shell.ask(command) {
            return false;
        }
        self.budget = budget;
        self.window_end = None;
        self.partial.clear();
        self.overlong = false;
        true
    }

    /// Whether a command is in hand: always for a one-command job, between an ask and its end
    /// for a shell.
    pub(crate) fn is_busy(&self) -> bool {
        self.shell.as_ref().is_none_or(RunShell::is_busy)
    }

    pub(crate) fn is_shell(&self) -> bool {
        self.shell.is_some()
    }

    /// Hands output on as [`RunEvent::Bytes`], as it comes, for a reader that cuts it itself (a
    /// training log's: `\r` progress updates, escape sequences, its own bound on a line). The
    /// budget still counts its lines (each `\n` or `\r`) and bytes; no line is made here, so
    /// a log costs no allocation per line on its way (it was a third of what following a log
    /// cost the link).
    pub(crate) fn pass_bytes(&mut self) {
        self.raw = true;
    }

    /// Opens a channel and closes it again, reporting nothing: the host's answers (the open's
    /// confirmation, the close) prove it is alive, and libssh2 consumes them. (A keepalive
    /// with a reply would do the same, but libssh2 never takes those replies off its packet
    /// queue: they pile up for as long as the session lives, and every channel read walks
    /// them.)
    pub(crate) fn probe() -> Self {
        Self {
            quiet: true,
            probe: true,
            // Nothing is read from a probe's channel, so nothing can exceed this.
            ..Self::new(
                String::new(),
                Budget {
                    window: Duration::from_secs(1),
                    lines: 0,
                    bytes: 0,
                },
            )
        }
    }

    /// Closes the channel without reporting anything more: the host sees the close (and the
    /// command's input ends), and the job is done once the host confirms it.
    pub(crate) fn stop(&mut self) {
        self.quiet = true;
        self.phase = match std::mem::replace(&mut self.phase, Phase::Done) {
            Phase::Merging(channel) | Phase::Starting(channel) | Phase::Reading(channel) => {
                Phase::Closing {
                    channel,
                    close_sent: false,
                }
            }
            closing @ Phase::Closing { .. } => closing,
            Phase::Opening | Phase::Done => Phase::Done,
        };
    }

    /// Whether the job is closing on gpufleet's own account (stopped or flooded): its slot is
    /// free for a new one.
    pub(crate) fn is_quiet(&self) -> bool {
        self.quiet
    }

    pub(crate) fn is_done(&self) -> bool {
        matches!(self.phase, Phase::Done)
    }

    /// Whether the job only waits for output (it reads and nothing else).
    pub(crate) fn is_reading(&self) -> bool {
        matches!(self.phase, Phase::Reading(_)) && !self.has_request()
    }

    /// Whether a shell's request is still to be written.
    fn has_request(&self) -> bool {
        self.shell
            .as_ref()
            .is_some_and(|s| !s.unwritten().is_empty())
    }

    /// Whether libssh2 already holds input for this job (data, or the end of it), without
    /// touching the socket. Any job that is not just reading may have work of its own.
    pub(crate) fn has_queued_input(&self) -> bool {
        match &self.phase {
            Phase::Reading(channel) => self.has_request() || queued(channel),
            _ => true,
        }
    }

    /// Advances as far as it can without waiting; true when anything happened.
    pub(crate) fn step(
        &mut self,
        session: &Session,
        buf: &mut [u8],
        out: &mut Vec<RunEvent>,
    ) -> Result<bool, StepError> {
        let mut progressed = false;
        loop {
            let phase = std::mem::replace(&mut self.phase, Phase::Done);
            let read = matches!(phase, Phase::Reading(_));
            let (next, moved) = self.advance(phase, session, buf, out)?;
            self.phase = next;
            progressed |= moved;
            // A read takes in what the socket holds, up to libssh2's buffer, so after one, a
            // job with nothing queued leaves the socket to the next round (the runtime's wait
            // looks at it first: a read can stop with bytes left, see `Mux::round`). A job
            // that has just started reading reads once: the call that started it may have
            // left bytes in libssh2's buffer.
            if !moved || self.is_done() || (read && !self.has_queued_input()) {
                return Ok(progressed);
            }
        }
    }

    fn advance(
        &mut self,
        phase: Phase,
        session: &Session,
        buf: &mut [u8],
        out: &mut Vec<RunEvent>,
    ) -> Result<(Phase, bool), StepError> {
        Ok(match phase {
            Phase::Opening => match session.channel_session() {
                Ok(channel) if self.probe => (
                    Phase::Closing {
                        channel,
                        close_sent: false,
                    },
                    true,
                ),
                Ok(channel) => (Phase::Merging(channel), true),
                Err(e) if again(&e) => (Phase::Opening, false),
                Err(e) => return Err(classify("ssh_context.open_channel", &e)),
            },
            Phase::Merging(mut channel) => {
                match channel.handle_extended_data(ExtendedData::Merge) {
                    Ok(()) => (Phase::Starting(channel), true),
                    Err(e) if again(&e) => (Phase::Merging(channel), false),
                    Err(e) => return Err(classify("ssh_context.merge_stderr", &e)),
                }
            }
            Phase::Starting(mut channel) => match channel.exec(&self.command) {
                Ok(()) => (Phase::Reading(channel), true),
                Err(e) if again(&e) => (Phase::Starting(channel), false),
                Err(e) => return Err(classify("ssh_context.start_command", &e)),
            },
            Phase::Reading(channel) => self.read(channel, buf, out)?,
            Phase::Closing {
                mut channel,
                mut close_sent,
            } => {
                // Sending the close is progress; waiting for the host's is not (reporting it
                // as progress would spin until the host answers).
                let mut sent_now = false;
                if !close_sent {
                    match channel.close() {
                        Ok(()) => {
                            close_sent = true;
                            sent_now = true;
                        }
                        Err(e) if again(&e) => {
                            return Ok((
                                Phase::Closing {
                                    channel,
                                    close_sent,
                                },
                                false,
                            ));
                        }
                        Err(_) => {
                            self.exited(None, out);
                            return Ok((Phase::Done, true));
                        }
                    }
                }
                match channel.wait_close() {
                    Ok(()) => {
                        let status = channel.exit_status().ok();
                        self.exited(status, out);
                        (Phase::Done, true)
                    }
                    Err(e) if again(&e) => (
                        Phase::Closing {
                            channel,
                            close_sent,
                        },
                        sent_now,
                    ),
                    Err(_) => {
                        self.exited(None, out);
                        (Phase::Done, true)
                    }
                }
            }
            Phase::Done => (Phase::Done, false),
        })
    }

    fn exited(&self, status: Option<i32>, out: &mut Vec<RunEvent>) {
        if !self.quiet {
            out.push(RunEvent::Exited { status });
        }
    }

    fn read(
        &mut self,
        mut channel: Channel,
        buf: &mut [u8],
        out: &mut Vec<RunEvent>,
    ) -> Result<(Phase, bool), StepError> {
        // Writing a request is not counted as progress: the mux takes progress for a sign of
        // the host's life, and a frozen host's socket still takes a request in.
        if !self.write_request(&mut channel) {
            // The shell's channel is gone (it ended on the host): the run in hand ends with
            // whatever status the host sent, and the mux starts a new shell for the next.
            let next = Phase::Closing {
                channel,
                close_sent: false,
            };
            return Ok((next, true));
        }
        let mut moved = false;
        let mut taken = 0usize;
        loop {
            if taken >= MAX_STEP_BYTES {
                // More may be waiting: the next round steps this job again.
                return Ok((Phase::Reading(channel), true));
            }
            match channel.read(buf) {
                // libssh2 can report 0 bytes without EOF; only a real EOF ends the command.
                Ok(0) if channel.eof() => {
                    self.flush(out);
                    if !self.is_busy() {
                        // A shell between runs ended: there is no run to report on.
                        self.quiet = true;
                    }
                    let next = Phase::Closing {
                        channel,
                        close_sent: false,
                    };
                    return Ok((next, true));
                }
                Ok(0) => return Ok((Phase::Reading(channel), moved)),
                Ok(n) => {
                    taken += n;
                    moved = true;
                    self.take(&buf[..n], out);
                    if self.flooded {
                        self.quiet = true;
                        let next = Phase::Closing {
                            channel,
                            close_sent: false,
                        };
                        return Ok((next, true));
                    }
                    // Nothing more queued for this channel: what the socket may still hold is
                    // the next round's (see `step`).
                    if !queued(&channel) {
                        return Ok((Phase::Reading(channel), true));
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    return Ok((Phase::Reading(channel), moved));
                }
                Err(e) => {
                    return Err(StepError::Session(RemoteError::ssh_said(
                        Words::new("ssh_context.read"),
                        e,
                    )));
                }
            }
        }
    }

    /// Writes what a shell's request still holds, as far as the channel takes it now; false
    /// when the channel refuses it (closed on the host's side). A session that failed shows at
    /// the next read.
    fn write_request(&mut self, channel: &mut Channel) -> bool {
        let Some(shell) = self.shell.as_mut() else {
            return true;
        };
        while !shell.unwritten().is_empty() {
            match channel.write(shell.unwritten()) {
                Ok(0) => break,
                Ok(n) => shell.wrote(n),
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(_) => return false,
            }
        }
        true
    }

    /// Counts `bytes` against the budget, then splits them into lines.
    fn take(&mut self, bytes: &[u8], out: &mut Vec<RunEvent>) {
        let now = Instant::now();
        if self.window_end.is_none_or(|end| now >= end) {
            self.window_end = Some(now + self.budget.window);
            self.window_lines = 0;
            self.window_bytes = 0;
        }
        self.window_bytes = self.window_bytes.saturating_add(bytes.len() as u64);
        if self.window_bytes > self.budget.bytes {
            self.flood(out);
            return;
        }
        if self.raw {
            let ends = bytes.iter().filter(|b| matches!(b, b'\n' | b'\r')).count();
            self.window_lines = self
                .window_lines
                .saturating_add(u32::try_from(ends).unwrap_or(u32::MAX));
            if self.window_lines > self.budget.lines {
                self.flood(out);
                return;
            }
            out.push(RunEvent::Bytes(bytes.to_vec()));
            return;
        }
        self.push(bytes, out);
    }

    fn flood(&mut self, out: &mut Vec<RunEvent>) {
        self.flooded = true;
        self.partial.clear();
        out.push(RunEvent::Flooded(Flood {
            lines: self.window_lines,
            bytes: self.window_bytes,
            window: self.budget.window,
        }));
    }

    fn push(&mut self, bytes: &[u8], out: &mut Vec<RunEvent>) {
        for &b in bytes {
            if b == b'\n' {
                self.flush(out);
                if self.flooded {
                    return;
                }
            } else if self.partial.len() < MAX_LINE_BYTES {
                self.partial.push(b);
            } else {
                self.overlong = true;
            }
        }
    }

    fn flush(&mut self, out: &mut Vec<RunEvent>) {
        if self.overlong {
            // Not a line any reader here understands: dropped whole, not cut.
            self.overlong = false;
            self.partial.clear();
            return;
        }
        if self.partial.last() == Some(&b'\r') {
            self.partial.pop();
        }
        if let Some(shell) = self.shell.as_mut() {
            if let Some(status) = shell.end_of_run(&self.partial) {
                // The longest line's room is not kept while the shell waits for the next run.
                self.partial = Vec::new();
                out.push(RunEvent::Exited { status });
                return;
            }
            if !shell.is_busy() {
                // Nothing is asked of the shell: what it says is no run's (its own complaint).
                self.partial.clear();
                return;
            }
        }
        if !self.partial.is_empty() {
            self.window_lines = self.window_lines.saturating_add(1);
            if self.window_lines > self.budget.lines {
                self.flood(out);
                return;
            }
            // Valid UTF-8 (nearly every line) is checked a word at a time and copied once;
            // only a line with bad bytes takes the slower lossy pass.
            let line = match std::str::from_utf8(&self.partial) {
                Ok(text) => text.to_owned(),
                Err(_) => String::from_utf8_lossy(&self.partial).into_owned(),
            };
            out.push(RunEvent::Line(line));
        }
        self.partial.clear();
    }
}

/// Whether libssh2 holds input for `channel` (data, or its end), from its queue alone.
fn queued(channel: &Channel) -> bool {
    channel.read_window().available > 0 || channel.eof()
}

#[cfg(test)]
mod tests {
    //! Tests of `channel_run.rs`: lines, budgets, floods and passed bytes.

    use super::*;

    const ROOMY: Budget = Budget {
        window: Duration::from_secs(60),
        lines: 1_000,
        bytes: 1 << 30,
    };

    #[test]
    fn splits_lines_across_reads_and_drops_an_overlong_one() {
        let mut job = ChannelRun::new(String::new(), ROOMY);
        let mut out = Vec::new();
        job.take(b"0, GPU-a\r\n1, G", &mut out);
        job.take(b"PU-b\n\npartial", &mut out);
        assert_eq!(
            out,
            vec![
                RunEvent::Line("0, GPU-a".into()),
                RunEvent::Line("1, GPU-b".into())
            ]
        );
        job.flush(&mut out);
        assert_eq!(out.last(), Some(&RunEvent::Line("partial".into())));
        out.clear();
        // A line that never ends keeps no more than the cap, and is not passed on cut short.
        for _ in 0..40 {
            job.take(&[b'x'; 4096], &mut out);
            assert!(job.partial.len() <= MAX_LINE_BYTES);
        }
        job.take(b"\nnext\n", &mut out);
        assert_eq!(out, vec![RunEvent::Line("next".into())]);
    }

    #[test]
    fn more_lines_than_the_budget_is_a_flood_and_nothing_after_it_passes() {
        let budget = Budget { lines: 3, ..ROOMY };
        let mut job = ChannelRun::new(String::new(), budget);
        let mut out = Vec::new();
        job.take(b"a\nb\nc\nd\ne\n", &mut out);
        assert_eq!(out.len(), 4, "{out:?}");
        assert_eq!(out[2], RunEvent::Line("c".into()));
        assert_eq!(
            out[3],
            RunEvent::Flooded(Flood {
                lines: 4,
                bytes: 10,
                window: budget.window
            })
        );
        assert!(job.flooded);
    }

    #[test]
    fn more_bytes_than_the_budget_is_a_flood_even_without_a_newline() {
        let budget = Budget {
            bytes: 10_000,
            ..ROOMY
        };
        let mut job = ChannelRun::new(String::new(), budget);
        let mut out = Vec::new();
        for _ in 0..3 {
            job.take(&[b'x'; 4096], &mut out);
        }
        assert!(matches!(&out[..], [RunEvent::Flooded(f)] if f.bytes == 12_288 && f.lines == 0));
    }

    #[test]
    fn a_new_window_starts_the_count_again() {
        let budget = Budget {
            window: Duration::from_millis(30),
            lines: 2,
            ..ROOMY
        };
        let mut job = ChannelRun::new(String::new(), budget);
        let mut out = Vec::new();
        job.take(b"a\nb\n", &mut out);
        std::thread::sleep(Duration::from_millis(40));
        job.take(b"c\nd\n", &mut out);
        assert_eq!(out.len(), 4, "{out:?}");
        assert!(!job.flooded);
    }

    #[test]
    fn passed_bytes_arrive_as_they_came_and_their_line_ends_count_against_the_budget() {
        let mut job = ChannelRun::new(String::new(), ROOMY);
        job.pass_bytes();
        let mut out = Vec::new();
        job.take(b" 10%|\xe2\x96", &mut out);
        job.take(b"\x88| 1/10 [00:01<00:09]\r 20%", &mut out);
        assert_eq!(
            out,
            vec![
                RunEvent::Bytes(b" 10%|\xe2\x96".to_vec()),
                RunEvent::Bytes(b"\x88| 1/10 [00:01<00:09]\r 20%".to_vec()),
            ]
        );
        job.flush(&mut out);
        assert_eq!(out.len(), 2, "nothing is held back as a line");

        let budget = Budget { lines: 3, ..ROOMY };
        let mut job = ChannelRun::new(String::new(), budget);
        job.pass_bytes();
        let mut out = Vec::new();
        job.take(b"a\rb\nc\r", &mut out);
        assert!(!job.flooded);
        job.take(b"d\r", &mut out);
        assert!(job.flooded, "four updates are over a budget of three");
        assert!(matches!(out.last(), Some(RunEvent::Flooded(f)) if f.lines == 4));
    }

    #[test]
    fn a_line_with_bytes_that_are_not_utf8_keeps_the_rest() {
        let mut job = ChannelRun::new(String::new(), ROOMY);
        let mut out = Vec::new();
        job.take(b"GPU \xff 0\n", &mut out);
        assert_eq!(out, vec![RunEvent::Line("GPU \u{fffd} 0".into())]);
    }

    #[test]
    fn a_stopped_job_reports_nothing_more() {
        let mut job = ChannelRun::new(String::new(), ROOMY);
        job.stop();
        assert!(job.is_done(), "no channel yet: nothing to close");
        assert!(job.is_quiet());
        let mut out = Vec::new();
        job.exited(Some(0), &mut out);
        assert!(out.is_empty());
    }
}
