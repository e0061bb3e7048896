//! The synced inventory joined to the fleet, once, for every driver: the console and `watch`
//! take the cached inventory (their background sync keeps it fresh), `snapshot` and `release`
//! sync the accounts whose last attempt is older than their interval first (offline: the cached
//! inventory, said with its age). Everything downstream (links, prices, ledgers, releases)
//! reads the joined config; `providers` and `cost` read the user's own.

use std::io::Write;

use crate::cli::{Cli, CliCommand};
use crate::config::Config;
use crate::providers::InventoryStore;
use crate::providers::fleet_hosts::{self, GoneHost};

/// How a command takes the inventory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Freshness {
    /// As stored (the console, the watcher: a background sync refreshes it).
    Cached,
    /// Synced first where older than the account's interval (one-shot commands).
    SyncStale,
}

/// Which commands build a fleet from the inventory, and how; `None` for the others and for
/// the demo fleet.
pub fn freshness(cli: &Cli) -> Option<Freshness> {
    if cli.global.demo {
        return None;
    }
    match &cli.command {
        None | Some(CliCommand::Watch { .. }) => Some(Freshness::Cached),
        Some(CliCommand::Snapshot { .. } | CliCommand::Release { .. }) => {
            Some(Freshness::SyncStale)
        }
        _ => None,
    }
}

/// `config` with the inventory's hosts joined, and the hosts whose instance is gone; the
/// config as it is when there are no accounts or no inventory (said on `err`).
pub fn join(
    config: Config,
    freshness: Freshness,
    who: &str,
    now_ms: &dyn Fn() -> u64,
    err: &mut dyn Write,
) -> (Config, Vec<GoneHost>) {
    if config.providers.is_empty() {
        return (config, Vec::new());
    }
    let store = match InventoryStore::open_default() {
        Ok(store) => store,
        Err(e) => {
            let _ = writeln!(err, "gpufleet {who}: provider inventory: {e}");
            return (config, Vec::new());
        }
    };
    let stored = match freshness {
        Freshness::SyncStale => super::cost_inventory::refreshed(&config, &store, who, now_ms, err),
        Freshness::Cached => match store.load() {
            Ok(stored) => stored,
            Err(e) => {
                let _ = writeln!(err, "gpufleet {who}: provider inventory: {e}");
                return (config, Vec::new());
            }
        },
    };
    let joined = fleet_hosts::join(&config, &stored);
    (joined.config, joined.gone)
}

/// [`join`] as `main` runs it for `cli`'s command, notes on stderr.
pub fn for_command(cli: &Cli, config: Config) -> (Config, Vec<GoneHost>) {
    let Some(freshness) = freshness(cli) else {
        return (config, Vec::new());
    };
    let who = match &cli.command {
        Some(CliCommand::Snapshot { .. }) => "snapshot",
        Some(CliCommand::Release { .. }) => "release",
        Some(CliCommand::Watch { .. }) => "watch",
        _ => "console",
    };
    join(
        config,
        freshness,
        who,
        &crate::telemetry::source::now_ms,
        &mut std::io::stderr(),
    )
}

/// `plan` with the gone hosts marked (no link opened to them), and their ledgers closed at
/// the time their instance disappeared.
pub fn mark_gone(
    plan: crate::launch::Plan,
    money: &mut crate::fleet::money::MoneyOptions,
    gone: &[GoneHost],
) -> crate::launch::Plan {
    close_ledgers(money, gone);
    match plan {
        crate::launch::Plan::Ssh {
            hosts,
            opts,
            gone: mut marked,
        } => {
            marked.extend(gone.iter().map(|g| (g.name.clone(), g.reason())));
            crate::launch::Plan::Ssh {
                hosts,
                opts,
                gone: marked,
            }
        }
        other => other,
    }
}

/// Each gone host's ledger closed at the time its instance disappeared.
pub fn close_ledgers(money: &mut crate::fleet::money::MoneyOptions, gone: &[GoneHost]) {
    for host in &mut money.hosts {
        if let Some(g) = gone.iter().find(|g| g.name == host.name) {
            host.gone_ms = Some(g.gone_ms);
        }
    }
}
