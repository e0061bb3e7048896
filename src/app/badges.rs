//! Short badges for what is wrong on a host or GPU, derived from its latest state.

use crate::app::host::{HostState, HostStatus};
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
    pub text: &'static str,
}

const fn badge(level: BadgeLevel, text: &'static str) -> Badge {
    Badge { level, text }
}

/// VRAM use at or above this share of the total is flagged.
const VRAM_FULL_PCT: f64 = 95.0;

/// Badges for one GPU's latest sample.
pub fn gpu_badges(gpu: &GpuSample) -> Vec<Badge> {
    let mut out = Vec::new();
    if let Some(reasons) = gpu.clock_event_reasons {
        if reasons.contains(ClockEventReasons::HW_POWER_BRAKE) {
            out.push(badge(BadgeLevel::Critical, "POWER BRAKE"));
        }
        if reasons.is_thermal() {
            out.push(badge(BadgeLevel::Critical, "THERMAL"));
        } else if reasons.contains(ClockEventReasons::HW_SLOWDOWN) {
            out.push(badge(BadgeLevel::Critical, "HW SLOWDOWN"));
        }
    }
    if gpu.ecc_uncorrected_volatile.is_some_and(|n| n > 0) {
        out.push(badge(BadgeLevel::Critical, "ECC"));
    }
    if gpu.retired_pages_pending == Some(true) {
        out.push(badge(BadgeLevel::Warning, "RETIRE PENDING"));
    }
    if let (Some(used), Some(total)) = (gpu.memory_used_mib, gpu.memory_total_mib)
        && total > 0
        && used as f64 * 100.0 / total as f64 >= VRAM_FULL_PCT
    {
        out.push(badge(BadgeLevel::Warning, "VRAM FULL"));
    }
    out
}

/// Badges for a host: its status first, then the union of its GPUs' badges, most severe first.
pub fn host_badges(host: &HostState, status: &HostStatus) -> Vec<Badge> {
    let mut out = Vec::new();
    match status {
        HostStatus::Lost { .. } => out.push(badge(BadgeLevel::Critical, "GPU LOST")),
        HostStatus::Unreachable { .. } => out.push(badge(BadgeLevel::Critical, "UNREACHABLE")),
        HostStatus::Stale { .. } => out.push(badge(BadgeLevel::Warning, "STALE")),
        HostStatus::Connecting { .. } | HostStatus::Live => {}
    }
    if !host.kernel_lines.is_empty() {
        out.push(badge(BadgeLevel::Critical, "XID"));
    }
    for gpu in &host.gpus {
        for b in gpu_badges(&gpu.latest) {
            if !out.contains(&b) {
                out.push(b);
            }
        }
    }
    out.sort_by_key(|b| std::cmp::Reverse(b.level));
    out
}
