//! Verdicts on what the probe measured under load: usable VRAM, matrix-multiply and copy
//! throughput against the reference table, and the sustained load's clocks, temperature,
//! power and clock-event reasons.

use crate::check::format::{bandwidth, gib_of_bytes, tflops, watts};
use crate::check::probe::{LoadSample, ProbeData, Window};
use crate::check::reference::{Reference, grade};
use crate::check::report::{Category, CheckResult, Status};
use crate::telemetry::ClockEventReasons;
use rust_i18n::t;

/// Seconds at the start of the sustained load left out of its verdict: clocks and power ramp.
pub const RAMP_S: f64 = 2.0;

/// Why a compute check has no result: the whole probe was skipped or failed, or this stage
/// reported an error, or nothing at all came back for it.
fn missing(
    id: &str,
    category: Category,
    gpu: u32,
    probe: &ProbeData,
    stage: &str,
    torch_gpu: Option<u32>,
) -> CheckResult {
    let r = CheckResult::new(id, category, Some(gpu), Status::Skip);
    if let Some(skip) = &probe.skip {
        return r.message(skip.clone());
    }
    if let Some(e) = torch_gpu.and_then(|t| probe.error_for(stage, t)) {
        return r.with_status(Status::Fail).message(t!(
            "check_msg.stage_failed",
            stage = stage,
            why = e.message
        ));
    }
    if let Some(failure) = &probe.failure {
        return r
            .with_status(Status::Fail)
            .message(t!("check_msg.probe_ended", why = failure));
    }
    if torch_gpu.is_none() {
        return r.message(t!("check_msg.torch_unseen"));
    }
    r.message(t!("check_msg.not_measured"))
}

/// `vram.usable`: how much of the card could be allocated, written and read back. The share
/// is of the card's total, so memory held by other tenants' processes shows up here.
pub fn vram(gpu: u32, torch_gpu: Option<u32>, probe: &ProbeData) -> (CheckResult, Option<f64>) {
    let Some(v) = torch_gpu.and_then(|t| probe.vram.iter().find(|v| v.gpu == t)) else {
        return (
            missing("vram.usable", Category::Vram, gpu, probe, "vram", torch_gpu),
            None,
        );
    };
    let usable = gib_of_bytes(v.allocated_bytes);
    let total = gib_of_bytes(v.total_bytes);
    let others = gib_of_bytes(v.total_bytes.saturating_sub(v.free_bytes));
    let share = if v.total_bytes > 0 {
        v.allocated_bytes as f64 / v.total_bytes as f64
    } else {
        0.0
    };
    let r = CheckResult::new("vram.usable", Category::Vram, Some(gpu), Status::Pass)
        .measured(t!(
            "check_value.vram_measured",
            usable = format!("{usable:.1}"),
            total = format!("{total:.1}"),
            percent = format!("{:.0}", share * 100.0),
            others = format!("{others:.1}")
        ))
        .expected(t!("check_value.vram_expected"));
    if v.mismatched_elements > 0 {
        let r = r.with_status(Status::Fail).message(t!(
            "check_msg.vram_corrupt",
            wrong = v.mismatched_elements,
            checked = v.checked_elements
        ));
        return (r, Some(usable));
    }
    if let Some(e) = &v.verify_error {
        let r = r
            .with_status(Status::Fail)
            .message(t!("check_msg.vram_read_failed", why = e));
        return (r, Some(usable));
    }
    let r = if share >= 0.85 {
        r.message(t!("check_msg.vram_ok"))
    } else if share >= 0.7 {
        r.with_status(Status::Warn).message(t!(
            "check_msg.vram_taken",
            percent = format!("{:.0}", share * 100.0),
            others = format!("{others:.1}")
        ))
    } else {
        r.with_status(Status::Fail).message(t!(
            "check_msg.vram_shared",
            usable = format!("{usable:.1}"),
            total = format!("{total:.1}")
        ))
    };
    (r, Some(usable))
}

/// `throughput.matmul`: dense matrix-multiply TFLOP/s against what a healthy card of the
/// model reaches.
pub fn matmul(
    gpu: u32,
    torch_gpu: Option<u32>,
    probe: &ProbeData,
    reference: Option<&Reference>,
) -> (CheckResult, Option<f64>, Option<String>) {
    let Some(m) = torch_gpu.and_then(|t| probe.matmul.iter().find(|m| m.gpu == t)) else {
        let r = missing(
            "throughput.matmul",
            Category::Throughput,
            gpu,
            probe,
            "matmul",
            torch_gpu,
        );
        return (r, None, None);
    };
    let r = CheckResult::new(
        "throughput.matmul",
        Category::Throughput,
        Some(gpu),
        Status::Pass,
    );
    let Some(measured) = m.tflops else {
        return (
            r.with_status(Status::Fail)
                .message(t!("check_msg.matmul_untimed")),
            None,
            Some(m.dtype.clone()),
        );
    };
    let random = m
        .tflops_random
        .map(|t| t!("check_value.matmul_random", tflops = tflops(t)).into_owned())
        .unwrap_or_default();
    let r = r.measured(t!(
        "check_value.matmul_measured",
        tflops = tflops(measured),
        dtype = m.dtype,
        n = m.n,
        random = random
    ));
    if m.correct == Some(false) || m.finite == Some(false) {
        let r = r
            .with_status(Status::Fail)
            .message(t!("check_msg.matmul_wrong"));
        return (r, Some(measured), Some(m.dtype.clone()));
    }
    let r = match reference.filter(|r| r.dtype == m.dtype) {
        Some(refr) => {
            let want = refr.expected_tflops();
            let status = grade(measured, want);
            let basis = if refr.is_measured() {
                t!("check_value.basis_measured")
            } else {
                t!(
                    "check_value.basis_datasheet_peak",
                    percent = format!("{:.0}", want / refr.datasheet_tflops * 100.0),
                    peak = tflops(refr.datasheet_tflops)
                )
            };
            let r = r
                .expected(t!(
                    "check_value.expected_basis",
                    value = tflops(want),
                    model = refr.model,
                    basis = basis
                ))
                .with_status(status);
            let pct = measured / want * 100.0;
            match status {
                Status::Pass => r.message(t!(
                    "check_msg.healthy_share",
                    percent = format!("{pct:.0}"),
                    model = refr.model
                )),
                _ => r.message(t!(
                    "check_msg.matmul_slow",
                    percent = format!("{pct:.0}"),
                    model = refr.model
                )),
            }
        }
        None => r.message(t!("check_msg.no_reference")),
    };
    (r, Some(measured), Some(m.dtype.clone()))
}

/// `throughput.copy`: device-to-device copy bandwidth (bytes read plus written) against the
/// model's memory bandwidth.
pub fn copy(
    gpu: u32,
    torch_gpu: Option<u32>,
    probe: &ProbeData,
    reference: Option<&Reference>,
) -> (CheckResult, Option<f64>) {
    let Some(c) = torch_gpu.and_then(|t| probe.copy.iter().find(|c| c.gpu == t)) else {
        return (
            missing(
                "throughput.copy",
                Category::Throughput,
                gpu,
                probe,
                "copy",
                torch_gpu,
            ),
            None,
        );
    };
    let r = CheckResult::new(
        "throughput.copy",
        Category::Throughput,
        Some(gpu),
        Status::Pass,
    );
    let Some(measured) = c.gb_per_s else {
        return (
            r.with_status(Status::Fail)
                .message(t!("check_msg.copy_untimed")),
            None,
        );
    };
    let r = r.measured(t!(
        "check_value.copy_measured",
        bandwidth = bandwidth(measured),
        gib = format!("{:.1}", gib_of_bytes(c.bytes))
    ));
    if !c.verified {
        let r = r
            .with_status(Status::Fail)
            .message(t!("check_msg.copy_corrupt"));
        return (r, Some(measured));
    }
    let r = match reference {
        Some(refr) => {
            let want = refr.expected_copy_gb_per_s();
            let status = grade(measured, want);
            let basis = if refr.measured_copy_gb_per_s.is_some() {
                t!("check_value.basis_measured")
            } else {
                t!("check_value.basis_datasheet")
            };
            let r = r
                .expected(t!(
                    "check_value.expected_basis",
                    value = bandwidth(want),
                    model = refr.model,
                    basis = basis
                ))
                .with_status(status);
            let pct = measured / want * 100.0;
            match status {
                Status::Pass => r.message(t!(
                    "check_msg.healthy_share",
                    percent = format!("{pct:.0}"),
                    model = refr.model
                )),
                _ => r.message(t!(
                    "check_msg.copy_slow",
                    percent = format!("{pct:.0}"),
                    model = refr.model
                )),
            }
        }
        None => r.message(t!("check_msg.no_reference")),
    };
    (r, Some(measured))
}

/// What the sustained load looked like on one GPU.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LoadFigures {
    pub tflops_mean: Option<f64>,
    pub temperature_max_c: Option<f64>,
    pub sm_clock_mean_mhz: Option<f64>,
    pub power_mean_w: Option<f64>,
}

fn mean(values: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    (n > 0).then(|| sum / n as f64)
}

/// Mean of the first and of the last third of `values`.
fn thirds(values: &[f64]) -> Option<(f64, f64)> {
    if values.len() < 3 {
        return None;
    }
    let third = values.len() / 3;
    let first = mean(values[..third].iter().copied())?;
    let last = mean(values[values.len() - third..].iter().copied())?;
    Some((first, last))
}

/// `sustained.load`: thermal slowdown, hardware slowdown or a power brake under load fail;
/// clocks falling while power stays far under the limit warns, as does throughput that fades.
pub fn sustained(
    gpu: u32,
    torch_gpu: Option<u32>,
    probe: &ProbeData,
    samples: &[&LoadSample],
    sustain_s: f64,
) -> (CheckResult, LoadFigures) {
    let windows: Vec<&Window> = torch_gpu
        .map(|t| probe.windows.iter().filter(|w| w.gpu == t).collect())
        .unwrap_or_default();
    if windows.is_empty() {
        let r = if sustain_s <= 0.0 && probe.skip.is_none() {
            CheckResult::new(
                "sustained.load",
                Category::Sustained,
                Some(gpu),
                Status::Skip,
            )
            .message(t!("check_msg.sustained_off"))
        } else {
            missing(
                "sustained.load",
                Category::Sustained,
                gpu,
                probe,
                "sustain",
                torch_gpu,
            )
        };
        return (r, LoadFigures::default());
    }
    let rates: Vec<f64> = windows.iter().filter_map(|w| w.tflops).collect();
    let power: Vec<f64> = samples.iter().filter_map(|s| s.gpu.power_draw_w).collect();
    let clocks: Vec<f64> = samples
        .iter()
        .filter_map(|s| s.gpu.clock_sm_mhz.map(f64::from))
        .collect();
    let figures = LoadFigures {
        tflops_mean: mean(rates.iter().copied()),
        temperature_max_c: samples
            .iter()
            .filter_map(|s| s.gpu.temperature_c)
            .reduce(f64::max),
        sm_clock_mean_mhz: mean(clocks.iter().copied()),
        power_mean_w: mean(power.iter().copied()),
    };
    let limit = samples
        .iter()
        .filter_map(|s| s.gpu.power_limit_w)
        .reduce(f64::max);
    let clock_max = samples
        .iter()
        .filter_map(|s| s.gpu.clock_sm_max_mhz)
        .max()
        .map(f64::from);
    let masks: Vec<ClockEventReasons> = samples
        .iter()
        .filter_map(|s| s.gpu.clock_event_reasons)
        .collect();
    let seen = ClockEventReasons(masks.iter().fold(0, |acc, m| acc | m.0));

    let mut parts = Vec::new();
    if let Some(t) = figures.temperature_max_c {
        parts.push(t!("check_value.temperature_max", t = format!("{t:.0}")).into_owned());
    }
    if let Some(c) = figures.sm_clock_mean_mhz {
        parts.push(t!("check_value.sm_clock_mean", mhz = format!("{c:.0}")).into_owned());
    }
    if let Some(p) = figures.power_mean_w {
        let of = limit
            .map(|l| t!("check_value.power_of", limit = watts(l)).into_owned())
            .unwrap_or_default();
        parts.push(t!("check_value.power_mean", watts = watts(p), of = of).into_owned());
    }
    if let Some(t) = figures.tflops_mean {
        parts.push(tflops(t));
    }
    let labels: Vec<String> = seen
        .label_words()
        .iter()
        .map(crate::words::Words::localized)
        .collect();
    if !labels.is_empty() {
        parts.push(t!("check_value.reasons", reasons = labels.join(", ")).into_owned());
    }
    let r = CheckResult::new(
        "sustained.load",
        Category::Sustained,
        Some(gpu),
        Status::Pass,
    )
    .measured(parts.join(", "))
    .expected(t!("check_value.sustained_expected"));

    let hw = masks.iter().filter(|m| m.is_hardware_slowdown()).count();
    let sw_thermal = masks
        .iter()
        .filter(|m| m.contains(ClockEventReasons::SW_THERMAL_SLOWDOWN))
        .count();
    if hw > 0 {
        let what = if seen.contains(ClockEventReasons::HW_POWER_BRAKE) {
            t!("check_msg.cut_power_brake")
        } else if seen.contains(ClockEventReasons::HW_THERMAL_SLOWDOWN) {
            t!("check_msg.cut_hw_thermal")
        } else {
            t!("check_msg.cut_hw")
        };
        let r = r.with_status(Status::Fail).message(t!(
            "check_msg.sustained_hw",
            what = what,
            hw = hw,
            samples = masks.len()
        ));
        return (r, figures);
    }
    if sw_thermal >= 2 {
        let r = r.with_status(Status::Fail).message(t!(
            "check_msg.sustained_thermal",
            hot = sw_thermal,
            samples = masks.len()
        ));
        return (r, figures);
    }
    let clock_drop = thirds(&clocks).is_some_and(|(first, last)| last < 0.85 * first)
        || matches!((figures.sm_clock_mean_mhz, clock_max), (Some(c), Some(m)) if c < 0.7 * m);
    let power_low = matches!((figures.power_mean_w, limit), (Some(p), Some(l)) if p < 0.7 * l);
    if clock_drop && power_low {
        let r = r
            .with_status(Status::Warn)
            .message(t!("check_msg.sustained_clock_drop"));
        return (r, figures);
    }
    if sw_thermal == 1 {
        let r = r
            .with_status(Status::Warn)
            .message(t!("check_msg.sustained_thermal_once"));
        return (r, figures);
    }
    if let Some((first, last)) = thirds(&rates)
        && last < 0.8 * first
    {
        let r = r.with_status(Status::Warn).message(t!(
            "check_msg.sustained_fade",
            first = tflops(first),
            last = tflops(last)
        ));
        return (r, figures);
    }
    let note = if samples.is_empty() {
        format!(" {}", t!("check_msg.sustained_no_smi"))
    } else {
        String::new()
    };
    let r = r.message(t!(
        "check_msg.sustained_ok",
        s = format!("{sustain_s:.0}"),
        note = note
    ));
    (r, figures)
}
