//! An automatic release from the watcher: the same flow as the console's and `gpufleet
//! release`'s (plan, backup, unattended confirmation, send, ledger closed, audit line), on a
//! thread of its own so monitoring never waits for a provider. The outcome comes back to the
//! loop as an [`Input::Released`](super::Input).

use std::sync::mpsc::Sender;

use crate::audit::AuditLog;
use crate::config::Config;
use crate::cost::{HostCost, LedgerStore};
use crate::host_runner::SshRunner;
use crate::release::{BackupOutcome, ReleaseFlow, SendOptions, Unattended, process_env};
use crate::remote::SshSettings;
use crate::telemetry::source::now_ms;
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
