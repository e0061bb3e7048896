//! `gpufleet watch [--metrics ADDR] [-v|-q]`: checks everything that can be checked before a
//! connection is made (the metrics address, every alert sink's secrets), then runs the
//! headless driver on the sources the command line chose. Watching the config's hosts, SIGHUP
//! reads the config again (see [`ConfigReloader`]).

use rust_i18n::t;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use crate::alerts::Sink;
use crate::audit::AuditLog;
use crate::cli::GlobalArgs;
use crate::config::{self, Config};
use crate::cost::LedgerStore;
use crate::fleet::{FleetOptions, HostId, HostSink};
use crate::launch::{Plan, fleet_options, money_config};
use crate::release::process_env;
use crate::remote::{LinkOptions, RemoteHost, resolve_named, spawn_link};
use crate::telemetry::source::{SourceHandle, now_ms};
use crate::watch::{self, ReleaseSetup, Reloaded, Reloader, Setup, Sources, WatchedHost};

/// Exit status for a setup the watcher refuses (bad address, missing secret).
pub const EXIT_BAD_SETUP: u8 = 2;

/// What the command line says about the watcher.
pub struct WatchArgs {
    /// `--record FILE`.
    pub record: Option<std::path::PathBuf>,
    pub metrics: Option<String>,
    /// `-v` count minus `-q`.
    pub verbosity: i8,
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
    if let Some(addr) = &metrics
        && addr.parse::<std::net::SocketAddr>().is_err()
    {
        let addr = format!("{addr:?}");
        eprintln!(
            "gpufleet watch: {}",
            t!("cli.bad_metrics_address", addr = addr)
        );
        return Ok(ExitCode::from(EXIT_BAD_SETUP));
    }
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
    let setup = Setup {
        recorder,
        host_names: plan.host_names(),
        options,
        store,
        sinks,
        metrics,
        unreachable_after_ms: config.unreachable_minutes.saturating_mul(60_000),
        release,
    };
    let sources = match plan {
        // The config's own hosts can be reloaded; a demo fleet, this machine or hosts named on
        // the command line cannot.
        Plan::Ssh {
            hosts, opts, gone, ..
        } if named.is_empty() && global.config_path().is_some() => {
            let path = global.config_path().unwrap_or_default();
            let watched = watched_hosts(config, &hosts);
            Sources::PerHost {
                hosts: watched,
                reloader: Box::new(ConfigReloader {
                    path,
                    global: global.clone(),
                    link: opts,
                    remote: hosts,
                    gone,
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
    let providers = start_provider_sync(config, global.demo);
    let stopped = watch::run(setup, sources);
    if let Some(sync) = providers {
        sync.stop(Duration::from_millis(200));
    }
    Ok(match stopped? {
        "SIGINT" => ExitCode::from(crate::exit_codes::CANCELLED),
        _ => ExitCode::SUCCESS,
    })
}

/// The `[[providers]]` accounts synced in the background, each every `sync_interval_s`, into
/// the stored inventory, one log line per account and round. Not for the demo fleet.
fn start_provider_sync(config: &Config, demo: bool) -> Option<crate::providers::BackgroundSync> {
    if demo || config.providers.is_empty() {
        return None;
    }
    let store = match crate::providers::InventoryStore::open_default() {
        Ok(store) => store,
        Err(e) => {
            tracing::warn!("provider accounts are not synced: {e}");
            return None;
        }
    };
    super::fleet_inventory::start_sync(
        config,
        store,
        Box::new(super::fleet_inventory::log_sync_note),
    )
}

pub fn load_sinks(config: &Config) -> Result<Vec<Sink>, crate::alerts::SinkError> {
    let mut sinks = Vec::new();
    for sink in &config.alerts {
        let loaded = Sink::load(sink, &process_env)?;
        for warning in &loaded.warnings {
            tracing::warn!("{warning}");
        }
        sinks.push(loaded);
    }
    Ok(sinks)
}

/// Each configured host with what, when changed, means it must be restarted: how it is
/// reached and how it is priced and released.
fn watched_hosts(config: &Config, remote: &[RemoteHost]) -> Vec<WatchedHost> {
    remote
        .iter()
        .map(|host| WatchedHost {
            name: host.name.clone(),
            identity: format!("{host:?} {:?}", config.host(&host.name)),
        })
        .collect()
}

/// Reads the config file again and starts the links of new hosts.
struct ConfigReloader {
    path: PathBuf,
    global: GlobalArgs,
    link: LinkOptions,
    /// The hosts as resolved by the last successful load.
    remote: Vec<RemoteHost>,
    /// The hosts whose instance is gone from its provider account: no link, the reason shown.
    gone: crate::launch::Gone,
}

impl Reloader for ConfigReloader {
    fn reload(&mut self) -> Result<Reloaded, String> {
        let config = config::load(&self.path).map_err(|e| e.to_string())?;
        // The synced instances join again, from the inventory the background sync keeps.
        let mut notes = Vec::new();
        let (config, gone) = super::fleet_inventory::join(
            config,
            super::fleet_inventory::Freshness::Cached,
            "watch",
            &now_ms,
            &mut notes,
        );
        for line in String::from_utf8_lossy(&notes).lines() {
            tracing::warn!("{line}");
        }
        let sinks = load_sinks(&config).map_err(|e| e.to_string())?;
        let remote =
            resolve_named(&self.global.ssh_settings(), &[], &config).map_err(|e| e.to_string())?;
        let hosts = watched_hosts(&config, &remote);
        self.remote = remote;
        self.gone = gone.iter().map(|g| (g.name.clone(), g.reason())).collect();
        let mut options = fleet_options(&config, &self.global).without_charts();
        super::fleet_inventory::close_ledgers(&mut options.money, &gone);
        Ok(Reloaded {
            hosts,
            release_config: money_config(&config, self.global.demo),
            options,
            sinks,
            unreachable_after_ms: config.unreachable_minutes.saturating_mul(60_000),
        })
    }

    fn start(
        &self,
        host: &WatchedHost,
        id: HostId,
        sink: HostSink,
    ) -> Result<SourceHandle, String> {
        let remote = self
            .remote
            .iter()
            .find(|r| r.name == host.name)
            .ok_or_else(|| t!("cli.no_host_named", host = host.name).into_owned())?;
        if let Some(why) = self.gone.get(&host.name) {
            return crate::launch::gone_source(id, sink, why.clone()).map_err(|e| e.to_string());
        }
        spawn_link(remote.clone(), id, sink, self.link.clone()).map_err(|e| e.to_string())
    }
}
