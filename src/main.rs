//! The `gpufleet` binary: parse the command line, load config and theme, run the console or a
//! one-shot command.

use std::process::ExitCode;

use clap::FromArgMatches;

use gpufleet::alerts;
use gpufleet::app::model::ModelOptions;
use gpufleet::app::panel::HostSource;
use gpufleet::check;
use gpufleet::cli::{AlertAction, Cli, CliCommand};
use gpufleet::commands::allocator;
use gpufleet::commands::check_cli;
use gpufleet::commands::cli_words;
use gpufleet::commands::console::{self, ConsoleArgs};
use gpufleet::commands::demo as demo_command;
use gpufleet::commands::diagnose_file;
use gpufleet::commands::fit as fit_command;
use gpufleet::commands::fleet_inventory;
use gpufleet::commands::hold as hold_command;
use gpufleet::commands::host_words;
use gpufleet::commands::money::{self, MoneyEnv, ReleaseArgs};
use gpufleet::commands::providers as providers_command;
use gpufleet::commands::report as report_command;
use gpufleet::commands::runbook;
use gpufleet::commands::standalone;
use gpufleet::commands::watch::{self as watch_command, WatchArgs};
use gpufleet::config::lang::Lang;
use gpufleet::config::{self, Config};
use gpufleet::error_text;
use gpufleet::host_runner::SshRunner;
use gpufleet::launch::{self, Plan};
use gpufleet::recording::Replay;
use gpufleet::release::{ReleaseAction, process_env};
use gpufleet::snapshot::{Snapshot, render_table};
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

/// The console draws on a terminal and reads keys from one; under cron, `ssh host gpufleet` or
/// a pipe it says so in one line and exits 2 before touching the terminal or stdout.
fn console_needs_a_terminal() -> Option<ExitCode> {
    use std::io::IsTerminal;
    if std::io::stdin().is_terminal() && std::io::stdout().is_terminal() {
        return None;
    }
    eprintln!("gpufleet: {}", cli_words::needs_a_terminal());
    Some(ExitCode::from(2))
}

/// A command line that cannot mean anything: said on stderr, exit 2 (as clap's usage errors).
fn usage_error(e: &host_words::WordError) -> ExitCode {
    eprintln!("gpufleet: {e}");
    ExitCode::from(gpufleet::exit_codes::USAGE)
}

/// Commands handled before the console starts never reach the console's dispatch.
fn unreachable_command() -> anyhow::Result<ExitCode> {
    Err(anyhow::anyhow!(gpufleet::cli::dispatched_twice()))
}

fn load_config(cli: &Cli) -> anyhow::Result<Config> {
    match &cli.global.config {
        Some(path) => Ok(config::load(path)?),
        None => match config::default_path() {
            Some(path) => Ok(config::load_optional(&path)?.unwrap_or_default()),
            None => Ok(Config::default()),
        },
    }
}

/// Reads the locale variables for [`Lang::choose`].
fn locale_var(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

fn run(mut cli: Cli, subcommand: Option<&str>) -> anyhow::Result<ExitCode> {
    // The flag or the locale until the config is read, so that what is said before it (or
    // about it) is in the language asked for where one was.
    Lang::choose(cli.global.lang, None, locale_var).apply();
    if !matches!(
        cli.command,
        None | Some(CliCommand::Watch { .. }) | Some(CliCommand::Replay { .. })
    ) {
        standalone::exit_cancelled_on_interrupt();
    }
    let named = match host_words::named_hosts(&cli, subcommand) {
        Ok(named) => named,
        Err(e) => return Ok(usage_error(&e)),
    };
    if cli.record.is_some()
        && !matches!(
            cli.command,
            None | Some(CliCommand::Watch { .. }) | Some(CliCommand::Replay { .. })
        )
    {
        let refused = cli_words::record_refused(subcommand.unwrap_or_default());
        eprintln!("gpufleet: {refused}");
        return Ok(ExitCode::from(gpufleet::exit_codes::USAGE));
    }
    if let Some(refusal) = demo_command::refusal(&cli) {
        eprintln!("gpufleet: {refusal}");
        return Ok(ExitCode::from(gpufleet::exit_codes::USAGE));
    }
    if cli.global.lang.is_none()
        && matches!(
            cli.command,
            Some(
                CliCommand::Diagnose { .. } | CliCommand::Audit { .. } | CliCommand::Config { .. }
            )
        )
    {
        // These run without the config, but speak its language when it names one and can be
        // read; one that cannot is left to the command itself (`config check` reports it).
        let config_lang = load_config(&cli).ok().and_then(|c| c.lang());
        Lang::choose(None, config_lang, locale_var).apply();
    }
    if let Some(CliCommand::Diagnose { file, json }) = &cli.command {
        return Ok(diagnose_file::run(file.as_deref(), *json));
    }
    if let Some(code) = standalone::run(&cli) {
        return Ok(code);
    }
    let config = load_config(&cli)?;
    Lang::choose(cli.global.lang, config.lang(), locale_var).apply();
    // The synced instances join the fleet here, once, for every driver (the console and the
    // watcher join them again after each background sync, from the user's config as loaded).
    let user_config = config.clone();
    let (config, gone) = fleet_inventory::for_command(&cli, config);
    if let Err(e) = host_words::check_words(&named, &config, cli.global.ssh_config.as_deref()) {
        return Ok(usage_error(&e));
    }
    if cli.command.is_none()
        && let Some(code) = console_needs_a_terminal()
    {
        return Ok(code);
    }
    let interval_ms = cli.global.interval_ms.unwrap_or(config.interval_ms);
    match &cli.command {
        Some(CliCommand::Runbook { action }) => {
            return runbook::run(action, &cli.global, &config, interval_ms);
        }
        Some(CliCommand::Check {
            name,
            json,
            expect_gpu,
            expect_count,
            expect_memory_gib,
            min_cuda,
            sustain_s,
        }) => {
            let flags = check::ExpectFlags {
                gpu: expect_gpu.clone(),
                count: expect_count.clone(),
                memory_gib: expect_memory_gib.clone(),
                min_cuda: min_cuda.clone(),
            };
            if cli.global.demo {
                let code =
                    demo_command::check(&cli.global, name.as_deref(), &flags, *sustain_s, *json);
                return Ok(ExitCode::from(code));
            }
            return Ok(check_cli::run_check(
                &cli.global,
                &config,
                interval_ms,
                name.as_deref(),
                &flags,
                *sustain_s,
                *json,
            ));
        }
        Some(CliCommand::Alert {
            action: AlertAction::Test { sink },
        }) => {
            let mut out = gpufleet::commands::stdout::Stdout;
            let code = alerts::test_sinks(&config, sink.as_deref(), &process_env, now_ms, &mut out);
            return Ok(ExitCode::from(code));
        }
        Some(CliCommand::Providers { action }) => {
            let config_path = cli.global.config_path();
            return Ok(ExitCode::from(providers_command::run(
                action,
                &config,
                config_path.as_deref(),
                cli.global.demo,
            )));
        }
        Some(CliCommand::Hold { name }) => {
            let code = hold_command::run(&config, name, &mut gpufleet::commands::stdout::Stdout);
            return Ok(ExitCode::from(code));
        }
        Some(CliCommand::Report {
            name,
            since,
            out,
            from,
        }) => {
            let request = report_command::Request {
                host: name.clone(),
                since_ms: *since,
                out: out.clone(),
                from: from.clone(),
                demo: cli.global.demo,
            };
            return Ok(report_command::run(&request, &config, now_ms()));
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
            let args = fit_command::args_from_words(
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
            let (mut out, mut err) = (gpufleet::commands::stdout::Stdout, std::io::stderr());
            let code = fit_command::run(&args, &config, &mut out, &mut err);
            return Ok(ExitCode::from(code));
        }
        Some(CliCommand::Cost { json, advice }) => {
            let (text, code) = if *advice && cli.global.demo {
                demo_command::cost_advice(&config, &cli.global, *json)?
            } else if *advice {
                gpufleet::commands::cost_advice::advice_command(&config, *json, now_ms())?
            } else if cli.global.demo {
                demo_command::cost(&config, &cli.global, *json)?
            } else {
                let (text, code) = money::cost_command(&config, *json, now_ms())?;
                gpufleet::commands::cost_inventory::extend(
                    &user_config,
                    text,
                    code,
                    *json,
                    &now_ms,
                    &mut std::io::stderr(),
                )
            };
            gpufleet::out!("{text}");
            return Ok(ExitCode::from(code));
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
                read_only: cli.global.read_only || config.read_only,
                override_failed_backup: *override_failed_backup,
                force: *force,
                json: *json,
            };
            if cli.global.demo {
                let code = demo_command::release(
                    &config,
                    &cli.global,
                    &args,
                    &mut std::io::stdin().lock(),
                    &mut gpufleet::commands::stdout::Stdout,
                )?;
                return Ok(ExitCode::from(code));
            }
            let ssh = cli.global.ssh_settings();
            let runner = SshRunner {
                ssh: &ssh,
                config: &config,
                interval_ms,
            };
            let env = MoneyEnv::from_state_dir(&runner, &now_ms)?;
            let code = money::release_command(
                &config,
                &args,
                &env,
                &mut std::io::stdin().lock(),
                &mut gpufleet::commands::stdout::Stdout,
            );
            return Ok(ExitCode::from(code));
        }
        _ => {}
    }
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
    if replay.is_some() {
        // The file is checked first, so a bad one is said wherever it is run.
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
    let plan = match replay {
        Some(replay) => Plan::Replay {
            replay,
            speed: cli.global.speed,
        },
        None => match Plan::choose(&cli.global, &named, &config, options.fleet.interval_ms) {
            Ok(plan) => plan,
            Err(e) => {
                eprintln!("gpufleet: {}", e.localized());
                return Ok(ExitCode::from(1));
            }
        },
    };
    let plan = fleet_inventory::mark_gone(plan, &mut options.fleet.money, &gone);
    options.source = match &plan {
        Plan::Demo { .. } => HostSource::Simulated,
        Plan::Replay { .. } => HostSource::Demo,
        Plan::Local(_) => HostSource::Local,
        Plan::Ssh { .. } => HostSource::Ssh,
    };
    let verbosity = i8::try_from(cli.global.verbose).unwrap_or(i8::MAX);
    let console = matches!(cli.command, None | Some(CliCommand::Replay { .. }));
    let record = match &cli.command {
        Some(CliCommand::Replay { record, .. }) => record.clone().or(cli.record.clone()),
        _ => cli.record.clone(),
    };
    match cli.command {
        Some(CliCommand::Snapshot { json, .. }) => {
            let fleet = plan.read_once(options.fleet);
            let snapshot = Snapshot::from_fleet(&fleet);
            if json {
                gpufleet::outln!("{}", serde_json::to_string_pretty(&snapshot)?);
            } else {
                gpufleet::out!("{}", render_table(&snapshot));
            }
            Ok(if snapshot.all_read() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Some(CliCommand::Watch {
            metrics,
            quiet,
            record,
            ..
        }) => {
            let args = WatchArgs {
                record: record.or(cli.record),
                metrics,
                verbosity: if quiet { -1 } else { verbosity },
                user_config,
            };
            watch_command::run(args, &cli.global, &named, &config, options.fleet, plan)
        }
        _ if !console => unreachable_command(),
        _ => console::run(ConsoleArgs {
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
        }),
    }
}
