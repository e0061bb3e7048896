//! The `gpufleet` binary: parse the command line, load config and theme, run the console or a
//! one-shot command.

use std::process::ExitCode;
use std::sync::{Arc, mpsc};
use std::time::Duration;

use clap::FromArgMatches;

use gpufleet::alerts;
use gpufleet::app::Event;
use gpufleet::app::model::ModelOptions;
use gpufleet::app::ops_bridge::{OpsFleet, OpsSetup, ReportSetup};
use gpufleet::app::panel::{HostSource, Runbooks};
use gpufleet::app::release_bridge::{BridgeSetup, SshHostRunner};
use gpufleet::app::{Model, runtime};
use gpufleet::audit::AuditLog;
use gpufleet::check;
use gpufleet::cli::{AlertAction, Cli, CliCommand};
use gpufleet::commands::check_cli;
use gpufleet::commands::cli_words;
use gpufleet::commands::demo as demo_command;
use gpufleet::commands::diagnose_file;
use gpufleet::commands::fit as fit_command;
use gpufleet::commands::fleet_inventory;
use gpufleet::commands::hold as hold_command;
use gpufleet::commands::host_words;
use gpufleet::commands::logging;
use gpufleet::commands::playbook_cli;
use gpufleet::commands::providers as providers_command;
use gpufleet::commands::record as record_command;
use gpufleet::commands::report as report_command;
use gpufleet::commands::standalone;
use gpufleet::commands::watch::{self as watch_command, WatchArgs};
use gpufleet::config::lang::Lang;
use gpufleet::config::{self, Config};
use gpufleet::cost::LedgerStore;
use gpufleet::demo::{self, Scratch};
use gpufleet::duty::Duties;
use gpufleet::error_text;
use gpufleet::host_runner::SshRunner;
use gpufleet::launch::{self, Plan};
use gpufleet::metrics::{MetricsBridge, MetricsServer};
use gpufleet::money_cli::{self, MoneyEnv, ReleaseArgs};
use gpufleet::playbook;
use gpufleet::recording::Replay;
use gpufleet::release::{ReleaseAction, SendOptions, process_env};
use gpufleet::snapshot::{Snapshot, render_table};
use gpufleet::telemetry::source::now_ms;
use gpufleet::theme::Theme;

/// At most two malloc arenas. glibc gives each thread that allocates under contention an arena
/// of its own (up to eight per core), and every link thread's small allocations then keep a
/// partly used arena resident: at 50 hosts this saves about 2.5 MB (docs/PERFORMANCE.md). The
/// allocations are few per second, so two arenas cost no measurable contention.
fn limit_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets an allocator parameter; it is called before any thread starts.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}

fn main() -> ExitCode {
    limit_malloc_arenas();
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
        Some(CliCommand::Playbook { action }) => {
            return playbook_cli::playbook(action, &cli.global, &config, interval_ms);
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
            let mut out = std::io::stdout();
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
            let code = hold_command::run(&config, name, &mut std::io::stdout());
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
            json,
        }) => {
            let args = fit_command::args_from_words(
                params, method, precision, optimizer, *seq, *batch, *json,
            );
            let (mut out, mut err) = (std::io::stdout(), std::io::stderr());
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
                let (text, code) = money_cli::cost_command(&config, *json, now_ms())?;
                gpufleet::commands::cost_inventory::extend(
                    &user_config,
                    text,
                    code,
                    *json,
                    &now_ms,
                    &mut std::io::stderr(),
                )
            };
            print!("{text}");
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
                    &mut std::io::stdout(),
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
            let code = money_cli::release_command(
                &config,
                &args,
                &env,
                &mut std::io::stdin().lock(),
                &mut std::io::stdout(),
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
                println!("{}", serde_json::to_string_pretty(&snapshot)?);
            } else {
                print!("{}", render_table(&snapshot));
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
        _ => {
            let theme_name = cli
                .global
                .theme
                .clone()
                .or_else(|| config.theme.clone())
                .unwrap_or_else(|| "dark".to_string());
            let theme = Theme::load_named(&theme_name, config::themes_dir().as_deref())?;
            let interval = Duration::from_millis(options.fleet.interval_ms);
            let read_only = options.fleet.read_only;
            let persist = options.fleet.money.persist;
            // The user's runbooks with the curated ones; a bad file leaves the curated set and
            // says why.
            let catalog = playbook::Catalog::load_default();
            if let Ok(catalog) = &catalog {
                options.runbooks = Runbooks::new(catalog.clone());
            }
            let mut model = Model::new(plan.host_names(), options, now_ms());
            // The terminal is the console's: its log lines go to a file in the state directory.
            match gpufleet::paths::state_dir().map(|dir| logging::to_file(&dir, verbosity)) {
                Some(Ok(_)) => {}
                Some(Err(e)) => {
                    model.notify(cli_words::log_not_written(Some(&e.to_string())), false)
                }
                None => model.notify(cli_words::log_not_written(None), false),
            }
            tracing::info!(
                version = gpufleet::cli::VERSION,
                hosts = plan.host_names().len(),
                "console started"
            );
            if let Err(e) = catalog {
                model.notify(e.console_words(), true);
            }
            let store = LedgerStore::open_default().ok().filter(|_| persist);
            if let Some(store) = &store {
                // A ledger file that cannot be read is left alone: saving refuses too, and says
                // why in the console.
                match store.load() {
                    Ok(book) => {
                        let money = model.fleet.options.money.clone();
                        model.fleet.money.resume(&book, &money, now_ms());
                    }
                    Err(e) => model.notify(e.to_string(), true),
                }
            }
            // The `[[alerts]]` sinks (none for the demo fleet, which touches no network); a
            // missing secret stops here, before the terminal.
            let sinks = if cli.global.demo {
                Vec::new()
            } else {
                match watch_command::load_sinks(&config) {
                    Ok(sinks) => sinks,
                    Err(e) => {
                        eprintln!("gpufleet: {e}");
                        return Ok(ExitCode::from(2));
                    }
                }
            };
            for warning in sinks.iter().flat_map(|s| s.warnings.iter()) {
                model.notify(warning.clone(), true);
            }
            // One process auto-releases hosts and one sends alerts: a watcher (or another
            // console) that holds a duty's lock does it, this console says so and takes it over
            // when that process stops.
            let mut duties = persist.then(|| {
                let (duties, notes) = Duties::start(
                    "gpufleet console",
                    &mut model.fleet,
                    true,
                    !sinks.is_empty(),
                );
                for note in notes.into_iter().filter(|n| n.warning) {
                    model.notify(note.text, true);
                }
                duties
            });
            // The demo's releases, runbooks and checks run on its simulated hosts, and keep
            // their ledger, audit lines and reports in a scratch directory removed on exit.
            let demo_sim = match &plan {
                Plan::Demo { sim, speed } => Some((Arc::clone(sim), *speed)),
                _ => None,
            };
            let scratch = demo_sim.as_ref().map(|_| Scratch::new()).transpose()?;
            let bridge = match (&demo_sim, &scratch) {
                (Some((sim, _)), Some(scratch)) => BridgeSetup {
                    runner: Arc::new(demo::SimHostRunner {
                        sim: Arc::clone(sim),
                    }),
                    config: money_config,
                    read_only,
                    store: Some(scratch.store()),
                    audit: Some(scratch.audit()),
                    env: Arc::new(demo::demo_env),
                    send: SendOptions::default(),
                    holds: None,
                    simulated: true,
                },
                _ => BridgeSetup {
                    runner: Arc::new(SshHostRunner {
                        ssh: cli.global.ssh_settings(),
                        config: money_config.clone(),
                        interval_ms,
                    }),
                    config: money_config,
                    read_only,
                    store,
                    audit: AuditLog::open_default().ok(),
                    env: Arc::new(process_env),
                    send: SendOptions::default(),
                    holds: duties.as_mut().and_then(|d| d.holds.take()),
                    simulated: false,
                },
            };
            let ops = OpsSetup {
                fleet: match &plan {
                    Plan::Demo { sim, speed } => demo_command::ops_fleet(sim, *speed),
                    Plan::Replay { .. } => OpsFleet::Demo,
                    Plan::Local(_) => OpsFleet::Local,
                    Plan::Ssh { hosts, opts, .. } => OpsFleet::Ssh {
                        hosts: hosts.clone(),
                        link: opts.clone(),
                    },
                },
                expects: config
                    .hosts
                    .iter()
                    .filter_map(|h| Some((h.name.clone(), h.expect.clone()?)))
                    .collect(),
                audit: match &scratch {
                    Some(scratch) => Some(scratch.audit()),
                    None => AuditLog::open_default().ok(),
                },
                checks_dir: match &scratch {
                    Some(scratch) => Some(scratch.path().join("checks")),
                    None => check::storage::checks_dir().ok(),
                },
                report: (!matches!(plan, Plan::Replay { .. })).then(|| ReportSetup {
                    config: launch::money_config(&config, cli.global.demo),
                    demo: cli.global.demo,
                }),
                check: check::CheckOptions::default(),
            };
            let (sink, events) = mpsc::channel();
            // `/metrics` from the console too (`[metrics] listen`): a scrape asks the loop for
            // a page through the event channel. A port in use stops here, before the terminal.
            let metrics_bridge = MetricsBridge::default();
            let server = match &config.metrics {
                Some(metrics) => {
                    let wake_sink = sink.clone();
                    let wake = Arc::new(move || {
                        let _ = wake_sink.send(Event::Scrape);
                    });
                    match MetricsServer::start(&metrics.listen, metrics_bridge.clone(), wake) {
                        Ok(server) => Some(server),
                        Err(e) => {
                            eprintln!("gpufleet: {e}");
                            return Ok(ExitCode::from(2));
                        }
                    }
                }
                None => None,
            };
            let replaying = matches!(plan, Plan::Replay { .. });
            let recorder = match record_command::start(
                record,
                !replaying,
                cli.global.demo,
                "gpufleet console",
                plan.host_names(),
            ) {
                Ok(recorder) => recorder,
                Err(e) => {
                    eprintln!("gpufleet: {e}");
                    return Ok(ExitCode::from(2));
                }
            };
            // The configured hosts, kept for the provider inventory joined again while the
            // console runs (not the demo fleet, this machine or hosts named on the command line).
            let live_reloader = match &plan {
                Plan::Ssh { hosts, opts, gone }
                    if named.is_empty() && !user_config.providers.is_empty() =>
                {
                    Some(gpufleet::commands::fleet_reload::FleetReloader {
                        path: None,
                        user: user_config.clone(),
                        global: cli.global.clone(),
                        link: opts.clone(),
                        remote: hosts.clone(),
                        gone: gone.clone(),
                        who: "console",
                    })
                }
                _ => None,
            };
            let watched = live_reloader.as_ref().map(|r| {
                gpufleet::commands::fleet_reload::watched_hosts(&config, &r.remote, &r.gone)
            });
            let (sources, prompts, link) = plan.start(sink.clone(), interval, recorder.as_ref())?;
            let (sources, live) = match (live_reloader, watched) {
                (Some(mut reloader), Some(watched)) => {
                    if let Some(link) = link {
                        reloader.link = link;
                    }
                    let host_sink = gpufleet::app::event::host_sink(sink.clone());
                    let host_sink = match &recorder {
                        Some(recorder) => recorder.wrap(host_sink),
                        None => host_sink,
                    };
                    let running = watched
                        .into_iter()
                        .zip(sources)
                        .map(|(host, handle)| Some((host, handle)))
                        .collect();
                    let live = gpufleet::watch::LiveHosts {
                        reloader: Box::new(reloader),
                        running,
                        sink: host_sink,
                    };
                    (Vec::new(), Some(live))
                }
                (_, _) => (sources, None),
            };
            let bridges = runtime::Bridges {
                money: bridge,
                ops,
                metrics: server.as_ref().map(|_| metrics_bridge),
                alerts: (sinks, config.unreachable_minutes.saturating_mul(60_000)),
                duties,
                live,
            };
            // The provider accounts synced on their own thread; the cost panel hears the money
            // nobody watches after each round.
            let providers = if cli.global.demo {
                None
            } else {
                fleet_inventory::start_console_sync(&user_config, sink.clone())
            };
            let ran = runtime::run(model, &theme, events, sink, sources, prompts, bridges);
            if let Some(sync) = providers {
                sync.stop(Duration::from_millis(200));
            }
            match &ran {
                Ok(ended) => tracing::info!(how = ?ended, "console stopped"),
                Err(e) => tracing::error!(error = %e, "console stopped"),
            }
            if let Some(server) = server {
                server.stop();
            }
            for problem in recorder.map(|r| r.finish()).unwrap_or_default() {
                eprintln!("gpufleet: {problem}");
            }
            Ok(match ran? {
                runtime::Ended::Quit => ExitCode::SUCCESS,
                runtime::Ended::Interrupted => ExitCode::from(gpufleet::exit_codes::CANCELLED),
            })
        }
    }
}
