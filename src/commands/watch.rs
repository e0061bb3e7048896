//! `gpufleet watch [--metrics ADDR] [-v|-q]`: checks everything that can be checked before a
//! connection is made (the metrics address, every alert sink's secrets), then runs the
//! headless driver on the sources the command line chose.

use std::process::ExitCode;
use std::time::Duration;

use crate::alerts::Sink;
use crate::config::Config;
use crate::cost::LedgerStore;
use crate::fleet::FleetOptions;
use crate::launch::Plan;
use crate::release::process_env;
use crate::watch::{self, Setup};

/// Exit status for a setup the watcher refuses (bad address, missing secret).
pub const EXIT_BAD_SETUP: u8 = 2;

/// What the command line says about the watcher.
pub struct WatchArgs {
    pub metrics: Option<String>,
    /// `-v` count minus `-q`.
    pub verbosity: i8,
}

pub fn run(
    args: WatchArgs,
    config: &Config,
    options: FleetOptions,
    plan: Plan,
) -> anyhow::Result<ExitCode> {
    watch::init_logging(args.verbosity);
    let metrics = args
        .metrics
        .or_else(|| config.metrics.as_ref().map(|m| m.listen.clone()));
    if let Some(addr) = &metrics
        && addr.parse::<std::net::SocketAddr>().is_err()
    {
        eprintln!("gpufleet watch: --metrics {addr:?} is not ADDRESS:PORT, such as 127.0.0.1:9400");
        return Ok(ExitCode::from(EXIT_BAD_SETUP));
    }
    let mut sinks = Vec::new();
    for sink in &config.alerts {
        match Sink::load(sink, &process_env) {
            Ok(loaded) => {
                for warning in &loaded.warnings {
                    tracing::warn!("{warning}");
                }
                sinks.push(loaded);
            }
            Err(e) => {
                eprintln!("gpufleet watch: {e}");
                return Ok(ExitCode::from(EXIT_BAD_SETUP));
            }
        }
    }
    let persist = options.money.persist;
    let interval = Duration::from_millis(options.interval_ms);
    let setup = Setup {
        host_names: plan.host_names(),
        options,
        store: LedgerStore::open_default().ok().filter(|_| persist),
        sinks,
        metrics,
        unreachable_after_ms: config.unreachable_minutes.saturating_mul(60_000),
    };
    watch::run(setup, |sink| {
        plan.start_headless(sink, interval)
            .map_err(|e| e.to_string())
    })?;
    Ok(ExitCode::SUCCESS)
}
