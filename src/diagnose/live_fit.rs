//! How a live job uses its GPUs, judged over `job_window_s` with the duration
//! rules' window and hold ([`crate::diagnose::live`]): a condition raises its finding once it
//! held for nine tenths of the window, and the finding stays for `hold_s` after.
//!
//! - `input_bound`: the GPUs stay under `input_util_pct` while the job's process keeps at
//!   least `input_cpu_cores` busy (its CPU time between two probes): the GPU waits for data.
//! - `card_oversized`: memory under `oversized_vram_pct` and utilization under
//!   `oversized_util_pct`: a smaller card from [`crate::job::gpus`] would do (one with BF16,
//!   so that the job keeps its precision: a V100 is never proposed).
//! - `card_undersized`: memory at or above `undersized_vram_pct`: out-of-memory risk.
//!
//! A job's GPUs are those the process list shows its PID on; when none does, those of the GPU
//! devices it holds (a job found inside a container); when none is known, all of the host's
//! GPUs.

use crate::diagnose::finding::{Finding, Findings};
use crate::diagnose::labels_fit::{self, CardNeed, Waste};
use crate::diagnose::live_window::{LiveOptions, sustained, timed_points, total_held_ms};
use crate::fleet::history::HistoryPoint;
use crate::fleet::host::{GpuState, HostState, Link};
use crate::fleet::job::TrackedJob;
use crate::job::gpus::{GPU_MODELS, GpuModel, model_for};

/// Bytes in a MiB, and in a GB as the datasheets count.
const MIB_BYTES: f64 = 1_048_576.0;
const GB_BYTES: f64 = 1e9;
/// The share of a card's memory a job should need at most (the guide's 70 % rule, as `fit`).
const FIT_SHARE: f64 = 0.7;

/// How often the fleet judges its jobs' use of their GPUs again ([`JobFitMemo`]). The rules
/// look over a 2-minute window and want nine tenths of it, so a finding comes at most this
/// much later and its figures move in steps of this size; reading 8 GPUs' 3 minutes of points
/// for every job every second was the largest part of what a job cost the console.
pub const JOB_FIT_EVERY_MS: u64 = 5_000;

/// One host's jobs' use of their GPUs as last judged, kept for [`JOB_FIT_EVERY_MS`] while the
/// same jobs live on a host whose link is up (any change judges again at once).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JobFitMemo {
    at_ms: Option<u64>,
    /// The live jobs' PIDs and whether the link was up when judged.
    key: (Vec<u32>, bool),
    findings: Vec<Finding>,
}

impl JobFitMemo {
    /// Judges `host`'s jobs again when due; the findings as last judged.
    pub fn refresh(&mut self, host: &HostState, now_ms: u64, opts: &LiveOptions) -> &[Finding] {
        let key = (
            host.jobs
                .iter()
                .filter(|j| j.alive())
                .map(|j| j.process.pid)
                .collect::<Vec<_>>(),
            host.link == Link::Up,
        );
        let due = match self.at_ms {
            None => true,
            Some(at) => now_ms < at || now_ms - at >= JOB_FIT_EVERY_MS || key != self.key,
        };
        if due {
            let mut out = Findings::default();
            jobs_on_gpus(host, now_ms, opts, &mut out);
            self.findings = out.into_items();
            self.at_ms = Some(now_ms);
            self.key = key;
        }
        &self.findings
    }
}

/// Adds the findings of each live job's use of its GPUs to `out`.
pub(crate) fn jobs_on_gpus(host: &HostState, now_ms: u64, opts: &LiveOptions, out: &mut Findings) {
    if host.link != Link::Up || host.gpus.is_empty() {
        return;
    }
    let window = LiveOptions {
        window_s: opts.job_window_s.max(1),
        ..opts.clone()
    };
    for job in host.jobs.iter().filter(|j| j.alive()) {
        let gpus = job_gpus(host, job);
        input_bound(host, job, &gpus, now_ms, &window, out);
        for gpu in &gpus {
            card_size(host, gpu, job.process.pid, now_ms, &window, out);
        }
    }
}

/// The GPUs the process list shows the job's PID on, else those of the devices it holds, or
/// all of them.
fn job_gpus<'a>(host: &'a HostState, job: &TrackedJob) -> Vec<&'a GpuState> {
    let pid = job.process.pid;
    let listed = |g: &&GpuState| {
        host.processes
            .iter()
            .any(|p| p.pid == pid && *p.gpu_uuid == *g.latest.uuid)
    };
    let mut on: Vec<&GpuState> = host
        .gpus
        .iter()
        .filter(|g| !g.latest.uuid.is_empty() && listed(g))
        .collect();
    if on.is_empty() {
        on = host
            .gpus
            .iter()
            .filter(|g| !g.latest.uuid.is_empty() && job.process.holds_gpu(&g.latest.uuid))
            .collect();
    }
    if on.is_empty() {
        host.gpus.iter().collect()
    } else {
        on
    }
}

/// The points the window and hold look back over.
fn points(gpu: &GpuState, now_ms: u64, opts: &LiveOptions) -> Vec<(HistoryPoint, u64)> {
    let lookback_ms = (opts.window_s + opts.hold_s) * 1000;
    timed_points(gpu, now_ms.saturating_sub(lookback_ms), now_ms, opts)
}

/// Whether any of `conds` held long enough in all over the window and hold to have held nine
/// tenths of one window: when none did, no rule can be met and the points are not gathered.
fn may_hold<const N: usize>(
    gpu: &GpuState,
    now_ms: u64,
    opts: &LiveOptions,
    conds: [&dyn Fn(&HistoryPoint) -> bool; N],
) -> bool {
    let lookback_ms = (opts.window_s + opts.hold_s) * 1000;
    let min_ms = (opts.window_s * 9).div_ceil(10) * 1000;
    let since_ms = now_ms.saturating_sub(lookback_ms);
    total_held_ms(gpu, since_ms, now_ms, opts, conds)
        .iter()
        .any(|&ms| ms >= min_ms)
}

/// Seconds `cond` held within one window ending in the hold, when it held nine tenths of it.
fn held(
    points: &[(HistoryPoint, u64)],
    cond: &dyn Fn(&HistoryPoint) -> bool,
    now_ms: u64,
    opts: &LiveOptions,
) -> Option<u64> {
    let min_s = (opts.window_s * 9).div_ceil(10);
    sustained(points, cond, now_ms, min_s, opts).map(|ms| ms / 1000)
}

/// The mean of `value` over the last window's points.
fn mean_in_window(
    points: &[(HistoryPoint, u64)],
    value: &dyn Fn(&HistoryPoint) -> Option<f32>,
    now_ms: u64,
    opts: &LiveOptions,
) -> Option<f64> {
    let since = now_ms.saturating_sub(opts.window_s * 1000);
    let values: Vec<f64> = points
        .iter()
        .filter(|(p, _)| p.at_ms >= since)
        .filter_map(|(p, _)| value(p).map(f64::from))
        .collect();
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

fn input_bound(
    host: &HostState,
    job: &TrackedJob,
    gpus: &[&GpuState],
    now_ms: u64,
    opts: &LiveOptions,
    out: &mut Findings,
) {
    let lookback_ms = (opts.window_s + opts.hold_s) * 1000;
    let Some(cpu) = job
        .cpu
        .use_since(now_ms.saturating_sub(lookback_ms), now_ms)
    else {
        return;
    };
    // Two probes a few seconds apart count whole CPU seconds too coarsely to judge.
    if cpu.span_ms < 10_000 || cpu.cores < opts.input_cpu_cores {
        return;
    }
    let low = |p: &HistoryPoint| {
        p.utilization_gpu_pct()
            .is_some_and(|u| f64::from(u) < opts.input_util_pct)
    };
    if !gpus.iter().all(|gpu| may_hold(gpu, now_ms, opts, [&low])) {
        return;
    }
    let mut lines = Vec::new();
    let mut utils = Vec::new();
    for gpu in gpus {
        let points = points(gpu, now_ms, opts);
        let Some(s) = held(&points, &low, now_ms, opts) else {
            return;
        };
        let util =
            mean_in_window(&points, &|p| p.utilization_gpu_pct(), now_ms, opts).unwrap_or(0.0);
        utils.push(util);
        lines.push(labels_fit::low_util_line(
            gpu.latest.index,
            util,
            s,
            opts.window_s,
        ));
    }
    let util = utils.iter().sum::<f64>() / utils.len().max(1) as f64;
    // The job's share of the host: its GPUs of all the host's.
    let share = gpus.len() as f64 / host.gpus.len().max(1) as f64;
    let waste = host.jobs.price().map(|p| Waste {
        per_hour: p.price_per_hour * share * (1.0 - util / 100.0).clamp(0.0, 1.0),
        currency: p.currency.clone(),
    });
    let mut f = labels_fit::input_bound(job.process.pid, cpu.cores, util, waste.as_ref());
    if let [gpu] = gpus {
        f = f.on_gpu(Some(gpu.latest.index));
    }
    for line in &lines {
        f.add_evidence(line);
    }
    f.add_evidence(&labels_fit::cpu_line(
        job.process.pid,
        cpu.cores,
        cpu.span_ms / 1000,
    ));
    out.push(f);
}

fn card_size(
    host: &HostState,
    gpu: &GpuState,
    pid: u32,
    now_ms: u64,
    opts: &LiveOptions,
    out: &mut Findings,
) {
    let full = |p: &HistoryPoint| {
        p.memory_used_pct()
            .is_some_and(|m| f64::from(m) >= opts.undersized_vram_pct)
    };
    let roomy = |p: &HistoryPoint| {
        p.memory_used_pct()
            .is_some_and(|m| f64::from(m) < opts.oversized_vram_pct)
            && p.utilization_gpu_pct()
                .is_some_and(|u| f64::from(u) < opts.oversized_util_pct)
    };
    if !may_hold(gpu, now_ms, opts, [&full, &roomy]) {
        return;
    }
    let points = points(gpu, now_ms, opts);
    let index = gpu.latest.index;
    if let Some(s) = held(&points, &full, now_ms, opts) {
        let peak = peak_memory_pct(&points);
        let larger = model_for(&gpu.latest.name).and_then(larger_than);
        let f = labels_fit::card_undersized(pid, larger)
            .on_gpu(Some(index))
            .with_evidence(&labels_fit::memory_line(index, peak, s, opts.window_s));
        out.push(f);
        return;
    }
    let Some(s) = held(&points, &roomy, now_ms, opts) else {
        return;
    };
    let Some(total_mib) = gpu.latest.memory_total_mib else {
        return;
    };
    let current = model_for(&gpu.latest.name);
    let card_gb = current.map_or(total_mib as f64 * MIB_BYTES / GB_BYTES, |m| m.vram_gb);
    let peak = peak_memory_pct(&points);
    let used_gb = total_mib as f64 * MIB_BYTES / GB_BYTES * peak / 100.0;
    let Some(need) = smaller_card(card_gb, used_gb) else {
        return;
    };
    let util = mean_in_window(&points, &|p| p.utilization_gpu_pct(), now_ms, opts).unwrap_or(0.0);
    // One GPU's share of the host's price.
    let price = host.jobs.price().map(|p| {
        let per_gpu = p.price_per_hour / host.gpus.len().max(1) as f64;
        (per_gpu, p.currency.as_str())
    });
    let f = labels_fit::card_oversized(pid, &gpu.latest.name, &need, used_gb, price)
        .on_gpu(Some(index))
        .with_evidence(&labels_fit::roomy_line(index, peak, util, s, opts.window_s));
    out.push(f);
}

fn peak_memory_pct(points: &[(HistoryPoint, u64)]) -> f64 {
    points
        .iter()
        .filter_map(|(p, _)| p.memory_used_pct())
        .fold(0.0, |a, m| a.max(f64::from(m)))
}

/// The smallest memory size in the table that is smaller than `card_gb` and holds `used_gb`
/// within the 70 % rule, with the models of that size that have BF16.
fn smaller_card(card_gb: f64, used_gb: f64) -> Option<CardNeed> {
    let fits = |m: &&GpuModel| m.bf16 && m.vram_gb < card_gb && used_gb <= m.vram_gb * FIT_SHARE;
    let vram_gb = GPU_MODELS
        .iter()
        .filter(fits)
        .map(|m| m.vram_gb)
        .fold(None, |a: Option<f64>, v| Some(a.map_or(v, |a| a.min(v))))?;
    let models = GPU_MODELS
        .iter()
        .filter(|m| m.bf16 && m.vram_gb == vram_gb)
        .map(|m| m.name)
        .collect();
    Some(CardNeed { vram_gb, models })
}

/// The smallest memory size in the table above `model`'s, with its models that have BF16.
fn larger_than(model: &GpuModel) -> Option<CardNeed> {
    let vram_gb = GPU_MODELS
        .iter()
        .filter(|m| m.bf16)
        .map(|m| m.vram_gb)
        .filter(|v| *v > model.vram_gb)
        .fold(None, |a: Option<f64>, v| Some(a.map_or(v, |a| a.min(v))))?;
    let models = GPU_MODELS
        .iter()
        .filter(|m| m.bf16 && m.vram_gb == vram_gb)
        .map(|m| m.name)
        .collect();
    Some(CardNeed { vram_gb, models })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_smaller_card_is_the_smallest_size_that_holds_the_job_within_seventy_percent() {
        // 10 GB used on an H200: the 24 GB cards hold it (16.8 GB at 70 %).
        let need = smaller_card(141.0, 10.0).expect("a smaller card");
        assert_eq!(need.vram_gb, 24.0);
        assert!(need.models.contains(&"L4"), "{:?}", need.models);
        // No V100 (16 GB, FP16 only) is proposed for a job that may train in BF16.
        assert!(!need.models.iter().any(|m| m.starts_with("V100")));
        // 30 GB used: 48 GB (33.6 at 70 %) is the smallest that holds it; 32 GB (22.4) is not.
        let need = smaller_card(141.0, 30.0).expect("a smaller card");
        assert_eq!(need.models, vec!["L40S", "L40", "L20", "RTX A6000"]);
        // 20 GB used: the 32 GB RTX 5090 (22.4 at 70 %).
        let need = smaller_card(141.0, 20.0).expect("a smaller card");
        assert_eq!(need.models, vec!["RTX 5090"]);
        // On a 24 GB card nothing in the table with BF16 is smaller.
        assert_eq!(smaller_card(24.0, 1.0), None);
    }

    #[test]
    fn the_next_larger_card_is_the_next_size_up() {
        let l4 = model_for("NVIDIA L4").expect("L4");
        assert_eq!(larger_than(l4).map(|n| n.models), Some(vec!["RTX 5090"]));
        let a100 = model_for("NVIDIA A100-PCIE-40GB").expect("A100 40GB");
        assert_eq!(
            larger_than(a100).map(|n| n.models),
            Some(vec!["L40S", "L40", "L20", "RTX A6000"])
        );
        let h200 = model_for("NVIDIA H200").expect("H200");
        assert_eq!(larger_than(h200), None);
    }
}
