//! The runtime's side of the runbook pane: runs a runbook with the runbook runner on a worker
//! thread, turning each `RunEvent` into sanitized pane lines and each confirmation into a
//! question the pane asks (the worker waits for the answer; a stop or a closed pane is "no").
//! The runner audits every step that ran.

use rust_i18n::t;

use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::app::event::Event;
use crate::app::event::EventSink;
use crate::app::runbook_run::{LineKind, PaneLine, RunbookEvent, StepAsk};
use crate::audit::AuditLog;
use crate::runbook::check::StepState;
use crate::runbook::model::Runbook;
use crate::runbook::{
    ConfirmRequest, Confirmer, Executor, NoteKind, Observer, RunEvent, RunOptions, RunOutcome,
    Target, Tools, UndoStore, run,
};
use crate::telemetry::source::{StopFlag, now_ms};
use crate::ui::format::clean;

/// How often a worker waiting for an answer looks at its stop flag.
const ANSWER_POLL: Duration = Duration::from_millis(100);

/// Sends a run's events to the app loop as pane lines.
pub struct PaneObserver {
    pub id: u64,
    pub sink: EventSink,
}

impl PaneObserver {
    fn send(&self, event: RunbookEvent) {
        // The loop is gone only when the console is quitting.
        let _ = self.sink.send(Event::Runbook(event));
    }
}

impl Observer for PaneObserver {
    fn event(&mut self, event: &RunEvent<'_>) {
        if let RunEvent::Finished { outcome } = event {
            let (text, good) = outcome_text(outcome);
            return self.send(RunbookEvent::Finished {
                id: self.id,
                text,
                good,
            });
        }
        for line in pane_lines(event) {
            self.send(RunbookEvent::Line { id: self.id, line });
        }
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
                (true, _) => t!("run.dry_run"),
                (false, true) => t!("run.read_only"),
                _ => "".into(),
            };
            vec![line(
                LineKind::Heading,
                clean(&t!(
                    "run.started",
                    runbook = runbook,
                    host = host,
                    title = title,
                    mode = mode
                )),
            )]
        }
        RunEvent::Proposed {
            param,
            value,
            reason,
        } => vec![line(
            LineKind::Advice,
            clean(&t!(
                "run.proposed",
                param = param,
                value = value,
                reason = reason
            )),
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
                    step.danger.tag()
                )),
            ),
            line(
                LineKind::Why,
                clean(&t!("playbook.why", why = step.why.trim())),
            ),
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
            let exit = exit_status.map_or_else(
                || t!("run.no_exit").into_owned(),
                |c| t!("run.exit", code = c).into_owned(),
            );
            match (state, failure) {
                (StepState::Ok, _) => {
                    vec![line(
                        LineKind::Ok,
                        t!("run.ok", exit = exit, ms = elapsed_ms).into_owned(),
                    )]
                }
                (_, Some(why)) => vec![line(
                    LineKind::Failed,
                    clean(&t!(
                        "run.failed_why",
                        exit = exit,
                        ms = elapsed_ms,
                        why = why
                    )),
                )],
                _ => vec![line(
                    LineKind::Failed,
                    t!("run.failed", exit = exit, ms = elapsed_ms).into_owned(),
                )],
            }
        }
        RunEvent::Skipped { step, reason } => vec![line(
            LineKind::Skipped,
            clean(&t!(
                "run.skipped",
                title = step.title.as_str(),
                reason = reason
            )),
        )],
        RunEvent::Note { kind, text } => {
            let (kind, tag) = match kind {
                NoteKind::Explain => (LineKind::Note, "=> ".into()),
                NoteKind::Advice => (LineKind::Advice, t!("run.tag_advice")),
                NoteKind::Progress => (LineKind::Note, "... ".into()),
                NoteKind::DryRun => (LineKind::Skipped, t!("run.tag_dry_run")),
                NoteKind::Warning => (LineKind::Warning, t!("run.tag_warning")),
            };
            vec![line(kind, clean(&format!("{tag}{text}")))]
        }
        RunEvent::Finished { outcome } => vec![line(LineKind::Heading, outcome_text(outcome).0)],
    }
}

/// How a run ended, in words, and whether that is good news.
pub fn outcome_text(outcome: &RunOutcome) -> (String, bool) {
    let (text, good) = match outcome {
        RunOutcome::Completed => (t!("run.done"), true),
        RunOutcome::Failed { step, reason } => {
            (t!("run.failed_at", step = step, reason = reason), false)
        }
        RunOutcome::Stopped { step, reason } => {
            (t!("run.stopped_at", step = step, reason = reason), false)
        }
        RunOutcome::Refused { step, reason } => {
            (t!("run.refused_step", step = step, reason = reason), false)
        }
        RunOutcome::Declined { step } => (t!("run.declined", step = step), false),
        RunOutcome::Cancelled => (t!("run.cancelled"), false),
        RunOutcome::BadInput { message } => (t!("run.refused", message = message), false),
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
        let event = Event::Runbook(RunbookEvent::Confirm { id: self.id, ask });
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
    /// The host's `[hosts.release]` table: a container is restarted through its provider.
    pub release: Option<crate::config::ReleaseConfig>,
    /// An attached console's watcher and the host there: each step's command runs on the
    /// watcher instead of on `target`.
    pub watcher: Option<(
        crate::remote_watcher::WatcherActions,
        crate::fleet::HostId,
        String,
    )>,
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
            // On a container the reboot step restarts through the provider.
            let restart = if spec.runbook.steps.iter().any(|step| step.reboot) {
                crate::runbook::restart::for_target(
                    &spec.target,
                    spec.release.as_ref(),
                    &crate::release::process_env,
                    &worker_stop,
                )
            } else {
                crate::runbook::Restart::Reboot
            };
            let current = crate::app::runbook_watcher::CurrentStep::default();
            let mut exec: Box<dyn Executor> = match spec.watcher {
                Some((watcher, host, name)) => {
                    Box::new(crate::app::runbook_watcher::WatcherExecutor {
                        watcher,
                        host,
                        name,
                        run: format!("{}-{}-{}", std::process::id(), spec.id, now_ms()),
                        runbook: spec.runbook.id.clone(),
                        params: spec.params.clone(),
                        current: current.clone(),
                    })
                }
                None => spec.target.executor(),
            };
            if simulated {
                let text = t!("run.simulated", host = exec.host());
                let _ = sink.send(Event::Runbook(RunbookEvent::Line {
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
            let mut pane = PaneObserver { id: spec.id, sink };
            let mut observer = crate::app::runbook_watcher::StepTracker {
                inner: &mut pane,
                current,
            };
            let undo = UndoStore::beside(spec.audit.path());
            let options = RunOptions {
                read_only: spec.read_only,
                restart,
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
