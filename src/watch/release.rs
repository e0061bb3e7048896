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
    let name = format!("release-{host}");
    let reported = done.clone();
    let failed_host = host.clone();
    let spawned = std::thread::Builder::new().name(name).spawn(move || {
        let outcome = release(&setup, &host, cost.as_ref());
        let _ = done.send(Input::Released { host, outcome });
    });
    if let Err(e) = spawned {
        let _ = reported.send(Input::Released {
            host: failed_host,
            outcome: Err(format!("no thread to release on: {e}")),
        });
    }
}

/// The release itself; `Ok` says what the provider did.
fn release(setup: &ReleaseSetup, host: &str, cost: Option<&HostCost>) -> Result<String, String> {
    let mut flow = ReleaseFlow::start(&setup.config, host, None, false, cost, &process_env)
        .map_err(|e| e.to_string())?;
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
            .map_err(|e| e.to_string())?;
        if let BackupOutcome::Failed(why) = outcome {
            // Nobody is there to override a failed backup: the host is not released.
            return Err(format!("the backup failed ({why}); not released"));
        }
    }
    flow.confirm_unattended(Unattended::AutoRelease);
    let action = flow.plan().action.as_str();
    let report = flow
        .send(
            &runner,
            &SendOptions::default(),
            &setup.store,
            &setup.audit,
            now_ms(),
        )
        .map_err(|e| e.to_string())?;
    let mut text = format!("{action} sent and accepted");
    if let Some(unrecorded) = &report.unrecorded {
        text.push_str(&format!(
            "; but the ledger could not record it: {}",
            unrecorded.lines(host).join(" ")
        ));
    }
    for problem in &report.problems {
        tracing::warn!(host, problem = %problem, "after the release");
    }
    Ok(text)
}
