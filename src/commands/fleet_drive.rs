//! The commands that read the fleet through the engine: the console (`gpufleet` alone, or on a
//! recording: `replay`), `snapshot` and `watch`. Each chooses where telemetry comes from (the
//! plan: the demo fleet, a recording, this machine or the configured hosts) and the engine's
//! options, then starts its driver.

use std::process::ExitCode;

use crate::app::model::ModelOptions;
use crate::app::panel::HostSource;
use crate::cli::{Cli, CliCommand};
use crate::commands::console::{self, ConsoleArgs};
use crate::commands::fleet_inventory;
use crate::commands::setup::{Setup, console_needs_a_terminal};
use crate::commands::watch::{self, WatchArgs};
use crate::fleet::FleetOptions;
use crate::launch::{self, Plan};
use crate::recording::Replay;
use crate::snapshot::{Snapshot, render_table};

/// Runs the console, `replay`, `snapshot` or `watch`, whichever `cli` asks for.
pub fn run(mut cli: Cli, setup: Setup) -> anyhow::Result<ExitCode> {
    let Setup {
        config,
        user_config,
        gone,
        named,
        interval_ms,
    } = setup;
    // A replay is the console on a recording: read-only and as offline as the demo fleet
    // (nothing priced, stored, alerted or sent to a host).
    let replay = match &cli.command {
        Some(CliCommand::Replay { file, .. }) => match Replay::open(file) {
            Ok(replay) => Some(replay),
            Err(e) => {
                eprintln!("gpufleet replay: {e}");
                return Ok(ExitCode::from(2));
            }
        },
        _ => None,
    };
    // `attach` is the console on watchers' fleets: read-only here and as offline as a replay
    // (the watchers price, alert and release); `snapshot --from` reads them once.
    let attach = match &cli.command {
        Some(CliCommand::Attach { urls, token_file }) => {
            match super::attach::open(urls, token_file.as_deref()) {
                Ok(attach) => Some(attach),
                Err(e) => {
                    eprintln!("gpufleet attach: {e}");
                    return Ok(ExitCode::from(2));
                }
            }
        }
        Some(CliCommand::Snapshot {
            from, token_file, ..
        }) if !from.is_empty() => {
            return Ok(super::attach::snapshot(
                from,
                token_file.as_deref(),
                launch::fleet_options(&config, &cli.global),
                matches!(cli.command, Some(CliCommand::Snapshot { json: true, .. })),
            ));
        }
        _ => None,
    };
    if replay.is_some() || attach.is_some() {
        // The file or the watchers are checked first, so a bad one is said wherever it is run.
        if let Some(code) = console_needs_a_terminal() {
            return Ok(code);
        }
        cli.global.demo = true;
        cli.global.read_only = true;
    }
    let money_config = launch::money_config(&config, cli.global.demo);
    let mut options = ModelOptions {
        fleet: launch::fleet_options(&config, &cli.global),
        ..ModelOptions::default()
    };
    let plan = match (replay, attach) {
        (Some(replay), _) => Plan::Replay {
            replay,
            speed: cli.global.speed,
        },
        (None, Some(attach)) => Plan::Attach(Box::new(attach)),
        (None, None) => match Plan::choose(&cli.global, &named, &config, options.fleet.interval_ms)
        {
            Ok(plan) => plan,
            Err(e) => {
                eprintln!("gpufleet: {}", e.localized());
                return Ok(ExitCode::from(1));
            }
        },
    };
    let mut plan = fleet_inventory::mark_gone(plan, &mut options.fleet.money, &gone);
    // A synced host that went down may come back elsewhere: its links ask the inventory.
    if let Plan::Ssh { opts, .. } = &mut plan
        && !user_config.providers.is_empty()
        && let Ok(store) = crate::providers::InventoryStore::open_default()
    {
        opts.endpoints = Some(std::sync::Arc::new(
            crate::providers::InventoryEndpoints::new(user_config.clone(), store),
        ));
    }
    options.source = match &plan {
        Plan::Demo { .. } => HostSource::Simulated,
        Plan::Replay { .. } | Plan::Attach(_) => HostSource::Demo,
        Plan::Local(_) => HostSource::Local,
        Plan::Ssh { .. } => HostSource::Ssh,
    };
    let verbosity = i8::try_from(cli.global.verbose).unwrap_or(i8::MAX);
    let record = match &cli.command {
        Some(CliCommand::Replay { record, .. }) => record.clone().or(cli.record.clone()),
        _ => cli.record.clone(),
    };
    match cli.command {
        Some(CliCommand::Snapshot { json, .. }) => snapshot(plan, options.fleet, json),
        Some(CliCommand::Watch {
            metrics,
            quiet,
            record,
            serve,
            ..
        }) => {
            let args = WatchArgs {
                record: record.or(cli.record),
                metrics,
                serve,
                verbosity: if quiet { -1 } else { verbosity },
                user_config,
            };
            watch::run(args, &cli.global, &named, &config, options.fleet, plan)
        }
        None | Some(CliCommand::Replay { .. }) | Some(CliCommand::Attach { .. }) => {
            console::run(ConsoleArgs {
                global: cli.global,
                config,
                user_config,
                named,
                plan,
                options,
                money_config,
                interval_ms,
                verbosity,
                record,
            })
        }
        // Commands handled before the fleet is started never reach it.
        Some(_) => Err(anyhow::anyhow!(crate::cli::dispatched_twice())),
    }
}

/// `gpufleet snapshot [--json]`: one reading of every host, printed; exit 1 when a host could not
/// be read.
fn snapshot(plan: Plan, options: FleetOptions, json: bool) -> anyhow::Result<ExitCode> {
    let fleet = plan.read_once(options);
    let snapshot = Snapshot::from_fleet(&fleet);
    if json {
        crate::outln!("{}", serde_json::to_string_pretty(&snapshot)?);
    } else {
        crate::out!("{}", render_table(&snapshot));
    }
    Ok(if snapshot.all_read() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
