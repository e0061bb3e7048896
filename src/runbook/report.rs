//! What a run tells whoever watches it (the CLI's text, later the TUI's pane): events as they
//! happen, the final outcome with its exit code, and the plain-text observer the CLI uses.

use std::io::Write;

use rust_i18n::t;

use crate::runbook::check::StepState;
use crate::runbook::model::Step;

/// Exit codes of `gpufleet runbook run`/`undo`.
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
                    (true, _) => t!("run_text.dry_run"),
                    (false, true) => t!("run_text.read_only"),
                    _ => "".into(),
                };
                let started = t!(
                    "run.started",
                    runbook = runbook,
                    host = host,
                    title = title,
                    mode = mode
                );
                writeln!(out, "== {started}")
            }
            RunEvent::Proposed {
                param,
                value,
                reason,
            } => {
                let proposed = t!(
                    "run.proposed",
                    param = param,
                    value = value,
                    reason = reason
                );
                writeln!(out, "   {proposed}")
            }
            RunEvent::Step {
                number,
                total,
                step,
                command,
            } => {
                let why = t!("run_text.why", why = step.why);
                writeln!(
                    out,
                    "\n[{number}/{total}] {} ({})\n    {why}\n    $ {command}",
                    step.title,
                    step.danger.tag()
                )
            }
            RunEvent::Output { line } => writeln!(out, "    | {line}"),
            RunEvent::StepDone {
                state,
                exit_status,
                elapsed_ms,
                failure,
                ..
            } => {
                let exit = exit_status.map_or_else(
                    || t!("run.no_exit").into_owned(),
                    |c| t!("run.exit", code = c).into_owned(),
                );
                let done = match (state, failure) {
                    (StepState::Ok, _) => t!("run.ok", exit = exit, ms = elapsed_ms),
                    (_, Some(why)) => {
                        t!("run.failed_why", exit = exit, ms = elapsed_ms, why = why)
                    }
                    _ => t!("run.failed", exit = exit, ms = elapsed_ms),
                };
                writeln!(out, "    {done}")
            }
            RunEvent::Skipped { step, reason } => {
                let skipped = t!("run_text.skipped", title = step.title, reason = reason);
                writeln!(out, "\n[-] {skipped}")
            }
            RunEvent::Note { kind, text } => {
                let tag = match kind {
                    NoteKind::Explain => "=> ".into(),
                    NoteKind::Advice => t!("run.tag_advice"),
                    NoteKind::Progress => "... ".into(),
                    NoteKind::DryRun => t!("run.tag_dry_run"),
                    NoteKind::Warning => t!("run.tag_warning"),
                };
                writeln!(out, "    {tag}{text}")
            }
            RunEvent::Finished { outcome } => {
                let said = match outcome {
                    RunOutcome::Completed => t!("run.done"),
                    RunOutcome::Failed { step, reason } => {
                        t!("run.failed_at", step = step, reason = reason)
                    }
                    RunOutcome::Stopped { step, reason } => {
                        t!("run.stopped_at", step = step, reason = reason)
                    }
                    RunOutcome::Refused { step, reason } => {
                        t!("run.refused_step", step = step, reason = reason)
                    }
                    RunOutcome::Declined { step } => t!("run.declined", step = step),
                    RunOutcome::Cancelled => t!("run.cancelled"),
                    RunOutcome::BadInput { message } => t!("run.refused", message = message),
                };
                writeln!(out, "\n== {said}")
            }
        };
        let _ = out.flush();
    }
}
