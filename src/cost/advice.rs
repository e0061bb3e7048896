//! Which billing mode would have been cheapest: each host's billed and busy hours over the last
//! 30 days, priced per hour, day, week and month (`price_per_hour` and `[hosts.prices]`), with
//! the break-even hours per month of each mode against hourly billing.
//!
//! The ledger keeps totals, not a day-by-day history, so a ledger that began before the window
//! is taken pro rata: the share of its span (billing start to release, or to now) that falls
//! in the last 30 days. A day, a week and a month are bought whole: covering 30 billed hours
//! takes two days. Pure: no I/O, no clock reads.

use crate::config::HostConfig;
use crate::telemetry::TimestampMs;

use super::fleet::HostCost;
use super::hours;

/// The window the advice looks back over, and the length of a month: 30 days.
pub const WINDOW_MS: u64 = 30 * DAY_MS;
const DAY_MS: u64 = 24 * 3_600_000;

/// A way a provider bills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BillingMode {
    Hourly,
    Daily,
    Weekly,
    Monthly,
}

impl BillingMode {
    pub const ALL: [Self; 4] = [Self::Hourly, Self::Daily, Self::Weekly, Self::Monthly];

    /// The machine word used in JSON and the catalogue.
    pub fn word(self) -> &'static str {
        match self {
            Self::Hourly => "hourly",
            Self::Daily => "daily",
            Self::Weekly => "weekly",
            Self::Monthly => "monthly",
        }
    }

    /// The config key that holds this mode's price.
    pub fn config_key(self) -> &'static str {
        match self {
            Self::Hourly => "price_per_hour",
            Self::Daily => "prices.daily",
            Self::Weekly => "prices.weekly",
            Self::Monthly => "prices.monthly",
        }
    }

    /// How long one paid period lasts.
    pub fn period_ms(self) -> u64 {
        match self {
            Self::Hourly => 3_600_000,
            Self::Daily => DAY_MS,
            Self::Weekly => 7 * DAY_MS,
            Self::Monthly => WINDOW_MS,
        }
    }

    fn price(self, host: &HostConfig) -> Option<f64> {
        let prices = host.prices.unwrap_or_default();
        match self {
            Self::Hourly => host.price_per_hour,
            Self::Daily => prices.daily,
            Self::Weekly => prices.weekly,
            Self::Monthly => prices.monthly,
        }
    }
}

/// What one mode would have cost over the window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModeCost {
    pub mode: BillingMode,
    /// The price of one period.
    pub price: f64,
    /// Whole periods covering the billed time, times the price.
    pub cost: f64,
    /// Hours of use per month above which this mode is cheaper than hourly billing; `None`
    /// for hourly itself or without an hourly price above 0.
    pub break_even_hours_per_month: Option<f64>,
}

/// One host's advice.
#[derive(Debug, Clone, PartialEq)]
pub struct HostAdvice {
    pub host: String,
    /// As written in the config (`""` when none given).
    pub currency: String,
    /// Billed and busy time in the window.
    pub billed_ms: u64,
    pub busy_ms: u64,
    /// Whether the ledger began before the window, so the figures are its share pro rata.
    pub pro_rata: bool,
    /// What the ledger's hourly prices charged in the window; `None` without `price_per_hour`.
    pub paid: Option<f64>,
    /// The modes with a price, in [`BillingMode::ALL`] order.
    pub modes: Vec<ModeCost>,
    /// Hourly billing for the busy hours alone: the host released whenever idle.
    pub hourly_busy_only: Option<f64>,
    /// The cheapest priced mode, when at least two can be compared and something was billed
    /// in the window.
    pub cheapest: Option<ModeCost>,
    /// Config keys without a price, to set for a full comparison.
    pub missing_keys: Vec<&'static str>,
}

/// The share of the ledger's billed time that falls in the window ending at `now_ms`.
fn window_share(cost: &HostCost, now_ms: TimestampMs) -> f64 {
    let totals = &cost.totals;
    let end_ms = totals
        .released
        .as_ref()
        .map_or(now_ms, |r| r.at_ms.min(now_ms));
    let window_start_ms = now_ms.saturating_sub(WINDOW_MS);
    let Some(start_ms) = totals.billing_started_ms else {
        return 1.0;
    };
    if end_ms <= window_start_ms {
        return 0.0;
    }
    if start_ms >= window_start_ms || end_ms <= start_ms {
        return 1.0;
    }
    (end_ms - window_start_ms) as f64 / (end_ms - start_ms) as f64
}

/// How `host` would have paid over the 30 days before `now_ms` in each priced mode.
pub fn host_advice(host: &HostConfig, cost: &HostCost, now_ms: TimestampMs) -> HostAdvice {
    let share = window_share(cost, now_ms);
    let billed_ms = (cost.totals.billed_ms as f64 * share).round() as u64;
    let busy_ms = (cost.totals.busy_ms as f64 * share).round() as u64;
    let hourly = host.price_per_hour.filter(|p| *p > 0.0);
    let modes: Vec<ModeCost> = BillingMode::ALL
        .into_iter()
        .filter_map(|mode| {
            let price = mode.price(host)?;
            let periods = billed_ms.div_ceil(mode.period_ms());
            let cost = match mode {
                BillingMode::Hourly => hours(billed_ms) * price,
                _ => periods as f64 * price,
            };
            let break_even_hours_per_month = match mode {
                BillingMode::Hourly => None,
                _ => hourly.map(|h| price * (WINDOW_MS as f64 / mode.period_ms() as f64) / h),
            };
            Some(ModeCost {
                mode,
                price,
                cost,
                break_even_hours_per_month,
            })
        })
        .collect();
    let cheapest = (modes.len() >= 2 && billed_ms > 0)
        .then(|| {
            modes
                .iter()
                .copied()
                .min_by(|a, b| a.cost.total_cmp(&b.cost))
        })
        .flatten();
    HostAdvice {
        host: host.name.clone(),
        currency: host.currency.clone().unwrap_or_default(),
        billed_ms,
        busy_ms,
        pro_rata: share < 1.0,
        paid: cost.spent().map(|spent| spent * share),
        hourly_busy_only: host.price_per_hour.map(|p| hours(busy_ms) * p),
        cheapest,
        missing_keys: BillingMode::ALL
            .into_iter()
            .filter(|mode| mode.price(host).is_none())
            .map(BillingMode::config_key)
            .collect(),
        modes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::BillingPrices;
    use crate::cost::LedgerTotals;

    const HOUR: u64 = 3_600_000;
    const NOW: u64 = 1_800_000_000_000;

    fn host(daily: Option<f64>, weekly: Option<f64>, monthly: Option<f64>) -> HostConfig {
        let text = "[[hosts]]\nname = \"a\"\nssh = \"root@10.0.0.1\"\nprice_per_hour = 2.0\n\
                    currency = \"USD\"\n";
        let mut config = crate::config::parse(text, std::path::Path::new("c.toml")).unwrap();
        let mut host = config.hosts.remove(0);
        host.prices = Some(BillingPrices {
            daily,
            weekly,
            monthly,
        });
        host
    }

    fn cost(host: &HostConfig, billed_ms: u64, busy_ms: u64, started_ms: u64) -> HostCost {
        HostCost::new(
            host,
            LedgerTotals {
                billed_ms,
                busy_ms,
                billing_started_ms: Some(started_ms),
                ..LedgerTotals::default()
            },
        )
    }

    #[test]
    fn whole_periods_cover_the_billed_time_and_break_even_is_against_hourly() {
        let h = host(Some(40.0), Some(250.0), Some(900.0));
        let advice = host_advice(&h, &cost(&h, 30 * HOUR, 20 * HOUR, NOW - 30 * HOUR), NOW);
        let costs: Vec<f64> = advice.modes.iter().map(|m| m.cost).collect();
        // 30 h: 60 hourly, two days, one week, one month.
        assert_eq!(costs, vec![60.0, 80.0, 250.0, 900.0]);
        assert_eq!(advice.cheapest.map(|m| m.mode), Some(BillingMode::Hourly));
        assert_eq!(advice.hourly_busy_only, Some(40.0));
        let even: Vec<Option<f64>> = advice
            .modes
            .iter()
            .map(|m| m.break_even_hours_per_month)
            .collect();
        // 40/day × 30 / 2 = 600 h; 250/week × 30/7 / 2 ≈ 535.7 h; 900 / 2 = 450 h.
        assert_eq!(even[0], None);
        assert_eq!(even[1], Some(600.0));
        assert!((even[2].unwrap() - 535.714).abs() < 0.01);
        assert_eq!(even[3], Some(450.0));
        assert!(advice.missing_keys.is_empty());
        assert!(!advice.pro_rata);
    }

    #[test]
    fn a_host_kept_all_month_is_cheapest_monthly() {
        let h = host(Some(40.0), None, Some(900.0));
        let advice = host_advice(&h, &cost(&h, 720 * HOUR, 700 * HOUR, NOW - 720 * HOUR), NOW);
        let cheapest = advice.cheapest.unwrap();
        assert_eq!(
            (cheapest.mode, cheapest.cost),
            (BillingMode::Monthly, 900.0)
        );
        assert_eq!(advice.paid, Some(1440.0));
        assert_eq!(advice.missing_keys, vec!["prices.weekly"]);
    }

    #[test]
    fn an_older_ledger_counts_its_share_of_the_window() {
        let h = host(None, None, Some(900.0));
        // Billed for 60 days up to now: half of it falls in the window.
        let advice = host_advice(
            &h,
            &cost(&h, 1440 * HOUR, 100 * HOUR, NOW - 1440 * HOUR),
            NOW,
        );
        assert!(advice.pro_rata);
        assert_eq!((advice.billed_ms, advice.busy_ms), (720 * HOUR, 50 * HOUR));
        assert_eq!(advice.paid, Some(1440.0));
    }

    #[test]
    fn without_period_prices_there_is_nothing_to_compare() {
        let mut h = host(None, None, None);
        h.prices = None;
        let advice = host_advice(&h, &cost(&h, 10 * HOUR, 5 * HOUR, NOW - 10 * HOUR), NOW);
        assert_eq!(advice.cheapest, None);
        assert_eq!(
            advice.missing_keys,
            vec!["prices.daily", "prices.weekly", "prices.monthly"]
        );
    }

    #[test]
    fn a_host_released_before_the_window_has_nothing_to_advise() {
        let h = host(Some(40.0), None, None);
        let mut released = cost(&h, 100 * HOUR, 90 * HOUR, NOW - 40 * 24 * HOUR);
        released.totals.released = Some(crate::cost::Released {
            at_ms: NOW - 35 * 24 * HOUR,
            action: "stop".into(),
            provider: "ssh".into(),
        });
        let advice = host_advice(&h, &released, NOW);
        assert_eq!((advice.billed_ms, advice.busy_ms), (0, 0));
        assert_eq!(advice.paid, Some(0.0));
        assert_eq!(advice.cheapest, None);
    }
}
