//! The `gpufleet` binary: parse the command line, then hand it to its command under
//! `commands/` (the console when none is named).

use std::process::ExitCode;

use clap::FromArgMatches;

use gpufleet::alerts;
use gpufleet::check::ExpectFlags;
use gpufleet::cli::{AlertAction, Cli, CliCommand};
use gpufleet::commands::money::ReleaseArgs;
use gpufleet::commands::restart::{self, RestartArgs};
use gpufleet::commands::setup::{self, Prepared};
use gpufleet::commands::stdout::Stdout;
use gpufleet::commands::{
    allocator, check_cli, cost, fit, fleet_drive, hold, providers, release, report, runbook,
};
use gpufleet::error_text;
use gpufleet::release::{ReleaseAction, process_env};
use gpufleet::telemetry::source::now_ms;

fn main() -> ExitCode {
    allocator::limit_malloc_arenas();
    let matches = match gpufleet::commands::help::matches(std::env::args_os().collect()) {
        Ok(matches) => matches,
        Err(refusal) => refusal.exit(),
    };
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    match run(cli, matches.subcommand_name()) {
        Ok(code) => code,
        Err(e) => {
            // A host that could not be resolved says why in the user's language.
            let text = match e.downcast_ref::<gpufleet::remote::ResolveError>() {
                Some(host) => host.localized(),
                None => error_text::chain(e.as_ref()),
            };
            eprintln!("gpufleet: {text}");
            ExitCode::from(2)
        }
    }
}

/// Sets up what every command needs, then runs the one `cli` names.
fn run(cli: Cli, subcommand: Option<&str>) -> anyhow::Result<ExitCode> {
    let setup = match setup::prepare(&cli, subcommand)? {
        Prepared::Ready(setup) => *setup,
        Prepared::Done(code) => return Ok(code),
    };
    let (global, config, interval_ms) = (&cli.global, &setup.config, setup.interval_ms);
    match &cli.command {
        Some(CliCommand::Runbook { action }) => runbook::run(action, global, config, interval_ms),
        Some(CliCommand::Check {
            name,
            json,
            expect_gpu,
            expect_count,
            expect_memory_gib,
            min_cuda,
            sustain_s,
        }) => {
            let flags = ExpectFlags {
                gpu: expect_gpu.clone(),
                count: expect_count.clone(),
                memory_gib: expect_memory_gib.clone(),
                min_cuda: min_cuda.clone(),
            };
            let name = name.as_deref();
            let code =
                check_cli::command(global, config, interval_ms, name, &flags, *sustain_s, *json);
            Ok(code)
        }
        Some(CliCommand::Alert {
            action: AlertAction::Test { sink },
        }) => {
            let code =
                alerts::test_sinks(config, sink.as_deref(), &process_env, now_ms, &mut Stdout);
            Ok(ExitCode::from(code))
        }
        Some(CliCommand::Providers { action }) => {
            let path = global.config_path();
            let code = providers::run(action, config, path.as_deref(), global.demo);
            Ok(ExitCode::from(code))
        }
        Some(CliCommand::Hold {
            name,
            hours,
            disarm,
        }) => {
            let ssh = global.ssh_settings();
            let runner = gpufleet::host_runner::SshRunner {
                ssh: &ssh,
                config,
                interval_ms,
            };
            let request = hold::Request {
                hours: *hours,
                disarm: *disarm,
            };
            let code = hold::run(config, name, request, &runner, &mut Stdout);
            Ok(ExitCode::from(code))
        }
        Some(CliCommand::Report {
            name,
            since,
            out,
            from,
            token_file,
        }) => {
            let args = report::Args {
                host: name,
                since_ms: *since,
                out: out.as_deref(),
                from,
                token_file: token_file.as_deref(),
                demo: global.demo,
            };
            Ok(report::run_args(&args, config, now_ms()))
        }
        Some(CliCommand::Fit {
            params,
            method,
            precision,
            optimizer,
            seq,
            batch,
            gradient_checkpointing,
            gpus,
            json,
        }) => {
            let args = fit::args_from_words(
                params,
                method,
                precision,
                optimizer,
                *seq,
                *batch,
                *gradient_checkpointing,
                *gpus,
                *json,
            );
            let code = fit::run(&args, config, &mut Stdout, &mut std::io::stderr());
            Ok(ExitCode::from(code))
        }
        Some(CliCommand::Cost { json, advice }) => {
            cost::run(global, config, &setup.user_config, *json, *advice)
        }
        Some(CliCommand::Release {
            name,
            terminate,
            dry_run,
            yes,
            override_failed_backup,
            force,
            json,
            ..
        }) => {
            let args = ReleaseArgs {
                host: name.clone(),
                action: Some(if *terminate {
                    ReleaseAction::Terminate
                } else {
                    ReleaseAction::Stop
                }),
                dry_run: *dry_run,
                yes: *yes,
                read_only: global.read_only || config.read_only,
                override_failed_backup: *override_failed_backup,
                force: *force,
                json: *json,
            };
            release::run(global, config, interval_ms, &args)
        }
        Some(CliCommand::Restart {
            name,
            dry_run,
            json,
            yes,
            wait,
        }) => {
            let args = RestartArgs {
                host: name.clone(),
                action: ReleaseAction::Restart,
                dry_run: *dry_run,
                json: *json,
                yes: *yes,
                wait: *wait,
            };
            restart::run(global, config, interval_ms, &args)
        }
        Some(CliCommand::Start {
            name,
            dry_run,
            json,
            yes,
            wait,
        }) => {
            let args = RestartArgs {
                host: name.clone(),
                action: ReleaseAction::Start,
                dry_run: *dry_run,
                json: *json,
                yes: *yes,
                wait: *wait,
            };
            restart::run(global, config, interval_ms, &args)
        }
        _ => fleet_drive::run(cli, setup),
    }
}
