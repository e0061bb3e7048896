//! The money nobody watches, as the cost panel shows it: plain lines the entry layer builds
//! from the synced provider inventory (stopped instances whose storage bills, running
//! instances that are no host of the fleet, recent price changes), amounts already written as
//! money. The console only keeps and draws them.

/// What one line says.
#[derive(Debug, Clone, PartialEq)]
pub enum UnwatchedKind {
    /// Stopped, its storage still billing this much a day (`None`: no storage price given).
    StoppedBilling { per_day: Option<String> },
    /// Running and billing, but no host of the fleet; `price` per hour where known.
    Running {
        price: Option<String>,
        has_ssh: bool,
    },
    /// The price changed `from` -> `to` (per hour) at `at` (UTC).
    PriceChange {
        from: String,
        to: String,
        at: String,
    },
}

/// One instance: who it is (`provider account id (label)`) and what it costs unwatched.
#[derive(Debug, Clone, PartialEq)]
pub struct UnwatchedLine {
    pub who: String,
    pub kind: UnwatchedKind,
}
