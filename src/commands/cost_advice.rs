//! `gpufleet cost --advice`: per host, which billing mode (hourly, daily, weekly, monthly) would
//! have been cheapest over the last 30 days of its ledger, what that would have cost against
//! what was paid, and the break-even hours per month of each mode against hourly billing.
//! Text in the interface's language, or JSON (docs/CLI.md).

use rust_i18n::t;
use serde_json::json;

use crate::commands::money::{EXIT_OK, MoneyError};
use crate::config::Config;
use crate::cost::{
    BillingMode, HostAdvice, LedgerBook, LedgerStore, WINDOW_MS, fleet_cost, format_money,
    host_advice, hours,
};
use crate::telemetry::TimestampMs;

/// The advice from the stored ledger: the text (or JSON) and the exit code (always 0: advice
/// is no alarm).
pub fn advice_command(
    config: &Config,
    json: bool,
    now_ms: TimestampMs,
) -> Result<(String, u8), MoneyError> {
    let book = LedgerStore::open_default()?.load()?;
    advice_report(config, &book, json, now_ms)
}

/// [`advice_command`] on a given ledger book.
pub fn advice_report(
    config: &Config,
    book: &LedgerBook,
    json: bool,
    now_ms: TimestampMs,
) -> Result<(String, u8), MoneyError> {
    let fleet = fleet_cost(config, book, now_ms);
    let advice: Vec<HostAdvice> = config
        .hosts
        .iter()
        .filter_map(|host| Some(host_advice(host, fleet.host(&host.name)?, now_ms)))
        .collect();
    let text = if json {
        let mut text = serde_json::to_string_pretty(&advice_json(&advice, now_ms))?;
        text.push('\n');
        text
    } else {
        advice_text(&advice)
    };
    Ok((text, EXIT_OK))
}

fn cents(amount: f64) -> f64 {
    (amount * 100.0).round() / 100.0
}

fn tenths(value: f64) -> f64 {
    (value * 10.0).round() / 10.0
}

fn advice_json(advice: &[HostAdvice], now_ms: TimestampMs) -> serde_json::Value {
    let hosts: Vec<_> = advice
        .iter()
        .map(|a| {
            let modes: Vec<_> = a
                .modes
                .iter()
                .map(|m| {
                    json!({
                        "mode": m.mode.word(),
                        "price": m.price,
                        "cost": cents(m.cost),
                        "break_even_hours_per_month": m.break_even_hours_per_month.map(tenths),
                    })
                })
                .collect();
            json!({
                "name": a.host,
                "currency": a.currency,
                "billed_ms": a.billed_ms,
                "busy_ms": a.busy_ms,
                "pro_rata": a.pro_rata,
                "paid": a.paid.map(cents),
                "modes": modes,
                "hourly_busy_only": a.hourly_busy_only.map(cents),
                "cheapest": a.cheapest.map(|m| json!({
                    "mode": m.mode.word(),
                    "cost": cents(m.cost),
                    "saves": a.paid.map(|paid| cents(paid - m.cost)),
                })),
                "missing_keys": a.missing_keys,
            })
        })
        .collect();
    json!({ "at_ms": now_ms, "window_ms": WINDOW_MS, "hosts": hosts })
}

fn mode_name(mode: BillingMode) -> String {
    match mode {
        BillingMode::Hourly => t!("cost_advice.mode.hourly"),
        BillingMode::Daily => t!("cost_advice.mode.daily"),
        BillingMode::Weekly => t!("cost_advice.mode.weekly"),
        BillingMode::Monthly => t!("cost_advice.mode.monthly"),
    }
    .into_owned()
}

fn period_name(mode: BillingMode) -> String {
    match mode {
        BillingMode::Hourly => t!("cost_advice.period.hourly"),
        BillingMode::Daily => t!("cost_advice.period.daily"),
        BillingMode::Weekly => t!("cost_advice.period.weekly"),
        BillingMode::Monthly => t!("cost_advice.period.monthly"),
    }
    .into_owned()
}

fn advice_text(advice: &[HostAdvice]) -> String {
    let mut out = String::new();
    let mut say = |line: String| {
        out.push_str(&line);
        out.push('\n');
    };
    if advice.is_empty() {
        say(t!("cost_advice.no_hosts").into_owned());
        return out;
    }
    say(t!("cost_advice.header").into_owned());
    for a in advice {
        let money = |amount: f64| format_money(amount, &a.currency);
        let billed = format!("{:.1}", hours(a.billed_ms));
        let busy = format!("{:.1}", hours(a.busy_ms));
        let paid = a.paid.map_or_else(
            || t!("cost_advice.paid_unknown").into_owned(),
            |paid| t!("cost_advice.paid", money = money(paid)).into_owned(),
        );
        say(t!(
            "cost_advice.host",
            host = a.host,
            billed = billed,
            busy = busy,
            paid = paid
        )
        .into_owned());
        if a.pro_rata {
            say(t!("cost_advice.pro_rata").into_owned());
        }
        for m in &a.modes {
            let even = match m.break_even_hours_per_month {
                Some(h) if h > hours(WINDOW_MS) => {
                    t!("cost_advice.never_pays", hours = format!("{h:.0}")).into_owned()
                }
                Some(h) => t!("cost_advice.pays_above", hours = format!("{h:.0}")).into_owned(),
                None => String::new(),
            };
            say(t!(
                "cost_advice.mode_line",
                mode = mode_name(m.mode),
                price = money(m.price),
                period = period_name(m.mode),
                cost = money(m.cost),
                even = even
            )
            .into_owned());
        }
        if let Some(cost) = a.hourly_busy_only {
            say(t!("cost_advice.busy_only", cost = money(cost)).into_owned());
        }
        match (a.cheapest, a.paid) {
            (Some(m), Some(paid)) => say(t!(
                "cost_advice.cheapest_vs_paid",
                mode = mode_name(m.mode),
                cost = money(m.cost),
                paid = money(paid),
                saves = money(paid - m.cost)
            )
            .into_owned()),
            (Some(m), None) => say(t!(
                "cost_advice.cheapest",
                mode = mode_name(m.mode),
                cost = money(m.cost)
            )
            .into_owned()),
            (None, _) => {}
        }
        if !a.missing_keys.is_empty() {
            let keys = a.missing_keys.join(", ");
            say(t!("cost_advice.set_keys", keys = keys).into_owned());
        }
    }
    out
}
