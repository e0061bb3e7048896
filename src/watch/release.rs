//! An automatic release from the watcher: the same flow as the console's and `gpufleet
//! release`'s (plan, backup, unattended confirmation, send, ledger closed, audit line), on a
//! thread of its own so monitoring never waits for a provider. The outcome comes back to the
//! loop as an [`Input::Released`](super::Input). A release, restart or start a console asked
//! through the watcher runs the same flow ([`asked`]), and what went out is alerted to the team
//! naming who asked ([`alert_asked`]).

use std::sync::mpsc::Sender;

use crate::audit::{AuditEntry, AuditKind, AuditLog};
use crate::config::Config;
use crate::cost::{HostCost, LedgerStore};
use crate::host_runner::SshRunner;
use crate::release::{
    BackupOutcome, FlowError, ReleaseFlow, SendError, SendOptions, Unattended, process_env,
};
use crate::remote::{SshSettings, sanitize};
use crate::telemetry::source::now_ms;
use crate::watch::serve::{ReleaseAsk, Released};
use crate::words::{Words, joined};

use super::Input;

/// What an automatic release needs besides the host.
#[derive(Debug, Clone)]
pub struct ReleaseSetup {
    /// The hosts that may be released, with their `[hosts.release]` tables.
    pub config: Config,
    pub ssh: SshSettings,
    pub interval_ms: u64,
    pub store: LedgerStore,
    pub audit: AuditLog,
}

/// Starts releasing `host` on a worker thread; its outcome goes to `done`.
pub fn spawn(setup: ReleaseSetup, host: String, cost: Option<HostCost>, done: Sender<Input>) {
    let reported = done.clone();
    let failed_host = host.clone();
    let spawned = std::thread::Builder::new()
        .name(format!("release-{host}"))
        .spawn(move || {
            let outcome = release(&setup, &host, cost.as_ref());
            let _ = done.send(Input::Released { host, outcome });
        });
    if let Err(e) = spawned {
        let why = e.to_string();
        let _ = reported.send(Input::Released {
            host: failed_host,
            outcome: Err(Words::new("watch_release.no_thread").put("why", why)),
        });
    }
}

/// The release itself; `Ok` says what the provider did. Either is one message: logged in
/// English (log lines are English whatever the language), alerted in the reader's language.
fn release(setup: &ReleaseSetup, host: &str, cost: Option<&HostCost>) -> Result<Words, Words> {
    let mut flow = ReleaseFlow::start(&setup.config, host, None, false, cost, &process_env)
        .map_err(|e| e.words())?;
    let runner = SshRunner {
        ssh: &setup.ssh,
        config: &setup.config,
        interval_ms: setup.interval_ms,
    };
    if flow.plan().backup.is_some() {
        let outcome = flow
            .run_backup(&runner, &setup.audit, now_ms(), &mut |line| {
                tracing::debug!(host, line, "backup");
            })
            .map_err(|e| e.words())?;
        if let BackupOutcome::Failed(why) = outcome {
            // Nobody is there to override a failed backup: the host is not released.
            return Err(Words::new("watch_release.backup_failed").put("why", why));
        }
    }
    flow.confirm_unattended(Unattended::AutoRelease);
    let action = flow.plan().action;
    let report = flow
        .send(
            &runner,
            &SendOptions::default(),
            &setup.store,
            &setup.audit,
            now_ms(),
        )
        .map_err(|e| e.words())?;
    let unrecorded = match &report.unrecorded {
        Some(unrecorded) => joined(&unrecorded.words(host), "list_words.space").map_or_else(
            || Words::verbatim(""),
            |why| Words::new("watch_release.unrecorded").put_words("why", why),
        ),
        None => Words::verbatim(""),
    };
    let said = Words::new("watch_release.sent")
        .put("action", action.as_str())
        .put_words("unrecorded", unrecorded);
    for problem in &report.problems {
        tracing::warn!(host, problem = ?problem, "after the release");
    }
    Ok(said)
}

/// A release a console asked through the watcher (`POST /v1/actions`): the same flow, confirmed
/// by the name typed in the console's dialog, with a line in the audit log naming who asked.
pub fn asked(setup: &ReleaseSetup, ask: &ReleaseAsk) -> Released {
    let outcome = release_asked(setup, ask);
    let (word, why) = match &outcome {
        Released::Accepted(said) => ("ok", said.as_str()),
        Released::Refused(why) => ("refused", why.as_str()),
        Released::NotConfirmed(why) => ("cancelled", why.as_str()),
        Released::Failed(why) => ("failed", why.as_str()),
        Released::Unavailable => ("refused", ""),
    };
    let entry = AuditEntry {
        at_ms: now_ms(),
        host: ask.host.clone(),
        kind: AuditKind::Release,
        command: format!(
            "gpufleet {} {} (asked by {} through the watcher)",
            // `gpufleet restart` and `gpufleet start` are commands of their own.
            ask.action
                .filter(|a| !a.releases())
                .map_or("release", |a| a.as_str()),
            sanitize(&ask.host),
            sanitize(&ask.who)
        ),
        outcome: word.to_string(),
        exit_status: None,
        runbook: None,
        step: ask.action.map(|a| a.as_str().to_string()),
        dry_run: false,
        simulated: false,
    };
    if let Err(e) = setup.audit.append(&entry) {
        tracing::warn!(host = %ask.host, "the release's asker is not in the audit log: {e}");
    }
    tracing::warn!(host = %ask.host, by = %ask.who, outcome = word, why, "release asked through the watcher");
    outcome
}

fn release_asked(setup: &ReleaseSetup, ask: &ReleaseAsk) -> Released {
    let refused = |e: FlowError| Released::Refused(e.words().english());
    let mut flow = match ReleaseFlow::start(
        &setup.config,
        &ask.host,
        ask.action,
        false,
        None,
        &process_env,
    ) {
        Ok(flow) => flow,
        Err(e) => return refused(e),
    };
    if let Err(e) = flow.confirm(&ask.typed) {
        return match e {
            FlowError::Cancelled | FlowError::WrongName { .. } => {
                Released::NotConfirmed(e.words().english())
            }
            other => refused(other),
        };
    }
    let runner = SshRunner {
        ssh: &setup.ssh,
        config: &setup.config,
        interval_ms: setup.interval_ms,
    };
    if flow.plan().backup.is_some() {
        match flow.run_backup(&runner, &setup.audit, now_ms(), &mut |line| {
            tracing::debug!(host = %ask.host, line, "backup");
        }) {
            Ok(BackupOutcome::Failed(why)) => {
                // Nobody at the watcher overrides a failed backup: the host is not released.
                return Released::Refused(
                    Words::new("watch_release.backup_failed")
                        .put("why", why)
                        .english(),
                );
            }
            Ok(_) => {}
            Err(e) => return refused(e),
        }
    }
    let action = flow.plan().action;
    match flow.send(
        &runner,
        &SendOptions::default(),
        &setup.store,
        &setup.audit,
        now_ms(),
    ) {
        Ok(report) => {
            for problem in &report.problems {
                tracing::warn!(host = %ask.host, problem = ?problem, "after the release");
            }
            Released::Accepted(
                Words::new("watch_release.sent")
                    .put("action", action.as_str())
                    .put_words("unrecorded", Words::verbatim(""))
                    .english(),
            )
        }
        Err(FlowError::Send { failure, audit }) => {
            if let Some(why) = audit {
                tracing::warn!(host = %ask.host, "the release's audit line: {why}");
            }
            let why = failure.error.words().english();
            match failure.error {
                SendError::Refused { .. }
                | SendError::TokenRejected { .. }
                | SendError::NotFound { .. }
                | SendError::NoToken
                | SendError::BadToken => Released::Refused(why),
                _ => Released::Failed(why),
            }
        }
        Err(e) => refused(e),
    }
}

/// The alert's label once a release, restart or start a console asked went out.
pub const ASKED_DONE: &str = "release_asked_done";
/// The alert's label when it was sent but is not known to have happened.
pub const ASKED_FAILED: &str = "release_asked_failed";

/// A release, restart or start `who` asked through the watcher went out (the provider's words)
/// or may not have (why): logged in English and alerted in the reader's language, so the team
/// hears of it as of an automatic release.
pub fn alert_asked(
    fleet: &crate::fleet::Fleet,
    alerts: &crate::alerts::Dispatcher,
    host: &str,
    who: &str,
    action: Option<crate::release::ReleaseAction>,
    outcome: Result<String, String>,
) {
    // The log says the action in English, the alert in the reader's words.
    let said_action = action.map_or_else(
        || rust_i18n::t!("action.release").into_owned(),
        |a| a.words().localized(),
    );
    let action = action.map_or("release", |a| a.as_str());
    let who = sanitize(who);
    let (label, severity, summary) = match outcome {
        Ok(said) => {
            tracing::warn!(host, by = %who, action, outcome = %said, "asked through the watcher: done");
            (
                ASKED_DONE,
                crate::diagnose::Severity::Warning,
                rust_i18n::t!(
                    "alert_text.asked_done",
                    who = who,
                    action = said_action,
                    text = said
                )
                .into_owned(),
            )
        }
        Err(why) => {
            tracing::error!(host, by = %who, action, why = %why, "asked through the watcher: not known to be done");
            (
                ASKED_FAILED,
                crate::diagnose::Severity::Critical,
                rust_i18n::t!(
                    "alert_text.asked_failed",
                    who = who,
                    action = said_action,
                    why = why
                )
                .into_owned(),
            )
        }
    };
    super::alert_once(fleet, alerts, host, label, severity, summary);
}
