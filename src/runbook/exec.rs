//! Where a step's command runs: the [`Executor`] trait and the local one, which starts the
//! program directly (no shell), merges stderr into stdout, streams lines, and kills the
//! program's whole process group on timeout or cancel.

use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rust_i18n::t;
use thiserror::Error;

use crate::remote::{RemoteError, sanitize};
use crate::telemetry::source::StopFlag;

/// A line longer than this is cut: a runaway program must not grow memory without bound.
const MAX_LINE_BYTES: usize = 64 * 1024;
/// How long output may keep coming after the program exited (its children may hold the pipe).
const DRAIN_AFTER_EXIT: Duration = Duration::from_secs(2);
const POLL: Duration = Duration::from_millis(50);

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExecResult {
    /// `None` when there was no status: killed by a signal, or the connection dropped.
    pub exit_status: Option<i32>,
    pub timed_out: bool,
}

#[derive(Debug, Error)]
pub enum ExecError {
    #[error("{}", t!("exec_error.spawn", program = .program, error = .source))]
    Spawn {
        program: String,
        source: std::io::Error,
    },
    #[error("{0}")]
    Remote(#[from] RemoteError),
    #[error("{}", t!("exec_error.empty"))]
    Empty,
    #[error("{}", t!("exec_error.cancelled"))]
    Stopped,
    /// A simulated demo host could not be reached (the simulator's words).
    #[error("{0}")]
    Simulated(String),
    /// The watcher an attached console asks did not run the step (its words).
    #[error("{0}")]
    Watcher(String),
}

/// Runs commands on one host.
pub trait Executor {
    /// The host's name for messages and the audit log.
    fn host(&self) -> &str;
    /// Whether this is the machine gpufleet itself runs on (it never reboots that one).
    fn is_local(&self) -> bool;
    /// Whether the host is a simulated demo host (nothing runs anywhere; the audit log says so).
    fn simulated(&self) -> bool {
        false
    }
    /// Runs `argv` (program, then arguments, passed as they are), calling `on_line` with each
    /// line of merged stdout/stderr, already free of control characters.
    fn run(
        &mut self,
        argv: &[String],
        timeout: Duration,
        stop: &StopFlag,
        on_line: &mut dyn FnMut(&str),
    ) -> Result<ExecResult, ExecError>;
}

/// Runs commands on this machine.
#[derive(Debug, Clone)]
pub struct LocalExecutor {
    name: String,
    env: Vec<(String, String)>,
}

impl LocalExecutor {
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            env: Vec::new(),
        }
    }

    /// Sets an environment variable for every command (a PATH with other tools first, say).
    pub fn with_env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }
}

impl Default for LocalExecutor {
    fn default() -> Self {
        Self::new("local")
    }
}

impl Executor for LocalExecutor {
    fn host(&self) -> &str {
        &self.name
    }

    fn is_local(&self) -> bool {
        true
    }

    fn run(
        &mut self,
        argv: &[String],
        timeout: Duration,
        stop: &StopFlag,
        on_line: &mut dyn FnMut(&str),
    ) -> Result<ExecResult, ExecError> {
        let (program, args) = argv.split_first().ok_or(ExecError::Empty)?;
        let spawn_error = |source| ExecError::Spawn {
            program: program.clone(),
            source,
        };
        let (reader, writer) = std::io::pipe().map_err(spawn_error)?;
        let mut command = Command::new(program);
        command
            .args(args)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(writer.try_clone().map_err(spawn_error)?)
            .stderr(writer)
            // Its own group, so a timeout can end everything it started (nvidia-bug-report.sh
            // runs many helpers), not just the first process.
            .process_group(0);
        let child = command.spawn();
        // The parent's copies of the pipe's write end live in `command`; the reader only sees
        // end-of-file once they are gone.
        drop(command);
        let mut child = match child {
            Ok(child) => child,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // What a shell would say and return, so the runner explains it the same way
                // for local and remote hosts.
                on_line(&format!("gpufleet: {program}: command not found"));
                return Ok(ExecResult {
                    exit_status: Some(127),
                    timed_out: false,
                });
            }
            Err(e) => return Err(spawn_error(e)),
        };
        let lines = spawn_reader(reader);
        let deadline = Instant::now() + timeout;
        let mut timed_out = false;
        let mut stopped = false;
        let status = loop {
            forward(&lines, POLL, on_line);
            if let Ok(Some(status)) = child.try_wait() {
                break Some(status);
            }
            stopped = stop.is_set();
            timed_out = Instant::now() >= deadline;
            if stopped || timed_out {
                kill_group(&mut child);
                break child.wait().ok();
            }
        };
        let drain_until = Instant::now() + DRAIN_AFTER_EXIT;
        while Instant::now() < drain_until {
            if !forward(&lines, POLL, on_line) {
                break;
            }
        }
        if stopped {
            return Err(ExecError::Stopped);
        }
        Ok(ExecResult {
            exit_status: status.and_then(|s| s.code()),
            timed_out,
        })
    }
}

/// Passes on the lines that arrive within `wait`; false once the pipe is closed.
fn forward(lines: &mpsc::Receiver<String>, wait: Duration, on_line: &mut dyn FnMut(&str)) -> bool {
    match lines.recv_timeout(wait) {
        Ok(line) => {
            on_line(&line);
            while let Ok(line) = lines.try_recv() {
                on_line(&line);
            }
            true
        }
        Err(mpsc::RecvTimeoutError::Timeout) => true,
        Err(mpsc::RecvTimeoutError::Disconnected) => false,
    }
}

fn spawn_reader(reader: std::io::PipeReader) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(reader);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match (&mut reader)
                .take(MAX_LINE_BYTES as u64)
                .read_until(b'\n', &mut buf)
            {
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
    });
    rx
}

/// Kills the child's process group (the child leads it), then the child itself.
fn kill_group(child: &mut Child) {
    let group = format!("-{}", child.id());
    let _ = Command::new("kill")
        .args(["-KILL", "--", &group])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    let _ = child.kill();
}
