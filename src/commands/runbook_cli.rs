//! `gpufleet runbook list | show ID | run ID ... | undo ...` from the command line: the
//! catalogue listed and shown, a runbook run or undone on a host (or this machine, or a demo
//! host), each step confirmed and written to the audit log.

use std::process::ExitCode;

use crate::audit::AuditLog;
use crate::cli::{GlobalArgs, RunbookAction};
use crate::commands::cli_words;
use crate::commands::demo as demo_command;
use crate::config::Config;
use crate::demo::Scratch;
use crate::remote::{link_options, resolve_named};
use crate::runbook;
use crate::telemetry::source::StopFlag;

/// Runs one `gpufleet runbook` action.
pub fn runbook(
    action: &RunbookAction,
    args: &GlobalArgs,
    config: &Config,
    interval_ms: u64,
) -> anyhow::Result<ExitCode> {
    let catalog = runbook::Catalog::load_default()?;
    let target = |host: &Option<String>| -> anyhow::Result<runbook::Target> {
        match host {
            Some(name) if !args.local => {
                let remote =
                    resolve_named(&args.ssh_settings(), std::slice::from_ref(name), config)
                        .map_err(|e| anyhow::anyhow!(e.localized()))?
                        .pop()
                        .ok_or_else(|| anyhow::anyhow!(cli_words::no_host_named(name)))?;
                Ok(runbook::Target::Remote(
                    remote,
                    link_options(&args.ssh_settings(), interval_ms),
                ))
            }
            None if args.local => Ok(runbook::Target::Local),
            _ => Err(anyhow::anyhow!(cli_words::say_where_to_run())),
        }
    };
    // With --demo, a simulated demo host, with a scratch directory for the audit log.
    let demo_or = |host: &Option<String>| -> anyhow::Result<(runbook::Target, Option<Scratch>)> {
        if args.demo {
            let (target, scratch) = demo_command::runbook_target(
                config,
                args,
                host.as_deref(),
                &mut crate::commands::stdout::Stdout,
            )?;
            Ok((target, Some(scratch)))
        } else {
            Ok((target(host)?, None))
        }
    };
    let audit_log = |scratch: Option<&Scratch>| -> anyhow::Result<AuditLog> {
        Ok(match scratch {
            Some(scratch) => scratch.audit(),
            None => AuditLog::open_default()?,
        })
    };
    let read_only = args.read_only || config.read_only;
    let stop = StopFlag::default();
    let code = match action {
        RunbookAction::List { json: false } => {
            crate::out!("{}", runbook::list_command(&catalog));
            0
        }
        RunbookAction::List { json: true } => {
            let text = format!("{:#}\n", runbook::json::list_json(&catalog));
            crate::out!("{text}");
            0
        }
        RunbookAction::Show { id, json: false } => {
            crate::out!("{}", runbook::show_command(&catalog, id)?);
            0
        }
        RunbookAction::Show { id, json: true } => {
            let text = format!("{:#}\n", runbook::json::show_json(&catalog, id)?);
            crate::out!("{text}");
            0
        }
        RunbookAction::Run {
            id,
            host,
            param,
            gpu,
            dry_run,
            yes,
        } => {
            let (target, scratch) = demo_or(host)?;
            let request = runbook::RunRequest {
                runbook: id.clone(),
                target,
                params: param.clone(),
                gpu: *gpu,
                dry_run: *dry_run,
                read_only,
                reboot: Default::default(),
            };
            let mut confirmer = runbook::cli_confirmer(*yes);
            runbook::run_command(
                &catalog,
                request,
                confirmer.as_mut(),
                &mut crate::commands::stdout::Stdout,
                &audit_log(scratch.as_ref())?,
                &stop,
            )
        }
        RunbookAction::Undo { host, dry_run, yes } => {
            let (target, scratch) = demo_or(host)?;
            let request = runbook::UndoRequest {
                target,
                dry_run: *dry_run,
                read_only,
            };
            let mut confirmer = runbook::cli_confirmer(*yes);
            runbook::undo_command(
                &catalog,
                request,
                confirmer.as_mut(),
                &mut crate::commands::stdout::Stdout,
                &audit_log(scratch.as_ref())?,
                &stop,
            )
        }
    };
    Ok(ExitCode::from(code))
}
