//! The console: the terminal driver of the fleet, with everything it runs beside it (the
//! money and runbook bridges, `/metrics`, the recorder, alerts and duties, the provider
//! sync), set up from the command line and the config, run until the user quits.

use std::process::ExitCode;
use std::sync::{Arc, mpsc};
use std::time::Duration;

use crate::app::Event;
use crate::app::model::ModelOptions;
use crate::app::ops_bridge::{OpsFleet, OpsSetup, ReportSetup};
use crate::app::panel::Runbooks;
use crate::app::release_bridge::{BridgeSetup, SshHostRunner};
use crate::app::{Model, runtime};
use crate::audit::AuditLog;
use crate::check;
use crate::cli::GlobalArgs;
use crate::commands::demo as demo_command;
use crate::commands::fleet_inventory;
use crate::commands::logging;
use crate::commands::record as record_command;
use crate::commands::watch as watch_command;
use crate::config::{self, Config};
use crate::cost::LedgerStore;
use crate::demo::{self, Scratch};
use crate::duty::Duties;
use crate::launch::{self, Plan};
use crate::metrics::{MetricsBridge, MetricsServer};
use crate::release::{SendOptions, process_env};
use crate::runbook;
use crate::telemetry::source::now_ms;
use crate::theme::Theme;
use crate::words::Words;

/// What the command line and the config decided before the console starts.
pub struct ConsoleArgs {
    pub global: GlobalArgs,
    /// The config with the synced instances joined.
    pub config: Config,
    /// The config as the user wrote it, joined again after each provider sync.
    pub user_config: Config,
    /// Hosts named on the command line.
    pub named: Vec<String>,
    pub plan: Plan,
    pub options: ModelOptions,
    /// The config the money is reckoned from (the demo's own for the demo fleet).
    pub money_config: Config,
    pub interval_ms: u64,
    pub verbosity: i8,
    pub record: Option<std::path::PathBuf>,
}

/// Runs the console until the user quits (or it is interrupted).
pub fn run(args: ConsoleArgs) -> anyhow::Result<ExitCode> {
    let ConsoleArgs {
        global,
        config,
        user_config,
        named,
        plan,
        mut options,
        money_config,
        interval_ms,
        verbosity,
        record,
    } = args;
    let theme_name = global
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
    let catalog = runbook::Catalog::load_default();
    if let Ok(catalog) = &catalog {
        options.runbooks = Runbooks::new(catalog.clone());
    }
    let mut model = Model::new(plan.host_names(), options, now_ms());
    // An attached console asks its watchers to release and hold; they run it.
    let watcher = match &plan {
        Plan::Attach(attach) => Some(attach.actions()),
        _ => None,
    };
    model.through_watcher = watcher.is_some();
    // The terminal is the console's: its log lines go to a file in the state directory.
    match crate::paths::state_dir().map(|dir| logging::to_file(&dir, verbosity)) {
        Some(Ok(_)) => {}
        Some(Err(e)) => model.notify(log_not_written(Some(&e.to_string())).localized(), false),
        None => model.notify(log_not_written(None).localized(), false),
    }
    tracing::info!(
        version = crate::cli::VERSION,
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
    let sinks = if global.demo {
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
    // Releases ask the provider accounts' sync (started below) for a round soon.
    let sync_soon = crate::providers::SyncSoon::default();
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
            sync_soon: sync_soon.clone(),
        },
        _ => BridgeSetup {
            runner: Arc::new(SshHostRunner {
                ssh: global.ssh_settings(),
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
            sync_soon: sync_soon.clone(),
        },
    };
    let ops = OpsSetup {
        fleet: match &plan {
            Plan::Demo { sim, speed } => demo_command::ops_fleet(sim, *speed),
            Plan::Replay { .. } | Plan::Attach(_) => OpsFleet::Demo,
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
        // An attached console's reports are made by its watcher; the config here names the
        // secrets scrubbed again from them.
        report: (!matches!(plan, Plan::Replay { .. })).then(|| ReportSetup {
            config: launch::money_config(&config, global.demo),
            demo: global.demo,
        }),
        check: check::CheckOptions::default(),
        watcher: watcher.clone(),
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
            let started = super::watch::metrics_endpoint(metrics.listen.clone(), &config).and_then(
                |endpoint| {
                    MetricsServer::start(
                        &endpoint.listen,
                        endpoint.access,
                        metrics_bridge.clone(),
                        wake,
                    )
                    .map_err(|e| e.to_string())
                },
            );
            match started {
                Ok(server) => Some(server),
                Err(e) => {
                    eprintln!("gpufleet: {e}");
                    return Ok(ExitCode::from(2));
                }
            }
        }
        None => None,
    };
    let replaying = matches!(plan, Plan::Replay { .. } | Plan::Attach(_));
    let recorder = match record_command::start(
        record,
        !replaying,
        global.demo,
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
            Some(crate::commands::fleet_reload::FleetReloader {
                path: None,
                user: user_config.clone(),
                global: global.clone(),
                link: opts.clone(),
                remote: hosts.clone(),
                gone: gone.clone(),
                who: "console",
            })
        }
        _ => None,
    };
    let watched = live_reloader
        .as_ref()
        .map(|r| crate::commands::fleet_reload::watched_hosts(&config, &r.remote, &r.gone));
    let (sources, prompts, link) = plan.start(sink.clone(), interval, recorder.as_ref())?;
    let (sources, live) = match (live_reloader, watched) {
        (Some(mut reloader), Some(watched)) => {
            if let Some(link) = link {
                reloader.link = link;
            }
            let host_sink = crate::app::event::host_sink(sink.clone());
            let host_sink = match &recorder {
                Some(recorder) => recorder.wrap(host_sink),
                None => host_sink,
            };
            let running = watched
                .into_iter()
                .zip(sources)
                .map(|(host, handle)| Some((host, handle)))
                .collect();
            let live = crate::watch::LiveHosts {
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
        watcher,
    };
    // The provider accounts synced on their own thread; the cost panel hears the money
    // nobody watches after each round.
    let providers = if global.demo {
        None
    } else {
        fleet_inventory::start_console_sync(&user_config, sink.clone(), sync_soon)
    };
    let ran = runtime::run(model, &theme, events, sink, sources, prompts, bridges);
    if let Some(sync) = providers {
        sync.stop(Duration::from_millis(200));
    }
    match &ran {
        Ok(ended) => tracing::info!(how = ended.word(), "console stopped"),
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
        runtime::Ended::Interrupted => ExitCode::from(crate::exit_codes::CANCELLED),
    })
}

/// The console's log file could not be opened: `why`, or no state directory at all.
fn log_not_written(why: Option<&str>) -> Words {
    match why {
        Some(why) => Words::new("cli.log_not_written").put("why", why),
        None => Words::new("cli.log_no_state_dir"),
    }
}
