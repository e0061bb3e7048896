//! Unit tests of `smi_csv`, kept apart so the module reads as code.
use super::*;

const IDLE: &str = "0, GPU-67e6a1fd-a60b-985c-12e3-e9316c8ff001, NVIDIA H200, 00000000:00:06.0, 580.159.04, 143771, 0, 143156, 0, 0, 37, 40, 92.60, 700.00, 700.00, 200.00, 700.00, 700.00, 345, 3201, 1980, P0, [N/A], 0x0000000000000001, Not Active, Not Active, Not Active, Not Active, Not Active, 0, [N/A], Enabled, Default, 50";

fn layout() -> FieldLayout {
    FieldLayout::new(QUERY_FIELDS)
}

/// The idle line with column `i` replaced by `value`.
fn with_column(i: usize, value: &str) -> String {
    IDLE.split(", ")
        .enumerate()
        .map(|(n, v)| if n == i { value } else { v })
        .collect::<Vec<_>>()
        .join(", ")
}

fn column_of(field: &str) -> usize {
    QUERY_FIELDS
        .iter()
        .position(|f| *f == field)
        .expect("field in QUERY_FIELDS")
}

#[test]
fn parses_the_idle_line() {
    let s = parse_gpu_line(&layout(), IDLE).expect("idle line parses");
    assert_eq!(s.index, 0);
    assert_eq!(&*s.uuid, "GPU-67e6a1fd-a60b-985c-12e3-e9316c8ff001");
    assert_eq!(&*s.name, "NVIDIA H200");
    assert_eq!(&*s.bus_id, "00000000:00:06.0");
    assert_eq!(s.driver_version.as_deref(), Some("580.159.04"));
    assert_eq!(s.memory_total_mib, Some(143771));
    assert_eq!(s.memory_used_mib, Some(0));
    assert_eq!(s.power_draw_w, Some(92.60));
    assert_eq!(s.power_limit_w, Some(700.0));
    assert_eq!(s.power_min_limit_w, Some(200.0));
    assert_eq!(s.fan_speed_pct, None);
    assert_eq!(s.retired_pages_pending, None);
    assert_eq!(s.persistence_mode, Some(true));
    assert_eq!(s.pstate.as_deref(), Some("P0"));
    assert_eq!(s.clock_event_reasons, Some(ClockEventReasons(0x1)));
    assert_eq!(s.temperature_slowdown_c, None, "tlimit is a margin");
}

#[test]
fn every_marker_blanks_only_its_field() {
    let power = column_of("power.draw");
    for marker in [
        "[N/A]",
        "[Not Supported]",
        "[Unknown Error]",
        "N/A",
        "ERR!",
        "",
        "lots",
        "12.5.3",
        "[GPU requires reset]",
    ] {
        let line = with_column(power, marker);
        let s = parse_gpu_line(&layout(), &line)
            .unwrap_or_else(|e| panic!("{marker:?} broke the line: {e}"));
        assert_eq!(s.power_draw_w, None, "{marker:?}");
        assert_eq!(s.memory_total_mib, Some(143771), "{marker:?}");
        assert_eq!(s.power_limit_w, Some(700.0), "{marker:?}");
    }
}

#[test]
fn string_fields_with_markers_become_empty() {
    let line = with_column(column_of("name"), "[Unknown Error]");
    let s = parse_gpu_line(&layout(), &line).expect("parses");
    assert_eq!(&*s.name, "");
    let line = with_column(column_of("pstate"), "[N/A]");
    assert_eq!(
        parse_gpu_line(&layout(), &line).expect("parses").pstate,
        None
    );
}

#[test]
fn wrong_column_count_is_an_error() {
    let short = IDLE.rsplit_once(", ").expect("has columns").0;
    assert_eq!(
        parse_gpu_line(&layout(), short),
        Err(CsvError::ColumnCount {
            expected: 34,
            found: 33
        })
    );
    let long = format!("{IDLE}, 7");
    assert_eq!(
        parse_gpu_line(&layout(), &long),
        Err(CsvError::ColumnCount {
            expected: 34,
            found: 35
        })
    );
    assert!(matches!(
        parse_gpu_line(&layout(), ""),
        Err(CsvError::ColumnCount { found: 1, .. })
    ));
}

#[test]
fn missing_index_is_an_error() {
    let line = with_column(0, "[Unknown Error]");
    assert_eq!(
        parse_gpu_line(&layout(), &line),
        Err(CsvError::MissingIndex {
            value: "[Unknown Error]".to_string()
        })
    );
    let no_index = FieldLayout::new(&["uuid", "power.draw"]);
    assert_eq!(
        parse_gpu_line(&no_index, "GPU-x, 5"),
        Err(CsvError::NoIndexField)
    );
}

#[test]
fn old_throttle_names_and_aliases_map_to_the_same_fields() {
    let layout = FieldLayout::new(&[
        "index",
        "clocks.current.sm",
        "clocks.current.memory",
        "clocks_throttle_reasons.active",
        "clocks_throttle_reasons.hw_slowdown",
        "gpu.power.current_limit",
        "gpu_uuid",
    ]);
    assert_eq!(layout.known_columns(), 7);
    let s = parse_gpu_line(
        &layout,
        "3, 1410, 3201, 0x0000000000000044, Active, 650.00, GPU-a",
    )
    .expect("parses");
    assert_eq!(s.index, 3);
    assert_eq!(s.clock_sm_mhz, Some(1410));
    assert_eq!(s.clock_mem_mhz, Some(3201));
    let reasons = s.clock_event_reasons.expect("mask");
    assert!(reasons.is_thermal() && reasons.is_hardware_slowdown());
    assert_eq!(s.power_limit_w, Some(650.0));
    assert_eq!(&*s.uuid, "GPU-a");
}

#[test]
fn mask_is_built_from_columns_when_the_mask_is_unknown() {
    let line = with_column(column_of("clocks_event_reasons.active"), "[N/A]");
    let line = line.replacen(
        "Not Active, Not Active, Not Active, Not Active, Not Active",
        "Not Active, Active, Not Active, Active, [Unknown Error]",
        1,
    );
    let s = parse_gpu_line(&layout(), &line).expect("parses");
    assert_eq!(
        s.clock_event_reasons,
        Some(ClockEventReasons(
            ClockEventReasons::HW_THERMAL_SLOWDOWN | ClockEventReasons::SW_POWER_CAP
        ))
    );
}

#[test]
fn no_reason_information_leaves_reasons_unknown() {
    let layout = FieldLayout::new(&[
        "index",
        "clocks_event_reasons.active",
        "clocks_event_reasons.sw_power_cap",
    ]);
    let s = parse_gpu_line(&layout, "0, [N/A], [N/A]").expect("parses");
    assert_eq!(s.clock_event_reasons, None);
    let supported_only = FieldLayout::new(&["index", "clocks_event_reasons.supported"]);
    let s = parse_gpu_line(&supported_only, "0, 0x00000000000001FF").expect("parses");
    assert_eq!(s.clock_event_reasons, None, "supported is not active");
}

#[test]
fn requested_limit_is_used_when_enforced_is_unknown() {
    let layout = FieldLayout::new(&["index", "enforced.power.limit", "power.limit"]);
    let s = parse_gpu_line(&layout, "0, [N/A], 450.00").expect("parses");
    assert_eq!(s.power_limit_w, Some(450.0));
    let s = parse_gpu_line(&layout, "0, 400.00, 450.00").expect("parses");
    assert_eq!(s.power_limit_w, Some(400.0));
}

#[test]
fn unknown_fields_are_ignored_columns() {
    let layout = FieldLayout::new(&["index", "compute_cap", "temperature.gpu.tlimit"]);
    assert_eq!(layout.len(), 3);
    assert_eq!(layout.known_columns(), 1);
    let s = parse_gpu_line(&layout, "1, 9.0, 50").expect("parses");
    assert_eq!(s.index, 1);
    assert_eq!(s.temperature_c, None);
    assert_eq!(s.temperature_slowdown_c, None);
}

#[test]
fn units_are_accepted_and_header_builds_a_layout() {
    let layout = FieldLayout::from_header(
        "index, memory.total [MiB], utilization.gpu [%], power.draw [W], clocks.current.sm [MHz], temperature.gpu\r\n",
    );
    assert_eq!(layout.known_columns(), 6);
    let s =
        parse_gpu_line(&layout, "0, 143771 MiB, 99 %, 692.02 W, 1455 MHz, 60\r\n").expect("parses");
    assert_eq!(s.memory_total_mib, Some(143771));
    assert_eq!(s.utilization_gpu_pct, Some(99.0));
    assert_eq!(s.power_draw_w, Some(692.02));
    assert_eq!(s.clock_sm_mhz, Some(1455));
    assert_eq!(s.temperature_c, Some(60.0));
    assert!(parse_gpu_line(&layout, "index, memory.total [MiB], a, b, c, d").is_err());
}

#[test]
fn fast_decimal_matches_std_parse() {
    for v in [
        "0",
        "0.0",
        "92.60",
        "692.43",
        "700.00",
        "-2",
        "-0.5",
        "5.",
        "123456789012345",
        "0.000000000000001",
        "99.99",
        "1e3",
        ".",
        "-",
        "1.2.3",
        "1234567890123456",
    ] {
        let std = v.parse::<f64>().ok().filter(|x| x.is_finite());
        assert_eq!(parse_f64(v), std, "{v}");
    }
}

#[test]
fn hex_mask_and_flags() {
    assert_eq!(parse_hex_mask("0x0000000000000004"), Some(4));
    assert_eq!(parse_hex_mask("0x8000000000000000"), Some(1 << 63));
    assert_eq!(parse_hex_mask("[N/A]"), None);
    assert_eq!(parse_hex_mask("0x"), None);
    assert_eq!(parse_yes_no("Yes"), Some(true));
    assert_eq!(parse_enabled("Disabled"), Some(false));
    assert_eq!(parse_u64("18446744073709551615"), None, "20 digits refused");
    assert_eq!(parse_u32("4294967296"), None);
}

#[test]
fn a_performance_state_is_read_as_written_and_shared_between_lines() {
    assert_eq!(pstate_text("P12").as_deref(), Some("P12"));
    assert_eq!(pstate_text("P0").as_deref(), Some("P0"));
    // Not one of NVML's sixteen, but written like one: kept as written, not renumbered.
    assert_eq!(pstate_text("P01").as_deref(), Some("P01"));
    assert_eq!(pstate_text("P42").as_deref(), Some("P42"));
    assert_eq!(pstate_text("Unknown"), None);
    assert_eq!(pstate_text("P"), None);
    assert_eq!(pstate_text("[N/A]"), None);
    // Two streamed lines in P0 hold the same text, not a copy each.
    let first = parse_gpu_line(&layout(), IDLE).expect("line").pstate;
    let second = parse_gpu_line(&layout(), IDLE).expect("line").pstate;
    let (Some(first), Some(second)) = (first, second) else {
        panic!("the idle line is in P0");
    };
    assert!(SharedText::ptr_eq(&first, &second));
}

#[test]
fn query_args() {
    assert_eq!(
        query_gpu_args(&["index", "uuid"], Some(500)),
        vec![
            "--query-gpu=index,uuid",
            "--format=csv,noheader,nounits",
            "-lms",
            "500"
        ]
    );
    assert_eq!(query_gpu_args(QUERY_FIELDS, None).len(), 2);
}

#[test]
fn stream_fields_are_query_fields_with_index_first() {
    assert_eq!(STREAM_FIELDS.first(), Some(&"index"));
    for field in STREAM_FIELDS {
        assert!(QUERY_FIELDS.contains(field), "{field} is not queried");
    }
    let layout = FieldLayout::new(STREAM_FIELDS);
    assert_eq!(
        layout.known_columns(),
        STREAM_FIELDS.len(),
        "every one is read"
    );
}

/// The idle line's values for `fields`, as nvidia-smi prints them when asked for those.
fn idle_columns(fields: &[&str]) -> String {
    let values: Vec<&str> = IDLE.split(", ").collect();
    fields
        .iter()
        .map(|f| values[column_of(f)])
        .collect::<Vec<_>>()
        .join(", ")
}

#[test]
fn a_stream_line_overlaid_on_the_detail_equals_the_full_line() {
    let detail = parse_gpu_line(&layout(), IDLE).expect("full line");
    let stream = FieldLayout::new(STREAM_FIELDS);
    let streamed = parse_gpu_line(&stream, &idle_columns(STREAM_FIELDS)).expect("stream line");
    assert_eq!(&*streamed.name, "", "the stream alone has no name");
    assert_eq!(overlay_sample(&stream, streamed, &detail), detail);
}

#[test]
fn a_streamed_reading_shares_the_full_readings_text_instead_of_copying_it() {
    use std::sync::Arc;
    let detail = parse_gpu_line(&layout(), IDLE).expect("full line");
    let stream = FieldLayout::new(STREAM_FIELDS);
    let same = parse_gpu_line(&stream, &idle_columns(STREAM_FIELDS)).expect("stream line");
    let out = overlay_sample(&stream, same, &detail);
    for (field, ours, theirs) in [
        ("name", &out.name, &detail.name),
        ("uuid", &out.uuid, &detail.uuid),
        ("bus id", &out.bus_id, &detail.bus_id),
    ] {
        assert!(Arc::ptr_eq(ours, theirs), "{field} copied");
    }
    let (ours, theirs) = (out.pstate.expect("P0"), detail.pstate.clone().expect("P0"));
    assert!(Arc::ptr_eq(&ours, &theirs), "an unchanged P-state copied");
    // A P-state that changed is the streamed one.
    let line = "0, 58361, 100, 25, 59, 50, 692.43, 700.00, 1485, 3201, P2, 0x0000000000000000";
    let changed = parse_gpu_line(&stream, line).expect("stream line");
    assert_eq!(
        overlay_sample(&stream, changed, &detail).pstate.as_deref(),
        Some("P2")
    );
}

#[test]
fn streamed_values_replace_and_unknowns_stay_unknown() {
    let detail = parse_gpu_line(&layout(), IDLE).expect("full line");
    let stream = FieldLayout::new(STREAM_FIELDS);
    let line = "0, 58361, 100, 25, 59, 50, [Unknown Error], [N/A], 1485, 3201, P2, [N/A]";
    let streamed = parse_gpu_line(&stream, line).expect("stream line");
    let s = overlay_sample(&stream, streamed, &detail);
    assert_eq!(s.memory_used_mib, Some(58361));
    assert_eq!(s.utilization_gpu_pct, Some(100.0));
    assert_eq!(s.pstate.as_deref(), Some("P2"));
    assert_eq!(
        s.power_draw_w, None,
        "an unknown reading is not the old one"
    );
    assert_eq!(s.clock_event_reasons, None, "no stale slowdown reasons");
    assert_eq!(
        s.power_limit_w,
        Some(700.0),
        "the limit falls back to the detail's"
    );
    assert_eq!(s.memory_total_mib, Some(143771));
    assert_eq!(s.power_max_limit_w, Some(700.0));
    assert_eq!(s.uuid, detail.uuid);
    assert_eq!(s.driver_version.as_deref(), Some("580.159.04"));
    assert_eq!(s.persistence_mode, Some(true));
}

#[test]
fn compute_app_lines() {
    let p = parse_compute_app_line("549, python3, 58352, GPU-67e6a1fd").expect("parses");
    assert_eq!(
        p,
        GpuProcess {
            pid: 549,
            name: "python3".to_string(),
            gpu_uuid: "GPU-67e6a1fd".to_string(),
            used_memory_mib: Some(58352),
        }
    );
    let p = parse_compute_app_line("7, /opt/a,b/run, [N/A], GPU-x\n").expect("parses");
    assert_eq!(p.name, "/opt/a,b/run");
    assert_eq!(p.used_memory_mib, None);
    assert_eq!(
        parse_compute_app_line("pid, process_name, used_gpu_memory [MiB], gpu_uuid"),
        Err(CsvError::MissingPid {
            value: "pid".to_string()
        })
    );
    assert_eq!(
        parse_compute_app_line("549, python3"),
        Err(CsvError::AppColumnCount { found: 2 })
    );
    assert!(parse_compute_app_line("").is_err());
}

#[test]
fn failure_texts() {
    let cases = [
        (
            "Unable to determine the device handle for GPU 0000:02:00.0: GPU is lost. Reboot the system to recover this GPU",
            Some(LostReason::GpuLost),
        ),
        (
            "Unable to determine the device handle for GPU0000:65:00.0: Unknown Error",
            Some(LostReason::GpuLost),
        ),
        (
            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n",
            Some(LostReason::DriverNotLoaded),
        ),
        (
            "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 570.124\n",
            Some(LostReason::DriverLibraryMismatch),
        ),
        ("No devices were found", Some(LostReason::NoDevices)),
        (
            "Unable to determine the device handle for gpu 0000:01:00.0: Not Found",
            Some(LostReason::Other),
        ),
        (
            "Failed to initialize NVML: Unknown Error",
            Some(LostReason::Other),
        ),
        ("[Unknown Error]", None),
        (IDLE, None),
        ("", None),
        (
            "NVML: Unable to retrieve Nvlink information as all links are inActive",
            None,
        ),
    ];
    for (text, want) in cases {
        assert_eq!(classify_failure(text), want, "{text}");
    }
    let with_unknown = with_column(column_of("fan.speed"), "[Unknown Error]");
    assert_eq!(classify_failure(&with_unknown), None);
}

#[test]
fn rejected_field_names() {
    assert_eq!(
        rejected_field("Field \"not.a.field\" is not a valid field to query.\n\n"),
        Some("not.a.field".to_string())
    );
    assert_eq!(
        rejected_field("compute_cap is not a valid field to query"),
        Some("compute_cap".to_string())
    );
    assert_eq!(rejected_field("No devices were found"), None);
}
