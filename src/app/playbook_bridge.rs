//! The runtime's side of the playbook pane: runs a runbook with the playbook runner on a worker
//! thread, turning each `RunEvent` into sanitized pane lines and each confirmation into a
//! question the pane asks (the worker waits for the answer; a stop or a closed pane is "no").
//! The runner audits every step that ran.

use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::app::event::Event;
use crate::app::event::EventSink;
use crate::app::playbook_run::{LineKind, PaneLine, PlaybookEvent, StepAsk};
use crate::audit::AuditLog;
use crate::playbook::check::StepState;
use crate::playbook::model::{Danger, Runbook};
use crate::playbook::{
    ConfirmRequest, Confirmer, Executor, NoteKind, Observer, RunEvent, RunOptions, RunOutcome,
    Target, Tools, UndoStore, run,
};
use crate::telemetry::source::StopFlag;
use crate::ui::format::clean;

/// How often a worker waiting for an answer looks at its stop flag.
const ANSWER_POLL: Duration = Duration::from_millis(100);

/// Sends a run's events to the app loop as pane lines.
pub struct PaneObserver {
    pub id: u64,
    pub sink: EventSink,
}

impl PaneObserver {
    fn send(&self, event: PlaybookEvent) {
        // The loop is gone only when the console is quitting.
        let _ = self.sink.send(Event::Playbook(event));
    }
}

impl Observer for PaneObserver {
    fn event(&mut self, event: &RunEvent<'_>) {
        if let RunEvent::Finished { outcome } = event {
            let (text, good) = outcome_text(outcome);
            return self.send(PlaybookEvent::Finished {
                id: self.id,
                text,
                good,
            });
        }
        for line in pane_lines(event) {
            self.send(PlaybookEvent::Line { id: self.id, line });
        }
    }
}

fn danger_tag(danger: Danger) -> &'static str {
    match danger {
        Danger::Read => "read",
        Danger::Change => "CHANGE",
        Danger::Disruptive => "DISRUPTIVE",
    }
}

/// The pane lines of one event (all but `Finished`), every text sanitized.
pub fn pane_lines(event: &RunEvent<'_>) -> Vec<PaneLine> {
    let line = PaneLine::new;
    match event {
        RunEvent::Started {
            runbook,
            title,
            host,
            dry_run,
            read_only,
        } => {
            let mode = match (dry_run, read_only) {
                (true, _) => " (dry run)",
                (false, true) => " (read-only: change and disruptive steps are refused)",
                _ => "",
            };
            vec![line(
                LineKind::Heading,
                clean(&format!("{runbook} on {host}: {title}{mode}")),
            )]
        }
        RunEvent::Proposed {
            param,
            value,
            reason,
        } => vec![line(
            LineKind::Advice,
            clean(&format!("proposed {param}={value}: {reason}")),
        )],
        RunEvent::Step {
            number,
            total,
            step,
            command,
        } => vec![
            line(
                LineKind::Step(step.danger),
                clean(&format!(
                    "[{number}/{total}] {} ({})",
                    step.title,
                    danger_tag(step.danger)
                )),
            ),
            line(LineKind::Why, clean(&format!("why: {}", step.why.trim()))),
            line(LineKind::Command, clean(&format!("$ {command}"))),
        ],
        RunEvent::Output { line: text } => vec![line(LineKind::Output, clean(text))],
        RunEvent::StepDone {
            state,
            exit_status,
            elapsed_ms,
            failure,
            ..
        } => {
            let exit = exit_status.map_or("no exit status".to_string(), |c| format!("exit {c}"));
            match (state, failure) {
                (StepState::Ok, _) => {
                    vec![line(LineKind::Ok, format!("ok ({exit}, {elapsed_ms} ms)"))]
                }
                (_, Some(why)) => vec![line(
                    LineKind::Failed,
                    clean(&format!("FAILED ({exit}, {elapsed_ms} ms): {why}")),
                )],
                _ => vec![line(
                    LineKind::Failed,
                    format!("FAILED ({exit}, {elapsed_ms} ms)"),
                )],
            }
        }
        RunEvent::Skipped { step, reason } => vec![line(
            LineKind::Skipped,
            clean(&format!("skipped: {} ({reason})", step.title)),
        )],
        RunEvent::Note { kind, text } => {
            let (kind, tag) = match kind {
                NoteKind::Explain => (LineKind::Note, "=> "),
                NoteKind::Advice => (LineKind::Advice, "advice: "),
                NoteKind::Progress => (LineKind::Note, "... "),
                NoteKind::DryRun => (LineKind::Skipped, "dry run: "),
                NoteKind::Warning => (LineKind::Warning, "warning: "),
            };
            vec![line(kind, clean(&format!("{tag}{text}")))]
        }
        RunEvent::Finished { outcome } => vec![line(LineKind::Heading, outcome_text(outcome).0)],
    }
}

/// How a run ended, in words, and whether that is good news.
pub fn outcome_text(outcome: &RunOutcome) -> (String, bool) {
    let (text, good) = match outcome {
        RunOutcome::Completed => ("done".to_string(), true),
        RunOutcome::Failed { step, reason } => (format!("failed at {step}: {reason}"), false),
        RunOutcome::Stopped { step, reason } => (format!("stopped at {step}: {reason}"), false),
        RunOutcome::Refused { step, reason } => (format!("refused {step}: {reason}"), false),
        RunOutcome::Declined { step } => (
            format!("cancelled at {step}: not confirmed; nothing more ran"),
            false,
        ),
        RunOutcome::Cancelled => ("cancelled".to_string(), false),
        RunOutcome::BadInput { message } => (format!("refused: {message}"), false),
    };
    (clean(&text), good)
}

/// Asks the pane and waits for the user's answer; a stop, or the pane gone, answers no.
pub struct PaneConfirmer {
    pub id: u64,
    pub sink: EventSink,
    pub answers: Receiver<bool>,
    pub stop: StopFlag,
}

impl Confirmer for PaneConfirmer {
    fn confirm(&mut self, request: &ConfirmRequest<'_>) -> bool {
        // An answer left over from an earlier question must not answer this one.
        while self.answers.try_recv().is_ok() {}
        let ask = StepAsk {
            title: clean(request.title),
            why: clean(request.why.trim()),
            danger: request.danger,
            command: clean(request.command),
        };
        let event = Event::Playbook(PlaybookEvent::Confirm { id: self.id, ask });
        if self.sink.send(event).is_err() {
            return false;
        }
        loop {
            match self.answers.recv_timeout(ANSWER_POLL) {
                Ok(answer) => return answer,
                Err(RecvTimeoutError::Timeout) if !self.stop.is_set() => {}
                Err(_) => return false,
            }
        }
    }
}

/// What the bridge keeps of a run: its stop flag and where answers go.
pub struct RunHandle {
    pub stop: StopFlag,
    pub answers: Sender<bool>,
}

/// Everything a run needs on its thread.
pub struct RunSpec {
    pub id: u64,
    pub target: Target,
    pub runbook: Runbook,
    pub params: Vec<(String, String)>,
    pub read_only: bool,
    pub audit: AuditLog,
}

/// Starts `spec` on a worker thread; its events go to `sink`.
pub fn spawn_run(spec: RunSpec, sink: EventSink) -> std::io::Result<(RunHandle, JoinHandle<()>)> {
    let stop = StopFlag::default();
    let (answers, answer_rx) = mpsc::channel();
    let worker_stop = stop.clone();
    let handle = std::thread::Builder::new()
        .name(format!("playbook-{}", spec.id))
        .spawn(move || {
            let simulated = matches!(spec.target, Target::Simulated { .. });
            let mut exec: Box<dyn Executor> = spec.target.executor();
            if simulated {
                let text = format!(
                    "[simulated] {} is a demo host: the simulator answers every command below; \
                     nothing runs on this machine or any other",
                    exec.host()
                );
                let _ = sink.send(Event::Playbook(PlaybookEvent::Line {
                    id: spec.id,
                    line: PaneLine::new(LineKind::Note, clean(&text)),
                }));
            }
            let mut confirmer = PaneConfirmer {
                id: spec.id,
                sink: sink.clone(),
                answers: answer_rx,
                stop: worker_stop.clone(),
            };
            let mut observer = PaneObserver { id: spec.id, sink };
            let undo = UndoStore::beside(spec.audit.path());
            let options = RunOptions {
                read_only: spec.read_only,
                ..RunOptions::default()
            };
            run(
                &spec.runbook,
                &spec.params,
                &options,
                Tools {
                    exec: exec.as_mut(),
                    confirmer: &mut confirmer,
                    observer: &mut observer,
                    audit: &spec.audit,
                    undo: &undo,
                    stop: &worker_stop,
                },
            );
        })?;
    Ok((RunHandle { stop, answers }, handle))
}
