//! The wording of how a job uses its GPUs: waiting for data (`input_bound`), a card
//! larger than it needs (`card_oversized`) or one it nearly fills (`card_undersized`). The
//! rules are [`crate::diagnose::live_fit`]; all text comes from the catalogues.

use rust_i18n::t;

use crate::cost::format_money;
use crate::diagnose::finding::{Finding, Severity, label};

/// Money a finding says is spent for nothing, per hour.
#[derive(Debug, Clone, PartialEq)]
pub struct Waste {
    pub per_hour: f64,
    pub currency: String,
}

/// A memory size from the GPU table and the models that have it.
#[derive(Debug, Clone, PartialEq)]
pub struct CardNeed {
    pub vram_gb: f64,
    pub models: Vec<&'static str>,
}

impl CardNeed {
    fn describe(&self) -> String {
        t!(
            "finding_text.card_fit.card",
            gb = format!("{:.0}", self.vram_gb),
            models = self.models.join(", ")
        )
        .into_owned()
    }
}

pub fn input_bound(pid: u32, cores: f64, util_pct: f64, waste: Option<&Waste>) -> Finding {
    let money = match waste {
        Some(w) => t!(
            "finding_text.input_bound.waste",
            money = format_money(w.per_hour, &w.currency)
        ),
        None => t!("finding_text.card_fit.no_price"),
    };
    let summary = t!(
        "finding_text.input_bound.summary",
        pid = pid,
        util = format!("{util_pct:.0}"),
        cores = format!("{cores:.1}"),
        money = money
    );
    let action = t!("finding_text.input_bound.action");
    Finding::new(label::INPUT_BOUND, Severity::Warning, summary, action)
}

pub fn card_oversized(
    pid: u32,
    card: &str,
    need: &CardNeed,
    used_gb: f64,
    price: Option<(f64, &str)>,
) -> Finding {
    let summary = t!(
        "finding_text.card_oversized.summary",
        pid = pid,
        card = card,
        used = format!("{used_gb:.1}"),
        smaller = need.describe()
    );
    let saving = match price {
        Some((per_hour, currency)) => t!(
            "finding_text.card_oversized.saving",
            money = format_money(per_hour, currency)
        ),
        None => t!("finding_text.card_fit.no_price"),
    };
    let action = t!("finding_text.card_oversized.action", saving = saving);
    Finding::new(label::CARD_OVERSIZED, Severity::Info, summary, action)
}

pub fn card_undersized(pid: u32, larger: Option<CardNeed>) -> Finding {
    let summary = t!("finding_text.card_undersized.summary", pid = pid);
    let larger = larger
        .map(|n| t!("finding_text.card_undersized.larger", card = n.describe()).into_owned())
        .unwrap_or_default();
    let action = t!("finding_text.card_undersized.action", larger = larger);
    Finding::new(label::CARD_UNDERSIZED, Severity::Warning, summary, action)
}

pub fn low_util_line(index: u32, util_pct: f64, s: u64, window_s: u64) -> String {
    t!(
        "finding_text.card_fit.low_util",
        index = index,
        util = format!("{util_pct:.0}"),
        s = s,
        window = window_s
    )
    .into_owned()
}

pub fn cpu_line(pid: u32, cores: f64, span_s: u64) -> String {
    t!(
        "finding_text.card_fit.cpu",
        pid = pid,
        cores = format!("{cores:.2}"),
        s = span_s
    )
    .into_owned()
}

pub fn memory_line(index: u32, peak_pct: f64, s: u64, window_s: u64) -> String {
    t!(
        "finding_text.card_fit.memory_full",
        index = index,
        peak = format!("{peak_pct:.0}"),
        s = s,
        window = window_s
    )
    .into_owned()
}

pub fn roomy_line(index: u32, peak_pct: f64, util_pct: f64, s: u64, window_s: u64) -> String {
    t!(
        "finding_text.card_fit.roomy",
        index = index,
        peak = format!("{peak_pct:.0}"),
        util = format!("{util_pct:.0}"),
        s = s,
        window = window_s
    )
    .into_owned()
}
