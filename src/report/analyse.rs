//! What happened: a host's recorded events folded through the same engine the console runs
//! (`Fleet::apply`, the findings refreshed each second of recorded time), giving when each
//! finding first and last showed, the GPUs seen, the evidence lines verbatim and when the host
//! broke.

use rust_i18n::t;
use serde::Serialize;

use crate::diagnose::{LiveOptions, Severity};
use crate::fleet::{Fleet, FleetOptions, HostEvent};
use crate::recording::Line;
use crate::recording::wire::Event;
use crate::utc::rfc3339;

/// Timeline entries kept at most (the first ones; the report says when some were left out).
pub const MAX_TIMELINE: usize = 300;

/// Refreshes a second apart after each event, at most: past them, the steps to the next event
/// double, so the refreshes between two events stay a few dozen however far apart they are.
const STEPS_AT_ONE_SECOND: u64 = 600;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GpuSeen {
    pub index: u32,
    pub name: String,
    pub uuid: String,
    pub bus_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FindingSeen {
    pub label: String,
    pub severity: Severity,
    pub summary: String,
    pub action: String,
    pub runbook: Option<String>,
    pub gpu: Option<u32>,
    pub pci: Option<String>,
    pub uuid: Option<String>,
    pub first_seen_ms: u64,
    pub first_seen: String,
    pub last_seen_ms: u64,
    pub last_seen: String,
    pub evidence: Vec<String>,
}

/// One dated line of what happened.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Moment {
    pub at_ms: u64,
    pub at: String,
    pub what: String,
}

/// The kinds of [`EvidenceLine`], as `report.json` writes them: identifiers.
pub const KIND_KERNEL: &str = "kernel";
pub const KIND_LOST: &str = "lost";
pub const KIND_DISCONNECTED: &str = "disconnected";
pub const KIND_NOTICE: &str = "notice";
/// The file with `nvidia-smi -q` as the link took it at the host's first fault.
pub const SMI_Q_FILE: &str = "nvidia-smi-q.txt";

/// A line of text from the host, verbatim: a kernel line, a failure text, a link error.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EvidenceLine {
    pub at_ms: u64,
    pub at: String,
    /// `kernel`, `lost`, `disconnected` or `notice`.
    pub kind: &'static str,
    pub text: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Analysis {
    pub driver_version: Option<String>,
    pub cuda_version: Option<String>,
    pub gpus: Vec<GpuSeen>,
    pub findings: Vec<FindingSeen>,
    pub timeline: Vec<Moment>,
    pub timeline_left_out: usize,
    pub evidence: Vec<EvidenceLine>,
    /// The first GPU loss or critical finding.
    pub broken_since_ms: Option<u64>,
    pub samples: usize,
}

/// Folds `lines` (one host's, oldest first) through the engine.
pub fn analyse(host: &str, lines: &[Line]) -> Analysis {
    let mut out = Analysis::default();
    let Some(first) = lines.first() else {
        return out;
    };
    let interval_ms = sample_spacing_ms(lines);
    let options = FleetOptions {
        interval_ms,
        live: LiveOptions {
            interval_ms,
            ..LiveOptions::default()
        },
        ..FleetOptions::default()
    }
    .without_charts();
    let start_ms = at_of(first);
    let mut fleet = Fleet::new(vec![host.to_string()], options, start_ms);
    let mut next_refresh_ms = start_ms;
    let mut ended_seen = 0;
    for line in lines {
        let at_ms = at_of(line);
        // A second apart, then further and further apart: the refreshes are bounded by the
        // number of events, not by how far apart their stamps are.
        let mut steps: u64 = 0;
        let mut step_ms: u64 = 1_000;
        while next_refresh_ms < at_ms {
            refresh(&mut fleet, next_refresh_ms, &mut out, &mut ended_seen);
            steps += 1;
            if steps >= STEPS_AT_ONE_SECOND {
                step_ms = step_ms.saturating_mul(2);
            }
            next_refresh_ms = next_refresh_ms.saturating_add(step_ms);
        }
        if steps > 0 {
            // Back on the second grid after a long gap.
            next_refresh_ms = next_refresh_ms.min(at_ms.saturating_add(1_000));
        }
        note_event(line, at_ms, &mut out);
        fleet.apply(0, HostEvent::from(line.event.clone()));
    }
    refresh(&mut fleet, next_refresh_ms, &mut out, &mut ended_seen);
    // Moments come from events and from the refreshes between them, each on its own clock
    // (the reader's stamp, the refresh's step): told in time order, ties as they came.
    out.timeline.sort_by_key(|m| m.at_ms);
    out.broken_since_ms = out
        .evidence
        .iter()
        .filter(|e| e.kind == KIND_LOST)
        .map(|e| e.at_ms)
        .chain(
            out.findings
                .iter()
                .filter(|f| f.severity == Severity::Critical)
                .map(|f| f.first_seen_ms),
        )
        .min();
    out
}

/// The time an event happened: the source's stamp, else when it was recorded.
fn at_of(line: &Line) -> u64 {
    line.event.at_ms().unwrap_or(line.t_ms)
}

/// How far apart one GPU's samples are (a black box keeps one every few seconds), so the
/// findings do not call a host stale between them. At least a second.
fn sample_spacing_ms(lines: &[Line]) -> u64 {
    let mut stamps = lines.iter().filter_map(|l| match &l.event {
        Event::Sample { at_ms, gpu } if gpu.index == 0 => Some(*at_ms),
        _ => None,
    });
    let Some(mut previous) = stamps.next() else {
        return 1_000;
    };
    let mut gaps: Vec<u64> = Vec::new();
    for at in stamps.take(64) {
        gaps.push(at.saturating_sub(previous));
        previous = at;
    }
    gaps.sort_unstable();
    gaps.get(gaps.len() / 2)
        .copied()
        .unwrap_or(1_000)
        .max(1_000)
}

/// Refreshes the findings at `now_ms`: a new one goes into the findings and the timeline, and
/// one whose fault ended (`ended_seen` counts those told) into the timeline.
fn refresh(fleet: &mut Fleet, now_ms: u64, out: &mut Analysis, ended_seen: &mut u64) {
    fleet.advance_clock(now_ms);
    fleet.refresh_findings();
    let Some(host) = fleet.hosts.first() else {
        return;
    };
    let kept = host.faults.kept_total();
    let fresh = usize::try_from(kept - *ended_seen).unwrap_or(usize::MAX);
    *ended_seen = kept;
    let earlier = host.faults.earlier();
    let skip = earlier.len().saturating_sub(fresh);
    for e in earlier.skip(skip) {
        let gpu = e
            .finding
            .gpu
            .map(|g| t!("report_timeline.finding_gpu", gpu = g).into_owned())
            .unwrap_or_default();
        let why = crate::diagnose::live_earlier::end_words(e.cause);
        let what = t!(
            "report_timeline.ended",
            label = e.finding.label,
            gpu = gpu,
            why = why
        );
        moment(out, e.ended_ms, what.into_owned());
    }
    for f in &host.findings {
        let known = out
            .findings
            .iter_mut()
            .find(|seen| seen.label == f.label && seen.gpu == f.gpu);
        match known {
            Some(seen) => {
                seen.last_seen_ms = now_ms;
                seen.last_seen = rfc3339(now_ms);
            }
            None => {
                let gpu = f
                    .gpu
                    .map(|g| t!("report_timeline.finding_gpu", gpu = g).into_owned())
                    .unwrap_or_default();
                let severity = f.severity.said();
                let what = t!(
                    "report_timeline.finding",
                    severity = severity,
                    label = f.label,
                    gpu = gpu,
                    summary = f.summary
                );
                moment(out, now_ms, what.into_owned());
                out.findings.push(FindingSeen {
                    label: f.label.clone(),
                    severity: f.severity,
                    summary: f.summary.clone(),
                    action: f.action.clone(),
                    runbook: f.runbook.clone(),
                    gpu: f.gpu,
                    pci: f.pci.clone(),
                    uuid: f.uuid.clone(),
                    first_seen_ms: now_ms,
                    first_seen: rfc3339(now_ms),
                    last_seen_ms: now_ms,
                    last_seen: rfc3339(now_ms),
                    evidence: f.evidence.clone(),
                });
            }
        }
    }
}

fn moment(out: &mut Analysis, at_ms: u64, what: String) {
    if out.timeline.len() < MAX_TIMELINE {
        out.timeline.push(Moment {
            at_ms,
            at: rfc3339(at_ms),
            what,
        });
    } else {
        out.timeline_left_out += 1;
    }
}

fn evidence(out: &mut Analysis, at_ms: u64, kind: &'static str, text: &str) {
    out.evidence.push(EvidenceLine {
        at_ms,
        at: rfc3339(at_ms),
        kind,
        text: text.to_string(),
    });
}

fn note_event(line: &Line, at_ms: u64, out: &mut Analysis) {
    match &line.event {
        Event::Connected { info } => {
            out.driver_version = info.driver_version.clone().or(out.driver_version.take());
            out.cuda_version = info.cuda_version.clone().or(out.cuda_version.take());
            let driver = info.driver_version.as_deref().unwrap_or("?");
            moment(
                out,
                at_ms,
                t!("report_timeline.connected", driver = driver).into_owned(),
            );
        }
        Event::Sample { gpu, .. } => {
            out.samples += 1;
            if !out.gpus.iter().any(|g| g.index == gpu.index) {
                out.gpus.push(GpuSeen {
                    index: gpu.index,
                    name: gpu.name.to_string(),
                    uuid: gpu.uuid.to_string(),
                    bus_id: gpu.bus_id.to_string(),
                });
                out.gpus.sort_by_key(|g| g.index);
            }
        }
        Event::Kernel { line, .. } => evidence(out, at_ms, KIND_KERNEL, line),
        Event::Lost { reason, raw, .. } => {
            let reason = crate::telemetry::LostReason::from(*reason);
            // The status words the console shows for a lost host (`GPU lost`, `掉卡`).
            let key = format!("status.lost.{}", reason.word());
            let reason = t!(&key);
            moment(
                out,
                at_ms,
                t!("report_timeline.lost", reason = reason).into_owned(),
            );
            for text in raw.lines().filter(|l| !l.trim().is_empty()) {
                evidence(out, at_ms, KIND_LOST, text);
            }
        }
        Event::Disconnected { reason, .. } => {
            let what = t!("report_timeline.link_down", reason = reason);
            moment(out, at_ms, what.into_owned());
            evidence(out, at_ms, KIND_DISCONNECTED, reason);
        }
        Event::Unresponsive { silent_ms, .. } => moment(
            out,
            at_ms,
            t!("report_timeline.unresponsive", s = silent_ms / 1000).into_owned(),
        ),
        Event::Responsive { .. } => {
            moment(out, at_ms, t!("report_timeline.responsive").into_owned())
        }
        Event::Flooding {
            detail: Some(detail),
            ..
        } => moment(
            out,
            at_ms,
            t!("report_timeline.flooding", detail = detail).into_owned(),
        ),
        Event::Notice { text, .. } => evidence(out, at_ms, KIND_NOTICE, text),
        Event::Evidence {
            command, output, ..
        } => moment(
            out,
            at_ms,
            t!(
                "report_timeline.evidence_taken",
                command = command,
                lines = output.lines().count(),
                file = SMI_Q_FILE
            )
            .into_owned(),
        ),
        Event::Boot { boot_id, .. } => moment(
            out,
            at_ms,
            t!("report_timeline.boot", boot_id = boot_id.0.to_string()).into_owned(),
        ),
        Event::Connecting { .. }
        | Event::Processes { .. }
        | Event::Jobs { .. }
        | Event::JobLog { .. }
        | Event::Disk { .. }
        | Event::DeadMan { .. }
        | Event::HostKind { .. }
        | Event::Flooding { detail: None, .. } => {}
    }
}
