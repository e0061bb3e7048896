//! Findings from a host's live state: its link, the per-second history of each GPU, the latest
//! samples and the kernel lines its source forwarded.
//!
//! Everything here is a pure function of the host and the clock, so the same host at the same
//! time always gives the same findings; hysteresis comes from looking back over the history
//! instead of from stored state:
//!
//! - A duration finding (thermal, power brake, power cap) is **raised** when its condition held
//!   for at least its minimum (e.g. 30 s) within the `window_s` seconds ending at some sample.
//! - It **stays** raised while any sample of the last `hold_s` seconds still ends such a window,
//!   so it clears only after the condition has been false, or too rare, for `hold_s` seconds.
//!   A brief blip never reaches the minimum and raises nothing.
//! - `idle_billing` is raised when every GPU stayed under `idle_util_pct` for the last
//!   `idle_minutes`, allowing each GPU up to `idle_blip_s` seconds of work (a probe, a short
//!   test) so that a blip neither hides nor clears it; sustained work clears it.
//! - Kernel-line findings count lines of the last `kernel_minutes`, until their fault ends (a
//!   new boot, or the GPUs stream again after they were lost: `live_earlier.rs`).

use std::borrow::Cow;

use rust_i18n::t;

use crate::diagnose::finding::{Finding, Findings, label, xid_label};
use crate::diagnose::kernel::GpuResolver;
use crate::diagnose::pci::normalize_pci;
use crate::diagnose::text::TextDiagnoser;
use crate::diagnose::{accel, labels, labels_ascend, order, rules};
use crate::fleet::history::HistoryPoint;
use crate::fleet::host::{GpuState, HostState, HostStatus, Link};
use crate::telemetry::{LostReason, TimestampMs};

pub use crate::diagnose::live_window::LiveOptions;
pub(crate) use crate::diagnose::live_window::{any_point, sustained, timed_points};

/// The findings for `host` at `now_ms`, most severe first.
pub fn live_findings(host: &HostState, now_ms: u64, opts: &LiveOptions) -> Vec<Finding> {
    let mut fit = Findings::default();
    crate::diagnose::live_fit::jobs_on_gpus(host, now_ms, opts, &mut fit);
    live_findings_judged(host, now_ms, opts, &fit.into_items())
}

/// As [`live_findings`], with the jobs' use of their GPUs as judged already (the fleet keeps
/// that for a few seconds: [`crate::diagnose::live_fit::JobFitMemo`]).
pub fn live_findings_judged(
    host: &HostState,
    now_ms: u64,
    opts: &LiveOptions,
    job_fit: &[Finding],
) -> Vec<Finding> {
    let mut out = Findings::default();
    link(host, now_ms, opts, &mut out);
    kernel_lines(host, now_ms, opts, &mut out);
    for gpu in &host.gpus {
        per_gpu(gpu, now_ms, opts, &mut out);
        if let Some(f) = accel::health(gpu) {
            out.push(f);
        }
    }
    lost_again(host, &mut out);
    idle(host, now_ms, opts, &mut out);
    crate::diagnose::live_disk::disks(host, now_ms, &mut out);
    crate::diagnose::live_jobs::jobs(host, now_ms, &mut out);
    out.extend(job_fit.iter().cloned());
    order::root_cause_first(out)
}

fn link(host: &HostState, now_ms: u64, opts: &LiveOptions, out: &mut Findings) {
    if let Link::Lost { reason, raw, .. } = &host.link {
        out.push(lost_finding(host, *reason, raw));
        return;
    }
    // A link that just dropped still has data from the last interval; only older data is stale.
    let age_ms = match host.status(now_ms, opts.interval_ms) {
        HostStatus::Stale { age_ms } => Some(age_ms),
        // A host that cannot be reached keeps its last figures: say how old they are.
        HostStatus::Unreachable { .. } => host.last_sample_ms.map(|at| now_ms.saturating_sub(at)),
        _ => None,
    };
    if let Some(age_ms) = age_ms
        && age_ms > 2 * opts.interval_ms
    {
        let why = match &host.link {
            Link::Down { .. } => t!(
                "live_evidence.link_down",
                reason = host
                    .down_reason()
                    .map(|w| w.localized())
                    .unwrap_or_default()
            ),
            Link::Connecting { .. } => t!("live_evidence.reconnecting"),
            _ => Cow::Borrowed(""),
        };
        let s = age_ms / 1000;
        let line = t!("live_evidence.last_sample", s = s, why = why);
        out.push(labels::stale().with_evidence(&line));
    }
}

/// The finding of GPUs that cannot be read, from the link's reason and the failure text.
pub(crate) fn lost_finding(host: &HostState, reason: LostReason, raw: &str) -> Finding {
    if let Some(mut f) = accel::unsupported_output(raw) {
        // A vendor failure text gpufleet knows (npu-smi's dcmi errors) is named, not just
        // "unsupported output".
        let mut text = TextDiagnoser::default();
        for line in raw.lines() {
            text.line(line);
        }
        if let Some(named) = text
            .finish_with(&HostResolver(host))
            .findings
            .into_iter()
            .find(|t| labels_ascend::LABELS.contains(&t.label.as_str()))
        {
            f = Finding {
                evidence: f.evidence,
                ..named
            };
        }
        return f;
    }
    let mut f = labels::for_lost_reason(reason);
    // The same catalogue as pasted text: a finer label of the same family (nvml_error ->
    // nvml_error_unknown) and the GPU the text names.
    let mut text = TextDiagnoser::default();
    for line in raw.lines() {
        text.line(line);
    }
    let finer = text
        .finish_with(&HostResolver(host))
        .findings
        .into_iter()
        .find(|t| t.label.starts_with(f.label.as_str()));
    if let Some(t) = finer {
        f = Finding {
            evidence: Vec::new(),
            ..t
        };
    }
    for line in raw.lines() {
        f.add_evidence(line);
    }
    if f.evidence.is_empty() {
        let why = reason.words().localized();
        f.add_evidence(&t!("live_evidence.telemetry_stopped", why = why));
    }
    f
}

/// Maps a kernel line's PCI tuple or UUID to the index of the host's GPU with that bus id.
pub(crate) struct HostResolver<'a>(pub(crate) &'a HostState);

impl GpuResolver for HostResolver<'_> {
    fn gpu_index(&self, pci: Option<&str>, uuid: Option<&str>) -> Option<u32> {
        self.0
            .gpus
            .iter()
            .find(|g| {
                let by_pci =
                    pci.is_some_and(|p| normalize_pci(&g.latest.bus_id).as_deref() == Some(p));
                let by_uuid =
                    uuid.is_some_and(|u| !g.latest.uuid.is_empty() && *g.latest.uuid == *u);
                by_pci || by_uuid
            })
            .map(|g| g.latest.index)
    }
}

/// The recent kernel lines go through the same matcher as pasted text ([`TextDiagnoser`]), so
/// the console and `gpufleet diagnose` raise the same findings for the same lines.
fn kernel_lines(host: &HostState, now_ms: u64, opts: &LiveOptions, out: &mut Findings) {
    let since = now_ms.saturating_sub(opts.kernel_minutes * 60_000);
    let mut diagnoser = TextDiagnoser::default();
    for (_, line) in host.kernel_lines.iter().filter(|(at, _)| *at >= since) {
        diagnoser.line(line);
    }
    out.extend(diagnoser.finish_with(&HostResolver(host)).findings);
}

fn per_gpu(gpu: &GpuState, now_ms: u64, opts: &LiveOptions, out: &mut Findings) {
    let index = gpu.latest.index;
    let who = format!("GPU {index}");
    let lookback = (opts.window_s + opts.hold_s) * 1000;
    let since_ms = now_ms.saturating_sub(lookback);
    let slowdown = gpu.latest.temperature_slowdown_c;
    let default_w = gpu
        .latest
        .power_default_limit_w
        .or(gpu.latest.power_max_limit_w);
    let mask = |p: &HistoryPoint| p.clock_event_reasons();
    let thermal =
        |p: &HistoryPoint| rules::thermal(mask(p), p.temperature_c().map(f64::from), slowdown);
    let brake = |p: &HistoryPoint| rules::power_brake(mask(p));
    let capped = |p: &HistoryPoint| capped_at(p, default_w).is_some();
    // A window in which no point meets a rule raises none of them (each needs its minimum
    // time, above zero), so the points are only gathered when one does.
    let mins_above_zero =
        opts.thermal_min_s > 0 && opts.power_brake_min_s > 0 && opts.power_throttle_min_s > 0;
    let any_met = |p: &HistoryPoint| thermal(p) || brake(p) || capped(p);
    // What the conditions read besides the points: a change of either reads them all again.
    let bits = |v: Option<f64>| v.map_or(u64::MAX, f64::to_bits);
    let key = [bits(slowdown), bits(default_w)];
    let met = || {
        gpu.history
            .any_met_since(key, since_ms, now_ms, &any_met)
            .unwrap_or_else(|| any_point(gpu, since_ms, now_ms, opts, &any_met))
    };
    let points = if mins_above_zero && !met() {
        Vec::new()
    } else {
        timed_points(gpu, since_ms, now_ms, opts)
    };
    let window = opts.window_s;

    if let Some(ms) = sustained(&points, &thermal, now_ms, opts.thermal_min_s, opts) {
        let hardware = points.iter().any(|(p, _)| rules::hw_thermal(mask(p)));
        let peak = points
            .iter()
            .filter_map(|(p, _)| p.temperature_c())
            .fold(f32::MIN, f32::max);
        let peak = if peak > f32::MIN {
            let peak = format!("{peak:.0}");
            t!("live_evidence.peak", peak = peak).into_owned()
        } else {
            String::new()
        };
        let s = ms / 1000;
        let line = t!(
            "live_evidence.thermal",
            who = who,
            s = s,
            window = window,
            peak = peak
        );
        out.push(
            labels::thermal_throttle(hardware)
                .on_gpu(Some(index))
                .with_evidence(&line),
        );
    }
    if let Some(ms) = sustained(&points, &brake, now_ms, opts.power_brake_min_s, opts) {
        let s = ms / 1000;
        let line = t!("live_evidence.brake", who = who, s = s, window = window);
        out.push(
            labels::power_brake()
                .on_gpu(Some(index))
                .with_evidence(&line),
        );
    }
    if let Some(ms) = sustained(&points, &capped, now_ms, opts.power_throttle_min_s, opts) {
        let latest = points
            .iter()
            .rev()
            .find_map(|(p, _)| capped_at(p, default_w));
        let what = latest.map_or_else(
            || t!("live_evidence.power_cap").into_owned(),
            |c| c.describe(),
        );
        let s = ms / 1000;
        let line = t!(
            "live_evidence.capped",
            who = who,
            what = what,
            s = s,
            window = window
        );
        out.push(
            labels::power_throttle()
                .on_gpu(Some(index))
                .with_evidence(&line),
        );
    }
    if let Some(n) = gpu.latest.ecc_uncorrected_volatile.filter(|n| *n > 0) {
        out.push(
            labels::ecc_uncorrectable()
                .on_gpu(Some(index))
                .with_evidence(&t!("live_evidence.ecc", who = who, n = n)),
        );
    }
    if gpu.latest.retired_pages_pending == Some(true) {
        out.push(
            labels::retired_pages_pending()
                .on_gpu(Some(index))
                .with_evidence(&t!("live_evidence.pages_pending", who = who)),
        );
    }
}

fn capped_at(p: &HistoryPoint, default_w: Option<f64>) -> Option<rules::PowerCap> {
    rules::power_capped(
        p.clock_event_reasons(),
        p.power_draw_w().map(f64::from),
        p.power_limit_w().map(f64::from),
        default_w,
    )
}

fn idle(host: &HostState, now_ms: u64, opts: &LiveOptions, out: &mut Findings) {
    if host.gpus.is_empty() || host.link != Link::Up {
        return;
    }
    let idle_ms = opts.idle_minutes * 60_000;
    let since = now_ms.saturating_sub(idle_ms);
    let slack = 2 * opts.interval_ms.max(1000);
    let mut evidence = Vec::new();
    let blip_ms = opts.idle_blip_s * 1000;
    for gpu in &host.gpus {
        // The idle trail (10-second buckets over the idle window) and the newest point, which
        // the trail takes once the next one arrives.
        let (trail, newest) = gpu.history.idle();
        // Without a trail reaching back over the whole window, idleness is not shown yet.
        let covers = trail
            .first_ms()
            .or(newest.map(|(p, _)| p.at_ms))
            .is_some_and(|first| first <= since + slack);
        let Some((newest, newest_weight)) = newest else {
            return;
        };
        if !covers || now_ms.saturating_sub(newest.at_ms) > slack {
            return;
        }
        let newest_util = newest.utilization_gpu_pct();
        let mut busy_ms = if trail.is_busy(newest_util) {
            newest_weight
        } else {
            0
        };
        // Ends as soon as the GPU proves busy (most GPUs, most of the time).
        let window = trail.window(since, blip_ms.saturating_sub(busy_ms));
        busy_ms += window.busy_ms;
        if busy_ms > blip_ms {
            return;
        }
        let peak = window.peak_pct.max(newest_util.unwrap_or(0.0));
        let memory = gpu
            .latest
            .memory_used_mib
            .map(|m| t!("live_evidence.memory", mib = m).into_owned())
            .unwrap_or_default();
        let (index, min) = (gpu.latest.index, opts.idle_minutes);
        let peak = format!("{peak:.0}");
        let line = t!(
            "live_evidence.idle",
            index = index,
            peak = peak,
            min = min,
            memory = memory
        );
        evidence.push(line.into_owned());
    }
    let mut f = labels::idle_billing();
    for line in &evidence {
        f.add_evidence(line);
    }
    if !host.processes.is_empty() {
        let n = host.processes.len();
        f.add_evidence(&t!("live_evidence.processes", n = n));
    }
    out.push(f);
}

/// Whether a finding says a GPU was lost (fell off the bus, or the link could not read it).
pub fn is_lost_gpu(label_name: &str) -> bool {
    label_name == label::GPU_LOST || label_name == xid_label(79)
}

/// `gpu_lost_again` when the host lost a GPU twice or more: the faults that ended and lost
/// one, and the one going on now if it does. `out` holds the host's other live findings.
pub fn lost_again(host: &HostState, out: &mut Findings) {
    let now = out.contains(label::GPU_LOST) || out.contains(&xid_label(79));
    let n = host.faults.losses() + u32::from(now);
    if n < 2 {
        return;
    }
    let mut f = crate::diagnose::labels_host::gpu_lost_again();
    f.add_evidence(&crate::words::Words::counted("live_evidence.lost_count", n as u64).localized());
    for e in host
        .faults
        .earlier()
        .rev()
        .filter(|e| is_lost_gpu(&e.finding.label))
    {
        let (time, ended) = (clock(e.at_ms), clock(e.ended_ms));
        f.add_evidence(&t!(
            "live_evidence.lost_earlier",
            label = e.finding.label,
            time = time,
            ended = ended
        ));
    }
    out.push(f);
}

/// `14:03:07`, the UTC time of day (as the console shows times).
fn clock(unix_ms: TimestampMs) -> String {
    let (_, _, _, hour, minute, second, _) = crate::utc::utc_parts(unix_ms);
    format!("{hour:02}:{minute:02}:{second:02}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::history::{History, Readings};

    /// The definition, walked from the oldest point: each point weighs the gap since the one
    /// before it (capped), the first point one interval.
    fn reference(gpu: &GpuState, since: u64, now: u64, opts: &LiveOptions) -> Vec<(u64, u64)> {
        let cap = 2 * opts.interval_ms.max(1000);
        let mut previous: Option<u64> = None;
        let mut out = Vec::new();
        for p in gpu.history.points() {
            let weight = previous.map_or(opts.interval_ms.max(1000), |prev| {
                p.at_ms.saturating_sub(prev).min(cap)
            });
            previous = Some(p.at_ms);
            if p.at_ms >= since && p.at_ms <= now {
                out.push((p.at_ms, weight));
            }
        }
        out
    }

    #[test]
    fn an_npu_smi_dcmi_failure_over_ssh_is_named_with_its_lines() {
        let host = HostState::new("npu", crate::fleet::FleetOptions::default().history_shape());
        // What the link reports when npu-smi prints the published -8005 failure.
        let raw = "unsupported output from npu-smi: no `npu-smi VERSION` title line; first lines: \
                   DrvMngGetConsoleLogLevel failed. (g_conLogLevel=3) | dcmi module initialize \
                   failed. ret is -8005";
        let f = lost_finding(&host, LostReason::Other, raw);
        assert_eq!(f.label, labels_ascend::NPU_DCMI_INIT_FAILED);
        assert!(
            f.evidence.iter().any(|e| e.contains("ret is -8005")),
            "{f:?}"
        );
        // Output no known text explains stays "unsupported output".
        let other = "unsupported output from npu-smi 99.0: unknown table header; first lines: a";
        let f = lost_finding(&host, LostReason::Other, other);
        assert_eq!(f.label, accel::ACCEL_UNSUPPORTED_OUTPUT);
    }

    #[test]
    fn timed_points_from_the_newest_match_the_definition() {
        let mut history = History::with_capacity(600);
        // Steady seconds, a 7 s stall, then steady again.
        let times = (0..40u64)
            .map(|s| s * 1000)
            .chain((47..90).map(|s| s * 1000 + 250));
        for at_ms in times {
            history.push(HistoryPoint::new(
                at_ms,
                &Readings {
                    utilization_gpu_pct: Some(50.0),
                    ..Readings::default()
                },
            ));
        }
        let gpu = GpuState {
            latest: Default::default(),
            at_ms: 89_250,
            history,
        };
        let opts = LiveOptions::default();
        for (since, now) in [
            (0, 100_000),
            (30_000, 60_000),
            (47_250, 47_250),
            (0, 0),
            (95_000, 99_000),
        ] {
            let got: Vec<(u64, u64)> = timed_points(&gpu, since, now, &opts)
                .iter()
                .map(|(p, w)| (p.at_ms, *w))
                .collect();
            assert_eq!(got, reference(&gpu, since, now, &opts), "{since}..{now}");
        }
    }

    /// The total a rule's pre-check reads is never less than the longest stretch `sustained`
    /// finds inside one window, so skipping a GPU whose total is short drops no finding; and it
    /// is the sum of the weights of the points that meet the condition.
    #[test]
    fn the_total_held_bounds_every_window_and_is_the_weights_summed() {
        let mut history = History::with_capacity(600);
        // Utilization that dips under 30 % in runs of varying length, with stalls.
        let mut at_ms = 0u64;
        for i in 0..400u64 {
            at_ms += if i % 97 == 0 { 6_000 } else { 1_000 };
            let util: f64 = if (i / 13) % 3 == 0 {
                90.0
            } else {
                10.0 + (i % 7) as f64
            };
            history.push(HistoryPoint::new(
                at_ms,
                &Readings {
                    utilization_gpu_pct: Some(util),
                    ..Readings::default()
                },
            ));
        }
        let gpu = GpuState {
            latest: Default::default(),
            at_ms,
            history,
        };
        let opts = LiveOptions {
            window_s: 120,
            hold_s: 60,
            ..LiveOptions::default()
        };
        let low = |p: &HistoryPoint| p.utilization_gpu_pct().is_some_and(|u| u < 30.0);
        let busy = |p: &HistoryPoint| !low(p);
        for now in (200_000..=at_ms).step_by(7_000) {
            let since = now - 180_000;
            let points = timed_points(&gpu, since, now, &opts);
            let [low_ms, busy_ms] =
                crate::diagnose::live_window::total_held_ms(&gpu, since, now, &opts, [&low, &busy]);
            let summed = |cond: &dyn Fn(&HistoryPoint) -> bool| -> u64 {
                points.iter().filter(|(p, _)| cond(p)).map(|(_, w)| w).sum()
            };
            assert_eq!(low_ms, summed(&low), "at {now}");
            assert_eq!(busy_ms, summed(&busy), "at {now}");
            assert!(low_ms > 0 && busy_ms > 0, "the history mixes both at {now}");
            let longest = sustained(&points, &low, now, 0, &opts).unwrap_or(0);
            assert!(longest <= low_ms, "at {now}: {longest} > {low_ms}");
        }
    }
}
