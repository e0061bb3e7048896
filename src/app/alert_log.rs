//! What the console shows of alerts (`!`): every alert the fleet raised or resolved since the
//! console started (the newest kept), who sent it (this console, another gpufleet that holds
//! the alerts duty, or nobody when no `[[alerts]]` sink is configured), and how each sink is
//! doing. Data only; `update` fills it from the alert bridge's events.

use rust_i18n::t;

use std::collections::{BTreeMap, VecDeque};

use crate::alerts::{Alert, DeliveryEvent};
use crate::telemetry::TimestampMs;

/// How many alerts the log keeps (the newest).
pub const ALERTS_KEPT: usize = 200;

/// Who sends the alerts the console shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AlertSender {
    /// This console, to these sinks.
    Here(Vec<String>),
    /// Another gpufleet holds the alerts duty ("gpufleet watch (pid 42)").
    Elsewhere(String),
    /// No `[[alerts]]` sink is configured: alerts are only shown.
    Nobody,
}

impl AlertSender {
    /// Where an alert went, for its row and the panel's title.
    pub fn describe(&self) -> String {
        match self {
            AlertSender::Here(sinks) => t!("alerts.sender_here", sinks = sinks.join(", ")),
            AlertSender::Elsewhere(holder) => t!("alerts.sender_elsewhere", holder = holder),
            AlertSender::Nobody => t!("alerts.sender_nobody"),
        }
        .into_owned()
    }
}

/// One sink as deliveries reported it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SinkTally {
    pub delivered: u64,
    pub retrying: u64,
    pub failed: u64,
    pub dropped: u64,
    /// The sink failed try after try and is marked down (until it delivers again).
    pub down: bool,
    /// The last problem and when it was reported.
    pub last_error: Option<(TimestampMs, String)>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct AlertLog {
    /// Newest first.
    pub entries: VecDeque<Alert>,
    pub sender: AlertSender,
    pub sinks: BTreeMap<String, SinkTally>,
}

impl Default for AlertLog {
    fn default() -> Self {
        Self {
            entries: VecDeque::new(),
            sender: AlertSender::Nobody,
            sinks: BTreeMap::new(),
        }
    }
}

impl AlertLog {
    pub fn record(&mut self, alert: Alert) {
        if self.entries.len() == ALERTS_KEPT {
            self.entries.pop_back();
        }
        self.entries.push_front(alert);
    }

    /// Counts a delivery report; returns the problem to show, if it is one.
    pub fn delivery(&mut self, at_ms: TimestampMs, event: DeliveryEvent) -> Option<String> {
        let (sink, problem) = match event {
            DeliveryEvent::Delivered { sink, .. } => {
                self.sinks.entry(sink).or_default().delivered += 1;
                return None;
            }
            DeliveryEvent::Up { sink } => {
                self.sinks.entry(sink).or_default().down = false;
                return None;
            }
            DeliveryEvent::Down { sink, why, waiting } => {
                self.sinks.entry(sink.clone()).or_default().down = true;
                let text = crate::words::Words::counted("alert_sink_state.down", waiting as u64)
                    .put("sink", sink.clone())
                    .put("why", why)
                    .localized();
                (sink, text)
            }
            DeliveryEvent::Retrying {
                sink,
                alert,
                why,
                after,
            } => {
                self.sinks.entry(sink.clone()).or_default().retrying += 1;
                let text = t!(
                    "alerts.retrying",
                    alert = alert,
                    sink = sink,
                    why = why,
                    s = after.as_secs().max(1)
                )
                .into_owned();
                (sink, text)
            }
            DeliveryEvent::Failed { sink, alert, why } => {
                self.sinks.entry(sink.clone()).or_default().failed += 1;
                (
                    sink.clone(),
                    t!(
                        "alerts.not_delivered",
                        alert = alert,
                        sink = sink,
                        why = why
                    )
                    .into_owned(),
                )
            }
            DeliveryEvent::Dropped { sink, alert } => {
                self.sinks.entry(sink.clone()).or_default().dropped += 1;
                let text = t!("alerts.queue_full", alert = alert, sink = sink).into_owned();
                (sink, text)
            }
        };
        self.sinks.entry(sink).or_default().last_error = Some((at_ms, problem.clone()));
        Some(problem)
    }

    /// Alerts still firing: the newest state of each host+GPU+label is `firing`.
    pub fn firing(&self) -> usize {
        let mut seen = std::collections::HashSet::new();
        self.entries
            .iter()
            .filter(|a| seen.insert((a.host.as_str(), a.gpu, a.label.as_str())))
            .filter(|a| a.state == crate::alerts::AlertState::Firing)
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alerts::{AlertState, Money};
    use crate::diagnose::Severity;

    fn alert(label: &str, state: AlertState) -> Alert {
        Alert {
            host: "h1".to_string(),
            gpu: Some(0),
            label: label.to_string(),
            severity: Severity::Critical,
            summary: "s".to_string(),
            runbook: None,
            money: Money::default(),
            state,
            at_ms: 1,
        }
    }

    #[test]
    fn firing_counts_what_has_not_resolved_since() {
        let mut log = AlertLog::default();
        log.record(alert("gpu_lost", AlertState::Firing));
        log.record(alert("xid_79", AlertState::Firing));
        assert_eq!(log.firing(), 2);
        log.record(alert("gpu_lost", AlertState::Resolved));
        assert_eq!(log.firing(), 1);
        for _ in 0..ALERTS_KEPT {
            log.record(alert("unreachable", AlertState::Resolved));
        }
        assert_eq!(log.entries.len(), ALERTS_KEPT, "bounded");
    }

    #[test]
    fn a_failing_sink_is_counted_and_its_problem_returned() {
        let mut log = AlertLog::default();
        let delivered = DeliveryEvent::Delivered {
            sink: "slack".to_string(),
            alert: "h1 gpu_lost".to_string(),
        };
        assert_eq!(log.delivery(5, delivered), None);
        let failed = DeliveryEvent::Failed {
            sink: "slack".to_string(),
            alert: "h1 gpu_lost".to_string(),
            why: "HTTP 403".to_string(),
        };
        let problem = log.delivery(6, failed).unwrap_or_default();
        assert!(
            problem.contains("slack") && problem.contains("HTTP 403"),
            "{problem}"
        );
        let tally = &log.sinks["slack"];
        assert_eq!((tally.delivered, tally.failed), (1, 1));
        assert_eq!(tally.last_error.as_ref().map(|e| e.0), Some(6));
    }

    #[test]
    fn a_sink_marked_down_is_flagged_until_it_is_up_again() {
        let mut log = AlertLog::default();
        let down = DeliveryEvent::Down {
            sink: "hook".to_string(),
            why: "operation timed out".to_string(),
            waiting: 3,
        };
        let problem = log.delivery(7, down).unwrap_or_default();
        assert!(
            problem.contains("hook") && problem.contains("down") && problem.contains('3'),
            "{problem}"
        );
        assert!(log.sinks["hook"].down);
        let zh = crate::words::Words::counted("alert_sink_state.down", 3)
            .put("sink", "hook")
            .put("why", "x")
            .render("zh-CN");
        assert!(zh.contains("不可用"), "{zh}");
        let up = DeliveryEvent::Up {
            sink: "hook".to_string(),
        };
        assert_eq!(log.delivery(8, up), None);
        assert!(!log.sinks["hook"].down);
    }
}
