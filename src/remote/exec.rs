//! Running one command on a host and streaming its output: the building block for runbook
//! steps, backups before a release, and `gpufleet check`. Each call has a session of its own, so a
//! long step never holds up the telemetry link.

use std::io::{ErrorKind, Read, Write};
use std::time::{Duration, Instant};

use crate::remote::LinkOptions;
use crate::remote::connect::connect;
use crate::remote::credentials::{CredentialCache, PromptContext};
use crate::remote::error::RemoteError;
use crate::remote::host::RemoteHost;
use crate::remote::quote::RemoteCommand;
use crate::remote::sanitize::sanitize;
use crate::telemetry::source::StopFlag;
use crate::words::Words;

/// How long one blocking read may wait, so a stop request or the deadline is noticed promptly.
const READ_SLICE_MS: u32 = 250;
/// What the command runs under: a POSIX shell that prints its pid and process group (from
/// `/proc`, where readable) on one marker line, then replaces itself with the command, so the
/// exit status and output are the command's own. Closing a channel does not stop a command
/// that is not writing, so a cancel or timeout stops it by these numbers.
const WRAPPER: &str = "g=; if read -r s < /proc/$$/stat 2>/dev/null; then r=${s##*) }; \
r=${r#* }; r=${r#* }; g=${r%% *}; fi; echo \"gpufleet-pid $$ $g\"; exec \"$@\"";
const MARKER: &str = "gpufleet-pid ";

/// What to run: an argv (quoted for the remote shell here, never pasted), optional bytes for its
/// standard input (closed afterwards), and a limit on the whole run.
#[derive(Debug, Clone)]
pub struct ExecRequest<'a> {
    pub argv: &'a [String],
    pub stdin: Option<&'a [u8]>,
    pub timeout: Duration,
}

/// How the command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExecOutcome {
    /// The exit status; `None` when the command was killed by a signal or cut short.
    pub exit_status: Option<i32>,
    pub timed_out: bool,
}

/// Connects to `host` (same host-key and login rules as the link), runs `req.argv`, and calls
/// `on_line` with each line of output as it arrives (stderr merged into stdout, control
/// characters stripped). Stops early, closing the channel, when `stop` is set or the timeout
/// passes.
pub fn exec(
    host: &RemoteHost,
    opts: &LinkOptions,
    req: &ExecRequest<'_>,
    stop: &StopFlag,
    on_line: &mut dyn FnMut(&str),
) -> Result<ExecOutcome, RemoteError> {
    let (program, args) = req
        .argv
        .split_first()
        .map_or(("", &[][..]), |(p, a)| (p.as_str(), a));
    // Validated as it is (a program name, arguments without NUL), then run under the wrapper.
    RemoteCommand::new(program)
        .args(args.iter().cloned())
        .to_shell()?;
    let command = RemoteCommand::new("sh")
        .args(["-c", WRAPPER, "sh"].map(String::from))
        .args(req.argv.iter().cloned())
        .to_shell()?;
    let ctx = PromptContext::new(0, &host.name, host.target.to_string(), stop.clone());
    let mut cache = CredentialCache::default();
    let connected = connect(host, opts, &ctx, &mut cache, None)?;
    let session = connected.connection.session;
    session.set_blocking(true);
    let io = |e: ssh2::Error| RemoteError::ssh_said(Words::new("ssh_context.exec"), e);
    let mut channel = session.channel_session().map_err(io)?;
    channel
        .handle_extended_data(ssh2::ExtendedData::Merge)
        .map_err(io)?;
    channel.exec(&command).map_err(io)?;
    if let Some(input) = req.stdin {
        channel
            .write_all(input)
            .map_err(|e| RemoteError::ssh_said(Words::new("ssh_context.exec_input"), e))?;
    }
    channel.send_eof().map_err(io)?;

    session.set_timeout(READ_SLICE_MS);
    let deadline = Instant::now() + req.timeout;
    let mut pending = Vec::new();
    let mut buf = [0u8; 8192];
    let mut timed_out = false;
    let mut running: Option<Running> = None;
    let mut on_output = |line: &str| {
        if running.is_none()
            && let Some(found) = Running::parse(line)
        {
            running = Some(found);
            return;
        }
        on_line(line);
    };
    loop {
        if stop.is_set() || Instant::now() >= deadline {
            timed_out = !stop.is_set();
            break;
        }
        match channel.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                pending.extend_from_slice(&buf[..n]);
                emit_lines(&mut pending, &mut on_output);
            }
            Err(e) if matches!(e.kind(), ErrorKind::TimedOut | ErrorKind::WouldBlock) => {}
            Err(e) if e.to_string().contains("timed out") => {}
            Err(e) => {
                return Err(RemoteError::ssh_said(
                    Words::new("ssh_context.exec_output"),
                    e,
                ));
            }
        }
    }
    if !pending.is_empty() {
        on_output(&sanitize(&String::from_utf8_lossy(&pending)));
    }
    session.set_timeout(READ_SLICE_MS * 8);
    if (timed_out || stop.is_set()) && !channel.eof() {
        if let Some(running) = running {
            running.terminate(&session);
        }
        let _ = channel.close();
    }
    let _ = channel.wait_close();
    let exit_status = if timed_out || stop.is_set() {
        None
    } else {
        channel.exit_status().ok()
    };
    Ok(ExecOutcome {
        exit_status,
        timed_out,
    })
}

/// The remote command's pid and, when the wrapper could read it, its process group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Running {
    pid: u32,
    group: Option<u32>,
}

impl Running {
    fn parse(line: &str) -> Option<Self> {
        let mut words = line.strip_prefix(MARKER)?.split_whitespace();
        let pid = words.next()?.parse().ok().filter(|p| *p > 1)?;
        let group = words.next().and_then(|g| g.parse().ok());
        Some(Self { pid, group })
    }

    /// The `kill` that stops it: its whole process group when it leads one (sshd makes each
    /// session's command a session leader, so that is everything the command started), else
    /// the process alone.
    fn kill_argv(self) -> Vec<String> {
        let target = match self.group {
            Some(group) if group == self.pid => format!("-{group}"),
            _ => self.pid.to_string(),
        };
        ["kill", "-TERM", "--", &target].map(String::from).to_vec()
    }

    /// Sends the `kill` on a second channel of the same session; best effort, since the
    /// command may have ended on its own meanwhile.
    fn terminate(self, session: &ssh2::Session) {
        let argv = self.kill_argv();
        let Some((program, args)) = argv.split_first() else {
            return;
        };
        let Ok(kill) = RemoteCommand::new(program.as_str())
            .args(args.iter().cloned())
            .to_shell()
        else {
            return;
        };
        if let Ok(mut channel) = session.channel_session()
            && channel.exec(&kill).is_ok()
        {
            let _ = channel.send_eof();
            let _ = channel.wait_close();
        }
    }
}

/// Hands every complete line in `pending` to `on_line`, keeping a trailing partial line.
fn emit_lines(pending: &mut Vec<u8>, on_line: &mut dyn FnMut(&str)) {
    while let Some(pos) = pending.iter().position(|&b| b == b'\n') {
        let line: Vec<u8> = pending.drain(..=pos).collect();
        let text = String::from_utf8_lossy(&line[..line.len() - 1]);
        on_line(&sanitize(text.trim_end_matches('\r')));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_marker_names_the_pid_and_the_group_to_stop() {
        let leader = Running::parse("gpufleet-pid 4242 4242").expect("marker");
        assert_eq!(leader.kill_argv(), ["kill", "-TERM", "--", "-4242"]);
        let member = Running::parse("gpufleet-pid 4242 4000").expect("marker");
        assert_eq!(member.kill_argv(), ["kill", "-TERM", "--", "4242"]);
        let no_proc = Running::parse("gpufleet-pid 4242 ").expect("marker");
        assert_eq!(no_proc.kill_argv(), ["kill", "-TERM", "--", "4242"]);
        for not_ours in [
            "gpufleet-pid 1 1",
            "gpufleet-pid x",
            "hello 42",
            "gpufleet-pid -3",
        ] {
            assert_eq!(Running::parse(not_ours), None, "{not_ours}");
        }
    }

    #[test]
    fn lines_are_split_sanitized_and_the_partial_tail_kept() {
        let mut pending = b"one\r\ntw\x1b[31mo\nthr".to_vec();
        let mut got = Vec::new();
        emit_lines(&mut pending, &mut |l| got.push(l.to_string()));
        assert_eq!(got, vec!["one", "two"]);
        assert_eq!(pending, b"thr");
    }
}
