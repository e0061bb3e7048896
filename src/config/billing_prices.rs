//! `[hosts.prices]`: what a host costs on daily, weekly and monthly billing, next to its hourly
//! `price_per_hour`, in the host's `currency`. Read by `gpufleet cost --advice`.

use rust_i18n::t;
use serde::Deserialize;

use super::locate::KeyPath;
use super::problem::{Problem, problem};

/// One `[hosts.prices]` table; every key optional.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BillingPrices {
    /// The price of one day (24 h).
    pub daily: Option<f64>,
    /// The price of one week (7 days).
    pub weekly: Option<f64>,
    /// The price of one month (30 days).
    pub monthly: Option<f64>,
}

pub(super) fn check_prices(prices: &BillingPrices, path: &KeyPath) -> Result<(), Problem> {
    check_price(prices.daily, path.key("daily"))?;
    check_price(prices.weekly, path.key("weekly"))?;
    check_price(prices.monthly, path.key("monthly"))
}

fn check_price(price: Option<f64>, path: KeyPath) -> Result<(), Problem> {
    match price {
        Some(v) if !(v.is_finite() && v >= 0.0) => {
            problem(path, t!("config_error.zero_or_more", found = v))
        }
        _ => Ok(()),
    }
}
