//! What the live rules measure over: their thresholds ([`LiveOptions`]), a GPU's points of a
//! window each weighted by the time it stands for, and how long a condition held inside a window.

use crate::fleet::history::HistoryPoint;
use crate::fleet::host::GpuState;

/// Thresholds for the live findings; the defaults are what the console uses.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveOptions {
    /// The expected sample interval: data older than two intervals is stale.
    pub interval_ms: u64,
    pub idle_util_pct: f64,
    pub idle_minutes: u64,
    /// How much work a GPU may do inside the idle window and still count as idle.
    pub idle_blip_s: u64,
    /// The window a duration condition is measured in.
    pub window_s: u64,
    pub thermal_min_s: u64,
    pub power_brake_min_s: u64,
    pub power_throttle_min_s: u64,
    /// How long a raised duration finding outlives its condition.
    pub hold_s: u64,
    pub kernel_minutes: u64,
    /// The window a job's use of its GPUs is judged over (`input_bound`, `card_oversized`,
    /// `card_undersized`); the condition must hold for nine tenths of it.
    pub job_window_s: u64,
    /// `input_bound`: GPU utilization under this while the process keeps at least
    /// `input_cpu_cores` busy.
    pub input_util_pct: f64,
    pub input_cpu_cores: f64,
    /// `card_oversized`: memory under this and utilization under `oversized_util_pct`.
    pub oversized_vram_pct: f64,
    pub oversized_util_pct: f64,
    /// `card_undersized`: memory at or above this.
    pub undersized_vram_pct: f64,
}

impl Default for LiveOptions {
    fn default() -> Self {
        Self {
            interval_ms: 1000,
            idle_util_pct: 5.0,
            idle_minutes: 10,
            idle_blip_s: 15,
            window_s: 60,
            thermal_min_s: 30,
            power_brake_min_s: 10,
            power_throttle_min_s: 30,
            hold_s: 60,
            kernel_minutes: 60,
            job_window_s: 120,
            input_util_pct: 20.0,
            input_cpu_cores: 0.5,
            oversized_vram_pct: 25.0,
            oversized_util_pct: 30.0,
            undersized_vram_pct: 95.0,
        }
    }
}

/// Points of one GPU from `since_ms` to `now_ms`, each with the time it stands for: the gap
/// since the previous point, capped so a stall in the stream is not read as a long state.
pub(crate) fn timed_points(
    gpu: &GpuState,
    since_ms: u64,
    now_ms: u64,
    opts: &LiveOptions,
) -> Vec<(HistoryPoint, u64)> {
    let mut out: Vec<_> = newest_first(gpu, since_ms, now_ms, opts).collect();
    out.reverse();
    out
}

/// Whether any point of one GPU from `since_ms` to `now_ms` meets `cond`: one pass that stops at
/// the first, keeping nothing (most GPUs meet no rule, once a second, on every host).
pub(crate) fn any_point(
    gpu: &GpuState,
    since_ms: u64,
    now_ms: u64,
    opts: &LiveOptions,
    cond: &dyn Fn(&HistoryPoint) -> bool,
) -> bool {
    newest_first(gpu, since_ms, now_ms, opts).any(|(p, _)| cond(&p))
}

/// How long each of `conds` held in all from `since_ms` to `now_ms` (ms, the points' weights
/// summed), in one pass that keeps nothing. A condition cannot have held for a stretch of a
/// window longer than this, so a rule asks for the points only when it is long enough: a job's
/// GPUs are judged every second, and most meet no rule.
pub(crate) fn total_held_ms<const N: usize>(
    gpu: &GpuState,
    since_ms: u64,
    now_ms: u64,
    opts: &LiveOptions,
    conds: [&dyn Fn(&HistoryPoint) -> bool; N],
) -> [u64; N] {
    let mut held_ms = [0u64; N];
    for (p, weight_ms) in newest_first(gpu, since_ms, now_ms, opts) {
        for (cond, total) in conds.iter().zip(held_ms.iter_mut()) {
            if cond(&p) {
                *total += weight_ms;
            }
        }
    }
    held_ms
}

/// [`timed_points`] from the newest back, decoded one at a time: the windows are a tail of a
/// long history, and a caller may stop early.
fn newest_first<'a>(
    gpu: &'a GpuState,
    since_ms: u64,
    now_ms: u64,
    opts: &LiveOptions,
) -> impl Iterator<Item = (HistoryPoint, u64)> + 'a {
    let cap = 2 * opts.interval_ms.max(1000);
    let first_weight = opts.interval_ms.max(1000);
    let mut older = gpu
        .history
        .points()
        .rev()
        .skip_while(move |p| p.at_ms > now_ms)
        .peekable();
    std::iter::from_fn(move || {
        let p = older.next().filter(|p| p.at_ms >= since_ms)?;
        // Each point's weight needs only the point before it.
        let weight = older.peek().map_or(first_weight, |prev| {
            p.at_ms.saturating_sub(prev.at_ms).min(cap)
        });
        Some((p, weight))
    })
}

/// The longest time `cond` held inside one window that ends at a sample of the last `hold_s`,
/// when that time reaches `min_s`.
pub(crate) fn sustained(
    points: &[(HistoryPoint, u64)],
    cond: &dyn Fn(&HistoryPoint) -> bool,
    now_ms: u64,
    min_s: u64,
    opts: &LiveOptions,
) -> Option<u64> {
    let window_ms = opts.window_s.max(1) * 1000;
    let hold_start = now_ms.saturating_sub(opts.hold_s * 1000);
    let mut best: Option<u64> = None;
    let mut start = 0;
    let mut active_ms = 0u64;
    for end in 0..points.len() {
        let (p, w) = &points[end];
        if cond(p) {
            active_ms += w;
        }
        while points[start].0.at_ms + window_ms <= p.at_ms {
            let (q, qw) = &points[start];
            if cond(q) {
                active_ms = active_ms.saturating_sub(*qw);
            }
            start += 1;
        }
        if p.at_ms >= hold_start && active_ms >= min_s * 1000 {
            best = Some(best.map_or(active_ms, |b| b.max(active_ms)));
        }
    }
    best
}
