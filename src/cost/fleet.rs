//! Money: each host's ledger priced in its own currency, and fleet totals that add hours across
//! hosts but money only within one currency (CNY and USD are never summed).

use std::collections::BTreeMap;

use crate::config::{Config, HostConfig};
use crate::telemetry::TimestampMs;

use super::hours;
use super::ledger::{Ledger, LedgerSettings, LedgerTotals, PriceSpan};
use super::store::LedgerBook;

/// What a host costs per hour, in the currency as written in the config (`""` when none given).
#[derive(Debug, Clone, PartialEq)]
pub struct Price {
    pub price_per_hour: f64,
    pub currency: String,
}

/// One host's ledger with its price.
#[derive(Debug, Clone, PartialEq)]
pub struct HostCost {
    pub host: String,
    /// `None` when the config gives no `price_per_hour`: hours are known, money is not.
    pub price: Option<Price>,
    pub totals: LedgerTotals,
}

impl HostCost {
    pub fn new(host: &HostConfig, totals: LedgerTotals) -> Self {
        Self {
            host: host.name.clone(),
            price: host.price_per_hour.map(|price_per_hour| Price {
                price_per_hour,
                currency: host.currency.clone().unwrap_or_default(),
            }),
            totals,
        }
    }

    /// Money spent so far: billed hours times the price in force for each (earlier prices
    /// for the time billed under them, the current one for the rest).
    pub fn spent(&self) -> Option<f64> {
        self.money(self.totals.billed_ms, |span| span.billed_ms)
    }

    /// Money spent on idle time (parked time included), priced as [`HostCost::spent`].
    pub fn spent_idle(&self) -> Option<f64> {
        self.money(self.totals.idle_ms, |span| span.idle_ms)
    }

    pub fn currency(&self) -> Option<&str> {
        self.price.as_ref().map(|price| price.currency.as_str())
    }

    fn money(&self, total_ms: u64, share: impl Fn(&PriceSpan) -> u64) -> Option<f64> {
        let price = self.price.as_ref()?;
        let mut rest_ms = total_ms;
        let mut spent = 0.0;
        for span in &self.totals.earlier_prices {
            let ms = share(span).min(rest_ms);
            rest_ms -= ms;
            spent += hours(ms) * span.price_per_hour;
        }
        Some(spent + hours(rest_ms) * price.price_per_hour)
    }
}

/// Money of the hosts priced in one currency.
#[derive(Debug, Clone, PartialEq)]
pub struct CurrencyTotal {
    pub currency: String,
    pub spent: f64,
    pub spent_idle: f64,
    pub hosts: usize,
}

/// Every host and the fleet's sums.
#[derive(Debug, Clone, PartialEq)]
pub struct FleetCost {
    pub hosts: Vec<HostCost>,
    pub billed_ms: u64,
    pub busy_ms: u64,
    pub idle_ms: u64,
    pub parked_ms: u64,
    pub unobserved_ms: u64,
    /// Sorted by currency code.
    pub by_currency: Vec<CurrencyTotal>,
}

impl FleetCost {
    pub fn from_hosts(hosts: Vec<HostCost>) -> Self {
        let mut money: BTreeMap<String, CurrencyTotal> = BTreeMap::new();
        let mut fleet = Self {
            hosts: Vec::new(),
            billed_ms: 0,
            busy_ms: 0,
            idle_ms: 0,
            parked_ms: 0,
            unobserved_ms: 0,
            by_currency: Vec::new(),
        };
        for host in &hosts {
            fleet.billed_ms += host.totals.billed_ms;
            fleet.busy_ms += host.totals.busy_ms;
            fleet.idle_ms += host.totals.idle_ms;
            fleet.parked_ms += host.totals.parked_ms;
            fleet.unobserved_ms += host.totals.unobserved_ms;
            if let (Some(currency), Some(spent), Some(spent_idle)) =
                (host.currency(), host.spent(), host.spent_idle())
            {
                let total = money
                    .entry(currency.to_string())
                    .or_insert_with(|| CurrencyTotal {
                        currency: currency.to_string(),
                        spent: 0.0,
                        spent_idle: 0.0,
                        hosts: 0,
                    });
                total.spent += spent;
                total.spent_idle += spent_idle;
                total.hosts += 1;
            }
        }
        fleet.hosts = hosts;
        fleet.by_currency = money.into_values().collect();
        fleet
    }

    /// Busy host-hours over billed host-hours across the fleet.
    pub fn effective_utilization(&self) -> Option<f64> {
        (self.billed_ms > 0).then(|| self.busy_ms as f64 / self.billed_ms as f64)
    }

    pub fn host(&self, name: &str) -> Option<&HostCost> {
        self.hosts.iter().find(|host| host.host == name)
    }
}

/// The config's `billing_started` in the ledger's unit; a time before 1970 is treated as unset.
pub fn billing_started_ms(host: &HostConfig) -> Option<TimestampMs> {
    host.billing_started
        .as_ref()
        .and_then(|started| TimestampMs::try_from(started.unix_ms()).ok())
}

/// The ledger of `host`, continued from what `book` stored, billed from its last accounted
/// instant at the price the config (joined with the provider inventory) gives now.
pub fn host_ledger(config: &Config, host: &HostConfig, book: &LedgerBook) -> Ledger {
    let mut ledger = Ledger::resume(
        LedgerSettings::from_config(config),
        book.hosts.get(&host.name).cloned(),
        billing_started_ms(host),
    );
    ledger.reprice(host.price_per_hour, host.price_since_ms);
    ledger
}

/// Every configured host priced from the stored ledgers, as of `now_ms`. Ledgers of hosts no
/// longer in the config are left out.
pub fn fleet_cost(config: &Config, book: &LedgerBook, now_ms: TimestampMs) -> FleetCost {
    FleetCost::from_hosts(
        config
            .hosts
            .iter()
            .map(|host| HostCost::new(host, host_ledger(config, host, book).totals(now_ms)))
            .collect(),
    )
}
