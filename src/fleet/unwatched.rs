//! The money nobody watches, as plain lines the entry layer builds from the synced provider
//! inventory (stopped instances whose storage bills, running instances that are no host of the
//! fleet, recent price changes), amounts already written as money. The fleet keeps them so every
//! driver says the same: the console's cost panel draws them, and the alerts raise one per
//! instance while it lasts (`stopped_billing`, `running_unwatched`, `price_changed`), one per
//! account whose balance is under its red line (`balance_low`) and one per stopped instance
//! whose data goes within days (`data_deletion`).

use rust_i18n::t;

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
    /// An account's balance (the line already written); the figures for `/metrics`.
    Balance {
        text: String,
        provider: String,
        account: String,
        currency: String,
        amount: f64,
        hours_left: Option<f64>,
        /// Under the account's `min_balance_hours`: a red line.
        below: bool,
    },
    /// A stopped instance whose provider deletes its data on a date (the line already
    /// written); `soon` when that is days away, which alerts.
    DataDeletion { text: String, soon: bool },
}

/// One instance: who it is (`provider account id (label)`) and what it costs unwatched.
#[derive(Debug, Clone, PartialEq)]
pub struct UnwatchedLine {
    pub who: String,
    pub kind: UnwatchedKind,
}

impl UnwatchedLine {
    /// The alert label of this kind of line.
    pub fn label(&self) -> &'static str {
        match self.kind {
            UnwatchedKind::StoppedBilling { .. } => "stopped_billing",
            UnwatchedKind::Running { .. } => "running_unwatched",
            UnwatchedKind::PriceChange { .. } => "price_changed",
            UnwatchedKind::Balance { .. } => "balance_low",
            UnwatchedKind::DataDeletion { .. } => "data_deletion",
        }
    }

    /// Whether the line is an alert: every kind while it lasts, but a balance only under its
    /// red line and a deletion only when it is days away.
    pub fn alerts(&self) -> bool {
        match self.kind {
            UnwatchedKind::Balance { below, .. } => below,
            UnwatchedKind::DataDeletion { soon, .. } => soon,
            _ => true,
        }
    }

    /// The line as the cost panel and the alerts say it.
    pub fn text(&self) -> String {
        let who = self.who.as_str();
        match &self.kind {
            UnwatchedKind::StoppedBilling {
                per_day: Some(money),
            } => t!("unwatched.stopped", who = who, money = money.as_str()),
            UnwatchedKind::StoppedBilling { per_day: None } => {
                t!("unwatched.stopped_unpriced", who = who)
            }
            UnwatchedKind::Running { price, has_ssh } => {
                let price = price.as_deref().unwrap_or("-");
                if *has_ssh {
                    t!("unwatched.running", who = who, price = price)
                } else {
                    t!("unwatched.running_no_ssh", who = who, price = price)
                }
            }
            UnwatchedKind::PriceChange { from, to, at } => t!(
                "unwatched.price",
                who = who,
                from = from.as_str(),
                to = to.as_str(),
                at = at.as_str()
            ),
            UnwatchedKind::Balance { text, .. } | UnwatchedKind::DataDeletion { text, .. } => {
                return text.clone();
            }
        }
        .into_owned()
    }
}
