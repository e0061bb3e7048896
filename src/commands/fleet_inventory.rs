//! The synced inventory joined to the fleet, once, for every driver: the console and `watch`
//! take the cached inventory (their background sync keeps it fresh, and joins it again after
//! each round: `fleet_reload`), `snapshot`, `release` and `cost` sync the accounts whose last
//! attempt is older than their interval first (offline: the cached inventory, said with its
//! age). Everything downstream (links, prices, ledgers, releases, the money nobody watches)
//! reads the joined config; `providers` reads the user's own.

use std::io::Write;

use rust_i18n::t;

use crate::app::event::Event;
use crate::app::unwatched::{UnwatchedKind, UnwatchedLine};
use crate::cli::{Cli, CliCommand};
use crate::config::Config;
use crate::providers::InventoryStore;
use crate::providers::fleet_hosts::{self, GoneHost};
use crate::providers::unwatched::Named;

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
        Some(
            CliCommand::Snapshot { .. } | CliCommand::Release { .. } | CliCommand::Cost { .. },
        ) => Some(Freshness::SyncStale),
        Some(CliCommand::Restart { .. } | CliCommand::Start { .. }) => Some(Freshness::SyncStale),
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
            let _ = writeln!(
                err,
                "{}",
                t!("cli_cost.inventory_error", who = who, why = e)
            );
            return (config, Vec::new());
        }
    };
    let stored = match freshness {
        Freshness::SyncStale => super::cost_inventory::refreshed(&config, &store, who, now_ms, err),
        Freshness::Cached => match store.load() {
            Ok(stored) => stored,
            Err(e) => {
                let _ = writeln!(
                    err,
                    "{}",
                    t!("cli_cost.inventory_error", who = who, why = e)
                );
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
        Some(CliCommand::Restart { .. }) => "restart",
        Some(CliCommand::Start { .. }) => "start",
        Some(CliCommand::Cost { .. }) => "cost",
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
            marked.extend(gone.iter().map(|g| (g.name.clone(), g.reason_words())));
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

/// The money nobody watches (`providers::unwatched::in_fleet`, as `gpufleet cost` finds it),
/// as the console's cost panel lists it.
pub fn unwatched_lines(
    config: &Config,
    stored: &crate::providers::Stored,
    now_ms: u64,
) -> Vec<UnwatchedLine> {
    use crate::cost::format_money;
    let found = crate::providers::unwatched::in_fleet(config, stored, now_ms);
    let who = Named::describe;
    let money = |v: f64, n: &Named| format_money(v, n.currency.as_deref().unwrap_or(""));
    let mut lines = Vec::new();
    for s in &found.stopped_billing {
        lines.push(UnwatchedLine {
            who: who(&s.instance),
            kind: UnwatchedKind::StoppedBilling {
                per_day: s.storage_per_day.map(|d| money(d, &s.instance)),
            },
        });
    }
    for r in &found.running_unwatched {
        lines.push(UnwatchedLine {
            who: who(&r.instance),
            kind: UnwatchedKind::Running {
                price: r.price_per_hour.map(|p| money(p, &r.instance)),
                has_ssh: r.has_ssh,
            },
        });
    }
    for p in &found.price_changes {
        lines.push(UnwatchedLine {
            who: who(&p.instance),
            kind: UnwatchedKind::PriceChange {
                from: money(p.from_price, &p.instance),
                to: money(p.to_price, &p.instance),
                at: crate::utc::rfc3339(p.at_ms),
            },
        });
    }
    for b in &found.balances {
        lines.push(UnwatchedLine {
            who: format!("{} {}", b.provider, b.account),
            kind: UnwatchedKind::Balance {
                text: crate::providers::unwatched::balance_text(b),
                provider: b.provider.clone(),
                account: b.account.clone(),
                currency: b.currency.clone(),
                amount: b.amount,
                hours_left: b.hours_left,
                below: b.below,
            },
        });
    }
    for d in &found.data_deletions {
        lines.push(UnwatchedLine {
            who: who(&d.instance),
            kind: UnwatchedKind::DataDeletion {
                text: crate::providers::unwatched::deletion_text(d, now_ms),
                soon: d.soon,
            },
        });
    }
    lines
}

/// [`unwatched_lines`] from the stored inventory (none without accounts or a readable store).
pub fn stored_unwatched(config: &Config, now_ms: u64) -> Vec<UnwatchedLine> {
    if config.providers.is_empty() {
        return Vec::new();
    }
    InventoryStore::open_default()
        .and_then(|store| store.load())
        .map(|stored| unwatched_lines(config, &stored, now_ms))
        .unwrap_or_default()
}

/// The console's provider sync: the cost panel hears the money nobody watches at once (the
/// cached inventory) and after each background round, and the loop is told to join the
/// inventory to the fleet again after each account synced; the accounts sync on a thread of
/// their own (`providers::BackgroundSync`), never in a frame's way. `config` is the user's
/// (not joined). `None` without accounts.
pub fn start_console_sync(
    config: &Config,
    sink: crate::app::event::EventSink,
    soon: crate::providers::SyncSoon,
) -> Option<crate::providers::BackgroundSync> {
    if config.providers.is_empty() {
        return None;
    }
    let store = InventoryStore::open_default().ok()?;
    let now_ms = crate::telemetry::source::now_ms;
    if let Ok(stored) = store.load() {
        let _ = sink.send(Event::Unwatched(unwatched_lines(config, &stored, now_ms())));
    }
    let (reader, config_seen) = (store.clone(), config.clone());
    let report = move |note: Result<crate::providers::SyncNote, String>| {
        let synced = matches!(&note, Ok(n) if n.outcome.is_ok());
        log_sync_note(note);
        if let Ok(stored) = reader.load() {
            let lines = unwatched_lines(&config_seen, &stored, now_ms());
            let _ = sink.send(Event::Unwatched(lines));
        }
        if synced {
            let _ = sink.send(Event::InventorySynced);
        }
    };
    start_sync(config, store, Box::new(report), soon)
}

/// Starts the accounts' background sync with the tokens from the environment, `report` told of
/// each account's round; a failure to start is logged (the console and the watcher run on).
pub fn start_sync(
    config: &Config,
    store: InventoryStore,
    report: Box<dyn Fn(Result<crate::providers::SyncNote, String>) + Send>,
    soon: crate::providers::SyncSoon,
) -> Option<crate::providers::BackgroundSync> {
    crate::providers::BackgroundSync::start(
        config.providers.clone(),
        store,
        Box::new(|name: &str| std::env::var(name).ok()),
        crate::release::SendOptions::default(),
        crate::telemetry::source::now_ms,
        report,
        soon,
    )
    .map_err(|e| tracing::warn!("provider accounts are not synced: {e}"))
    .ok()
}

/// One log line for how an account's background sync went (the console's log file, the
/// watcher's stderr).
pub fn log_sync_note(note: Result<crate::providers::SyncNote, String>) {
    match note {
        Ok(crate::providers::SyncNote {
            provider,
            account,
            outcome: Ok(instances),
        }) => tracing::info!(provider, account, instances, "provider account synced"),
        Ok(crate::providers::SyncNote {
            outcome: Err(why), ..
        }) => tracing::warn!("provider sync failed: {why}"),
        Err(why) => tracing::warn!("{why}"),
    }
}
