//! A host's money as the cells of a table: hours, prices, amounts and shares, each `-` where
//! it is not known. The cost panel and the wide fleet table both show them.

use crate::cost::{HostCost, LedgerTotals, format_duration_ms, format_money};

/// A billed, busy or idle time: minutes under an hour (`12m`), then hours and minutes
/// (`3h05m`), then days (`2d04h`).
pub fn hours_cell(ms: u64) -> String {
    format_duration_ms(ms)
}

/// Effective utilization, `-` for a host never observed (all its billed time unobserved), whose
/// use is unknown rather than nil.
pub fn eff_cell(totals: &LedgerTotals) -> String {
    if totals.billed_ms > 0 && totals.unobserved_ms >= totals.billed_ms {
        "-".to_string()
    } else {
        pct_cell(totals.effective_utilization())
    }
}

/// A share as a whole percentage, `-` when nothing was billed yet.
pub fn pct_cell(fraction: Option<f64>) -> String {
    fraction.map_or_else(|| "-".to_string(), |f| format!("{:.0}%", f * 100.0))
}

/// An amount with the host's currency, `-` without a price.
pub fn money_cell(amount: Option<f64>, cost: &HostCost) -> String {
    match (amount, cost.currency()) {
        (Some(amount), Some(currency)) => format_money(amount, currency),
        _ => "-".to_string(),
    }
}

/// The price per hour with its currency, `-` without one.
pub fn price_cell(cost: &HostCost) -> String {
    cost.price.as_ref().map_or_else(
        || "-".to_string(),
        |p| format_money(p.price_per_hour, &p.currency),
    )
}
