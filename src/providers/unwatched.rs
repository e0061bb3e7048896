//! The money nobody watches, from the synced inventory: stopped instances whose storage still
//! bills (per day, where the provider gives the price), running instances that are no host of
//! the config (gpufleet does not watch them), prices that changed lately, each account's
//! balance against its red line, and when a stopped instance's data goes. Pure: the caller
//! loads the inventory and reads the clock.

use rust_i18n::t;
use serde::Serialize;

use crate::config::Config;

use super::balance::AccountBalance;
use super::deadline::DataDeletion;
use super::model::InstanceState;
pub use super::model::Named;
use super::store::{Stored, StoredInstance};

/// How far back a price change is reported: a week.
pub const PRICE_CHANGE_WINDOW_MS: u64 = 7 * 24 * 3600 * 1000;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StoppedBilling {
    #[serde(flatten)]
    pub instance: Named,
    /// What its storage costs a day; `None` where the provider gives no storage price.
    pub storage_per_day: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunningUnwatched {
    #[serde(flatten)]
    pub instance: Named,
    pub price_per_hour: Option<f64>,
    /// Whether the API gives an SSH endpoint (without one gpufleet could not reach it anyway).
    pub has_ssh: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PriceChange {
    #[serde(flatten)]
    pub instance: Named,
    pub from_price: f64,
    pub to_price: f64,
    pub at_ms: u64,
}

/// Everything worth a red line.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Unwatched {
    pub stopped_billing: Vec<StoppedBilling>,
    pub running_unwatched: Vec<RunningUnwatched>,
    pub price_changes: Vec<PriceChange>,
    /// Every account's balance that was read, red line crossed or not.
    pub balances: Vec<AccountBalance>,
    /// Accounts with a balance red line whose provider offers no balance.
    pub balance_not_offered: Vec<NotOffered>,
    /// Stopped instances whose provider deletes them, with the date.
    pub data_deletions: Vec<DataDeletion>,
}

/// An account whose provider gives no balance.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NotOffered {
    pub provider: String,
    pub account: String,
}

impl Unwatched {
    /// Whether nothing crosses a red line (a balance above its line, a deletion still far
    /// off, are no red line).
    pub fn is_empty(&self) -> bool {
        self.stopped_billing.is_empty()
            && self.running_unwatched.is_empty()
            && self.price_changes.is_empty()
            && !self.balances.iter().any(|b| b.below)
            && !self.data_deletions.iter().any(|d| d.soon)
    }
}

/// The money nobody watches with the fleet as it is joined from `config` (the user's, or one
/// already joined: joining again adds nothing) and `stored`: a synced instance the fleet
/// watches is no line. The one computation behind the console's cost panel and `gpufleet cost`.
pub fn in_fleet(config: &Config, stored: &Stored, now_ms: u64) -> Unwatched {
    let joined = super::fleet_hosts::join(config, stored);
    let mut found = find(&joined.config, stored, now_ms);
    let (balances, not_offered) = super::balance::find(config, stored);
    found.balances = balances;
    found.balance_not_offered = not_offered
        .into_iter()
        .map(|(provider, account)| NotOffered { provider, account })
        .collect();
    found.data_deletions = super::deadline::find(config, stored, now_ms);
    found
}

/// Reads the inventory of the config's accounts (gone instances left out).
pub fn find(config: &Config, stored: &Stored, now_ms: u64) -> Unwatched {
    let mut found = Unwatched::default();
    for account in &config.providers {
        let Some(record) = stored.accounts.get(account.display_name()) else {
            continue;
        };
        for entry in record.instances.iter().filter(|i| i.gone_ms.is_none()) {
            let i = &entry.instance;
            let named = Named {
                provider: record.provider.clone(),
                account: account.display_name().to_string(),
                instance_id: i.id.clone(),
                label: i.label.clone(),
                currency: i.currency.clone(),
            };
            match i.state {
                InstanceState::Stopped => found.stopped_billing.push(StoppedBilling {
                    instance: named.clone(),
                    storage_per_day: i.stopped_storage_per_hour.map(|h| h * 24.0),
                }),
                InstanceState::Running if !is_host(config, &record.provider, entry) => {
                    found.running_unwatched.push(RunningUnwatched {
                        instance: named.clone(),
                        price_per_hour: i.price_per_hour,
                        has_ssh: i.ssh.is_some(),
                    });
                }
                _ => {}
            }
            if let [.., before, last] = entry.prices.as_slice()
                && now_ms.saturating_sub(last.from_ms) <= PRICE_CHANGE_WINDOW_MS
            {
                found.price_changes.push(PriceChange {
                    instance: named,
                    from_price: before.price_per_hour,
                    to_price: last.price_per_hour,
                    at_ms: last.from_ms,
                });
            }
        }
    }
    found
}

/// Whether a `[[hosts]]` entry is this instance: its release names the provider and id, or
/// its ssh target is the instance's endpoint.
fn is_host(config: &Config, provider: &str, entry: &StoredInstance) -> bool {
    let target = entry.instance.ssh.as_ref().map(|s| s.target());
    config.hosts.iter().any(|host| {
        let by_id = host.release.as_ref().is_some_and(|r| {
            r.provider.as_str() == provider
                && r.instance_id.as_deref() == Some(entry.instance.id.as_str())
        });
        by_id || target.as_deref() == Some(host.ssh.to_string().as_str())
    })
}

/// One account's balance line, as `gpufleet cost` and the console's cost panel say it.
pub fn balance_text(b: &AccountBalance) -> String {
    let who = format!("{} {}", b.provider, b.account);
    let money = crate::cost::format_money(b.amount, &b.currency);
    let left = match b.hours_left {
        Some(hours) => {
            let burn = crate::cost::format_money(b.burn_per_hour, &b.currency);
            let source = match b.burn_source {
                super::balance::BurnSource::Provider => t!("balance.source_provider"),
                super::balance::BurnSource::Inventory => t!("balance.source_inventory"),
            };
            t!(
                "balance.left",
                hours = format!("{hours:.1}"),
                burn = burn,
                source = source
            )
        }
        None => t!("balance.nothing_bills"),
    };
    let red = match (b.below, b.min_hours) {
        (true, Some(min)) => t!("balance.below", min = min).into_owned(),
        _ => String::new(),
    };
    t!(
        "balance.line",
        who = who,
        money = money,
        left = left,
        red = red
    )
    .into_owned()
}

/// A stopped instance's deletion line, as `gpufleet cost` and the console's cost panel say it.
pub fn deletion_text(d: &DataDeletion, now_ms: u64) -> String {
    t!(
        "balance.deletes",
        who = d.instance.describe(),
        stopped = minute(d.stopped_ms),
        date = minute(d.deletes_ms),
        days = super::deadline::days_left(d.deletes_ms, now_ms)
    )
    .into_owned()
}

/// `2026-12-08 17:43 UTC`: a deletion date to the minute, short enough for the cost panel.
fn minute(unix_ms: u64) -> String {
    let (y, mo, d, h, mi, _, _) = crate::utc::utc_parts(unix_ms);
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02} UTC")
}

/// The balance lines and the deletion dates of the config's accounts alone, one line each, as
/// `gpufleet providers sync` adds them under its table.
pub fn balance_text_of(config: &Config, stored: &Stored, now_ms: u64) -> String {
    let (balances, not_offered) = super::balance::find(config, stored);
    let found = Unwatched {
        balances,
        balance_not_offered: not_offered
            .into_iter()
            .map(|(provider, account)| NotOffered { provider, account })
            .collect(),
        data_deletions: super::deadline::find(config, stored, now_ms),
        ..Unwatched::default()
    };
    render_text(&found, now_ms)
}

/// The report's section, one line each; empty when there is nothing to say.
pub fn render_text(found: &Unwatched, now_ms: u64) -> String {
    let name = Named::describe;
    let money = |v: f64, n: &Named| format!("{v:.2} {}", n.currency.as_deref().unwrap_or(""));
    let mut text = String::new();
    for s in &found.stopped_billing {
        let who = name(&s.instance);
        let line = match s.storage_per_day {
            Some(day) => {
                let money = money(day, &s.instance);
                t!("cli_unwatched.stopped", who = who, money = money)
            }
            None => t!("cli_unwatched.stopped_unpriced", who = who),
        };
        text.push_str(&line);
        text.push('\n');
    }
    for r in &found.running_unwatched {
        let price = r
            .price_per_hour
            .map(|p| {
                let money = money(p, &r.instance);
                t!("cli_unwatched.running_price", money = money).into_owned()
            })
            .unwrap_or_default();
        let ssh = if r.has_ssh {
            String::new()
        } else {
            t!("cli_unwatched.no_ssh").into_owned()
        };
        let who = name(&r.instance);
        text.push_str(&t!(
            "cli_unwatched.running",
            who = who,
            price = price,
            ssh = ssh
        ));
        text.push('\n');
    }
    for p in &found.price_changes {
        let (who, from, to) = (
            name(&p.instance),
            money(p.from_price, &p.instance),
            money(p.to_price, &p.instance),
        );
        let at = crate::utc::rfc3339(p.at_ms);
        text.push_str(&t!(
            "cli_unwatched.price",
            who = who,
            from = from,
            to = to,
            at = at
        ));
        text.push('\n');
    }
    for b in &found.balances {
        text.push_str(&balance_text(b));
        text.push('\n');
    }
    for n in &found.balance_not_offered {
        text.push_str(&t!(
            "balance.not_offered",
            provider = n.provider,
            account = n.account
        ));
        text.push('\n');
    }
    for d in &found.data_deletions {
        text.push_str(&deletion_text(d, now_ms));
        text.push('\n');
    }
    text
}
