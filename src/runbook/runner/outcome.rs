//! What happens once a step's command runs: streaming and keeping its output, judging it,
//! logging it to the audit log, explaining it, waiting out a reboot, and recording the undo.

use std::collections::{BTreeSet, VecDeque};
use std::time::{Duration, Instant};

use rust_i18n::t;

use crate::audit::{AuditEntry, AuditKind};
use crate::remote::RemoteError;
use crate::runbook::check::{StepState, judge, matching};
use crate::runbook::exec::{ExecError, ExecResult};
use crate::runbook::facts::contains_loose;
use crate::runbook::model::{Danger, OnFail, Step, Undo};
use crate::runbook::reboot::{self, WaitError};
use crate::runbook::report::{NoteKind, RunEvent, RunOutcome};
use crate::runbook::restart::Restart;
use crate::runbook::runner::{Flow, MAX_KEPT_LINES, Runner, StepRecord, Tools};
use crate::runbook::undo::UndoRecord;
use crate::telemetry::source::now_ms;

/// Hidden lines kept for checks and shown when the step fails.
const HIDDEN_TAIL: usize = 5;

impl Runner<'_, '_> {
    fn audit(&mut self, step: &Step, shown: &str, outcome: &str, exit: Option<i32>) -> bool {
        let entry = AuditEntry {
            at_ms: now_ms(),
            host: self.tools.exec.host().to_string(),
            kind: AuditKind::RunbookStep,
            command: shown.to_string(),
            outcome: outcome.to_string(),
            exit_status: exit,
            runbook: Some(self.book.id.clone()),
            step: Some(step.id.clone()),
            dry_run: self.options.dry_run,
            simulated: self.tools.exec.simulated(),
        };
        match self.tools.audit.append(&entry) {
            Ok(()) => true,
            Err(e) => {
                let text = t!("playbook_run.audit_failed", error = e).into_owned();
                self.note(NoteKind::Warning, &text);
                false
            }
        }
    }

    pub(super) fn execute(
        &mut self,
        step: &Step,
        argv: &[String],
        shown: &str,
        rerun: bool,
        used_sudo: bool,
        before_boot: Option<String>,
    ) -> Flow {
        let mut lines: Vec<String> = Vec::new();
        let mut hidden = 0usize;
        // The last lines a `show` filter hid: an error message ("read kernel buffer failed")
        // matches no filter, yet checks and explanations need it.
        let mut hidden_tail: VecDeque<String> = VecDeque::new();
        let started = Instant::now();
        let result = {
            let Tools {
                exec,
                observer,
                stop,
                ..
            } = &mut self.tools;
            let mut on_line = |line: &str| {
                if !step.show.is_empty() && !step.show.iter().any(|s| contains_loose(line, s)) {
                    hidden += 1;
                    hidden_tail.push_back(line.to_string());
                    if hidden_tail.len() > HIDDEN_TAIL {
                        hidden_tail.pop_front();
                    }
                    return;
                }
                if lines.len() < MAX_KEPT_LINES {
                    lines.push(line.to_string());
                }
                observer.event(&RunEvent::Output { line });
            };
            match &self.options.restart {
                // The provider restarts the instance; its answer is the step's output.
                Restart::Provider { send, .. } if step.reboot => {
                    let (lines, status) = match send() {
                        Ok(lines) => (lines, 0),
                        Err(why) => (vec![why], 1),
                    };
                    lines.iter().for_each(|line| on_line(line));
                    Ok(ExecResult {
                        exit_status: Some(status),
                        timed_out: false,
                    })
                }
                _ => exec.run(
                    argv,
                    Duration::from_secs(step.timeout_s),
                    stop,
                    &mut on_line,
                ),
            }
        };
        if hidden > 0 {
            let text = t!("playbook_run.hidden_lines", count = hidden).into_owned();
            self.note(NoteKind::Progress, &text);
        }
        lines.extend(hidden_tail.iter().cloned());
        let elapsed_ms = started.elapsed().as_millis() as u64;
        let (result, transport) = match result {
            Ok(result) => (result, None),
            Err(ExecError::Stopped) => {
                self.audit(step, shown, "cancelled", None);
                return Flow::End(RunOutcome::Cancelled);
            }
            Err(e) => {
                // A reboot takes its session down with it: an error once the session was up
                // means the command went out. One from before (no connection, a refused key)
                // means it never did.
                let dropped = step.reboot
                    && matches!(
                        e,
                        ExecError::Remote(RemoteError::Ssh { .. } | RemoteError::LinkDead { .. })
                    );
                let exec_result = ExecResult {
                    exit_status: None,
                    timed_out: false,
                };
                (exec_result, (!dropped).then(|| e.to_string()))
            }
        };
        // Without a transport error, no status or a timeout also mean the reboot went out; only
        // a refusal (sudo, permissions) comes back with a status.
        let failure = if step.reboot {
            match (transport, result.exit_status) {
                (Some(error), _) => Some(error),
                (None, Some(code)) if code != 0 => {
                    Some(t!("playbook_run.exit_status", code = code).into_owned())
                }
                _ => None,
            }
        } else {
            transport.or_else(|| judge(&step.check, &result, &lines, &self.params, &self.facts))
        };
        if failure.is_some() && !hidden_tail.is_empty() {
            self.note(NoteKind::Progress, &t!("playbook_run.hidden_tail"));
            for line in &hidden_tail {
                self.tools.observer.event(&RunEvent::Output { line });
            }
        }
        self.facts.capture(&step.capture, &lines, failure.is_none());
        let state = if failure.is_none() {
            StepState::Ok
        } else {
            StepState::Failed
        };
        self.states.insert(step.id.clone(), state);
        let word = match (result.timed_out && !step.reboot, state) {
            (true, _) => "timeout",
            (false, StepState::Ok) => "ok",
            _ => "failed",
        };
        if !self.audit(step, shown, word, result.exit_status) {
            return Flow::End(RunOutcome::Failed {
                step: step.id.clone(),
                reason: t!("playbook_run.audit_unwritable").into_owned(),
            });
        }
        self.ran.push(StepRecord {
            step: step.id.clone(),
            command: shown.to_string(),
            state,
            exit_status: result.exit_status,
        });
        self.tools.observer.event(&RunEvent::StepDone {
            step,
            state,
            exit_status: result.exit_status,
            elapsed_ms,
            failure: failure.as_deref(),
        });
        let unnamed = t!("playbook_run.the_program");
        let program = argv.first().map_or(&*unnamed, String::as_str);
        if let Some(reason) = self.explain(step, program, &result, &lines, state) {
            return Flow::End(RunOutcome::Stopped {
                step: step.id.clone(),
                reason,
            });
        }
        if let Err(e) = self.params.check_ready(&self.facts) {
            return Flow::End(RunOutcome::BadInput {
                message: e.to_string(),
            });
        }
        if let Some(reason) = failure {
            if rerun {
                self.recheck_failed = true;
                return Flow::End(RunOutcome::Failed {
                    step: step.id.clone(),
                    reason: t!("playbook_run.still_failing", reason = reason).into_owned(),
                });
            }
            if step.on_fail == OnFail::Continue {
                self.note(NoteKind::Progress, &t!("playbook_run.carrying_on"));
                return Flow::Next;
            }
            return Flow::End(RunOutcome::Failed {
                step: step.id.clone(),
                reason,
            });
        }
        if step.reboot {
            return self.after_reboot(step, before_boot);
        }
        if let Some(undo) = &step.undo {
            self.record_undo(step, undo, used_sudo);
        }
        Flow::Next
    }

    /// Shows what the outcome means; returns the reason to stop when an explanation says
    /// nothing further can work.
    fn explain(
        &mut self,
        step: &Step,
        program: &str,
        result: &ExecResult,
        lines: &[String],
        state: StepState,
    ) -> Option<String> {
        let mut said = Vec::new();
        if state == StepState::Failed {
            if result.exit_status == Some(127) {
                said.push(
                    t!(
                        "playbook_run.not_installed",
                        program = program,
                        host = self.tools.exec.host()
                    )
                    .into_owned(),
                );
            }
            if lines
                .iter()
                .any(|l| contains_loose(l, "a password is required"))
            {
                said.push(t!("playbook_run.sudo_password").into_owned());
            }
            if result.timed_out {
                said.push(
                    t!(
                        "playbook_run.timed_out",
                        title = step.title,
                        timeout_s = step.timeout_s
                    )
                    .into_owned(),
                );
            }
        }
        let mut stop = None;
        for explain in matching(
            self.book.explain.iter().chain(&step.explain),
            result,
            lines,
            state,
        ) {
            said.push(self.text(&explain.say));
            if explain.stop && stop.is_none() {
                stop = Some(self.text(&explain.say));
            }
        }
        for text in said {
            self.note(NoteKind::Explain, &text);
        }
        stop
    }

    fn after_reboot(&mut self, step: &Step, before_boot: Option<String>) -> Flow {
        let waited = {
            let Tools {
                exec,
                observer,
                stop,
                ..
            } = &mut self.tools;
            let mut note = |text: &str| {
                observer.event(&RunEvent::Note {
                    kind: NoteKind::Progress,
                    text,
                })
            };
            reboot::wait_for_return(
                *exec,
                before_boot.as_deref(),
                &self.options.reboot,
                stop,
                &mut note,
            )
        };
        match waited {
            Ok(_) => {}
            Err(WaitError::Cancelled) => return Flow::End(RunOutcome::Cancelled),
            Err(e) => {
                self.recheck_failed = true;
                return Flow::End(RunOutcome::Failed {
                    step: step.id.clone(),
                    reason: e.to_string(),
                });
            }
        }
        if !step.rerun.is_empty() {
            self.note(NoteKind::Progress, &t!("playbook_run.rerunning"));
        }
        let book = self.book;
        for id in &step.rerun {
            let Some(index) = book.steps.iter().position(|s| &s.id == id) else {
                continue;
            };
            if let Flow::End(outcome) = self.step(index, &book.steps[index], true) {
                return Flow::End(outcome);
            }
        }
        Flow::Next
    }

    fn record_undo(&mut self, step: &Step, undo: &Undo, used_sudo: bool) {
        let filled = (|| {
            let mut command = self.params.fill_all(&undo.command, &self.facts)?;
            if used_sudo {
                command.splice(0..0, ["sudo".to_string(), "-n".to_string()]);
            }
            let verify = self.params.fill_all(&undo.verify, &self.facts)?;
            let expect = match &undo.expect {
                Some(e) => Some(self.params.fill(e, &self.facts)?),
                None => None,
            };
            Ok::<_, crate::runbook::params::ParamError>((command, verify, expect))
        })();
        let (command, verify, expect) = match filled {
            Ok(parts) => parts,
            Err(e) => {
                let text = t!("playbook_run.undo_unrecorded", error = e).into_owned();
                self.note(NoteKind::Warning, &text);
                return;
            }
        };
        let record = UndoRecord {
            at_ms: now_ms(),
            host: self.tools.exec.host().to_string(),
            runbook: self.book.id.clone(),
            step: step.id.clone(),
            title: self.text(&undo.title),
            command,
            verify,
            expect,
            timeout_s: step.timeout_s,
        };
        let text = match self.tools.undo.push(record.clone()) {
            Ok(()) => t!("playbook_run.undo_recorded", title = record.title).into_owned(),
            Err(e) => t!("playbook_run.undo_unrecorded", error = e).into_owned(),
        };
        self.note(NoteKind::Advice, &text);
    }

    /// The runbook's advice for a fault that came back: an earlier run already had to change
    /// or disrupt this host, or the re-check after a reboot failed.
    pub(super) fn recurrence_note(&mut self, outcome: &RunOutcome) {
        let Some(text) = &self.book.recurred else {
            return;
        };
        if matches!(
            outcome,
            RunOutcome::BadInput { .. } | RunOutcome::Refused { .. } | RunOutcome::Declined { .. }
        ) || self.options.dry_run
        {
            return;
        }
        let acting: BTreeSet<&str> = self
            .book
            .steps
            .iter()
            .filter(|s| s.danger != Danger::Read)
            .map(|s| s.id.as_str())
            .collect();
        let host = self.tools.exec.host().to_string();
        let before = self.tools.audit.read_all().ok().is_some_and(|entries| {
            entries.iter().any(|e| {
                e.host == host
                    && e.runbook.as_deref() == Some(self.book.id.as_str())
                    && e.outcome == "ok"
                    && !e.dry_run
                    && e.at_ms < self.started_ms
                    && e.step.as_deref().is_some_and(|s| acting.contains(s))
            })
        });
        if before || self.recheck_failed {
            let text = self.text(text);
            self.note(NoteKind::Advice, &text);
        }
    }
}
