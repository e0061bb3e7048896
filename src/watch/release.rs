//! An automatic release from the watcher: the same flow as the console's and `gpufleet
//! release`'s (plan, backup, unattended confirmation, send, ledger closed, audit line), on a
//! thread of its own so monitoring never waits for a provider. The outcome comes back to the
//! loop as an [`Input::Released`](super::Input).

use std::sync::mpsc::Sender;

use rust_i18n::t;

use crate::audit::AuditLog;
use crate::config::Config;
use crate::config::lang::Lang;
use crate::cost::{HostCost, LedgerStore};
use crate::host_runner::SshRunner;
use crate::release::{
    BackupOutcome, FlowError, ReleaseFlow, SendOptions, Unattended, error_words, process_env,
};
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

/// What an automatic release came to, said twice: in English for the log (log lines are
/// English whatever the language) and in the reader's language for the alert.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Said {
    pub log: String,
    pub alert: String,
}

impl Said {
    /// `say` in English and in the language set (`say` is given the locale).
    pub(super) fn both(say: impl Fn(&str) -> String) -> Said {
        Said {
            log: say(Lang::En.tag()),
            alert: say(&rust_i18n::locale()),
        }
    }

    /// A release refused or failed: the error's own English and its words.
    fn flow_error(error: &FlowError) -> Said {
        Said {
            log: error.to_string(),
            alert: error_words(error),
        }
    }
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
            outcome: Err(Said::both(|locale| {
                t!("watch_release.no_thread", locale = locale, why = why).into_owned()
            })),
        });
    }
}

/// The release itself; `Ok` says what the provider did.
fn release(setup: &ReleaseSetup, host: &str, cost: Option<&HostCost>) -> Result<Said, Said> {
    let mut flow = ReleaseFlow::start(&setup.config, host, None, false, cost, &process_env)
        .map_err(|e| Said::flow_error(&e))?;
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
            .map_err(|e| Said::flow_error(&e))?;
        if let BackupOutcome::Failed(why) = outcome {
            // Nobody is there to override a failed backup: the host is not released.
            return Err(Said::both(|locale| {
                t!("watch_release.backup_failed", locale = locale, why = why).into_owned()
            }));
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
        .map_err(|e| Said::flow_error(&e))?;
    let said = Said::both(|locale| {
        let sent = t!(
            "watch_release.sent",
            locale = locale,
            action = action.as_str()
        );
        match &report.unrecorded {
            Some(unrecorded) => {
                let why: Vec<String> = unrecorded
                    .words(host)
                    .iter()
                    .map(|line| line.render(locale))
                    .collect();
                let why = why.join(" ");
                format!(
                    "{sent}{}",
                    t!("watch_release.unrecorded", locale = locale, why = why)
                )
            }
            None => sent.into_owned(),
        }
    });
    for problem in &report.problems {
        tracing::warn!(host, problem = ?problem, "after the release");
    }
    Ok(said)
}
