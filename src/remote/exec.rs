//! Running one command on a host and streaming its output: the building block for playbook
//! steps, backups before a release, and `gpufleet check`. Each call has a session of its own, so a
//! long step never holds up the telemetry link.

use std::io::{ErrorKind, Read, Write};
use std::time::{Duration, Instant};

use crate::remote::LinkOptions;
use crate::remote::connect::connect;
use crate::remote::credentials::{CredentialCache, PromptContext};
use crate::remote::error::RemoteError;
use crate::remote::quote::RemoteCommand;
use crate::remote::sanitize::sanitize;
use crate::remote::target::RemoteHost;
use crate::telemetry::source::StopFlag;

/// How long one blocking read may wait, so a stop request or the deadline is noticed promptly.
const READ_SLICE_MS: u32 = 250;

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
    let command = RemoteCommand::new(program)
        .args(args.iter().cloned())
        .to_shell()?;
    let ctx = PromptContext::new(0, &host.name, host.target.to_string(), stop.clone());
    let mut cache = CredentialCache::default();
    let connected = connect(host, opts, &ctx, &mut cache)?;
    let session = connected.connection.session;
    session.set_blocking(true);
    let io = |e: ssh2::Error| RemoteError::Ssh {
        context: "exec".to_string(),
        message: e.to_string(),
    };
    let mut channel = session.channel_session().map_err(io)?;
    channel
        .handle_extended_data(ssh2::ExtendedData::Merge)
        .map_err(io)?;
    channel.exec(&command).map_err(io)?;
    if let Some(input) = req.stdin {
        channel.write_all(input).map_err(|e| RemoteError::Ssh {
            context: "writing the command's input".to_string(),
            message: e.to_string(),
        })?;
    }
    channel.send_eof().map_err(io)?;

    session.set_timeout(READ_SLICE_MS);
    let deadline = Instant::now() + req.timeout;
    let mut pending = Vec::new();
    let mut buf = [0u8; 8192];
    let mut timed_out = false;
    loop {
        if stop.is_set() || Instant::now() >= deadline {
            timed_out = !stop.is_set();
            let _ = channel.close();
            break;
        }
        match channel.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                pending.extend_from_slice(&buf[..n]);
                emit_lines(&mut pending, on_line);
            }
            Err(e) if matches!(e.kind(), ErrorKind::TimedOut | ErrorKind::WouldBlock) => {}
            Err(e) if e.to_string().contains("timed out") => {}
            Err(e) => {
                return Err(RemoteError::Ssh {
                    context: "reading the command's output".to_string(),
                    message: e.to_string(),
                });
            }
        }
    }
    if !pending.is_empty() {
        on_line(&sanitize(&String::from_utf8_lossy(&pending)));
    }
    session.set_timeout(READ_SLICE_MS * 8);
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
    fn lines_are_split_sanitized_and_the_partial_tail_kept() {
        let mut pending = b"one\r\ntw\x1b[31mo\nthr".to_vec();
        let mut got = Vec::new();
        emit_lines(&mut pending, &mut |l| got.push(l.to_string()));
        assert_eq!(got, vec!["one", "two"]);
        assert_eq!(pending, b"thr");
    }
}
