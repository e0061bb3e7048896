//! The money nobody watches, as plain lines the entry layer builds from the synced provider
//! inventory (stopped instances whose storage bills, running instances that are no host of the
//! fleet, recent price changes), amounts already written as money. The fleet keeps them so every
//! driver says the same: the console's cost panel draws them, and the alerts raise one per
//! instance while it lasts (`stopped_billing`, `running_unwatched`, `price_changed`).

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
        }
        .into_owned()
    }
}
