//! `gpufleet snapshot`: one reading of every host, as a table or as JSON.

use serde::Serialize;

use crate::diagnose::finding::Finding;
use crate::fleet::Fleet;
use crate::fleet::host::{HostState, HostStatus};
use crate::remote::HostKind;
use crate::remote::sanitize as clean;
use crate::telemetry::df::DiskUse;
use crate::telemetry::{GpuProcess, GpuSample};
use crate::units::{gib, opt_c, opt_pct};

/// The JSON document: `{"hosts": [...]}`.
#[derive(Debug, Serialize)]
pub struct Snapshot {
    pub hosts: Vec<HostSnapshot>,
}

#[derive(Debug, Serialize)]
pub struct HostSnapshot {
    pub name: String,
    /// `live`, `stale`, `connecting`, `unreachable`, `flooding`, `gpu_lost`,
    /// `driver_not_loaded`, `driver_library_mismatch`, `no_devices`, `smi_missing` or
    /// `telemetry_failed`.
    pub status: String,
    /// The failure text or connection error behind a non-live status.
    pub status_detail: Option<String>,
    /// The host sent far more than its interval allows, so part of its output was dropped
    /// (whatever its status says otherwise).
    pub flooding: bool,
    pub driver_version: Option<String>,
    pub cuda_version: Option<String>,
    pub gpus: Vec<GpuSample>,
    pub processes: Vec<GpuProcess>,
    /// Whether `processes` is a list the host's tool gave: `false` where the tool lists no
    /// processes (`cnmon`, `xpu-smi dump`, `mthreads-gmi`'s JSON report, an `amd-smi process`
    /// that failed) or none has come yet, so an empty list is not read as "no processes".
    pub processes_known: bool,
    /// The price in force (the config's, else the provider's as synced).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub price_per_hour: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub currency: Option<String>,
    /// When its instance disappeared from the provider account (status `gone`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gone_ms: Option<u64>,
    /// For a host whose link is down: when it is tried again (Unix ms).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_try_ms: Option<u64>,
    /// The jobs on its GPUs (`snapshot_jobs.rs`).
    pub jobs: Vec<crate::snapshot_jobs::JobSnapshot>,
    /// The host's live findings, root cause first: the objects `diagnose --json` gives.
    pub findings: Vec<Finding>,
    /// The file systems holding `/`, `/dev/shm` and the jobs' working directories, as `df`
    /// last read them (SSH hosts).
    pub filesystems: Vec<DiskUse>,
    /// `container` or `machine`: what the host said on connect, else what its provider rents;
    /// `null` when neither tells.
    pub kind: Option<&'static str>,
    /// Its dead-man switch (`[hosts.dead_man]`), as the host said; absent where it has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dead_man: Option<DeadManSnapshot>,
}

/// A host's dead-man switch in `snapshot --json`.
#[derive(Debug, Serialize)]
pub struct DeadManSnapshot {
    pub armed: bool,
    /// When it fires unless a gpufleet watches (Unix ms), while armed.
    pub deadline_ms: Option<u64>,
    /// `deadline_ms` as RFC 3339 UTC.
    pub deadline: Option<String>,
    pub after_minutes: u32,
    /// Why it is not armed, in the interface's language.
    pub why_not: Option<String>,
}

impl From<&crate::fleet::dead_man::DeadManState> for DeadManSnapshot {
    fn from(state: &crate::fleet::dead_man::DeadManState) -> Self {
        Self {
            armed: state.armed,
            deadline_ms: state.deadline_ms,
            deadline: state.deadline_ms.map(crate::utc::rfc3339),
            after_minutes: state.after_minutes,
            why_not: state.why_not.as_ref().map(|w| clean(&w.localized())),
        }
    }
}

impl Snapshot {
    pub fn from_fleet(fleet: &Fleet) -> Self {
        let hosts = fleet
            .hosts
            .iter()
            .enumerate()
            .map(|(id, h)| {
                let mut host = host_snapshot(h, &h.status(fleet.now_ms, fleet.options.interval_ms));
                let provider = fleet
                    .money
                    .hosts
                    .get(id)
                    .and_then(|m| m.config.release.as_ref())
                    .map(|r| r.provider);
                host.kind = HostKind::known(h.kind, provider).map(HostKind::as_str);
                if let Some(money) = fleet.money.hosts.get(id) {
                    let price = money.config.price.as_ref();
                    host.price_per_hour = price.map(|p| p.price_per_hour);
                    host.currency = price.map(|p| p.currency.clone()).filter(|c| !c.is_empty());
                    host.gone_ms = money.config.gone_ms;
                    if host.gone_ms.is_some() {
                        host.status = "gone".to_string();
                    }
                }
                host.jobs = h
                    .jobs
                    .iter()
                    .map(|j| {
                        let price = fleet
                            .money
                            .hosts
                            .get(id)
                            .and_then(|m| m.config.price.as_ref());
                        crate::snapshot_jobs::job_snapshot(j, fleet.now_ms, price)
                    })
                    .collect();
                host
            })
            .collect();
        Self { hosts }
    }

    /// True when every host was read (a host whose instance is gone has nothing to read).
    pub fn all_read(&self) -> bool {
        self.hosts
            .iter()
            .all(|h| h.status == "live" || h.gone_ms.is_some())
    }
}

fn host_snapshot(host: &HostState, status: &HostStatus) -> HostSnapshot {
    let (status_word, detail) = match status {
        HostStatus::Live => ("live".to_string(), None),
        HostStatus::Stale { .. } => ("stale".to_string(), None),
        HostStatus::Connecting { .. } => ("connecting".to_string(), None),
        // Said in the interface's language, as a finding's meaning is.
        HostStatus::Unreachable { .. } | HostStatus::Flooding { .. } => (
            status.text(),
            status
                .reason_words()
                .map(|w| w.localized())
                .map(|r| clean(&r)),
        ),
        HostStatus::Lost { reason } => (reason.word().to_string(), host.lost_raw().map(lines)),
    };
    HostSnapshot {
        name: host.name.clone(),
        status: status_word,
        status_detail: detail,
        flooding: host.flooding.is_some(),
        driver_version: host.info.driver_version.clone(),
        cuda_version: host.info.cuda_version.clone(),
        gpus: host.gpus.iter().map(|g| g.latest.clone()).collect(),
        processes: host.processes.clone(),
        processes_known: host.processes_at_ms.is_some(),
        price_per_hour: None,
        currency: None,
        gone_ms: None,
        next_try_ms: match &host.link {
            crate::fleet::host::Link::Down {
                retry: crate::fleet::host::Retry::At(at_ms),
                ..
            } => Some(*at_ms),
            _ => None,
        },
        jobs: Vec::new(),
        findings: host.findings.clone(),
        filesystems: host.disks.uses.clone(),
        dead_man: host.dead_man.as_ref().map(DeadManSnapshot::from),
        kind: host.kind.map(HostKind::as_str),
    }
}

/// A failure text of several lines on one line, its lines kept apart by `; ` (cleaned, they
/// would run into each other).
fn lines(raw: &str) -> String {
    raw.lines()
        .map(|l| clean(l).trim().to_string())
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

/// The table's header in the interface's language, padded in display cells as the rows are
/// padded in characters (the rows are ASCII but for host and GPU names).
fn header() -> String {
    // (cells, left-aligned) of each column but the last, as the rows' format has them.
    const COLUMNS: [(usize, bool); 9] = [
        (18, true),
        (12, true),
        (3, false),
        (22, true),
        (5, false),
        (15, false),
        (6, false),
        (13, false),
        (10, false),
    ];
    let titles = rust_i18n::t!("oneshot.snapshot_header");
    let mut titles = titles.split('|');
    let mut out = String::new();
    for (cells, left) in COLUMNS {
        let title = titles.next().unwrap_or_default();
        out.push_str(&if left {
            crate::cells::pad(title, cells)
        } else {
            crate::cells::pad_left(title, cells)
        });
        out.push(' ');
    }
    out.push(' ');
    out.push_str(titles.next().unwrap_or_default());
    out.push('\n');
    out
}

/// A fixed-width table, one line per GPU (a host without readings gets one line with its status).
pub fn render_table(snapshot: &Snapshot) -> String {
    let mut out = header();
    for h in &snapshot.hosts {
        if h.gpus.is_empty() {
            let mut detail = clean(h.status_detail.as_deref().unwrap_or(""));
            if let Some(at_ms) = h.next_try_ms {
                let (_, _, _, hour, minute, second, _) = crate::utc::utc_parts(at_ms);
                let time = format!("{hour:02}:{minute:02}:{second:02}");
                let retry = rust_i18n::t!("outage.retry_at_utc", time = time);
                detail = if detail.is_empty() {
                    retry.into_owned()
                } else {
                    format!("{detail} ({retry})")
                };
            }
            out.push_str(&format!(
                "{:<18} {:<12} {}\n",
                clean(&h.name),
                h.status,
                detail
            ));
            continue;
        }
        for g in &h.gpus {
            let vram = match (g.memory_used_mib, g.memory_total_mib) {
                (Some(u), Some(t)) => format!("{}/{}", gib(u), gib(t)),
                _ => "-".to_string(),
            };
            let power = match (g.power_draw_w, g.power_limit_w) {
                (Some(d), Some(l)) => format!("{d:.0}/{l:.0}"),
                (Some(d), None) => format!("{d:.0}"),
                _ => "-".to_string(),
            };
            let sm = g
                .clock_sm_mhz
                .map_or_else(|| "-".to_string(), |c| c.to_string());
            let reasons = g
                .clock_event_reasons
                .map_or_else(|| "-".to_string(), |r| r.words().join(","));
            out.push_str(&format!(
                "{:<18} {:<12} {:>3} {:<22} {:>5} {:>15} {:>6} {:>13} {:>10}  {}\n",
                clean(&h.name),
                h.status,
                g.index,
                clean(&g.name),
                opt_pct(g.utilization_gpu_pct),
                vram,
                opt_c(g.temperature_c),
                power,
                sm,
                reasons
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::{FleetOptions, HostEvent};

    #[test]
    fn a_host_whose_link_is_down_says_when_it_is_tried_again() {
        let mut fleet = Fleet::new(vec!["h".into()], FleetOptions::default(), 1_000);
        fleet.apply(
            0,
            HostEvent::Disconnected {
                at_ms: 5_000,
                reason: "cannot connect to 127.0.0.1:9: Connection refused (os error 111)".into(),
                summary: "connection refused".into(),
                retry_at_ms: Some(17_000),
                words: None,
            },
        );
        let snapshot = Snapshot::from_fleet(&fleet);
        assert_eq!(snapshot.hosts[0].next_try_ms, Some(17_000));
        let json = serde_json::to_value(&snapshot).expect("json");
        assert_eq!(json["hosts"][0]["next_try_ms"], 17_000);
        let table = render_table(&snapshot);
        assert!(table.contains("retry 00:00:17 UTC"), "{table}");
    }
}
