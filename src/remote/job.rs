//! One remote command on one channel, driven without blocking: open, exec, read lines, close,
//! exit status. A link steps several of these in turn on one session, so a quiet channel never
//! holds up a busy one.

use std::io::{ErrorKind, Read};

use ssh2::{Channel, ErrorCode, ExtendedData, Session};

use crate::remote::error::RemoteError;

const LIBSSH2_ERROR_EAGAIN: i32 = -37;
/// Codes that concern one channel (refused open, denied exec), not the whole connection.
const CHANNEL_LEVEL: [i32; 3] = [-21, -22, -32];
/// A line longer than this is cut, so a hostile host cannot grow memory without bound.
const MAX_LINE_BYTES: usize = 64 * 1024;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum JobEvent {
    /// One line of output (stdout and stderr merged), without its line ending.
    Line(String),
    /// The command ended; `None` when the server sent no exit status (killed by a signal).
    Exited { status: Option<i32> },
    /// The server refused the channel or the exec; the connection itself is fine.
    Refused(String),
}

pub(crate) enum StepError {
    Refused(String),
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

pub(crate) struct Job {
    command: String,
    phase: Phase,
    partial: Vec<u8>,
}

fn again(e: &ssh2::Error) -> bool {
    e.code() == ErrorCode::Session(LIBSSH2_ERROR_EAGAIN)
}

fn classify(context: &str, e: &ssh2::Error) -> StepError {
    match e.code() {
        ErrorCode::Session(code) if CHANNEL_LEVEL.contains(&code) => {
            StepError::Refused(format!("{context}: {}", e.message()))
        }
        _ => StepError::Session(RemoteError::ssh(context, e)),
    }
}

impl Job {
    pub(crate) fn new(command: String) -> Self {
        Self {
            command,
            phase: Phase::Opening,
            partial: Vec::new(),
        }
    }

    pub(crate) fn is_done(&self) -> bool {
        matches!(self.phase, Phase::Done)
    }

    /// Whether the job only waits for output (it reads and nothing else).
    pub(crate) fn is_reading(&self) -> bool {
        matches!(self.phase, Phase::Reading(_))
    }

    /// Whether libssh2 already holds input for this job (data, or the end of it), without
    /// touching the socket. Any job that is not just reading may have work of its own.
    pub(crate) fn has_queued_input(&self) -> bool {
        match &self.phase {
            Phase::Reading(channel) => channel.read_window().available > 0 || channel.eof(),
            _ => true,
        }
    }

    /// Advances as far as it can without waiting; true when anything happened.
    pub(crate) fn step(
        &mut self,
        session: &Session,
        buf: &mut [u8],
        out: &mut Vec<JobEvent>,
    ) -> Result<bool, StepError> {
        let mut progressed = false;
        loop {
            let phase = std::mem::replace(&mut self.phase, Phase::Done);
            let (next, moved) = self.advance(phase, session, buf, out)?;
            self.phase = next;
            progressed |= moved;
            if !moved || self.is_done() {
                return Ok(progressed);
            }
        }
    }

    fn advance(
        &mut self,
        phase: Phase,
        session: &Session,
        buf: &mut [u8],
        out: &mut Vec<JobEvent>,
    ) -> Result<(Phase, bool), StepError> {
        Ok(match phase {
            Phase::Opening => match session.channel_session() {
                Ok(channel) => (Phase::Merging(channel), true),
                Err(e) if again(&e) => (Phase::Opening, false),
                Err(e) => return Err(classify("opening a channel", &e)),
            },
            Phase::Merging(mut channel) => {
                match channel.handle_extended_data(ExtendedData::Merge) {
                    Ok(()) => (Phase::Starting(channel), true),
                    Err(e) if again(&e) => (Phase::Merging(channel), false),
                    Err(e) => return Err(classify("merging stderr", &e)),
                }
            }
            Phase::Starting(mut channel) => match channel.exec(&self.command) {
                Ok(()) => (Phase::Reading(channel), true),
                Err(e) if again(&e) => (Phase::Starting(channel), false),
                Err(e) => return Err(classify("starting a remote command", &e)),
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
                            out.push(JobEvent::Exited { status: None });
                            return Ok((Phase::Done, true));
                        }
                    }
                }
                match channel.wait_close() {
                    Ok(()) => {
                        let status = channel.exit_status().ok();
                        out.push(JobEvent::Exited { status });
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
                        out.push(JobEvent::Exited { status: None });
                        (Phase::Done, true)
                    }
                }
            }
            Phase::Done => (Phase::Done, false),
        })
    }

    fn read(
        &mut self,
        mut channel: Channel,
        buf: &mut [u8],
        out: &mut Vec<JobEvent>,
    ) -> Result<(Phase, bool), StepError> {
        let mut moved = false;
        loop {
            match channel.read(buf) {
                // libssh2 can report 0 bytes without EOF; only a real EOF ends the command.
                Ok(0) if channel.eof() => {
                    self.flush(out);
                    let next = Phase::Closing {
                        channel,
                        close_sent: false,
                    };
                    return Ok((next, true));
                }
                Ok(0) => return Ok((Phase::Reading(channel), moved)),
                Ok(n) => {
                    self.push(&buf[..n], out);
                    moved = true;
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    return Ok((Phase::Reading(channel), moved));
                }
                Err(e) => {
                    return Err(StepError::Session(RemoteError::Ssh {
                        context: "reading from the host".to_string(),
                        message: e.to_string(),
                    }));
                }
            }
        }
    }

    fn push(&mut self, bytes: &[u8], out: &mut Vec<JobEvent>) {
        for &b in bytes {
            if b == b'\n' {
                self.flush(out);
            } else if self.partial.len() < MAX_LINE_BYTES {
                self.partial.push(b);
            }
        }
    }

    fn flush(&mut self, out: &mut Vec<JobEvent>) {
        if self.partial.last() == Some(&b'\r') {
            self.partial.pop();
        }
        if !self.partial.is_empty() {
            out.push(JobEvent::Line(
                String::from_utf8_lossy(&self.partial).into_owned(),
            ));
        }
        self.partial.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_lines_across_reads_and_caps_length() {
        let mut job = Job::new(String::new());
        let mut out = Vec::new();
        job.push(b"0, GPU-a\r\n1, G", &mut out);
        job.push(b"PU-b\n\npartial", &mut out);
        assert_eq!(
            out,
            vec![
                JobEvent::Line("0, GPU-a".into()),
                JobEvent::Line("1, GPU-b".into())
            ]
        );
        job.flush(&mut out);
        assert_eq!(out.last(), Some(&JobEvent::Line("partial".into())));
        out.clear();
        job.push(&vec![b'x'; MAX_LINE_BYTES + 10], &mut out);
        job.push(b"\n", &mut out);
        assert!(matches!(&out[..], [JobEvent::Line(l)] if l.len() == MAX_LINE_BYTES));
    }
}
