//! Live findings on synthetic host histories, built through `HostState::apply` (the path real
//! sources use). Samples start from a real H200 stream line under load and change only the
//! fields a scenario is about; kernel lines follow the real layouts in
//! `tests/fixtures/diagnose/kernel/` with the H200's bus id.

use std::path::Path;

use gpufleet::diagnose::{Finding, LiveOptions, Severity, live_findings};
use gpufleet::fleet::HostEvent;
use gpufleet::fleet::host::HostState;
use gpufleet::telemetry::smi_csv::{FieldLayout, QUERY_FIELDS, parse_gpu_line};
use gpufleet::telemetry::{ClockEventReasons, GpuSample, LostReason};

const T0: u64 = 1_800_000_000_000;

/// The real streamed samples of the H200 under load: ~690 W of a 700 W limit, power cap active.
fn load_samples() -> Vec<GpuSample> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/diagnose/healthy/stream_load.txt");
    let text = std::fs::read_to_string(path).expect("stream_load.txt");
    let layout = FieldLayout::new(QUERY_FIELDS);
    text.lines()
        .map(|l| parse_gpu_line(&layout, l).expect("stream line"))
        .collect()
}

fn host() -> HostState {
    HostState::new(
        "h200",
        gpufleet::fleet::FleetOptions::default().history_shape(),
    )
}

/// Feeds one sample per second for `seconds`, starting at `start_s`, shaped by `shape(second)`.
fn feed(host: &mut HostState, start_s: u64, seconds: u64, shape: impl Fn(u64, &mut GpuSample)) {
    let base = load_samples();
    for s in start_s..start_s + seconds {
        let mut gpu = base[(s as usize) % base.len()].clone();
        shape(s, &mut gpu);
        host.apply(HostEvent::Sample {
            at_ms: T0 + s * 1000,
            gpu,
        });
    }
}

fn at(s: u64) -> u64 {
    T0 + s * 1000
}

fn labels(findings: &[Finding]) -> Vec<&str> {
    findings.iter().map(|f| f.label.as_str()).collect()
}

fn findings_at(host: &HostState, s: u64) -> Vec<Finding> {
    live_findings(host, at(s), &LiveOptions::default())
}

fn find<'a>(findings: &'a [Finding], label: &str) -> &'a Finding {
    findings
        .iter()
        .find(|f| f.label == label)
        .unwrap_or_else(|| panic!("no {label} in {:?}", labels(findings)))
}

#[test]
fn a_power_cap_at_full_load_is_healthy() {
    let mut h = host();
    feed(&mut h, 0, 180, |_, _| {});
    assert!(
        h.gpus[0]
            .latest
            .clock_event_reasons
            .is_some_and(|r| r.contains(ClockEventReasons::SW_POWER_CAP))
    );
    assert_eq!(findings_at(&h, 180), Vec::<Finding>::new());
}

#[test]
fn a_cap_far_below_the_limit_is_power_throttle() {
    let mut h = host();
    feed(&mut h, 0, 120, |_, g| g.power_draw_w = Some(250.0));
    assert!(!labels(&findings_at(&h, 20)).contains(&"power_throttle"));
    let findings = findings_at(&h, 120);
    let f = find(&findings, "power_throttle");
    assert_eq!(
        (f.gpu, f.runbook.as_deref()),
        (Some(0), Some("power-limit"))
    );
    assert!(
        f.evidence[0].contains("250 W of a 700 W limit"),
        "{:?}",
        f.evidence
    );
}

#[test]
fn a_limit_set_far_below_the_default_is_power_throttle() {
    let mut h = host();
    feed(&mut h, 0, 120, |_, g| {
        g.power_limit_w = Some(300.0);
        g.power_draw_w = Some(296.0);
    });
    let findings = findings_at(&h, 120);
    let f = find(&findings, "power_throttle");
    assert!(
        f.evidence[0].contains("43% of the 700 W default"),
        "{:?}",
        f.evidence
    );
}

const THERMAL: u64 = ClockEventReasons::SW_THERMAL_SLOWDOWN;

#[test]
fn sustained_thermal_slowdown_raises_and_holds_then_clears() {
    let mut h = host();
    feed(&mut h, 0, 60, |_, _| {});
    feed(&mut h, 60, 40, |_, g| {
        g.clock_event_reasons = Some(ClockEventReasons(THERMAL));
        g.temperature_c = Some(88.0);
    });
    let findings = findings_at(&h, 100);
    let f = find(&findings, "thermal_throttle");
    assert_eq!((f.severity, f.gpu), (Severity::Warning, Some(0)));
    assert!(f.evidence[0].contains("peak 88 C"), "{:?}", f.evidence);

    // Cool again: the finding holds for a while, then clears (each judged at the newest
    // sample, as the engine does: older history is folded for the charts).
    feed(&mut h, 100, 30, |_, _| {});
    assert!(labels(&findings_at(&h, 130)).contains(&"thermal_throttle"));
    feed(&mut h, 130, 170, |_, _| {});
    assert_eq!(findings_at(&h, 300), Vec::<Finding>::new());
}

#[test]
fn a_brief_thermal_blip_is_nothing() {
    let mut h = host();
    feed(&mut h, 0, 120, |s, g| {
        if (50..55).contains(&s) {
            g.clock_event_reasons = Some(ClockEventReasons(THERMAL));
        }
    });
    assert_eq!(findings_at(&h, 56), Vec::<Finding>::new());
    assert_eq!(findings_at(&h, 120), Vec::<Finding>::new());
}

#[test]
fn temperature_at_the_slowdown_point_counts_as_thermal() {
    let mut h = host();
    feed(&mut h, 0, 60, |_, g| {
        g.temperature_slowdown_c = Some(89.0);
        g.temperature_c = Some(90.0);
    });
    assert!(labels(&findings_at(&h, 60)).contains(&"thermal_throttle"));
}

#[test]
fn hardware_slowdowns_power_brake_and_hw_thermal() {
    let mut h = host();
    let brake = ClockEventReasons::HW_POWER_BRAKE | ClockEventReasons::HW_SLOWDOWN;
    feed(&mut h, 0, 15, |_, g| {
        g.clock_event_reasons = Some(ClockEventReasons(brake))
    });
    let findings = findings_at(&h, 15);
    assert_eq!(find(&findings, "power_brake").severity, Severity::Critical);

    let mut h = host();
    let hot = ClockEventReasons::HW_THERMAL_SLOWDOWN | ClockEventReasons::HW_SLOWDOWN;
    feed(&mut h, 0, 45, |_, g| {
        g.clock_event_reasons = Some(ClockEventReasons(hot))
    });
    assert_eq!(
        find(&findings_at(&h, 45), "thermal_throttle").severity,
        Severity::Critical
    );
}

fn idle(_: u64, g: &mut GpuSample) {
    g.utilization_gpu_pct = Some(0.0);
    g.power_draw_w = Some(78.0);
    g.clock_event_reasons = Some(ClockEventReasons(ClockEventReasons::GPU_IDLE));
}

#[test]
fn ten_idle_minutes_is_idle_billing() {
    let mut h = host();
    feed(&mut h, 0, 11 * 60, idle);
    assert!(!labels(&findings_at(&h, 9 * 60)).contains(&"idle_billing"));
    let findings = findings_at(&h, 11 * 60);
    assert_eq!(labels(&findings), vec!["idle_billing"]);
    let f = &findings[0];
    assert_eq!(f.gpu, None);
    assert!(f.evidence[0].starts_with("GPU 0: at most 0% utilization over the last 10 min"));
}

#[test]
fn a_short_probe_does_not_reset_the_idle_clock_but_real_work_does() {
    let mut h = host();
    feed(&mut h, 0, 11 * 60, |s, g| {
        if !(300..305).contains(&s) {
            idle(s, g);
        }
    });
    assert!(labels(&findings_at(&h, 11 * 60)).contains(&"idle_billing"));

    let mut h = host();
    feed(&mut h, 0, 11 * 60, |s, g| {
        if !(300..360).contains(&s) {
            idle(s, g);
        }
    });
    assert!(!labels(&findings_at(&h, 11 * 60)).contains(&"idle_billing"));
}

#[test]
fn a_lost_link_is_gpu_lost_with_the_raw_text() {
    let raw = "Unable to determine the device handle for GPU 0000:00:06.0: GPU is lost. Reboot \
               the system to recover this GPU";
    let mut h = host();
    feed(&mut h, 0, 30, |_, _| {});
    h.apply(HostEvent::Lost {
        at_ms: at(31),
        reason: LostReason::GpuLost,
        raw: raw.to_string(),
    });
    let findings = findings_at(&h, 60);
    assert_eq!(labels(&findings), vec!["gpu_lost"]);
    assert_eq!(findings[0].evidence, vec![raw]);
    assert_eq!(findings[0].runbook.as_deref(), Some("gpu-lost"));
    // The GPU the text names, through the same matcher as pasted text.
    assert_eq!(findings[0].pci.as_deref(), Some("0000:00:06"));
    assert_eq!(findings[0].gpu, Some(0));

    // nvidia-smi's text in a container that lost its device nodes: the finer label, as in
    // `gpufleet diagnose` (smi/nvml_init_unknown_error.txt).
    let mut h = host();
    h.apply(HostEvent::Lost {
        at_ms: at(1),
        reason: LostReason::Other,
        raw: "Failed to initialize NVML: Unknown Error".to_string(),
    });
    assert_eq!(labels(&findings_at(&h, 2)), vec!["nvml_error_unknown"]);

    let mut h = host();
    h.apply(HostEvent::Lost {
        at_ms: at(1),
        reason: LostReason::DriverLibraryMismatch,
        raw: "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 570.124"
            .to_string(),
    });
    let findings = findings_at(&h, 2);
    assert_eq!(labels(&findings), vec!["driver_lib_mismatch"]);
    assert_eq!(findings[0].evidence.len(), 2);
}

fn kernel(h: &mut HostState, s: u64, line: &str) {
    h.apply(HostEvent::Kernel {
        at_ms: at(s),
        line: line.to_string(),
    });
}

#[test]
fn xid_79_maps_to_the_gpu_and_says_reboot() {
    let mut h = host();
    feed(&mut h, 0, 30, |_, _| {});
    kernel(
        &mut h,
        30,
        "[ 1843.308145] NVRM: Xid (PCI:0000:00:06): 79, GPU has fallen off the bus.",
    );
    let findings = findings_at(&h, 30);
    let mut got = labels(&findings);
    got.sort_unstable();
    assert_eq!(got, vec!["gpu_lost", "xid_79"]);
    for f in &findings {
        assert_eq!((f.gpu, f.severity), (Some(0), Severity::Critical));
        assert_eq!(f.runbook.as_deref(), Some("gpu-lost"));
        assert!(f.action.contains("Reboot the instance"), "{}", f.action);
    }
    // Kernel findings age out after an hour.
    assert_eq!(
        live_findings(&h, at(30 + 61 * 60), &LiveOptions::default())
            .iter()
            .filter(|f| f.label == "xid_79")
            .count(),
        0
    );
}

#[test]
fn an_xid_154_recovery_action_outranks_the_catalog() {
    let xid48 = "NVRM: Xid (PCI:0000:00:06): 48, An uncorrectable double bit error";
    let mut h = host();
    feed(&mut h, 0, 10, |_, _| {});
    kernel(&mut h, 10, xid48);
    let catalog = find(&findings_at(&h, 10), "xid_48").action.clone();

    kernel(
        &mut h,
        11,
        "NVRM: Xid (PCI:0000:00:06): 154, GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)",
    );
    let findings = findings_at(&h, 11);
    let f = find(&findings, "xid_48");
    assert_ne!(f.action, catalog);
    assert!(f.action.contains("node must reboot"), "{}", f.action);
    assert!(
        f.summary
            .ends_with("Driver recovery action (Xid 154): Node Reboot Required.")
    );
    assert_eq!(find(&findings, "xid_154").severity, Severity::Critical);
}

#[test]
fn memory_counters_in_the_latest_sample() {
    let mut h = host();
    feed(&mut h, 0, 5, |_, g| {
        g.ecc_uncorrected_volatile = Some(2);
        g.retired_pages_pending = Some(true);
    });
    let findings = findings_at(&h, 5);
    assert_eq!(
        find(&findings, "ecc_uncorrectable").severity,
        Severity::Critical
    );
    assert_eq!(find(&findings, "row_remap_pending").gpu, Some(0));
}

#[test]
fn data_older_than_two_intervals_on_a_down_link_is_stale() {
    let mut h = host();
    feed(&mut h, 0, 30, |_, _| {});
    h.apply(HostEvent::Disconnected {
        at_ms: at(31),
        reason: "connection reset".to_string(),
        summary: "connection reset".to_string(),
        retry_at_ms: None,
        words: None,
    });
    assert_eq!(findings_at(&h, 31), Vec::<Finding>::new());
    let findings = findings_at(&h, 45);
    assert_eq!(labels(&findings), vec!["stale"]);
    assert_eq!(
        findings[0].evidence,
        vec!["last sample 16 s ago (link down: connection reset)"]
    );
}

/// Kernel lines of the layouts in `kernel/rminitadapter_journal_vmware.txt`,
/// `kernel/aer_nvidia_correctable.txt` and `kernel/nouveau_probe_not_called.txt`, with the
/// H200's bus id: the console raises what `gpufleet diagnose` raises for the same lines (one
/// matcher), and maps the PCI address to the GPU's index.
#[test]
fn kernel_lines_go_through_the_same_catalogue_as_pasted_text() {
    let lines = [
        "Feb 09 15:47:06 debian kernel: NVRM: GPU 0000:00:06.0: RmInitAdapter failed! (0x26:0x56:1463)",
        "[68185.875295] nvidia 0000:00:06.0: PCIe Bus Error: severity=Correctable, type=Data Link Layer, (Transmitter ID)",
        "[ 9687.215135] NVRM: The NVIDIA probe routine was not called for 1 device(s).",
    ];
    let mut h = host();
    feed(&mut h, 0, 13, |_, _| {});
    for (i, line) in lines.iter().enumerate() {
        kernel(&mut h, 10 + i as u64, line);
    }
    let live = findings_at(&h, 12);
    let mut got = labels(&live);
    got.sort_unstable();
    assert_eq!(got, ["gpu_init_failed", "nouveau_conflict", "pcie_aer"]);
    assert_eq!(find(&live, "gpu_init_failed").gpu, Some(0));
    assert_eq!(find(&live, "pcie_aer").gpu, Some(0));
    assert_eq!(find(&live, "pcie_aer").pci.as_deref(), Some("0000:00:06"));

    let pasted = gpufleet::diagnose::diagnose_text(&lines.join("\n"));
    let strip = |fs: &[Finding]| {
        let mut v: Vec<(String, Option<String>, String)> = fs
            .iter()
            .map(|f| (f.label.clone(), f.pci.clone(), f.summary.clone()))
            .collect();
        v.sort();
        v
    };
    assert_eq!(strip(&live), strip(&pasted));
}

#[test]
fn the_watcher_sees_a_whole_idle_window_with_three_minutes_of_history() {
    let shape = gpufleet::fleet::FleetOptions::default()
        .without_charts()
        .history_shape();
    assert!(shape.points < 10 * 60, "{shape:?}");
    let mut h = HostState::new("h200", shape);
    feed(&mut h, 0, 11 * 60, idle);
    let findings = findings_at(&h, 11 * 60 - 1);
    assert_eq!(labels(&findings), vec!["idle_billing"]);
    assert!(findings[0].evidence[0].starts_with("GPU 0: at most 0% utilization"));

    // Work far older than the points kept still counts: a minute of it at minute 5.
    let mut h = HostState::new("h200", shape);
    feed(&mut h, 0, 11 * 60, |s, g| {
        if !(300..360).contains(&s) {
            idle(s, g);
        }
    });
    assert!(!labels(&findings_at(&h, 11 * 60 - 1)).contains(&"idle_billing"));

    // A five-second probe does not.
    let mut h = HostState::new("h200", shape);
    feed(&mut h, 0, 11 * 60, |s, g| {
        if !(300..305).contains(&s) {
            idle(s, g);
        }
    });
    assert!(labels(&findings_at(&h, 11 * 60 - 1)).contains(&"idle_billing"));
}
