//! What consoles ask the watcher to run on its hosts (`POST /v1/actions`, see
//! [`crate::watch::serve`]): a release, restart or start by the watcher's release flow, a job's
//! stop, a host's check and a runbook's step, each over the watcher's own SSH sessions with its
//! setup as it is then (a reload changes it), each written to the watcher's audit log naming
//! who asked. A runbook step's command is built here, from the watcher's own catalogue, the
//! typed parameters (checked as the runner checks them) and what the run's earlier steps found
//! on the host, and runs only when it is the command the console showed and had confirmed.

use std::collections::VecDeque;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::audit::{AuditEntry, AuditKind};
use crate::check::{CheckError, CheckOptions, CheckTarget, ExpectFlags, expect_from_flags};
use crate::host_runner::SshRunner;
use crate::job::stop::{StopRun, Stopped};
use crate::remote::{link_options, resolve_named, sanitize};
use crate::runbook::facts::Facts;
use crate::runbook::params::Params;
use crate::runbook::runner::display;
use crate::runbook::{Catalog, Danger, Executor, RemoteExecutor, Step};
use crate::telemetry::source::{StopFlag, now_ms};
use crate::watch::serve::{
    CheckAsk, Hands, Ran, ReleaseAsk, Released, StepAsk, Stepped, StopJobAsk,
};
use crate::words::Words;

use super::Input;
use super::release::ReleaseSetup;

/// Runbook runs whose findings are kept (the oldest forgotten first).
const RUNS_KEPT: usize = 64;
/// Output lines of one step kept for the answer.
const MAX_STEP_LINES: usize = 5_000;

/// The watcher's hands for its consoles.
pub struct Asked {
    /// What releases, stops and checks run with; `None` runs nothing (the demo fleet).
    setup: Arc<Mutex<Option<ReleaseSetup>>>,
    /// The loop, told when a release went out (it adopts the ledger the release closed).
    done: Mutex<Sender<Input>>,
    /// What each runbook run's steps found on its host, by who asked, the host and the run.
    runs: Mutex<VecDeque<(String, Facts)>>,
}

impl Asked {
    /// Hands with `setup` as reloads keep it; `done` is the watcher's loop.
    pub fn new(setup: Arc<Mutex<Option<ReleaseSetup>>>, done: Sender<Input>) -> Self {
        Self {
            setup,
            done: Mutex::new(done),
            runs: Mutex::new(VecDeque::new()),
        }
    }

    fn setup(&self) -> Option<ReleaseSetup> {
        self.setup.lock().ok().and_then(|s| s.clone())
    }

    fn facts(&self, run: &str) -> Facts {
        self.runs
            .lock()
            .ok()
            .and_then(|runs| runs.iter().find(|(r, _)| r == run).map(|(_, f)| f.clone()))
            .unwrap_or_default()
    }

    fn keep_facts(&self, run: String, facts: Facts) {
        if let Ok(mut runs) = self.runs.lock() {
            runs.retain(|(r, _)| *r != run);
            runs.push_back((run, facts));
            while runs.len() > RUNS_KEPT {
                runs.pop_front();
            }
        }
    }
}

impl Hands for Asked {
    fn release(&self, ask: &ReleaseAsk) -> Released {
        let Some(setup) = self.setup() else {
            return Released::Unavailable;
        };
        let outcome = super::release::asked(&setup, ask);
        // The team hears of what went out, as of an automatic release.
        let went_out = match &outcome {
            Released::Accepted(said) => Some(Ok(said.clone())),
            Released::Failed(why) => Some(Err(why.clone())),
            _ => None,
        };
        if let Some(outcome) = went_out
            && let Ok(done) = self.done.lock()
        {
            let _ = done.send(Input::ReleasedOnRequest {
                host: ask.host.clone(),
                who: ask.who.clone(),
                action: ask.action,
                outcome,
            });
        }
        outcome
    }

    fn stop_job(&self, ask: &StopJobAsk) -> Ran {
        let Some(setup) = self.setup() else {
            return Ran::Unavailable;
        };
        let pid = ask.stop.pid();
        let ran = if setup.config.read_only {
            Ran::Refused("the watcher's config is read_only: it changes nothing on hosts".into())
        } else {
            let runner = SshRunner {
                ssh: &setup.ssh,
                config: &setup.config,
                interval_ms: setup.interval_ms,
            };
            let outcome = StopRun {
                runner: &runner,
                audit: &setup.audit,
                host: &ask.host,
                now_ms: &now_ms,
                sleep: &std::thread::sleep,
            }
            .run(&ask.stop);
            let grace = ask.stop.grace_s.to_string();
            match outcome {
                Ok(how) => Ran::Done {
                    said: Words::new(match how {
                        Stopped::ByInt => "job_action.stopped_int",
                        Stopped::ByTerm => "job_action.stopped_term",
                    })
                    .put("pid", pid.to_string())
                    .put("grace", grace)
                    .english(),
                    report: None,
                },
                Err(e) => Ran::Failed(
                    Words::new("job_action.stop_failed")
                        .put("pid", pid.to_string())
                        .put_words("why", e.words())
                        .english(),
                ),
            }
        };
        audit(
            &setup,
            &ask.host,
            AuditKind::StopJob,
            format!("gpufleet stop-job {} {pid}", sanitize(&ask.host)),
            &ask.who,
            &ran,
        );
        ran
    }

    fn check(&self, ask: &CheckAsk) -> Ran {
        let Some(setup) = self.setup() else {
            return Ran::Unavailable;
        };
        let ran = check(&setup, &ask.host);
        audit(
            &setup,
            &ask.host,
            AuditKind::Check,
            format!("gpufleet check {}", sanitize(&ask.host)),
            &ask.who,
            &ran,
        );
        ran
    }

    fn step(&self, ask: &StepAsk) -> Result<Stepped, Ran> {
        let Some(setup) = self.setup() else {
            return Err(Ran::Unavailable);
        };
        let run = format!("{}\n{}\n{}", ask.who, ask.host, ask.run);
        let mut facts = self.facts(&run);
        let (step, argv) = match build_step(&setup, ask, &facts) {
            Ok(built) => built,
            Err(why) => {
                let shown = display(&ask.command);
                step_audit(&setup, ask, &shown, "refused", None);
                return Err(Ran::Refused(why));
            }
        };
        let shown = display(&argv);
        let remote = match resolve_named(&setup.ssh, std::slice::from_ref(&ask.host), &setup.config)
        {
            Ok(mut hosts) => hosts.pop(),
            Err(e) => {
                step_audit(&setup, ask, &shown, "refused", None);
                return Err(Ran::Refused(e.words().english()));
            }
        };
        let Some(remote) = remote else {
            step_audit(&setup, ask, &shown, "refused", None);
            return Err(Ran::Refused(format!(
                "no host {} in the config",
                sanitize(&ask.host)
            )));
        };
        let mut exec = RemoteExecutor::new(remote, link_options(&setup.ssh, setup.interval_ms));
        let mut output = Vec::new();
        let result = exec.run(
            &argv,
            Duration::from_secs(step.timeout_s),
            &StopFlag::default(),
            &mut |line| {
                if output.len() < MAX_STEP_LINES {
                    output.push(line.to_string());
                }
            },
        );
        match result {
            Ok(result) => {
                let succeeded = result.exit_status == Some(0) && !result.timed_out;
                facts.capture(&step.capture, &output, succeeded);
                self.keep_facts(run, facts);
                let outcome = match (result.timed_out, succeeded) {
                    (true, _) => "timeout",
                    (false, true) => "ok",
                    (false, false) => "failed",
                };
                step_audit(&setup, ask, &shown, outcome, result.exit_status);
                Ok(Stepped {
                    exit_status: result.exit_status,
                    timed_out: result.timed_out,
                    output,
                })
            }
            Err(e) => {
                step_audit(&setup, ask, &shown, "failed", None);
                Err(Ran::Failed(e.to_string()))
            }
        }
    }
}

/// The step's command as the watcher's catalogue builds it, with the parameters checked
/// against what the run found; refused (why) unless it is the command the console showed.
fn build_step(
    setup: &ReleaseSetup,
    ask: &StepAsk,
    facts: &Facts,
) -> Result<(Step, Vec<String>), String> {
    let catalog = Catalog::load_default().map_err(|e| e.to_string())?;
    let Some(book) = catalog.get(&ask.runbook) else {
        return Err(format!(
            "the watcher has no runbook {:?}",
            sanitize(&ask.runbook)
        ));
    };
    let Some(step) = book.steps.iter().find(|s| s.id == ask.step) else {
        return Err(format!(
            "runbook {} has no step {:?}",
            book.id,
            sanitize(&ask.step)
        ));
    };
    if step.reboot {
        return Err(
            "a reboot step is not run through the watcher: run the runbook where the watcher runs"
                .to_string(),
        );
    }
    if step.command.is_empty() || step.advice.is_some() || step.say.is_some() {
        return Err(format!("step {} runs no command", step.id));
    }
    if setup.config.read_only && step.danger != Danger::Read {
        return Err("the watcher's config is read_only: it changes nothing on hosts".to_string());
    }
    let params = Params::parse(book, &ask.params).map_err(|e| e.to_string())?;
    params.check_ready(facts).map_err(|e| e.to_string())?;
    let mut argv = params
        .fill_all(&step.command, facts)
        .map_err(|e| e.to_string())?;
    // `sudo -n` as the runner puts it: the step needs root and the login is not root.
    let not_root = facts.get("uid", None).is_some_and(|uid| uid.trim() != "0");
    if step.root && not_root {
        argv.splice(0..0, ["sudo".to_string(), "-n".to_string()]);
    }
    if argv != ask.command {
        return Err(format!(
            "the watcher's runbook builds another command for this step: {}",
            display(&argv)
        ));
    }
    Ok((step.clone(), argv))
}

/// The audit line of a runbook step asked through the watcher.
fn step_audit(
    setup: &ReleaseSetup,
    ask: &StepAsk,
    shown: &str,
    outcome: &str,
    exit_status: Option<i32>,
) {
    let entry = AuditEntry {
        at_ms: now_ms(),
        host: ask.host.clone(),
        kind: AuditKind::RunbookStep,
        command: format!(
            "{} (asked by {} through the watcher)",
            sanitize(shown),
            sanitize(&ask.who)
        ),
        outcome: outcome.to_string(),
        exit_status,
        runbook: Some(sanitize(&ask.runbook)),
        step: Some(sanitize(&ask.step)),
        dry_run: false,
        simulated: false,
    };
    if let Err(e) = setup.audit.append(&entry) {
        tracing::warn!(host = %ask.host, "the step's asker is not in the audit log: {e}");
    }
    tracing::warn!(host = %ask.host, by = %ask.who, outcome, "runbook step asked through the watcher: {}", entry.command);
}

/// `gpufleet check HOST` as the watcher reaches the host: its report rendered as the command
/// prints it (the previous report compared, the new one kept in the watcher's state).
fn check(setup: &ReleaseSetup, host: &str) -> Ran {
    let remote = match resolve_named(&setup.ssh, &[host.to_string()], &setup.config) {
        Ok(mut hosts) => match hosts.pop() {
            Some(remote) => remote,
            None => return Ran::Refused(format!("no host {} in the config", sanitize(host))),
        },
        Err(e) => return Ran::Refused(e.words().english()),
    };
    let base = setup.config.host(host).and_then(|h| h.expect.clone());
    let expect = match expect_from_flags(&ExpectFlags::default(), base.as_ref()) {
        Ok(expect) => expect,
        Err(e) => return Ran::Refused(e.to_string()),
    };
    let target = CheckTarget::Remote(remote, link_options(&setup.ssh, setup.interval_ms));
    let mut progress = |p: crate::check::CheckProgress| {
        tracing::debug!(host, line = %p.line(), "check asked through the watcher");
    };
    let options = CheckOptions::default();
    match crate::check::run_check(
        target,
        &expect,
        &options,
        &mut progress,
        &StopFlag::default(),
    ) {
        Ok(report) => {
            let previous = crate::check::storage::load_latest(&report.host)
                .ok()
                .flatten();
            if let Err(e) = crate::check::storage::save(&report) {
                tracing::warn!(host, "the check's report was not kept: {e}");
            }
            Ran::Done {
                said: report.status.word().to_string(),
                report: Some(crate::check::render_text(&report, previous.as_ref())),
            }
        }
        Err(CheckError::Stopped) => Ran::Failed("the check was stopped".into()),
        Err(e) => Ran::Failed(e.words().english()),
    }
}

/// One audit line for what `who` asked, with its outcome.
fn audit(setup: &ReleaseSetup, host: &str, kind: AuditKind, command: String, who: &str, ran: &Ran) {
    let (outcome, why) = match ran {
        Ran::Done { said, .. } => ("ok", said.as_str()),
        Ran::Refused(why) => ("refused", why.as_str()),
        Ran::Failed(why) => ("failed", why.as_str()),
        Ran::Unavailable => ("refused", ""),
    };
    let entry = AuditEntry {
        at_ms: now_ms(),
        host: host.to_string(),
        kind,
        command: format!("{command} (asked by {} through the watcher)", sanitize(who)),
        outcome: outcome.to_string(),
        exit_status: None,
        runbook: None,
        step: None,
        dry_run: false,
        simulated: false,
    };
    if let Err(e) = setup.audit.append(&entry) {
        tracing::warn!(host, "the action's asker is not in the audit log: {e}");
    }
    tracing::warn!(
        host,
        by = who,
        outcome,
        why,
        "{} asked through the watcher",
        entry.command
    );
}
