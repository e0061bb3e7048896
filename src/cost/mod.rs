//! What each rented host costs and how much of that paid for idle GPUs: the per-host ledger
//! (pure, driven by an explicit clock), fleet totals per currency, red lines, the auto-release
//! countdown, and the ledger file that survives the process being killed mid-write.
//!
//! Definitions the numbers rest on, for one host (all of its GPUs together):
//! - **billed**: from `billing_started` (else the first observation) until the host is released.
//!   Billing runs whether or not gpufleet is watching.
//! - **busy**: the mean utilization of the GPUs that reported one is at or above `busy_util_pct`.
//! - **idle**: every GPU that reported a utilization is under `idle_util_pct`, for at least
//!   `idle_minutes` in a row; a stretch counts only once it reached that length, then whole.
//! - **parked**: idle while some GPU holds more than [`PARKED_FLOOR_MIB`] of memory (a process
//!   sits on VRAM and computes nothing); parked time is also idle time.
//! - **unobserved**: billed time with no usable reading (host unreachable for longer than a few
//!   sample intervals, readings without utilization); neither busy nor idle.
//! - **effective utilization** = busy hours / billed hours.

mod advice;
mod auto_release;
mod fleet;
mod holds;
mod ledger;
mod redline;
mod store;

pub use advice::{BillingMode, HostAdvice, ModeCost, WINDOW_MS, host_advice};
pub use auto_release::{AutoDecision, AutoInput, AutoRelease, AutoState, DEFAULT_COUNTDOWN_MS};
pub use fleet::{
    CurrencyTotal, FleetCost, HostCost, Price, billing_started_ms, fleet_cost, host_ledger,
};
pub use holds::{HOLDS_FILE, HoldError, HoldStore};
pub use ledger::{
    GpuObservation, IdleRun, Ledger, LedgerSettings, LedgerState, LedgerTotals, PARKED_FLOOR_MIB,
    PriceSpan, REOPEN_AFTER_MS, Released,
};
pub use redline::{
    FleetLimits, HostLimits, RedLine, auto_release_triggered, fleet_red_lines, host_red_lines,
    red_lines,
};
pub use store::{LEDGER_FILE, LedgerBook, LedgerStore, StoreError};

/// Milliseconds in an hour, for turning ledger times into billed hours.
pub const MS_PER_HOUR: f64 = 3_600_000.0;

/// `ms` as hours.
pub fn hours(ms: u64) -> f64 {
    ms as f64 / MS_PER_HOUR
}

/// A duration for a cell or a banner: `45s`, `12m`, `3h05m`, `2d04h`.
pub fn format_duration_ms(ms: u64) -> String {
    let seconds = ms / 1_000;
    let minutes = seconds / 60;
    let hours = minutes / 60;
    let days = hours / 24;
    if seconds < 60 {
        format!("{seconds}s")
    } else if minutes < 60 {
        format!("{minutes}m")
    } else if hours < 24 {
        format!("{hours}h{:02}m", minutes % 60)
    } else {
        format!("{days}d{:02}h", hours % 24)
    }
}

/// An amount with its currency code as written in the config (`375.00 CNY`), or bare when the
/// config named no currency.
pub fn format_money(amount: f64, currency: &str) -> String {
    if currency.is_empty() {
        format!("{amount:.2}")
    } else {
        format!("{amount:.2} {currency}")
    }
}
