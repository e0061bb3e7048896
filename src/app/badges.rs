//! Short badges: for a GPU card, what its latest sample shows right now; for a host row, its
//! status and its live findings; and how many problems a host has, for sorting problems first.

use rust_i18n::t;

use crate::diagnose::{Finding, Severity};
use crate::fleet::host::{HostState, HostStatus};
use crate::telemetry::{ClockEventReasons, GpuSample};

/// How bad a badge is; the theme colours it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum BadgeLevel {
    Warning,
    Critical,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Badge {
    pub level: BadgeLevel,
    pub text: String,
}

fn badge(level: BadgeLevel, text: impl Into<String>) -> Badge {
    Badge {
        level,
        text: text.into(),
    }
}

/// VRAM use at or above this share of the total is flagged.
const VRAM_FULL_PCT: f64 = 95.0;

/// Badges for one GPU's latest sample: what is true this second, before any finding's
/// duration has elapsed.
pub fn gpu_badges(gpu: &GpuSample) -> Vec<Badge> {
    let mut out = Vec::new();
    if let Some(reasons) = gpu.clock_event_reasons {
        if reasons.contains(ClockEventReasons::HW_POWER_BRAKE) {
            out.push(badge(BadgeLevel::Critical, t!("badge.power_brake")));
        }
        if reasons.is_thermal() {
            out.push(badge(BadgeLevel::Critical, t!("badge.thermal")));
        } else if reasons.contains(ClockEventReasons::HW_SLOWDOWN) {
            out.push(badge(BadgeLevel::Critical, t!("badge.hw_slowdown")));
        }
    }
    if gpu.ecc_uncorrected_volatile.is_some_and(|n| n > 0) {
        out.push(badge(BadgeLevel::Critical, t!("badge.ecc")));
    }
    if gpu.retired_pages_pending == Some(true) {
        out.push(badge(BadgeLevel::Warning, t!("badge.retire_pending")));
    }
    if let (Some(used), Some(total)) = (gpu.memory_used_mib, gpu.memory_total_mib)
        && total > 0
        && used as f64 * 100.0 / total as f64 >= VRAM_FULL_PCT
    {
        out.push(badge(BadgeLevel::Warning, t!("badge.vram_full")));
    }
    out
}

/// A finding's badge: its label in capitals (`xid_79` → `XID 79`); info findings get none.
pub fn finding_badge(finding: &Finding) -> Option<Badge> {
    let level = match finding.severity {
        Severity::Critical => BadgeLevel::Critical,
        Severity::Warning => BadgeLevel::Warning,
        Severity::Info => return None,
    };
    Some(badge(level, finding.label.replace('_', " ").to_uppercase()))
}

/// Badges for a host row: an unreachable host first, then its findings, most severe first.
pub fn host_badges(host: &HostState, status: &HostStatus) -> Vec<Badge> {
    let mut out = Vec::new();
    if let HostStatus::Unreachable { .. } = status {
        out.push(badge(BadgeLevel::Critical, t!("badge.unreachable")));
    }
    if host.dead_man.as_ref().is_some_and(|d| d.warns()) {
        out.push(badge(BadgeLevel::Warning, t!("dead_man.badge_not_armed")));
    }
    for b in host.findings.iter().filter_map(finding_badge) {
        if !out.contains(&b) {
            out.push(b);
        }
    }
    out.sort_by_key(|b| std::cmp::Reverse(b.level));
    out
}

/// How many problems a host has, for "problems first": (critical, warning). Its badges count
/// (an unreachable link, each live finding); a lost GPU stream is critical and a stale or
/// flooding host a warning, whether or not a finding says so yet.
pub fn problem_count(host: &HostState, status: &HostStatus) -> (usize, usize) {
    let badges = host_badges(host, status);
    let mut critical = badges
        .iter()
        .filter(|b| b.level == BadgeLevel::Critical)
        .count();
    let mut warning = badges.len() - critical;
    match status {
        HostStatus::Lost { .. } if critical == 0 => critical += 1,
        HostStatus::Stale { .. } | HostStatus::Flooding { .. } => warning += 1,
        _ => {}
    }
    (critical, warning)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::HostEvent;
    use crate::telemetry::LostReason;

    #[test]
    fn problems_count_the_link_and_the_findings() {
        let shape = crate::fleet::FleetOptions::default().history_shape();
        let mut host = HostState::new("h", shape);
        assert_eq!(problem_count(&host, &HostStatus::Live), (0, 0));
        let unreachable = HostStatus::Unreachable {
            reason: "refused".into(),
            words: None,
        };
        assert_eq!(problem_count(&host, &unreachable), (1, 0));
        host.apply(HostEvent::Lost {
            at_ms: 1,
            reason: LostReason::GpuLost,
            raw: String::new(),
        });
        let lost = HostStatus::Lost {
            reason: LostReason::GpuLost,
        };
        assert_eq!(problem_count(&host, &lost), (1, 0));
        assert_eq!(
            problem_count(&host, &HostStatus::Stale { age_ms: 5_000 }),
            (0, 1)
        );
    }
}
