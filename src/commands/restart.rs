//! `gpufleet restart NAME` and `gpufleet start NAME`: the instance restarted, or started again
//! after a stop, through its provider's API (`[hosts.release]`), by the release flow itself
//! (request shown, typed confirmation, `--yes`, `--read-only`, audit line, exit codes); with
//! `--wait`, until the host answers over SSH again.

use std::io::Write;
use std::process::ExitCode;

use rust_i18n::t;

use crate::cli::GlobalArgs;
use crate::commands::money::{EXIT_FAILED, EXIT_OK, ReleaseArgs};
use crate::commands::stdout::Stdout;
use crate::config::Config;
use crate::release::ReleaseAction;
use crate::remote::{link_options, resolve_named};
use crate::runbook::RemoteExecutor;
use crate::runbook::exec::Executor;
use crate::runbook::reboot::{RebootOptions, boot_id, wait_for_return};
use crate::telemetry::source::StopFlag;

/// `gpufleet restart` / `gpufleet start` as clap resolved them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestartArgs {
    pub host: String,
    /// [`ReleaseAction::Restart`] or [`ReleaseAction::Start`].
    pub action: ReleaseAction,
    pub dry_run: bool,
    pub json: bool,
    pub yes: bool,
    pub wait: bool,
}

impl RestartArgs {
    /// The release flow's arguments for this action: nothing is released, so there is no
    /// backup to override and no ledger entry to force.
    pub fn release_args(&self, read_only: bool) -> ReleaseArgs {
        ReleaseArgs {
            host: self.host.clone(),
            action: Some(self.action),
            dry_run: self.dry_run,
            yes: self.yes,
            read_only,
            override_failed_backup: false,
            force: false,
            json: self.json,
        }
    }
}

/// Sends the restart or start, then waits for the host when asked to.
pub fn run(
    args: &GlobalArgs,
    config: &Config,
    interval_ms: u64,
    restart: &RestartArgs,
) -> anyhow::Result<ExitCode> {
    let release = restart.release_args(args.read_only || config.read_only);
    // A host restarted in place keeps its address: read its boot id before, so a quick
    // restart that never drops a probe still counts as one.
    let waiter = (restart.wait && !restart.dry_run && !args.demo)
        .then(|| waiter(args, config, interval_ms, &restart.host))
        .transpose()?;
    let code = crate::commands::release::run(args, config, interval_ms, &release)?;
    if code != ExitCode::from(EXIT_OK) {
        return Ok(code);
    }
    match waiter {
        Some((mut exec, before)) => Ok(ExitCode::from(wait(exec.as_mut(), before.as_deref()))),
        None => Ok(code),
    }
}

type Waiter = (Box<dyn Executor>, Option<String>);

fn waiter(
    args: &GlobalArgs,
    config: &Config,
    interval_ms: u64,
    host: &str,
) -> anyhow::Result<Waiter> {
    let ssh = args.ssh_settings();
    let remote = resolve_named(&ssh, &[host.to_string()], config)?
        .pop()
        .ok_or_else(|| anyhow::anyhow!(crate::commands::setup::no_host_named(host).localized()))?;
    let mut exec: Box<dyn Executor> =
        Box::new(RemoteExecutor::new(remote, link_options(&ssh, interval_ms)));
    let before = boot_id(
        exec.as_mut(),
        &RebootOptions::default(),
        &StopFlag::default(),
    );
    Ok((exec, before))
}

/// Waits until the host went away and answers again, printing each step; the bound is the
/// reboot wait's (down within 3 minutes, back within 15).
fn wait(exec: &mut dyn Executor, before: Option<&str>) -> u8 {
    let mut out = Stdout;
    let stop = StopFlag::default();
    let waited = wait_for_return(
        exec,
        before,
        &RebootOptions::default(),
        &stop,
        &mut |line| {
            let _ = writeln!(out, "{line}");
        },
    );
    match waited {
        Ok(_) => EXIT_OK,
        Err(e) => {
            let _ = writeln!(out, "{}", t!("restart.wait_failed", why = e.to_string()));
            EXIT_FAILED
        }
    }
}
