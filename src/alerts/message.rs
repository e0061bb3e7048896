//! One alert as every sink receives it: which host and GPU, which finding (label and
//! severity), a one-line summary, the runbook to run, the money at stake, and whether it is
//! firing or resolved; plus the plain text chat services show.

use rust_i18n::t;
use serde::Serialize;

use crate::cost::format_money;
use crate::diagnose::Severity;
use crate::telemetry::TimestampMs;

/// Whether the condition started or ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AlertState {
    Firing,
    Resolved,
}

impl AlertState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Firing => "firing",
            Self::Resolved => "resolved",
        }
    }
}

/// What the host costs, as far as gpufleet knows.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Money {
    pub price_per_hour: Option<f64>,
    pub spent: Option<f64>,
    pub currency: Option<String>,
}

impl Money {
    /// The money at stake on host `id` of `fleet` (nothing known for a host without a cost).
    pub fn of(fleet: &crate::fleet::Fleet, id: usize) -> Self {
        let Some(cost) = fleet.money.cost(id) else {
            return Self::default();
        };
        Self {
            price_per_hour: cost.price.as_ref().map(|p| p.price_per_hour),
            spent: cost.spent(),
            currency: cost.currency().map(str::to_string),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Alert {
    pub host: String,
    /// The GPU index, when the alert is about one GPU.
    pub gpu: Option<u32>,
    /// The finding's label (`gpu_lost`, `xid_79`, `idle_billing`, ...) or an alert of
    /// gpufleet's own (`unreachable`, `red_line`, `auto_release`, `test`).
    pub label: String,
    pub severity: Severity,
    /// One line: what happened.
    pub summary: String,
    /// The runbook id to run, if one applies.
    pub runbook: Option<String>,
    pub money: Money,
    pub state: AlertState,
    pub at_ms: TimestampMs,
}

impl Alert {
    /// `host` or `host GPU 3`.
    pub fn place(&self) -> String {
        match self.gpu {
            Some(gpu) => format!("{} GPU {gpu}", self.host),
            None => self.host.clone(),
        }
    }

    /// The summary as said after [`Alert::place`] (the console's notice, its alerts panel):
    /// without the host's name where the text labels a part with it, as a red line's or an
    /// auto-release's does (`train-h100x8: GPUs idle for 2h` says `GPUs idle for 2h`), so the
    /// line names the host once.
    pub fn summary_after_place(&self) -> String {
        without_label(&self.summary, &self.host)
    }

    /// The first line of a chat message: `[FIRING critical] h1 GPU 0: gpu_lost`.
    pub fn title(&self) -> String {
        let state = match self.state {
            AlertState::Firing => t!("alerts.firing_loud"),
            AlertState::Resolved => t!("alert_text.resolved_loud"),
        };
        let severity = self.severity.said();
        t!(
            "alert_text.title",
            state = state,
            severity = severity,
            place = self.place(),
            label = self.label
        )
        .into_owned()
    }

    /// The money line, or nothing when the host has no price.
    pub fn money_line(&self) -> Option<String> {
        let money = &self.money;
        let currency = money.currency.as_deref().unwrap_or("");
        let price = money
            .price_per_hour
            .map(|p| format!("{}/h", format_money(p, currency)));
        let spent = money
            .spent
            .map(|s| t!("alert_text.spent", money = format_money(s, currency)).into_owned());
        match (price, spent) {
            (Some(price), Some(spent)) => Some(format!("{price}, {spent}")),
            (Some(one), None) | (None, Some(one)) => Some(one),
            (None, None) => None,
        }
    }

    /// The whole plain-text message: title, summary, runbook, money, time.
    pub fn text(&self) -> String {
        let mut lines = vec![self.title(), self.summary.clone()];
        if let Some(runbook) = &self.runbook
            && self.state == AlertState::Firing
        {
            lines.push(t!("alert_text.runbook", runbook = runbook, host = self.host).into_owned());
        }
        if let Some(money) = self.money_line() {
            lines.push(money);
        }
        lines.push(t!("alert_text.at", time = crate::utc::rfc3339(self.at_ms)).into_owned());
        lines.join("\n")
    }

    /// The generic webhook's JSON object.
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "host": self.host,
            "gpu": self.gpu,
            "label": self.label,
            "severity": self.severity.word(),
            "summary": self.summary,
            "state": self.state.as_str(),
            "at": crate::utc::rfc3339(self.at_ms),
            "runbook": self.runbook,
            "price_per_hour": self.money.price_per_hour,
            "spent": self.money.spent,
            "currency": self.money.currency,
            "source": "gpufleet",
        })
    }
}

/// `text` without `name` where it stands as a label: at the start or after a space or a
/// bracket, followed by a colon (`:` or the full-width `：`) and any spaces after it.
fn without_label(text: &str, name: &str) -> String {
    if name.is_empty() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(name) {
        let (before, after) = (&rest[..at], &rest[at + name.len()..]);
        let starts_a_word = before
            .chars()
            .next_back()
            .is_none_or(|c| c.is_whitespace() || matches!(c, '(' | '（' | ';' | '；'));
        let label_end = after
            .strip_prefix(':')
            .or_else(|| after.strip_prefix('：'))
            .map(str::trim_start);
        match label_end {
            Some(tail) if starts_a_word => {
                out.push_str(before);
                rest = tail;
            }
            _ => {
                out.push_str(&rest[..at + name.len()]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Cuts `text` to at most `max_bytes` on a character boundary, marking the cut.
pub fn truncate_bytes(text: &str, max_bytes: usize) -> String {
    if text.len() <= max_bytes {
        return text.to_string();
    }
    const MARK: &str = "…";
    let mut end = max_bytes.saturating_sub(MARK.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{MARK}", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn lost() -> Alert {
        Alert {
            host: "h100-2".into(),
            gpu: Some(3),
            label: "gpu_lost".into(),
            severity: Severity::Critical,
            summary: "GPU 3 has fallen off the bus".into(),
            runbook: Some("gpu-lost".into()),
            money: Money {
                price_per_hour: Some(2.5),
                spent: Some(41.2),
                currency: Some("USD".into()),
            },
            state: AlertState::Firing,
            at_ms: 951_868_800_250,
        }
    }

    #[test]
    fn the_text_names_host_gpu_label_runbook_and_money() {
        let text = lost().text();
        assert_eq!(
            text,
            "[FIRING critical] h100-2 GPU 3: gpu_lost\nGPU 3 has fallen off the bus\n\
             runbook: gpufleet runbook run gpu-lost --host h100-2\n2.50 USD/h, 41.20 USD spent\n\
             at 2000-03-01T00:00:00.250Z"
        );
    }

    #[test]
    fn the_summary_after_the_place_names_the_host_once() {
        let mut alert = lost();
        alert.host = "train-h100x8".into();
        alert.summary = "train-h100x8: GPUs idle for 2h 10m (red line 2h)".into();
        assert_eq!(
            alert.summary_after_place(),
            "GPUs idle for 2h 10m (red line 2h)"
        );
        alert.summary = "train-h100x8：卡已空闲 2h（红线 2h）".into();
        assert_eq!(alert.summary_after_place(), "卡已空闲 2h（红线 2h）");
        // Inside an auto-release's reason; the command to keep the host keeps its name.
        alert.summary = "auto-release in 60 s (train-h100x8: GPUs idle for 2h); to keep the \
                         host, run: gpufleet hold train-h100x8"
            .into();
        assert_eq!(
            alert.summary_after_place(),
            "auto-release in 60 s (GPUs idle for 2h); to keep the host, run: gpufleet hold \
             train-h100x8"
        );
        // A longer name that starts with the host's is another host.
        alert.host = "h1".into();
        alert.summary = "h10: spent 40 USD".into();
        assert_eq!(alert.summary_after_place(), "h10: spent 40 USD");
        assert_eq!(lost().summary_after_place(), "GPU 3 has fallen off the bus");
    }

    #[test]
    fn truncation_keeps_whole_characters() {
        assert_eq!(truncate_bytes("abc", 3), "abc");
        let cut = truncate_bytes("显卡掉线了", 8);
        assert!(cut.len() <= 8, "{cut}");
        assert!(cut.ends_with('…'));
    }
}
