//! Hours and money billed while the host was broken: from the first fault to the end of the
//! window (or the release, when sooner), counted only while the ledger says the host was
//! billed, at the config's price.

use rust_i18n::t;
use serde::Serialize;

use crate::config::Config;
use crate::cost::LedgerBook;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Billing {
    /// Time broken within the window, billed or not.
    pub broken_ms: u64,
    /// Of that, time the ledger says was billed.
    pub billed_while_broken_ms: u64,
    pub hours: f64,
    pub price_per_hour: Option<f64>,
    pub currency: Option<String>,
    /// `hours * price_per_hour`, when the host has a price.
    pub cost: Option<f64>,
    /// How it was counted, or why it could not be, in the reader's language.
    pub note: String,
}

/// What `host` was billed between `broken_since_ms` and `to_ms`.
pub fn billed_while_broken(
    host: &str,
    broken_since_ms: Option<u64>,
    to_ms: u64,
    config: &Config,
    book: Option<&LedgerBook>,
) -> Option<Billing> {
    let from_ms = broken_since_ms?;
    let broken_ms = to_ms.saturating_sub(from_ms);
    let ledger = book.and_then(|b| b.hosts.get(host));
    let (start, end, note) = match ledger {
        Some(state) => {
            let billing = state.billing_started_ms.unwrap_or(from_ms);
            let released = state.released.as_ref().map(|r| r.at_ms);
            let end = released.map_or(to_ms, |at| at.min(to_ms));
            let note = match released {
                Some(_) => t!("report_words.billed_to_release"),
                None => t!("report_words.billed_to_last_event"),
            };
            (from_ms.max(billing), end, note.into_owned())
        }
        None => (
            from_ms,
            to_ms,
            t!("report_words.billed_no_ledger").into_owned(),
        ),
    };
    let billed_ms = end.saturating_sub(start);
    let hours = billed_ms as f64 / 3_600_000.0;
    let host_config = config.host(host);
    let price_per_hour = host_config.and_then(|h| h.price_per_hour);
    let currency = host_config.and_then(|h| h.currency.clone());
    let note = if price_per_hour.is_none() {
        t!("report_words.billed_no_price", note = note).into_owned()
    } else {
        note
    };
    Some(Billing {
        broken_ms,
        billed_while_broken_ms: billed_ms,
        hours,
        price_per_hour,
        currency,
        cost: price_per_hour.map(|p| p * hours),
        note,
    })
}

impl Billing {
    /// `1.25 h (4.38 USD)`, or just the hours.
    pub fn text(&self) -> String {
        let time = if self.hours < 0.1 {
            format!("{:.1} min", self.hours * 60.0)
        } else {
            format!("{:.2} h", self.hours)
        };
        match self.cost {
            Some(cost) => format!(
                "{time} ({cost:.2} {})",
                self.currency.as_deref().unwrap_or("")
            )
            .replace(" )", ")"),
            None => time,
        }
    }
}
