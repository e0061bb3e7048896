//! Unit tests of the verdict logic: each rule at and around its thresholds.

use crate::check::inventory::{GpuStatic, KernelLog};
use crate::check::load;
use crate::check::probe::{
    LoadSample, MatmulResult, PcieReading, ProbeData, ProbeDevice, VramResult, Window,
};
use crate::check::reference::lookup;
use crate::check::report::Status;
use crate::check::verdict;
use crate::config::{CudaVersion, Expect};
use crate::diagnose::kernel::parse_line;
use crate::telemetry::{ClockEventReasons, GpuSample};

fn none() -> Expect {
    Expect {
        gpu: None,
        count: None,
        memory_gib: None,
        min_cuda: None,
    }
}

fn h200() -> GpuStatic {
    GpuStatic {
        index: 0,
        name: "NVIDIA H200".to_string(),
        uuid: "GPU-67e6a1fd".to_string(),
        memory_total_mib: Some(143771),
        power_enforced_w: Some(700.0),
        power_default_w: Some(700.0),
        power_max_w: Some(700.0),
        ecc_enabled: Some(true),
        ecc_volatile: Some(0),
        ecc_aggregate: Some(0),
        remap_pending: Some(false),
        remap_failure: Some(false),
        persistence: Some(true),
        pcie_gen: Some(5),
        pcie_gen_max: Some(5),
        pcie_width: Some(16),
        pcie_width_max: Some(16),
        ..GpuStatic::default()
    }
}

fn sample(phase: &str, t: f64, clock: u32, power: f64, temp: f64, mask: u64) -> LoadSample {
    LoadSample {
        phase: phase.to_string(),
        elapsed_s: t,
        gpu: GpuSample {
            index: 0,
            clock_sm_mhz: Some(clock),
            clock_sm_max_mhz: Some(1980),
            power_draw_w: Some(power),
            power_limit_w: Some(700.0),
            temperature_c: Some(temp),
            clock_event_reasons: Some(ClockEventReasons(mask)),
            ..GpuSample::default()
        },
        pcie: PcieReading {
            gen_current: Some(5),
            gen_max: Some(5),
            width_current: Some(16),
            width_max: Some(16),
        },
    }
}

fn status_of(r: &crate::check::report::CheckResult) -> Status {
    r.status
}

#[test]
fn identity_count_model_and_memory() {
    let gpus = vec![h200()];
    let want = |count| Expect {
        count: Some(count),
        ..none()
    };
    assert_eq!(verdict::count(&gpus, &want(1)).status, Status::Pass);
    assert_eq!(verdict::count(&gpus, &want(2)).status, Status::Fail);
    assert_eq!(verdict::count(&gpus, &none()).status, Status::Pass);

    let gpu = |g: &str| Expect {
        gpu: Some(g.to_string()),
        ..none()
    };
    assert_eq!(verdict::model(&h200(), &gpu("H200")).status, Status::Pass);
    let wrong = verdict::model(&h200(), &gpu("RTX 4090"));
    assert_eq!(wrong.status, Status::Fail);
    assert_eq!(wrong.measured, "NVIDIA H200");
    assert_eq!(wrong.expected, "RTX 4090");

    let mem = |gib| Expect {
        memory_gib: Some(gib),
        ..none()
    };
    assert_eq!(verdict::memory(&h200(), &mem(141.0)).status, Status::Pass);
    assert_eq!(
        verdict::memory(&h200(), &none()).status,
        Status::Pass,
        "label"
    );
    let a10 = GpuStatic {
        name: "NVIDIA A10".to_string(),
        memory_total_mib: Some(23028),
        ..h200()
    };
    assert_eq!(
        verdict::memory(&a10, &mem(24.0)).status,
        Status::Pass,
        "24 GB label"
    );
    let sliced = GpuStatic {
        memory_total_mib: Some(71 * 1024),
        ..h200()
    };
    assert_eq!(verdict::memory(&sliced, &mem(141.0)).status, Status::Fail);
    assert_eq!(
        verdict::memory(&sliced, &none()).status,
        Status::Fail,
        "vs label"
    );
    let short = GpuStatic {
        memory_total_mib: Some(120 * 1024),
        ..h200()
    };
    assert_eq!(verdict::memory(&short, &mem(141.0)).status, Status::Warn);
}

#[test]
fn driver_cuda_and_pytorch() {
    let min = |v: &str| Expect {
        min_cuda: CudaVersion::parse(v).ok(),
        ..none()
    };
    let c = |cuda, e: &Expect| verdict::cuda(Some("580.159.04"), Some(cuda), e).status;
    assert_eq!(c("13.0", &min("12.1")), Status::Pass);
    assert_eq!(c("12.0", &min("12.1")), Status::Fail);
    assert_eq!(c("12.1", &min("12.1")), Status::Pass);
    assert_eq!(verdict::cuda(None, None, &min("12.1")).status, Status::Warn);

    let mut probe = ProbeData {
        torch_version: Some("2.5.1".to_string()),
        torch_cuda: Some("12.4".to_string()),
        ..ProbeData::default()
    };
    assert_eq!(verdict::torch(&probe, Some("13.0")).status, Status::Pass);
    assert_eq!(
        verdict::torch(&probe, Some("12.2")).status,
        Status::Pass,
        "minor compat"
    );
    assert_eq!(verdict::torch(&probe, Some("11.8")).status, Status::Fail);
    probe.devices.push(ProbeDevice {
        index: 0,
        name: "Tesla P100".to_string(),
        uuid: None,
        capability: vec![6, 0],
        total_bytes: 16 << 30,
        bf16: false,
        arch_ok: Some(false),
    });
    let r = verdict::torch(&probe, Some("13.0"));
    assert_eq!(r.status, Status::Fail);
    assert!(r.message.contains("sm_60"), "{}", r.message);
    let skipped = ProbeData::skipped("PyTorch is not importable");
    assert_eq!(verdict::torch(&skipped, Some("13.0")).status, Status::Skip);
}

#[test]
fn health_rules() {
    let refr = lookup("NVIDIA H200");
    assert_eq!(verdict::ecc(&h200(), refr).status, Status::Pass);
    let g = GpuStatic {
        ecc_volatile: Some(2),
        ..h200()
    };
    assert_eq!(verdict::ecc(&g, refr).status, Status::Fail);
    let g = GpuStatic {
        ecc_aggregate: Some(1),
        ..h200()
    };
    assert_eq!(verdict::ecc(&g, refr).status, Status::Warn);
    let g = GpuStatic {
        ecc_enabled: Some(false),
        ..h200()
    };
    assert_eq!(verdict::ecc(&g, refr).status, Status::Warn);
    let consumer = GpuStatic {
        name: "NVIDIA GeForce RTX 4090".to_string(),
        ecc_enabled: None,
        ecc_volatile: None,
        ecc_aggregate: None,
        ..h200()
    };
    assert_eq!(
        verdict::ecc(&consumer, lookup(&consumer.name)).status,
        Status::Pass
    );

    assert_eq!(verdict::retirement(&h200()).status, Status::Pass);
    let g = GpuStatic {
        remap_failure: Some(true),
        ..h200()
    };
    assert_eq!(verdict::retirement(&g).status, Status::Fail);
    let g = GpuStatic {
        remap_pending: Some(true),
        ..h200()
    };
    assert_eq!(verdict::retirement(&g).status, Status::Warn);
    let g = GpuStatic {
        retired_pending: Some(true),
        ..h200()
    };
    assert_eq!(verdict::retirement(&g).status, Status::Warn);
    let g = GpuStatic {
        persistence: Some(false),
        ..h200()
    };
    assert_eq!(verdict::persistence(&g).status, Status::Pass);
}

fn log(lines: &[&str]) -> KernelLog {
    KernelLog::Read(
        lines
            .iter()
            .filter_map(|l| parse_line(l).map(|e| (e, l.to_string())))
            .collect(),
    )
}

#[test]
fn xid_lines_are_graded_by_the_catalog() {
    assert_eq!(verdict::xid_lines(&log(&[])).status, Status::Pass);
    let lost = verdict::xid_lines(&log(&[
        "[ 8123.0] NVRM: Xid (PCI:0000:5a:00): 79, GPU has fallen off the bus.",
    ]));
    assert_eq!(lost.status, Status::Fail);
    assert_eq!(lost.measured, "Xid 79 ×1");
    let app = verdict::xid_lines(&log(&[
        "NVRM: Xid (PCI:0000:3d:00): 13, pid=35521, name=python3, Graphics Exception",
        "NVRM: Xid (PCI:0000:3d:00): 13, pid=35521, name=python3, Graphics Exception",
    ]));
    assert_ne!(app.status, Status::Fail);
    assert_eq!(app.measured, "Xid 13 ×2");
    let denied = KernelLog::Unreadable("dmesg: read kernel buffer failed".to_string());
    assert_eq!(verdict::xid_lines(&denied).status, Status::Skip);
}

#[test]
fn power_cap_thresholds() {
    let capped = |w| GpuStatic {
        power_enforced_w: Some(w),
        ..h200()
    };
    assert_eq!(verdict::power(&capped(700.0)).status, Status::Pass);
    assert_eq!(verdict::power(&capped(650.0)).status, Status::Warn);
    let r = verdict::power(&capped(450.0));
    assert_eq!(r.status, Status::Fail);
    assert_eq!(r.measured, "450 W");
    assert_eq!(r.expected, "700 W (default, max 700 W)");
    let unknown = GpuStatic {
        power_enforced_w: None,
        ..h200()
    };
    assert_eq!(verdict::power(&unknown).status, Status::Skip);
}

#[test]
fn pcie_is_judged_under_load() {
    let mut s = sample("sustain", 20.0, 1455, 690.0, 60.0, 0x4);
    assert_eq!(verdict::pcie(&h200(), &[&s]).0.status, Status::Pass);
    s.pcie.width_current = Some(8);
    let (r, fig) = verdict::pcie(&h200(), &[&s]);
    assert_eq!(r.status, Status::Fail);
    assert_eq!(r.measured, "Gen5 x8 (under load)");
    assert!(fig.under_load);
    s.pcie.width_current = Some(16);
    s.pcie.gen_current = Some(4);
    assert_eq!(verdict::pcie(&h200(), &[&s]).0.status, Status::Warn);
    let idle = GpuStatic {
        pcie_gen: Some(1),
        ..h200()
    };
    let (r, fig) = verdict::pcie(&idle, &[]);
    assert_eq!(r.status, Status::Pass, "links idle down: {}", r.message);
    assert!(!fig.under_load);
    let idle_x8 = GpuStatic {
        pcie_width: Some(8),
        ..h200()
    };
    assert_eq!(verdict::pcie(&idle_x8, &[]).0.status, Status::Warn);
}

fn probe_with_vram(allocated_gib: f64, mismatched: u64) -> ProbeData {
    let total = 150_109_880_320u64;
    ProbeData {
        vram: vec![VramResult {
            gpu: 0,
            free_bytes: total - (750 << 20),
            total_bytes: total,
            target_bytes: 0,
            allocated_bytes: (allocated_gib * (1u64 << 30) as f64) as u64,
            oom: None,
            verify_error: None,
            checked_elements: 1000,
            mismatched_elements: mismatched,
        }],
        ..ProbeData::default()
    }
}

#[test]
fn usable_vram_rules() {
    assert_eq!(
        load::vram(0, Some(0), &probe_with_vram(132.1, 0)).0.status,
        Status::Pass
    );
    assert_eq!(
        load::vram(0, Some(0), &probe_with_vram(110.0, 0)).0.status,
        Status::Warn
    );
    assert_eq!(
        load::vram(0, Some(0), &probe_with_vram(66.0, 0)).0.status,
        Status::Fail
    );
    assert_eq!(
        load::vram(0, Some(0), &probe_with_vram(132.1, 3)).0.status,
        Status::Fail
    );
    let skipped = ProbeData::skipped("no torch");
    let (r, usable) = load::vram(0, Some(0), &skipped);
    assert_eq!((r.status, usable), (Status::Skip, None));
    let crashed = ProbeData {
        failure: Some("the probe ended with exit 1: RuntimeError: CUDA error".to_string()),
        ..ProbeData::default()
    };
    assert_eq!(load::vram(0, Some(0), &crashed).0.status, Status::Fail);
}

fn matmul(tflops: f64, correct: bool) -> ProbeData {
    ProbeData {
        matmul: vec![MatmulResult {
            gpu: 0,
            dtype: "bf16".to_string(),
            n: 8192,
            tflops: Some(tflops),
            tflops_random: Some(tflops * 0.85),
            correct: Some(correct),
            finite: Some(true),
        }],
        ..ProbeData::default()
    }
}

#[test]
fn matmul_against_the_reference() {
    let refr = lookup("NVIDIA H200");
    let grade = |t, ok| load::matmul(0, Some(0), &matmul(t, ok), refr).0.status;
    assert_eq!(grade(778.7, true), Status::Pass, "the real H200");
    assert_eq!(grade(672.0, true), Status::Pass, "15% under 790");
    assert_eq!(grade(660.0, true), Status::Warn);
    assert_eq!(grade(400.0, true), Status::Fail);
    assert_eq!(grade(790.0, false), Status::Fail, "wrong answers");
    let unknown = load::matmul(0, Some(0), &matmul(100.0, true), None).0;
    assert_eq!(unknown.status, Status::Pass);
    assert!(unknown.message.contains("No reference"));
}

fn sustain(samples: Vec<LoadSample>, rates: &[f64]) -> (Status, String) {
    let probe = ProbeData {
        windows: rates
            .iter()
            .enumerate()
            .map(|(i, t)| Window {
                gpu: 0,
                elapsed_s: 2.0 * i as f64,
                tflops: Some(*t),
            })
            .collect(),
        ..ProbeData::default()
    };
    let refs: Vec<&LoadSample> = samples.iter().collect();
    let (r, _) = load::sustained(0, Some(0), &probe, &refs, 60.0);
    (r.status, r.message)
}

#[test]
fn sustained_load_rules() {
    let steady: Vec<LoadSample> = (0..12)
        .map(|i| sample("sustain", i as f64, 1455, 690.0, 61.0, 0x4))
        .collect();
    let even = [667.0; 6];
    assert_eq!(sustain(steady.clone(), &even).0, Status::Pass);

    let mut hot = steady.clone();
    hot[8].gpu.clock_event_reasons = Some(ClockEventReasons(0x48));
    let (status, message) = sustain(hot, &even);
    assert_eq!(status, Status::Fail);
    assert!(message.contains("thermal"), "{message}");

    let mut brake = steady.clone();
    brake[3].gpu.clock_event_reasons = Some(ClockEventReasons(0x88));
    let (status, message) = sustain(brake, &even);
    assert_eq!(status, Status::Fail);
    assert!(message.contains("power brake"), "{message}");

    let mut warm = steady.clone();
    warm[5].gpu.clock_event_reasons = Some(ClockEventReasons(0x24));
    assert_eq!(sustain(warm.clone(), &even).0, Status::Warn);
    warm[6].gpu.clock_event_reasons = Some(ClockEventReasons(0x20));
    assert_eq!(sustain(warm, &even).0, Status::Fail);

    let sagging: Vec<LoadSample> = (0..12)
        .map(|i| sample("sustain", i as f64, 1700 - 80 * i, 300.0, 70.0, 0x0))
        .collect();
    let (status, message) = sustain(sagging, &even);
    assert_eq!(status, Status::Warn);
    assert!(message.contains("power stayed far under"), "{message}");

    let fading = [667.0, 660.0, 600.0, 520.0, 480.0, 470.0];
    assert_eq!(sustain(steady, &fading).0, Status::Warn);

    let skipped = ProbeData::skipped("no torch");
    let (r, _) = load::sustained(0, Some(0), &skipped, &[], 60.0);
    assert_eq!(status_of(&r), Status::Skip);
}
