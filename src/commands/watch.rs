//! `gpufleet watch [--metrics ADDR] [-v|-q]`: checks everything that can be checked before a
//! connection is made (the metrics address, every alert sink's secrets), then runs the
//! headless driver on the sources the command line chose. Watching the config's hosts, SIGHUP
//! reads the config again and each provider sync joins the inventory again (see
//! [`FleetReloader`]).

use rust_i18n::t;
use std::process::ExitCode;
use std::time::Duration;

use crate::audit::AuditLog;
use crate::cli::GlobalArgs;
use crate::config::Config;
use crate::cost::LedgerStore;
use crate::fleet::FleetOptions;
use crate::launch::{Plan, money_config};
use crate::watch::{self, ReleaseSetup, Setup, Sources};

pub use super::fleet_reload::load_sinks;
use super::fleet_reload::{FleetReloader, watched_hosts};

/// Exit status for a setup the watcher refuses (bad address, missing secret).
pub const EXIT_BAD_SETUP: u8 = 2;

/// What the command line says about the watcher.
pub struct WatchArgs {
    /// `--record FILE`.
    pub record: Option<std::path::PathBuf>,
    pub metrics: Option<String>,
    /// `--serve ADDR`.
    pub serve: Option<String>,
    /// `-v` count minus `-q`.
    pub verbosity: i8,
    /// The config as loaded, before the provider inventory was joined to it (joined again
    /// after each background sync).
    pub user_config: Config,
}

pub fn run(
    args: WatchArgs,
    global: &GlobalArgs,
    named: &[String],
    config: &Config,
    options: FleetOptions,
    plan: Plan,
) -> anyhow::Result<ExitCode> {
    super::logging::to_stderr(args.verbosity);
    let metrics = args
        .metrics
        .or_else(|| config.metrics.as_ref().map(|m| m.listen.clone()));
    let metrics = match metrics {
        None => None,
        Some(addr) => match metrics_endpoint(addr, config) {
            Ok(endpoint) => Some(endpoint),
            Err(e) => {
                eprintln!("gpufleet watch: {e}");
                return Ok(ExitCode::from(EXIT_BAD_SETUP));
            }
        },
    };
    let serve = args
        .serve
        .or_else(|| config.serve.as_ref().and_then(|s| s.listen.clone()));
    let serve = match serve {
        None => None,
        Some(addr) => match crate::watch::serve::ServeEndpoint::new(&addr, config.serve.as_ref()) {
            Ok(endpoint) => Some(endpoint),
            Err(e) => {
                eprintln!("gpufleet watch: {e}");
                return Ok(ExitCode::from(EXIT_BAD_SETUP));
            }
        },
    };
    // The demo alerts no one: the `[[alerts]]` sinks are the real fleet's, and the demo dials
    // nothing (it still serves `/metrics` where asked: a listener on the address given).
    let sinks = match load_sinks(config) {
        Ok(_) if global.demo => Vec::new(),
        Ok(sinks) => sinks,
        Err(e) => {
            eprintln!("gpufleet watch: {e}");
            return Ok(ExitCode::from(EXIT_BAD_SETUP));
        }
    };
    // No charts: the watcher keeps only the history its findings read.
    let options = options.without_charts();
    let persist = options.money.persist;
    let interval = Duration::from_millis(options.interval_ms);
    let store = LedgerStore::open_default().ok().filter(|_| persist);
    let release = match (&store, AuditLog::open_default()) {
        (Some(store), Ok(audit)) => Some(ReleaseSetup {
            config: money_config(config, global.demo),
            ssh: global.ssh_settings(),
            interval_ms: options.interval_ms,
            store: store.clone(),
            audit,
        }),
        _ => None,
    };
    let recorder = match super::record::start(
        args.record,
        true,
        global.demo,
        "gpufleet watch",
        plan.host_names(),
    ) {
        Ok(recorder) => recorder,
        Err(e) => {
            eprintln!("gpufleet watch: {e}");
            return Ok(ExitCode::from(EXIT_BAD_SETUP));
        }
    };
    let sync_soon = crate::providers::SyncSoon::default();
    let sync = start_provider_sync(config, global.demo, sync_soon.clone());
    let setup = Setup {
        sync,
        sync_soon,
        recorder,
        host_names: plan.host_names(),
        options,
        store,
        sinks,
        metrics,
        serve,
        reports: crate::watch::serve::Reports::new(money_config(config, global.demo), global.demo),
        unreachable_after_ms: config.unreachable_minutes.saturating_mul(60_000),
        release,
    };
    let sources = match plan {
        // The config's own hosts can be reloaded; a demo fleet, this machine or hosts named on
        // the command line cannot.
        Plan::Ssh {
            hosts, opts, gone, ..
        } if named.is_empty() && global.config_path().is_some() => {
            let watched = watched_hosts(config, &hosts, &gone);
            Sources::PerHost {
                hosts: watched,
                reloader: Box::new(FleetReloader {
                    path: global.config_path(),
                    user: args.user_config,
                    global: global.clone(),
                    link: opts,
                    remote: hosts,
                    gone,
                    who: "watch",
                }),
            }
        }
        plan => Sources::Fixed(Box::new(move |sink| {
            plan.start_headless(sink, interval)
                .map_err(|e| e.to_string())
        })),
    };
    // SIGTERM is how a service manager stops it: a normal end. Ctrl-C (SIGINT) is 130, as for
    // every command.
    let stopped = watch::run(setup, sources);
    Ok(match stopped? {
        "SIGINT" => ExitCode::from(crate::exit_codes::CANCELLED),
        _ => ExitCode::SUCCESS,
    })
}

/// The `[[providers]]` accounts synced in the background, each every `sync_interval_s`, into
/// the stored inventory, one log line per account and round; after an account synced, the
/// watcher joins the inventory to its fleet again. Not for the demo fleet.
fn start_provider_sync(
    config: &Config,
    demo: bool,
    soon: crate::providers::SyncSoon,
) -> Option<watch::StartSync> {
    if demo || config.providers.is_empty() {
        return None;
    }
    let config = config.clone();
    Some(Box::new(move |synced: Box<dyn Fn() + Send>| {
        let store = match crate::providers::InventoryStore::open_default() {
            Ok(store) => store,
            Err(e) => {
                tracing::warn!("provider accounts are not synced: {e}");
                return None;
            }
        };
        super::fleet_inventory::start_sync(
            &config,
            store,
            Box::new(move |note| {
                let ok = matches!(&note, Ok(n) if n.outcome.is_ok());
                super::fleet_inventory::log_sync_note(note);
                if ok {
                    synced();
                }
            }),
            soon,
        )
    }))
}

/// Where and to whom `/metrics` is served: `--metrics` or `[metrics] listen`, with the
/// config's token or its word that anyone may read it (which an address off loopback needs).
pub(crate) fn metrics_endpoint(
    addr: String,
    config: &Config,
) -> Result<crate::metrics::Endpoint, String> {
    let Ok(listen) = addr.parse::<std::net::SocketAddr>() else {
        let addr = format!("{addr:?}");
        return Err(t!("cli.bad_metrics_address", addr = addr).into_owned());
    };
    let (token_env, open) = match &config.metrics {
        Some(m) => (m.token_env.as_deref(), m.allow_unauthenticated),
        None => (None, false),
    };
    let access =
        crate::metrics::Access::for_listen(&listen, token_env, open).map_err(|e| e.to_string())?;
    Ok(crate::metrics::Endpoint {
        listen: addr,
        access,
    })
}
