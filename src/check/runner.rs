//! Running one program for the check, on this machine (no shell) or on the host over SSH,
//! with optional standard input, a time limit, a stop flag, and output delivered line by line.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::check::CheckError;
use crate::remote::{ExecRequest, LinkOptions, RemoteHost, exec, sanitize};
use crate::telemetry::source::StopFlag;

/// How a program ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunEnd {
    /// `None` when killed by a signal, stopped, or timed out.
    pub exit_status: Option<i32>,
    pub timed_out: bool,
    /// The program does not exist there (spawn said so, or the remote shell exited 127).
    pub missing: bool,
}

impl RunEnd {
    pub fn succeeded(&self) -> bool {
        self.exit_status == Some(0)
    }
}

/// Runs programs where the check runs.
pub trait Runner {
    /// Runs `argv`, feeding `stdin` (then closing it) and handing each output line (stderr
    /// merged, control characters removed) to `on_line`.
    fn run(
        &mut self,
        argv: &[String],
        stdin: Option<&[u8]>,
        timeout: Duration,
        stop: &StopFlag,
        on_line: &mut dyn FnMut(&str),
    ) -> Result<RunEnd, CheckError>;
}

/// This machine, through `std::process::Command` (no shell).
#[derive(Debug, Default)]
pub struct LocalRunner;

/// A host over SSH: one session per program, as `remote::exec` opens.
#[derive(Debug)]
pub struct RemoteRunner {
    pub host: RemoteHost,
    pub opts: LinkOptions,
}

/// The status POSIX shells exit with when the command is not found.
const SHELL_NOT_FOUND: i32 = 127;

impl Runner for RemoteRunner {
    fn run(
        &mut self,
        argv: &[String],
        stdin: Option<&[u8]>,
        timeout: Duration,
        stop: &StopFlag,
        on_line: &mut dyn FnMut(&str),
    ) -> Result<RunEnd, CheckError> {
        let request = ExecRequest {
            argv,
            stdin,
            timeout,
        };
        let outcome = exec(&self.host, &self.opts, &request, stop, on_line)?;
        Ok(RunEnd {
            exit_status: outcome.exit_status,
            timed_out: outcome.timed_out,
            missing: outcome.exit_status == Some(SHELL_NOT_FOUND),
        })
    }
}

/// How often the local loop looks at the stop flag and the deadline.
const POLL: Duration = Duration::from_millis(100);

impl Runner for LocalRunner {
    fn run(
        &mut self,
        argv: &[String],
        stdin: Option<&[u8]>,
        timeout: Duration,
        stop: &StopFlag,
        on_line: &mut dyn FnMut(&str),
    ) -> Result<RunEnd, CheckError> {
        let Some((program, args)) = argv.split_first() else {
            return Err(CheckError::EmptyCommand);
        };
        let spawned = Command::new(program)
            .args(args)
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn();
        let mut child = match spawned {
            Ok(child) => child,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                on_line(&format!("{program}: not found"));
                return Ok(RunEnd {
                    exit_status: None,
                    timed_out: false,
                    missing: true,
                });
            }
            Err(source) => {
                return Err(CheckError::Spawn {
                    program: program.clone(),
                    source,
                });
            }
        };
        let (tx, rx) = mpsc::channel::<String>();
        let mut readers = Vec::new();
        if let Some(out) = child.stdout.take() {
            readers.push(forward_lines(out, tx.clone()));
        }
        if let Some(err) = child.stderr.take() {
            readers.push(forward_lines(err, tx.clone()));
        }
        drop(tx);
        // The input is written from its own thread: a program that prints before it has read
        // everything would otherwise block us both.
        let writer = match (child.stdin.take(), stdin) {
            (Some(mut pipe), Some(bytes)) => {
                let bytes = bytes.to_vec();
                Some(std::thread::spawn(move || {
                    let _ = pipe.write_all(&bytes);
                }))
            }
            _ => None,
        };
        let deadline = Instant::now() + timeout;
        let mut timed_out = false;
        let mut killed = false;
        loop {
            match rx.recv_timeout(POLL) {
                Ok(line) => on_line(&line),
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
            if !killed && (stop.is_set() || Instant::now() >= deadline) {
                timed_out = !stop.is_set();
                // Killing the child closes its pipes, which ends the readers and the loop.
                let _ = child.kill();
                killed = true;
            }
        }
        let status = child.wait().map_err(|source| CheckError::Spawn {
            program: program.clone(),
            source,
        })?;
        for reader in readers {
            let _ = reader.join();
        }
        if let Some(writer) = writer {
            let _ = writer.join();
        }
        Ok(RunEnd {
            exit_status: if killed { None } else { status.code() },
            timed_out,
            missing: false,
        })
    }
}

fn forward_lines<R: Read + Send + 'static>(
    source: R,
    tx: mpsc::Sender<String>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut reader = BufReader::new(source);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match reader.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    let text = String::from_utf8_lossy(&buf);
                    let line = sanitize(text.trim_end_matches(['\n', '\r']));
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            }
        }
    })
}

/// Runs `argv` and returns its whole output (lines joined with `\n`) with how it ended.
pub fn capture(
    runner: &mut dyn Runner,
    argv: &[String],
    timeout: Duration,
    stop: &StopFlag,
) -> Result<(String, RunEnd), CheckError> {
    let mut text = String::new();
    let end = runner.run(argv, None, timeout, stop, &mut |line| {
        text.push_str(line);
        text.push('\n');
    })?;
    Ok((text, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn local_runs_merge_output_and_feed_stdin() {
        let mut runner = LocalRunner;
        let (text, end) = capture(
            &mut runner,
            &argv(&["sh", "-c", "echo out; echo err >&2; exit 3"]),
            Duration::from_secs(10),
            &StopFlag::default(),
        )
        .expect("runs");
        assert_eq!(end.exit_status, Some(3));
        assert!(text.contains("out\n") && text.contains("err\n"), "{text}");
        let mut lines = Vec::new();
        let end = runner
            .run(
                &argv(&["cat"]),
                Some(b"a\nb\x1b[2J\n"),
                Duration::from_secs(10),
                &StopFlag::default(),
                &mut |l| lines.push(l.to_string()),
            )
            .expect("runs");
        assert!(end.succeeded());
        assert_eq!(lines, ["a", "b"]);
    }

    #[test]
    fn local_missing_programs_and_timeouts_are_outcomes() {
        let mut runner = LocalRunner;
        let (_, end) = capture(
            &mut runner,
            &argv(&["gpufleet-no-such-program"]),
            Duration::from_secs(5),
            &StopFlag::default(),
        )
        .expect("not an error");
        assert!(end.missing);
        let started = Instant::now();
        let (_, end) = capture(
            &mut runner,
            &argv(&["sleep", "30"]),
            Duration::from_millis(300),
            &StopFlag::default(),
        )
        .expect("runs");
        assert!(end.timed_out && end.exit_status.is_none());
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}
