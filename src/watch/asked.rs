//! What consoles ask the watcher to run on its hosts (`POST /v1/actions`, see
//! [`crate::watch::serve`]): a release, restart or start by the watcher's release flow, a job's
//! stop and a host's check, each over the watcher's own SSH sessions with its setup as it is
//! then (a reload changes it), each written to the watcher's audit log naming who asked.

use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};

use crate::audit::{AuditEntry, AuditKind};
use crate::check::{CheckError, CheckOptions, CheckTarget, ExpectFlags, expect_from_flags};
use crate::host_runner::SshRunner;
use crate::job::stop::{StopRun, Stopped};
use crate::remote::{link_options, resolve_named, sanitize};
use crate::telemetry::source::{StopFlag, now_ms};
use crate::watch::serve::{CheckAsk, Hands, Ran, ReleaseAsk, Released, StopJobAsk};
use crate::words::Words;

use super::Input;
use super::release::ReleaseSetup;

/// The watcher's hands for its consoles.
pub struct Asked {
    /// What releases, stops and checks run with; `None` runs nothing (the demo fleet).
    pub setup: Arc<Mutex<Option<ReleaseSetup>>>,
    /// The loop, told when a release went out (it adopts the ledger the release closed).
    pub done: Mutex<Sender<Input>>,
}

impl Asked {
    fn setup(&self) -> Option<ReleaseSetup> {
        self.setup.lock().ok().and_then(|s| s.clone())
    }
}

impl Hands for Asked {
    fn release(&self, ask: &ReleaseAsk) -> Released {
        let Some(setup) = self.setup() else {
            return Released::Unavailable;
        };
        let outcome = super::release::asked(&setup, ask);
        if matches!(outcome, Released::Accepted(_))
            && let Ok(done) = self.done.lock()
        {
            let _ = done.send(Input::ReleasedOnRequest);
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
