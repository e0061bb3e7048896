//! Golden tests of the nvidia-smi parsers on real output captured from an H200 (driver 580) and
//! on failure texts quoted from public reports.

use std::path::{Path, PathBuf};

use gpufleet::telemetry::model::{ClockEventReasons, GpuProcess, GpuSample, LostReason};
use gpufleet::telemetry::smi_csv::{
    CsvError, FieldLayout, QUERY_FIELDS, classify_failure, parse_compute_app_line, parse_gpu_line,
    query_gpu_args, rejected_field,
};
use gpufleet::telemetry::smi_xml::{GpuDetail, SmiReport, parse_report};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn read(rel: &str) -> String {
    let path = fixtures().join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A capture in the fixture format: `$ command`, the output, then `[exit N]`.
struct Capture {
    command: String,
    output: String,
    exit: i32,
}

impl Capture {
    fn load(name: &str) -> Self {
        let text = read(&format!("nvidia-smi/h200-driver-580/{name}"));
        let (first, rest) = text.split_once('\n').expect("capture has a command line");
        let command = first.strip_prefix("$ ").expect("first line is `$ command`");
        let rest = rest.trim_end_matches('\n');
        let (output, last) = rest.rsplit_once('\n').unwrap_or(("", rest));
        let exit = last
            .strip_prefix("[exit ")
            .and_then(|s| s.strip_suffix(']'))
            .and_then(|s| s.parse().ok())
            .expect("last line is `[exit N]`");
        Self {
            command: command.to_string(),
            output: output.to_string(),
            exit,
        }
    }

    fn lines(&self) -> Vec<&str> {
        self.output.lines().collect()
    }

    /// The `--query-gpu=` / `--query-compute-apps=` field list of the command line.
    fn query_fields(&self) -> Vec<&str> {
        let list = self
            .command
            .split_whitespace()
            .find_map(|arg| {
                arg.split_once('=')
                    .filter(|(k, _)| k.starts_with("--query-"))
            })
            .map(|(_, v)| v)
            .expect("command has a --query- argument");
        list.split(',').collect()
    }
}

fn layout() -> FieldLayout {
    FieldLayout::new(QUERY_FIELDS)
}

#[test]
fn query_fields_are_the_captured_command_line() {
    for name in ["query_idle.txt", "query_idle_nounits.txt", "query_load.txt"] {
        assert_eq!(Capture::load(name).query_fields(), QUERY_FIELDS, "{name}");
    }
    let nounits = Capture::load("query_idle_nounits.txt");
    let built = format!(
        "nvidia-smi {}",
        query_gpu_args(QUERY_FIELDS, None).join(" ")
    );
    assert_eq!(built, nounits.command);
    let streamed = query_gpu_args(QUERY_FIELDS, Some(500));
    assert_eq!(&streamed[2..], ["-lms", "500"]);
}

fn assert_idle_identity(s: &GpuSample) {
    assert_eq!(s.index, 0);
    assert_eq!(&*s.uuid, "GPU-67e6a1fd-a60b-985c-12e3-e9316c8ff001");
    assert_eq!(&*s.name, "NVIDIA H200");
    assert_eq!(&*s.bus_id, "00000000:00:06.0");
    assert_eq!(s.driver_version.as_deref(), Some("580.159.04"));
    assert_eq!(s.memory_total_mib, Some(143771));
    assert_eq!(s.power_limit_w, Some(700.0));
    assert_eq!(s.power_min_limit_w, Some(200.0));
    assert_eq!(s.power_max_limit_w, Some(700.0));
    assert_eq!(s.power_default_limit_w, Some(700.0));
    assert_eq!(s.clock_mem_mhz, Some(3201));
    assert_eq!(s.clock_sm_max_mhz, Some(1980));
    assert_eq!(s.pstate.as_deref(), Some("P0"));
    assert_eq!(
        s.fan_speed_pct, None,
        "[N/A] on a passively cooled SXM card"
    );
    assert_eq!(s.ecc_uncorrected_volatile, Some(0));
    assert_eq!(
        s.retired_pages_pending, None,
        "[N/A] on Hopper (row remapping)"
    );
    assert_eq!(s.persistence_mode, Some(true));
    assert_eq!(
        s.temperature_slowdown_c, None,
        "tlimit is a margin, not a threshold"
    );
    assert_eq!(s.temperature_shutdown_c, None);
}

#[test]
fn idle_nounits_line() {
    let capture = Capture::load("query_idle_nounits.txt");
    assert_eq!(capture.exit, 0);
    let lines = capture.lines();
    assert_eq!(lines.len(), 1);
    let s = parse_gpu_line(&layout(), lines[0]).expect("idle line parses");
    assert_idle_identity(&s);
    assert_eq!(s.memory_used_mib, Some(0));
    assert_eq!(s.utilization_gpu_pct, Some(0.0));
    assert_eq!(s.utilization_memory_pct, Some(0.0));
    assert_eq!(s.temperature_c, Some(37.0));
    assert_eq!(s.temperature_memory_c, Some(40.0));
    assert_eq!(s.power_draw_w, Some(92.60));
    assert_eq!(s.clock_sm_mhz, Some(345));
    let reasons = s.clock_event_reasons.expect("mask present");
    assert_eq!(reasons, ClockEventReasons(ClockEventReasons::GPU_IDLE));
    assert_eq!(reasons.words(), ["gpu_idle"]);
    assert!(!reasons.is_hardware_slowdown());
}

#[test]
fn every_streamed_line_under_load() {
    let text = read("nvidia-smi/h200-driver-580/stream_load.txt");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 24);
    for line in lines {
        let s = parse_gpu_line(&layout(), line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert_eq!(&*s.uuid, "GPU-67e6a1fd-a60b-985c-12e3-e9316c8ff001");
        assert_eq!(s.memory_used_mib, Some(58361));
        let reasons = s.clock_event_reasons.expect("mask present");
        assert!(reasons.contains(ClockEventReasons::SW_POWER_CAP), "{line}");
        assert!(!reasons.contains(ClockEventReasons::GPU_IDLE), "{line}");
        assert_eq!(reasons.words(), ["sw_power_cap"]);
        let power = s.power_draw_w.expect("power draw");
        assert!((650.0..=700.0).contains(&power), "power {power}");
        assert_eq!(s.power_limit_w, Some(700.0));
        assert!(s.utilization_gpu_pct.expect("utilization") >= 99.0);
        let clock = s.clock_sm_mhz.expect("sm clock");
        assert!(clock < 1980, "power cap holds the clock below max: {clock}");
        assert_eq!(classify_failure(line), None);
    }
}

/// `--format=csv` captures: a header line, then values with units.
fn parse_with_units(name: &str) -> (GpuSample, GpuSample) {
    let capture = Capture::load(name);
    assert_eq!(capture.exit, 0);
    let lines = capture.lines();
    assert_eq!(lines.len(), 2, "{name}: header and one GPU");
    let header_layout = FieldLayout::from_header(lines[0]);
    assert_eq!(header_layout.len(), QUERY_FIELDS.len());
    assert_eq!(header_layout.known_columns(), layout().known_columns());
    assert!(matches!(
        parse_gpu_line(&layout(), lines[0]),
        Err(CsvError::MissingIndex { .. })
    ));
    let by_header = parse_gpu_line(&header_layout, lines[1]).expect("parses by header");
    let by_fields = parse_gpu_line(&layout(), lines[1]).expect("parses by field list");
    (by_header, by_fields)
}

#[test]
fn idle_with_units() {
    let (s, same) = parse_with_units("query_idle.txt");
    assert_eq!(s, same);
    assert_idle_identity(&s);
    assert_eq!(s.memory_used_mib, Some(0));
    assert_eq!(s.power_draw_w, Some(94.50));
    assert_eq!(s.clock_sm_mhz, Some(345));
    assert_eq!(s.utilization_gpu_pct, Some(0.0));
    assert_eq!(
        s.clock_event_reasons,
        Some(ClockEventReasons(ClockEventReasons::GPU_IDLE))
    );
}

#[test]
fn load_with_units() {
    let (s, same) = parse_with_units("query_load.txt");
    assert_eq!(s, same);
    assert_idle_identity(&s);
    assert_eq!(s.memory_used_mib, Some(58361));
    assert_eq!(s.utilization_gpu_pct, Some(99.0));
    assert_eq!(s.utilization_memory_pct, Some(24.0));
    assert_eq!(s.temperature_c, Some(60.0));
    assert_eq!(s.power_draw_w, Some(692.02));
    assert_eq!(s.clock_sm_mhz, Some(1455));
    assert_eq!(
        s.clock_event_reasons,
        Some(ClockEventReasons(ClockEventReasons::SW_POWER_CAP))
    );
}

#[test]
fn after_load_with_units() {
    let (s, same) = parse_with_units("query_after.txt");
    assert_eq!(s, same);
    assert_eq!(s.clock_event_reasons, Some(ClockEventReasons(0)));
    assert_eq!(s.clock_sm_mhz, Some(1980));
    assert_eq!(s.power_draw_w, Some(288.82));
}

#[test]
fn one_unknown_error_field_keeps_the_rest() {
    let capture = Capture::load("query_idle_nounits.txt");
    let line = capture.lines()[0].replacen("92.60", "[Unknown Error]", 1);
    assert!(line.contains("[Unknown Error]"));
    assert_eq!(classify_failure(&line), None);
    let s = parse_gpu_line(&layout(), &line).expect("still parses");
    assert_eq!(s.power_draw_w, None);
    assert_idle_identity(&s);
    assert_eq!(s.temperature_c, Some(37.0));
    assert_eq!(s.clock_sm_mhz, Some(345));
}

#[test]
fn compute_apps_under_load() {
    let capture = Capture::load("apps_load.txt");
    assert_eq!(
        capture.query_fields(),
        ["pid", "process_name", "used_memory", "gpu_uuid"]
    );
    let lines = capture.lines();
    assert!(parse_compute_app_line(lines[0]).is_err(), "header");
    assert_eq!(
        parse_compute_app_line(lines[1]).expect("process line"),
        GpuProcess {
            gpu_index: None,
            pid: 549,
            name: "python3".to_string(),
            gpu_uuid: "GPU-67e6a1fd-a60b-985c-12e3-e9316c8ff001".to_string(),
            used_memory_mib: Some(58352),
        }
    );
}

#[test]
fn rejected_field_name() {
    let capture = Capture::load("query_badfield.txt");
    assert_eq!(capture.exit, 2);
    assert_eq!(
        rejected_field(&capture.output).as_deref(),
        Some("not.a.field")
    );
    assert_eq!(classify_failure(&capture.output), None);
}

#[test]
fn old_throttle_names() {
    let capture = Capture::load("query_throttle_old.txt");
    let fields = capture.query_fields();
    assert_eq!(
        fields,
        [
            "clocks_throttle_reasons.active",
            "clocks_throttle_reasons.hw_slowdown"
        ]
    );
    assert_eq!(FieldLayout::new(&fields).known_columns(), 2);
    let lines = capture.lines();
    // nvidia-smi answers under the new names.
    assert_eq!(FieldLayout::from_header(lines[0]).known_columns(), 2);
    // gpufleet always queries `index` first; the capture did not, so add it to tie the line
    // to a GPU.
    let mut with_index = vec!["index"];
    with_index.extend(&fields);
    let s = parse_gpu_line(&FieldLayout::new(&with_index), &format!("0, {}", lines[1]))
        .expect("parses");
    assert_eq!(
        s.clock_event_reasons,
        Some(ClockEventReasons(ClockEventReasons::GPU_IDLE))
    );
}

fn report(name: &str) -> SmiReport {
    let capture = Capture::load(name);
    assert_eq!(capture.exit, 0);
    assert_eq!(capture.command, "nvidia-smi -q -x");
    parse_report(&capture.output).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn assert_static_detail(g: &GpuDetail) {
    assert_eq!(g.bus_id, "00000000:00:06.0");
    assert_eq!(g.product_name, "NVIDIA H200");
    assert_eq!(g.uuid, "GPU-67e6a1fd-a60b-985c-12e3-e9316c8ff001");
    assert_eq!(g.persistence_mode, Some(true));
    assert_eq!(g.memory_total_mib, Some(143771));
    assert_eq!(g.ecc_mode_enabled, Some(true));
    assert_eq!(g.ecc_uncorrected_volatile, Some(0));
    assert_eq!(g.ecc_uncorrected_aggregate, Some(0));
    assert_eq!(g.remapped_rows_pending, Some(false));
    assert_eq!(g.remapped_rows_failure, Some(false));
    assert_eq!((g.pcie_gen_current, g.pcie_gen_max), (Some(5), Some(5)));
    assert_eq!(
        (g.pcie_width_current, g.pcie_width_max),
        (Some(16), Some(16))
    );
    assert_eq!(g.power_limit_enforced_w, Some(700.0));
    assert_eq!(g.power_limit_default_w, Some(700.0));
    assert_eq!(g.power_limit_min_w, Some(200.0));
    assert_eq!(g.power_limit_max_w, Some(700.0));
    // Driver 580 prints only T.Limit margins, no absolute thresholds.
    assert_eq!(g.temperature_slowdown_c, None);
    assert_eq!(g.temperature_shutdown_c, None);
    assert_eq!(g.temperature_max_operating_c, None);
    assert_eq!(g.temperature_slowdown_tlimit_c, Some(-2.0));
    assert_eq!(g.temperature_shutdown_tlimit_c, Some(-8.0));
    assert_eq!(g.temperature_max_operating_tlimit_c, Some(0.0));
    // Current temperature plus margin is the same at idle and under load.
    assert_eq!(g.effective_max_operating_c(), Some(87.0));
    assert_eq!(g.effective_slowdown_c(), Some(89.0));
}

#[test]
fn xml_report_idle() {
    let r = report("smi_qx.txt");
    assert_eq!(r.driver_version.as_deref(), Some("580.159.04"));
    assert_eq!(r.cuda_version.as_deref(), Some("13.0"));
    assert_eq!(r.gpus.len(), 1);
    let g = &r.gpus[0];
    assert_static_detail(g);
    assert_eq!(g.temperature_c, Some(38.0));
    assert_eq!(g.temperature_tlimit_margin_c, Some(49.0));
    assert!(g.processes.is_empty());
}

#[test]
fn xml_report_load() {
    let r = report("smi_qx_load.txt");
    assert_eq!(r.gpus.len(), 1);
    let g = &r.gpus[0];
    assert_static_detail(g);
    assert_eq!(g.temperature_c, Some(60.0));
    assert_eq!(g.temperature_tlimit_margin_c, Some(27.0));
    assert_eq!(
        g.processes,
        [GpuProcess {
            gpu_index: None,
            pid: 549,
            name: "python3".to_string(),
            gpu_uuid: "GPU-67e6a1fd-a60b-985c-12e3-e9316c8ff001".to_string(),
            used_memory_mib: Some(58352),
        }]
    );
}

#[test]
fn xml_detail_completes_a_streamed_sample() {
    let r = report("smi_qx_load.txt");
    let text = read("nvidia-smi/h200-driver-580/stream_load.txt");
    let line = text.lines().next().expect("a line");
    let mut s = parse_gpu_line(&layout(), line).expect("parses");
    let before = s.clone();
    r.detail_for(&s).expect("same GPU").apply_to(&mut s);
    assert_eq!(s.temperature_slowdown_c, Some(89.0));
    assert_eq!(s.temperature_shutdown_c, None);
    assert_eq!(s.power_limit_w, before.power_limit_w);
    assert_eq!(s.power_draw_w, before.power_draw_w);

    // A reduced field list (old driver) gets its limits from the report.
    let reduced = FieldLayout::new(&["index", "uuid", "power.draw"]);
    let mut s = parse_gpu_line(
        &reduced,
        "0, GPU-67e6a1fd-a60b-985c-12e3-e9316c8ff001, 690.10",
    )
    .expect("parses");
    r.detail_for(&s).expect("same GPU").apply_to(&mut s);
    assert_eq!(s.power_limit_w, Some(700.0));
    assert_eq!(s.power_min_limit_w, Some(200.0));
    assert_eq!(s.memory_total_mib, Some(143771));
}

#[test]
fn failure_texts_from_public_reports() {
    let cases = [
        ("driver_not_loaded.txt", Some(LostReason::DriverNotLoaded)),
        (
            "driver_library_mismatch.txt",
            Some(LostReason::DriverLibraryMismatch),
        ),
        (
            "driver_library_mismatch_with_version.txt",
            Some(LostReason::DriverLibraryMismatch),
        ),
        ("no_devices.txt", Some(LostReason::NoDevices)),
        ("gpu_lost.txt", Some(LostReason::GpuLost)),
        ("handle_unknown_error.txt", Some(LostReason::GpuLost)),
        (
            "handle_unknown_error_nospace.txt",
            Some(LostReason::GpuLost),
        ),
        ("handle_not_found.txt", Some(LostReason::Other)),
        ("nvml_init_unknown_error.txt", Some(LostReason::Other)),
        (
            "nvml_init_insufficient_permissions.txt",
            Some(LostReason::Other),
        ),
        ("nvlink_inactive.txt", None),
    ];
    let dir = fixtures().join("failures");
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .expect("failures dir")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".txt"))
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> = cases.iter().map(|(n, _)| n.to_string()).collect();
    listed.sort();
    assert_eq!(on_disk, listed, "every failure fixture has an expectation");
    for (name, want) in cases {
        let text = read(&format!("failures/{name}"));
        assert_eq!(classify_failure(&text), want, "{name}");
        for line in text.lines().take(1) {
            assert_eq!(classify_failure(line), want, "{name}, first line alone");
        }
    }
}
