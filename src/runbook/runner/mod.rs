//! The step runner: walks a runbook's steps in order, shows each exact command before it runs,
//! asks before anything but a read, streams output, judges and explains the outcome, logs every
//! step that ran to the audit log, waits out reboots and re-checks, and records how to undo.

mod outcome;

use std::collections::{BTreeMap, BTreeSet};

use crate::audit::AuditLog;
use crate::remote::shell_quote;
use crate::runbook::advice;
use crate::runbook::check::{StepState, blocked};
use crate::runbook::confirm::{ConfirmRequest, Confirmer};
use crate::runbook::exec::Executor;
use crate::runbook::facts::{Facts, fill_text};
use crate::runbook::model::{Danger, Runbook, Step};
use crate::runbook::params::Params;
use crate::runbook::reboot::{self, RebootOptions};
use crate::runbook::report::{NoteKind, Observer, RunEvent, RunOutcome};
use crate::runbook::restart::Restart;
use crate::runbook::undo::UndoStore;
use crate::telemetry::source::{StopFlag, now_ms};
use rust_i18n::t;

/// Output lines kept per step for checks and captures; the rest is only streamed.
const MAX_KEPT_LINES: usize = 5_000;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunOptions {
    /// Run only the read steps before the first change; show everything else.
    pub dry_run: bool,
    /// Refuse change and disruptive steps.
    pub read_only: bool,
    pub reboot: RebootOptions,
    /// How the reboot step restarts the host (`reboot`, the provider, or not at all).
    pub restart: Restart,
}

/// What a run works with.
pub struct Tools<'a> {
    pub exec: &'a mut dyn Executor,
    pub confirmer: &'a mut dyn Confirmer,
    pub observer: &'a mut dyn Observer,
    pub audit: &'a AuditLog,
    pub undo: &'a UndoStore,
    pub stop: &'a StopFlag,
}

/// One step that ran.
#[derive(Debug, Clone, PartialEq)]
pub struct StepRecord {
    pub step: String,
    pub command: String,
    pub state: StepState,
    pub exit_status: Option<i32>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RunReport {
    pub outcome: RunOutcome,
    pub ran: Vec<StepRecord>,
    pub facts: Facts,
}

enum Flow {
    Next,
    End(RunOutcome),
}

/// An argv as the user sees it (and the audit log keeps it): each word quoted for a shell.
pub fn display(argv: &[String]) -> String {
    argv.iter()
        .map(|w| shell_quote(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs `book` with the parameters `given` (name, value).
pub fn run(
    book: &Runbook,
    given: &[(String, String)],
    options: &RunOptions,
    tools: Tools<'_>,
) -> RunReport {
    tools.observer.event(&RunEvent::Started {
        runbook: &book.id,
        title: &book.title,
        host: tools.exec.host(),
        dry_run: options.dry_run,
        read_only: options.read_only,
    });
    let params = match Params::parse(book, given) {
        Ok(params) => params,
        Err(e) => {
            let outcome = RunOutcome::BadInput {
                message: e.to_string(),
            };
            tools
                .observer
                .event(&RunEvent::Finished { outcome: &outcome });
            return RunReport {
                outcome,
                ran: Vec::new(),
                facts: Facts::default(),
            };
        }
    };
    let mut runner = Runner {
        book,
        options,
        tools,
        params,
        facts: Facts::default(),
        states: BTreeMap::new(),
        announced: BTreeSet::new(),
        ran: Vec::new(),
        started_ms: now_ms(),
        past_dry_change: false,
        recheck_failed: false,
    };
    let outcome = runner.run_all();
    runner.recurrence_note(&outcome);
    runner
        .tools
        .observer
        .event(&RunEvent::Finished { outcome: &outcome });
    RunReport {
        outcome,
        ran: runner.ran,
        facts: runner.facts,
    }
}

struct Runner<'a, 't> {
    book: &'a Runbook,
    options: &'a RunOptions,
    tools: Tools<'t>,
    params: Params,
    facts: Facts,
    states: BTreeMap<String, StepState>,
    announced: BTreeSet<String>,
    ran: Vec<StepRecord>,
    started_ms: u64,
    /// A dry run skipped a change: later steps would see a host that was not changed, so they
    /// are only shown.
    past_dry_change: bool,
    recheck_failed: bool,
}

impl Runner<'_, '_> {
    fn note(&mut self, kind: NoteKind, text: &str) {
        self.tools.observer.event(&RunEvent::Note { kind, text });
    }

    fn run_all(&mut self) -> RunOutcome {
        if self.options.read_only && !self.options.dry_run {
            let always = self.book.steps.iter().find(|s| {
                s.danger != Danger::Read && s.only_if.is_empty() && s.only_if_any.is_empty()
            });
            if let Some(step) = always {
                return RunOutcome::Refused {
                    step: step.id.clone(),
                    reason: t!(
                        "playbook_runner.read_only_always",
                        danger = step.danger.said(),
                        title = step.title
                    )
                    .into_owned(),
                };
            }
        }
        let book = self.book;
        for (index, step) in book.steps.iter().enumerate() {
            if let Flow::End(outcome) = self.step(index, step, false) {
                return outcome;
            }
        }
        RunOutcome::Completed
    }

    fn lookup(&self, name: &str) -> Option<String> {
        self.params.lookup(name, &self.facts)
    }

    fn text(&self, template: &str) -> String {
        fill_text(template, &|name| self.lookup(name))
    }

    /// Announces values gpufleet proposed for parameters left out, once each.
    fn announce_proposals(&mut self, words: &[String]) {
        for word in words {
            let Some(name) = crate::runbook::validate::placeholder(word) else {
                continue;
            };
            let Ok(resolved) = self.params.resolve(name, &self.facts) else {
                continue;
            };
            if let Some(reason) = resolved.proposed
                && self.announced.insert(name.to_string())
            {
                let reason = self.text(&reason);
                self.tools.observer.event(&RunEvent::Proposed {
                    param: name,
                    value: &resolved.value,
                    reason: &reason,
                });
            }
        }
    }

    /// `sudo -n` in front when the step needs root and the login is not root. `-n`: gpufleet
    /// never types a password, so sudo must fail rather than wait for one.
    fn privileged(&self, step: &Step, argv: Vec<String>) -> (Vec<String>, bool) {
        let not_root = self
            .facts
            .get("uid", None)
            .is_some_and(|uid| uid.trim() != "0");
        if step.root && not_root {
            let mut with = vec!["sudo".to_string(), "-n".to_string()];
            with.extend(argv);
            (with, true)
        } else {
            (argv, false)
        }
    }

    fn step(&mut self, index: usize, step: &Step, rerun: bool) -> Flow {
        if self.tools.stop.is_set() {
            return Flow::End(RunOutcome::Cancelled);
        }
        let total = self.book.steps.len();
        if self.past_dry_change {
            return self.show_only(index, step);
        }
        if !rerun
            && let Some(reason) = blocked(
                &step.only_if,
                &step.only_if_any,
                &self.params,
                &self.facts,
                &self.states,
            )
        {
            self.states.insert(step.id.clone(), StepState::Skipped);
            self.tools.observer.event(&RunEvent::Skipped {
                step,
                reason: &reason,
            });
            return Flow::Next;
        }
        self.announce_proposals(&step.command);
        let argv = match self.params.fill_all(&step.command, &self.facts) {
            Ok(argv) => argv,
            Err(e) => {
                return Flow::End(RunOutcome::BadInput {
                    message: format!("{}: {e}", step.id),
                });
            }
        };
        let (argv, used_sudo) = self.privileged(step, argv);
        let shown = match (&step.advice, &step.say, &self.options.restart) {
            (Some(name), _, _) => t!("playbook_runner.advice_shown", name = name).into_owned(),
            (None, Some(_), _) => t!("playbook_runner.conclusion_shown").into_owned(),
            // The provider restarts the instance: its request is what the step sends.
            (None, None, Restart::Provider { shown, .. }) if step.reboot => {
                t!("restart.step_shown", request = shown).into_owned()
            }
            (None, None, _) => display(&argv),
        };
        self.tools.observer.event(&RunEvent::Step {
            number: index + 1,
            total,
            step,
            command: &shown,
        });
        if let Some(name) = &step.advice {
            let gpu = self.params.gpu(&self.facts).ok().flatten();
            let lines = match name.as_str() {
                "torch-install" => advice::torch_install(&self.facts, gpu),
                _ => Vec::new(),
            };
            for line in lines {
                self.note(NoteKind::Advice, &line);
            }
            self.states.insert(step.id.clone(), StepState::Ok);
            return Flow::Next;
        }
        if let Some(say) = &step.say {
            let text = self.text(say);
            self.note(NoteKind::Advice, &text);
            self.states.insert(step.id.clone(), StepState::Ok);
            return Flow::Next;
        }
        // A container's `reboot` restarts nothing: say so rather than run it.
        if step.reboot
            && !rerun
            && let Restart::Nothing { why } = &self.options.restart
        {
            self.states.insert(step.id.clone(), StepState::Skipped);
            return Flow::End(RunOutcome::Refused {
                step: step.id.clone(),
                reason: why.clone(),
            });
        }
        if !rerun
            && (step.danger != Danger::Read || step.ask)
            && let Some(flow) = self.gate(step, &shown)
        {
            return flow;
        }
        let before_boot = if step.reboot {
            reboot::boot_id(self.tools.exec, &self.options.reboot, self.tools.stop)
        } else {
            None
        };
        self.execute(step, &argv, &shown, rerun, used_sudo, before_boot)
    }

    /// Dry run, read-only, local reboot and confirmation; `Some` when the step does not run.
    fn gate(&mut self, step: &Step, shown: &str) -> Option<Flow> {
        if self.options.dry_run {
            let text = t!("playbook_runner.dry_not_run", danger = step.danger.said()).into_owned();
            self.note(NoteKind::DryRun, &text);
            self.states.insert(step.id.clone(), StepState::Skipped);
            if step.danger != Danger::Read {
                self.past_dry_change = true;
            }
            return Some(Flow::Next);
        }
        if step.danger != Danger::Read && self.options.read_only {
            return Some(Flow::End(RunOutcome::Refused {
                step: step.id.clone(),
                reason: t!(
                    "playbook_runner.read_only_refuses",
                    danger = step.danger.said()
                )
                .into_owned(),
            }));
        }
        if step.reboot && self.tools.exec.is_local() {
            return Some(Flow::End(RunOutcome::Refused {
                step: step.id.clone(),
                reason: t!("playbook_runner.local_reboot").into_owned(),
            }));
        }
        let confirmed = self.tools.confirmer.confirm(&ConfirmRequest {
            runbook: &self.book.id,
            host: self.tools.exec.host(),
            step: &step.id,
            title: &step.title,
            why: &step.why,
            danger: step.danger,
            command: shown,
        });
        if confirmed {
            return None;
        }
        if step.ask {
            self.states.insert(step.id.clone(), StepState::Skipped);
            self.tools.observer.event(&RunEvent::Skipped {
                step,
                reason: &t!("playbook_runner.not_confirmed"),
            });
            return Some(Flow::Next);
        }
        Some(Flow::End(RunOutcome::Declined {
            step: step.id.clone(),
        }))
    }

    /// A step after a change that a dry run did not make: shown with what is known.
    fn show_only(&mut self, index: usize, step: &Step) -> Flow {
        let words: Vec<String> = step
            .command
            .iter()
            .map(|w| {
                self.params
                    .fill(w, &self.facts)
                    .unwrap_or_else(|_| w.clone())
            })
            .collect();
        let shown = if step.command.is_empty() {
            t!("playbook_runner.conclusion_shown").into_owned()
        } else {
            display(&words)
        };
        self.tools.observer.event(&RunEvent::Step {
            number: index + 1,
            total: self.book.steps.len(),
            step,
            command: &shown,
        });
        let mut text = t!("playbook_runner.after_dry_change").into_owned();
        if !step.only_if.is_empty() || !step.only_if_any.is_empty() {
            text.push_str(&t!("playbook_runner.only_if"));
        }
        self.note(NoteKind::DryRun, &text);
        self.states.insert(step.id.clone(), StepState::Skipped);
        Flow::Next
    }
}
