//! What a run tells whoever watches it (the CLI's text, later the TUI's pane): events as they
//! happen, the final outcome with its exit code, and the plain-text observer the CLI uses.

use std::io::Write;

use crate::playbook::check::StepState;
use crate::playbook::model::{Danger, Step};

/// Exit codes of `gpufleet playbook run`/`undo`.
pub const EXIT_OK: u8 = 0;
/// A step failed, or the runbook stopped because nothing further could work.
pub const EXIT_FAILED: u8 = 1;
/// Unknown runbook, or a parameter that is malformed or out of range: nothing was changed.
pub const EXIT_USAGE: u8 = 2;
/// Refused (`--read-only`, a local reboot): nothing was changed.
pub const EXIT_REFUSED: u8 = 3;
/// Declined at a prompt or cancelled while running: the code every cancelled action exits with.
pub const EXIT_CANCELLED: u8 = crate::exit_codes::CANCELLED;

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum RunOutcome {
    Completed,
    Failed {
        step: String,
        reason: String,
    },
    /// An explanation matched that says nothing further in the runbook can work.
    Stopped {
        step: String,
        reason: String,
    },
    Refused {
        step: String,
        reason: String,
    },
    Declined {
        step: String,
    },
    Cancelled,
    BadInput {
        message: String,
    },
}

impl RunOutcome {
    pub fn exit_code(&self) -> u8 {
        match self {
            RunOutcome::Completed => EXIT_OK,
            RunOutcome::Failed { .. } | RunOutcome::Stopped { .. } => EXIT_FAILED,
            RunOutcome::Refused { .. } => EXIT_REFUSED,
            RunOutcome::Declined { .. } | RunOutcome::Cancelled => EXIT_CANCELLED,
            RunOutcome::BadInput { .. } => EXIT_USAGE,
        }
    }
}

/// What kind of message a note is, so a pane can style it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoteKind {
    /// What an output means and what to do.
    Explain,
    /// A conclusion or recommendation.
    Advice,
    /// Waiting for a reboot, reconnect attempts.
    Progress,
    /// A step that a dry run shows but does not run.
    DryRun,
    Warning,
}

/// One thing that happened during a run.
#[derive(Debug, Clone, Copy)]
pub enum RunEvent<'a> {
    Started {
        runbook: &'a str,
        title: &'a str,
        host: &'a str,
        dry_run: bool,
        read_only: bool,
    },
    /// A parameter left out got a proposed value.
    Proposed {
        param: &'a str,
        value: &'a str,
        reason: &'a str,
    },
    /// A step is about to run (or, in a dry run, be shown); `command` is exactly what runs.
    Step {
        number: usize,
        total: usize,
        step: &'a Step,
        command: &'a str,
    },
    Output {
        line: &'a str,
    },
    StepDone {
        step: &'a Step,
        state: StepState,
        exit_status: Option<i32>,
        elapsed_ms: u64,
        failure: Option<&'a str>,
    },
    Skipped {
        step: &'a Step,
        reason: &'a str,
    },
    Note {
        kind: NoteKind,
        text: &'a str,
    },
    Finished {
        outcome: &'a RunOutcome,
    },
}

/// Receives a run's events as they happen.
pub trait Observer {
    fn event(&mut self, event: &RunEvent<'_>);
}

/// Writes events as plain text lines; write errors are ignored (a closed pipe must not stop a
/// step that is already changing a host halfway).
pub struct TextObserver<W> {
    out: W,
}

impl<W: Write> TextObserver<W> {
    pub fn new(out: W) -> Self {
        Self { out }
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

fn danger_tag(danger: Danger) -> &'static str {
    match danger {
        Danger::Read => "read",
        Danger::Change => "CHANGE",
        Danger::Disruptive => "DISRUPTIVE",
    }
}

impl<W: Write> Observer for TextObserver<W> {
    fn event(&mut self, event: &RunEvent<'_>) {
        let out = &mut self.out;
        let _ = match event {
            RunEvent::Started {
                runbook,
                title,
                host,
                dry_run,
                read_only,
            } => {
                let mode = match (dry_run, read_only) {
                    (true, _) => " (dry run: only read steps run)",
                    (false, true) => " (read-only)",
                    _ => "",
                };
                writeln!(out, "== {runbook} on {host}: {title}{mode}")
            }
            RunEvent::Proposed {
                param,
                value,
                reason,
            } => writeln!(out, "   proposed {param}={value}: {reason}"),
            RunEvent::Step {
                number,
                total,
                step,
                command,
            } => writeln!(
                out,
                "\n[{number}/{total}] {} ({})\n    why: {}\n    $ {command}",
                step.title,
                danger_tag(step.danger),
                step.why
            ),
            RunEvent::Output { line } => writeln!(out, "    | {line}"),
            RunEvent::StepDone {
                state,
                exit_status,
                elapsed_ms,
                failure,
                ..
            } => {
                let exit =
                    exit_status.map_or("no exit status".to_string(), |c| format!("exit {c}"));
                match (state, failure) {
                    (StepState::Ok, _) => writeln!(out, "    ok ({exit}, {elapsed_ms} ms)"),
                    (_, Some(why)) => {
                        writeln!(out, "    FAILED ({exit}, {elapsed_ms} ms): {why}")
                    }
                    _ => writeln!(out, "    FAILED ({exit}, {elapsed_ms} ms)"),
                }
            }
            RunEvent::Skipped { step, reason } => {
                writeln!(out, "\n[-] {} skipped: {reason}", step.title)
            }
            RunEvent::Note { kind, text } => {
                let tag = match kind {
                    NoteKind::Explain => "=> ",
                    NoteKind::Advice => "advice: ",
                    NoteKind::Progress => "... ",
                    NoteKind::DryRun => "dry run: ",
                    NoteKind::Warning => "warning: ",
                };
                writeln!(out, "    {tag}{text}")
            }
            RunEvent::Finished { outcome } => match outcome {
                RunOutcome::Completed => writeln!(out, "\n== done"),
                RunOutcome::Failed { step, reason } => {
                    writeln!(out, "\n== failed at {step}: {reason}")
                }
                RunOutcome::Stopped { step, reason } => {
                    writeln!(out, "\n== stopped at {step}: {reason}")
                }
                RunOutcome::Refused { step, reason } => {
                    writeln!(out, "\n== refused {step}: {reason}")
                }
                RunOutcome::Declined { step } => {
                    writeln!(
                        out,
                        "\n== cancelled at {step}: not confirmed; nothing more ran"
                    )
                }
                RunOutcome::Cancelled => writeln!(out, "\n== cancelled"),
                RunOutcome::BadInput { message } => writeln!(out, "\n== refused: {message}"),
            },
        };
        let _ = out.flush();
    }
}
