//! What is alerting now, and what changed since the last look: one alert per host, GPU and
//! label while the condition lasts (no storms), and a resolve when it clears.
//!
//! Conditions come from the fleet as it stands: every finding of a host (a lost GPU or driver,
//! an Xid with an action, idle while billed, thermal trouble; the short-lived `stale` is left to
//! the unreachable rule), a host not streaming for `unreachable_after_ms`, and each red line
//! crossed. Each alert carries the money at stake.

use std::collections::BTreeMap;
use std::collections::btree_map::Entry;

use rust_i18n::t;

use crate::cost::AutoDecision;
use crate::diagnose::Severity;
use crate::diagnose::finding::label;
use crate::fleet::Fleet;
use crate::fleet::host::{HostState, HostStatus};
use crate::telemetry::TimestampMs;

use super::message::{Alert, AlertState, Money};

/// The label of gpufleet's own "host unreachable" alert.
pub const UNREACHABLE: &str = "unreachable";

/// The label of an auto-release countdown running (resolved when it is held or done).
pub const AUTO_RELEASE: &str = "auto_release";

/// Host, GPU, label: what one alert is about.
type Key = (String, Option<u32>, String);

/// The alerts firing, by what they are about.
#[derive(Debug, Default)]
pub struct AlertBook {
    firing: BTreeMap<Key, Alert>,
    unreachable_after_ms: u64,
}

impl AlertBook {
    pub fn new(unreachable_after_ms: u64) -> Self {
        Self {
            firing: BTreeMap::new(),
            unreachable_after_ms,
        }
    }

    /// A host silent this long raises `unreachable` from now on (a config reloaded).
    pub fn set_unreachable_after_ms(&mut self, ms: u64) {
        self.unreachable_after_ms = ms;
    }

    /// Looks at `fleet` now: the alerts that started (firing) and ended (resolved) since the
    /// last look, in that order.
    pub fn update(&mut self, fleet: &Fleet) -> Vec<Alert> {
        let now = conditions(fleet, self.unreachable_after_ms);
        let mut changes = Vec::new();
        let ended: Vec<Key> = self
            .firing
            .keys()
            .filter(|key| !now.contains_key(*key))
            .cloned()
            .collect();
        for (key, alert) in now {
            if let Entry::Vacant(slot) = self.firing.entry(key) {
                changes.push(alert.clone());
                slot.insert(alert);
            }
        }
        for key in ended {
            if let Some(mut alert) = self.firing.remove(&key) {
                alert.state = AlertState::Resolved;
                alert.at_ms = fleet.now_ms;
                changes.push(alert);
            }
        }
        changes
    }

    /// The alerts firing now.
    pub fn firing(&self) -> impl Iterator<Item = &Alert> {
        self.firing.values()
    }
}

/// Every condition that holds in `fleet` now.
fn conditions(fleet: &Fleet, unreachable_after_ms: u64) -> BTreeMap<Key, Alert> {
    let mut out = BTreeMap::new();
    let at_ms = fleet.now_ms;
    for (id, host) in fleet.watched() {
        let money = Money::of(fleet, id);
        let mut add = |gpu, label: &str, severity, summary: String, runbook: Option<String>| {
            out.insert(
                (host.name.clone(), gpu, label.to_string()),
                Alert {
                    host: host.name.clone(),
                    gpu,
                    label: label.to_string(),
                    severity,
                    summary,
                    runbook,
                    money: money.clone(),
                    state: AlertState::Firing,
                    at_ms,
                },
            );
        };
        for finding in host.findings.iter().filter(|f| f.label != label::STALE) {
            add(
                finding.gpu,
                &finding.label,
                finding.severity,
                finding.summary.clone(),
                finding.runbook.clone(),
            );
        }
        if let Some((AutoDecision::CountingDown { remaining_ms }, plateau)) = fleet
            .money
            .hosts
            .get(id)
            .map(|m| (m.auto_decision, m.plateau))
        {
            let why = match plateau {
                Some(act) => act.message(),
                None => fleet
                    .money
                    .red_lines
                    .iter()
                    .filter(|line| line.host() == Some(host.name.as_str()))
                    .map(|line| line.message())
                    .collect::<Vec<_>>()
                    .join("; "),
            };
            let key = match plateau.map(|act| act.action) {
                Some(crate::config::OnPlateau::StopJob) => "job_action.alert_stop",
                _ => "alert_text.auto_release",
            };
            add(
                None,
                AUTO_RELEASE,
                Severity::Critical,
                t!(
                    key,
                    s = remaining_ms.div_ceil(1000),
                    why = why,
                    host = host.name
                )
                .into_owned(),
                None,
            );
        }
        if let Some(silent_ms) = unreachable_for(fleet, id)
            && silent_ms >= unreachable_after_ms
        {
            // A link that is down says why in the alert's language when it can.
            let reason = fleet
                .hosts
                .get(id)
                .and_then(|host: &HostState| host.down_reason().map(|w| w.localized()))
                .or_else(|| {
                    fleet
                        .status(id)
                        .and_then(|s| s.reason_words().map(|w| w.localized()))
                })
                .unwrap_or_else(|| t!("alert_text.no_data").into_owned());
            add(
                None,
                UNREACHABLE,
                Severity::Critical,
                t!(
                    "alert_text.unreachable",
                    min = silent_ms / 60_000,
                    reason = reason
                )
                .into_owned(),
                None,
            );
        }
    }
    // The money nobody watches: one alert per instance while it lasts, named as the cost panel
    // names it (no host of the fleet is it).
    for line in fleet.unwatched.iter().filter(|l| l.alerts()) {
        let label = line.label().to_string();
        out.insert(
            (line.who.clone(), None, label.clone()),
            Alert {
                host: line.who.clone(),
                gpu: None,
                label,
                severity: Severity::Warning,
                summary: line.text(),
                runbook: None,
                money: Money::default(),
                state: AlertState::Firing,
                at_ms,
            },
        );
    }
    let retired = |name: &str| {
        fleet.hosts.iter().any(|h| h.retired && h.name == name)
            && !fleet.watched().any(|(_, h)| h.name == name)
    };
    for line in fleet
        .money
        .red_lines
        .iter()
        .filter(|l| !l.host().is_some_and(retired))
    {
        let host = line.host().unwrap_or("fleet").to_string();
        let money = fleet
            .watched()
            .find(|(_, h)| h.name == host)
            .map(|(id, _)| Money::of(fleet, id))
            .unwrap_or_default();
        let label = format!("red_line_{}", line.kind());
        out.insert(
            (host.clone(), None, label.clone()),
            Alert {
                host,
                gpu: None,
                label,
                severity: Severity::Warning,
                summary: line.message(),
                runbook: None,
                money,
                state: AlertState::Firing,
                at_ms,
            },
        );
    }
    out
}

/// How long host `id` has sent no reading while not live; `None` while it streams, or before
/// it ever connected and failed.
fn unreachable_for(fleet: &Fleet, id: usize) -> Option<u64> {
    let status = fleet.status(id)?;
    if matches!(status, HostStatus::Live | HostStatus::Flooding { .. }) {
        return None;
    }
    if matches!(status, HostStatus::Lost { .. }) {
        // A lost GPU is its own alert (the finding), with its own runbook.
        return None;
    }
    let host = fleet.hosts.get(id)?;
    let since: TimestampMs = host.last_sample_ms.unwrap_or(fleet.started_ms);
    Some(fleet.now_ms.saturating_sub(since))
}
