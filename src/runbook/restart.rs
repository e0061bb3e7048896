//! How a runbook's reboot step restarts the host: `reboot` on a machine; on a container, where
//! `reboot` restarts nothing, the provider's restart (the `[hosts.release]` table's provider,
//! request shown and confirmed like any step); and on a container no provider can restart, a
//! refusal that says what to do instead. `restart = "provider" | "reboot"` in the table decides
//! over what the host says it is.

use std::sync::Arc;
use std::time::Duration;

use rust_i18n::t;

use crate::config::{ReleaseConfig, RestartVia};
use crate::release::{
    HostRunner, ReleaseAction, ReleaseRequest, ReleaseStep, SendOptions, load_token, send,
};
use crate::remote::HostKind;
use crate::runbook::exec::Executor;
use crate::runbook::remote_exec::RemoteExecutor;
use crate::runbook::target::Target;
use crate::telemetry::source::StopFlag;

/// What sends the provider's restart: the answer's lines, or why it failed (both said to the
/// user, neither holding the token).
pub type SendRestart = Arc<dyn Fn() -> Result<Vec<String>, String> + Send + Sync>;

/// How the reboot step restarts the host.
#[derive(Clone, Default)]
pub enum Restart {
    /// `reboot` on the host itself (a machine, or a host that does not say).
    #[default]
    Reboot,
    /// The provider restarts the instance.
    Provider {
        /// The request as the step shows it and the audit log keeps it (token redacted).
        shown: String,
        send: SendRestart,
    },
    /// A container no provider can restart here: the step refuses, saying `why`.
    Nothing { why: String },
}

impl std::fmt::Debug for Restart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Restart::Reboot => f.write_str("Reboot"),
            Restart::Provider { shown, .. } => {
                f.debug_struct("Provider").field("shown", shown).finish()
            }
            Restart::Nothing { why } => f.debug_struct("Nothing").field("why", why).finish(),
        }
    }
}

impl PartialEq for Restart {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Restart::Reboot, Restart::Reboot) => true,
            (Restart::Provider { shown: a, .. }, Restart::Provider { shown: b, .. }) => a == b,
            (Restart::Nothing { why: a }, Restart::Nothing { why: b }) => a == b,
            _ => false,
        }
    }
}

/// Runs nothing on the host: a provider restart is a web request or a local program.
struct NotOnHost;

impl HostRunner for NotOnHost {
    fn run(&self, _: &str, _: &[String], _: &mut dyn FnMut(&str)) -> Result<Option<i32>, String> {
        Err(t!("restart.not_on_host").into_owned())
    }
}

/// How to restart `host`: its `[hosts.release]` table (`release`), what it said it is
/// (`probed`), and `env` for the token's variable.
pub fn decide(
    host: &str,
    release: Option<&ReleaseConfig>,
    probed: Option<HostKind>,
    env: &dyn Fn(&str) -> Option<String>,
    options: SendOptions,
) -> Restart {
    let container = match release.and_then(|r| r.restart) {
        Some(RestartVia::Reboot) => false,
        Some(RestartVia::Provider) => true,
        None => HostKind::known(probed, release.map(|r| r.provider)) == Some(HostKind::Container),
    };
    if !container {
        return Restart::Reboot;
    }
    let Some(release) = release else {
        return Restart::Nothing {
            why: t!("restart.container_no_table", host = host).into_owned(),
        };
    };
    let token = if release.provider.uses_api() {
        match load_token(release, env) {
            Ok(loaded) => Some(loaded.secret),
            Err(e) => {
                return Restart::Nothing {
                    why: t!(
                        "restart.container_cannot",
                        host = host,
                        why = e.words().localized()
                    )
                    .into_owned(),
                };
            }
        }
    } else {
        None
    };
    let request = match ReleaseRequest::build(host, release, ReleaseAction::Restart, token) {
        Ok(request) => request,
        Err(e) => {
            return Restart::Nothing {
                why: t!(
                    "restart.container_cannot",
                    host = host,
                    why = e.words().localized()
                )
                .into_owned(),
            };
        }
    };
    // The `ssh` provider's restart is `reboot` on the host: the step's own command.
    if request
        .steps
        .iter()
        .any(|step| matches!(step, ReleaseStep::OnHost { .. }))
    {
        return Restart::Reboot;
    }
    let shown = request.summary();
    let name = host.to_string();
    let send: SendRestart = Arc::new(move || match send(&request, &name, &NotOnHost, &options) {
        Ok(answers) => Ok(answers
            .iter()
            .map(|a| match a.status {
                Some(status) => format!("{}: {status} {}", a.step, a.text),
                None => format!("{}: {}", a.step, a.text),
            })
            .collect()),
        Err(failure) => Err(failure.error.words().localized()),
    });
    Restart::Provider { shown, send }
}

/// [`decide`] for a runbook's target: an SSH host is asked once what it is (unless its table
/// says which way), a local or simulated target reboots as before (the runner refuses a local
/// reboot).
pub fn for_target(
    target: &Target,
    release: Option<&ReleaseConfig>,
    env: &dyn Fn(&str) -> Option<String>,
    stop: &StopFlag,
) -> Restart {
    let Target::Remote(host, options) = target else {
        return Restart::Reboot;
    };
    // A table that says which way saves asking the host.
    let probed = match release.and_then(|r| r.restart) {
        Some(_) => None,
        None => {
            let mut exec = RemoteExecutor::new(host.clone(), options.clone());
            crate::remote::host_kind_probe(&mut |argv, on_line| {
                exec.run(argv, PROBE_TIMEOUT, stop, on_line)
                    .is_ok_and(|r| r.exit_status == Some(0))
            })
        }
    };
    decide(&host.name, release, probed, env, SendOptions::default())
}

/// How long the host may take to say what it is.
const PROBE_TIMEOUT: Duration = Duration::from_secs(15);
