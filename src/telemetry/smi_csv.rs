//! The `nvidia-smi --query-gpu` CSV stream parser (the telemetry hot path), compute-app lines,
//! and recognition of nvidia-smi's failure texts.

use thiserror::Error;

use crate::telemetry::smi_csv_values::{
    Fields, contains_ignore_ascii_case, parse_active, parse_enabled, parse_f64, parse_hex_mask,
    parse_u32, parse_u64, parse_yes_no, pstate_text, text,
};

use crate::telemetry::model::{
    CLOCK_EVENT_BITS, ClockEventReasons, GpuProcess, GpuSample, LostReason, SharedText,
};

/// The fields gpufleet asks for, in the order of the captured `query_idle.txt` command line.
pub const QUERY_FIELDS: &[&str] = &[
    "index",
    "uuid",
    "name",
    "pci.bus_id",
    "driver_version",
    "memory.total",
    "memory.used",
    "memory.free",
    "utilization.gpu",
    "utilization.memory",
    "temperature.gpu",
    "temperature.memory",
    "power.draw",
    "power.limit",
    "enforced.power.limit",
    "power.min_limit",
    "power.max_limit",
    "power.default_limit",
    "clocks.sm",
    "clocks.mem",
    "clocks.max.sm",
    "pstate",
    "fan.speed",
    "clocks_event_reasons.active",
    "clocks_event_reasons.hw_slowdown",
    "clocks_event_reasons.hw_thermal_slowdown",
    "clocks_event_reasons.sw_thermal_slowdown",
    "clocks_event_reasons.sw_power_cap",
    "clocks_event_reasons.hw_power_brake_slowdown",
    "ecc.errors.uncorrected.volatile.total",
    "retired_pages.pending",
    "persistence_mode",
    "compute_mode",
    "temperature.gpu.tlimit",
];

/// The fields of [`QUERY_FIELDS`] that change from one tick to the next, `index` first: what a
/// long-lived `-lms` stream asks for. Measured on an H200 (docs/PERFORMANCE.md), a stream's CPU
/// cost grows with its field count (0.19 CPU-s per 30 s for all 34, 0.02 for 5), so the rest
/// (names, totals, limits, ECC, ...) is read by an occasional full query and merged in with
/// [`overlay_sample`].
pub const STREAM_FIELDS: &[&str] = &[
    "index",
    "memory.used",
    "utilization.gpu",
    "utilization.memory",
    "temperature.gpu",
    "temperature.memory",
    "power.draw",
    "enforced.power.limit",
    "clocks.sm",
    "clocks.mem",
    "pstate",
    "clocks_event_reasons.active",
];

/// The fields of `--query-compute-apps` that [`parse_compute_app_line`] expects, in order.
pub const COMPUTE_APPS_FIELDS: &[&str] = &["pid", "process_name", "used_memory", "gpu_uuid"];

/// Why one CSV line could not become a sample or a process.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CsvError {
    #[error("{}", rust_i18n::t!("telemetry_csv_error.columns", found = .found, expected = .expected))]
    ColumnCount { expected: usize, found: usize },
    #[error("{}", rust_i18n::t!("telemetry_csv_error.no_index_field"))]
    NoIndexField,
    #[error("{}", rust_i18n::t!("telemetry_csv_error.index", value = format!("{:?}", .value)))]
    MissingIndex { value: String },
    #[error("{}", rust_i18n::t!("telemetry_csv_error.app_columns", found = .found))]
    AppColumnCount { found: usize },
    #[error("{}", rust_i18n::t!("telemetry_csv_error.pid", value = format!("{:?}", .value)))]
    MissingPid { value: String },
}

/// The argv (without the program name) of a `--query-gpu` call in the `noheader,nounits` form
/// that [`parse_gpu_line`] reads; with an interval, nvidia-smi keeps streaming (`-lms`).
pub fn query_gpu_args(fields: &[&str], interval_ms: Option<u32>) -> Vec<String> {
    let mut args = vec![
        format!("--query-gpu={}", fields.join(",")),
        "--format=csv,noheader,nounits".to_string(),
    ];
    if let Some(ms) = interval_ms {
        args.push("-lms".to_string());
        args.push(ms.to_string());
    }
    args
}

/// What one CSV column fills in a [`GpuSample`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Column {
    Index,
    Uuid,
    Name,
    BusId,
    DriverVersion,
    MemoryTotal,
    MemoryUsed,
    UtilizationGpu,
    UtilizationMemory,
    Temperature,
    TemperatureMemory,
    PowerDraw,
    PowerRequestedLimit,
    PowerEnforcedLimit,
    PowerMinLimit,
    PowerMaxLimit,
    PowerDefaultLimit,
    ClockSm,
    ClockSmMax,
    ClockMem,
    Pstate,
    FanSpeed,
    ReasonsActive,
    /// One `clocks_event_reasons.<word>` column: `Active` sets this bit.
    Reason(u64),
    EccUncorrectedVolatile,
    RetiredPagesPending,
    PersistenceMode,
    Ignored,
}

impl Column {
    fn from_field(field: &str) -> Column {
        match field {
            "index" => Column::Index,
            "uuid" | "gpu_uuid" => Column::Uuid,
            "name" | "gpu_name" => Column::Name,
            "pci.bus_id" | "gpu_bus_id" => Column::BusId,
            "driver_version" => Column::DriverVersion,
            "memory.total" => Column::MemoryTotal,
            "memory.used" => Column::MemoryUsed,
            "utilization.gpu" => Column::UtilizationGpu,
            "utilization.memory" => Column::UtilizationMemory,
            "temperature.gpu" => Column::Temperature,
            "temperature.memory" => Column::TemperatureMemory,
            "power.draw"
            | "power.draw.instant"
            | "gpu.power.draw.instant"
            | "power.draw.average"
            | "gpu.power.draw.average" => Column::PowerDraw,
            "power.limit" | "gpu.power.requested_limit" => Column::PowerRequestedLimit,
            "enforced.power.limit" | "gpu.power.current_limit" => Column::PowerEnforcedLimit,
            "power.min_limit" | "gpu.power.min_limit" => Column::PowerMinLimit,
            "power.max_limit" | "gpu.power.max_limit" => Column::PowerMaxLimit,
            "power.default_limit" | "gpu.power.default_limit" => Column::PowerDefaultLimit,
            "clocks.sm" | "clocks.current.sm" => Column::ClockSm,
            "clocks.max.sm" => Column::ClockSmMax,
            "clocks.mem" | "clocks.current.memory" => Column::ClockMem,
            "pstate" => Column::Pstate,
            "fan.speed" => Column::FanSpeed,
            "ecc.errors.uncorrected.volatile.total" => Column::EccUncorrectedVolatile,
            "retired_pages.pending" => Column::RetiredPagesPending,
            "persistence_mode" => Column::PersistenceMode,
            // A margin below the max operating temperature, not a temperature: it must never be
            // mistaken for the slowdown point, so it is not read here.
            "temperature.gpu.tlimit" => Column::Ignored,
            other => Self::clock_reason(other).unwrap_or(Column::Ignored),
        }
    }

    /// Drivers before 535 name the reasons `clocks_throttle_reasons.*`; both spellings are asked
    /// for by hosts of different ages.
    fn clock_reason(field: &str) -> Option<Column> {
        let word = field
            .strip_prefix("clocks_event_reasons.")
            .or_else(|| field.strip_prefix("clocks_throttle_reasons."))?;
        if word == "active" {
            return Some(Column::ReasonsActive);
        }
        CLOCK_EVENT_BITS
            .iter()
            .find(|(_, name, _)| *name == word)
            .map(|(bit, _, _)| Column::Reason(*bit))
    }
}

/// Which [`GpuSample`] field each column of a `--query-gpu` line fills, built once per field list.
///
/// Unknown fields become ignored columns, so a host whose driver rejected some fields can stream
/// with a reduced or reordered list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldLayout {
    columns: Vec<Column>,
    has_index: bool,
}

impl FieldLayout {
    /// A layout for the fields as passed to `--query-gpu` (new and old names, aliases).
    pub fn new(fields: &[&str]) -> Self {
        let columns: Vec<Column> = fields
            .iter()
            .map(|f| Column::from_field(f.trim()))
            .collect();
        let has_index = columns.contains(&Column::Index);
        Self { columns, has_index }
    }

    /// A layout from the header line of `--format=csv` output, e.g.
    /// `index, memory.total [MiB], clocks.current.sm [MHz]`; unit brackets are dropped.
    pub fn from_header(header: &str) -> Self {
        let names: Vec<&str> = header
            .trim_end_matches(['\r', '\n'])
            .split(',')
            .map(|h| h.split(" [").next().unwrap_or(h).trim())
            .collect();
        Self::new(&names)
    }

    /// Number of columns a line must have.
    pub fn len(&self) -> usize {
        self.columns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.columns.is_empty()
    }

    /// Number of columns that fill a sample field (the rest are read past).
    pub fn known_columns(&self) -> usize {
        self.columns
            .iter()
            .filter(|c| **c != Column::Ignored)
            .count()
    }
}

/// Values that only live while one line is parsed and are resolved into the sample at the end.
#[derive(Default)]
struct LineState {
    index: Option<u32>,
    requested_limit_w: Option<f64>,
    enforced_limit_w: Option<f64>,
    mask: Option<u64>,
    mask_from_columns: u64,
    any_reason_column: bool,
}

/// Parses one line of `--query-gpu` output laid out as `layout`.
///
/// Reads `--format=csv,noheader,nounits` lines and also lines with units (`143771 MiB`,
/// `94.50 W`), so the same function serves captures taken with plain `--format=csv`.
/// A marker (`[N/A]`, `[Not Supported]`, `[Unknown Error]`, `N/A`, `ERR!`, empty) or any
/// unparsable value makes only that field `None`. The line is an error only when it has the
/// wrong number of columns or no parsable `index`.
pub fn parse_gpu_line(layout: &FieldLayout, line: &str) -> Result<GpuSample, CsvError> {
    if !layout.has_index {
        return Err(CsvError::NoIndexField);
    }
    let line = line.trim_end_matches(['\r', '\n']);
    let mut sample = GpuSample::default();
    let mut state = LineState::default();
    let mut values = Fields { rest: Some(line) };
    let mut index_value = "";
    for &column in &layout.columns {
        let Some(raw) = values.next() else {
            return Err(column_count_error(layout, line));
        };
        let value = raw.trim_ascii();
        if column == Column::Index {
            index_value = value;
        }
        fill(column, value, &mut sample, &mut state);
    }
    if values.next().is_some() {
        return Err(column_count_error(layout, line));
    }
    let Some(index) = state.index else {
        return Err(CsvError::MissingIndex {
            value: index_value.to_string(),
        });
    };
    sample.index = index;
    // `power.limit` is the requested limit; the card is held to the enforced one when known.
    sample.power_limit_w = state.enforced_limit_w.or(state.requested_limit_w);
    sample.clock_event_reasons = match state.mask {
        Some(mask) => Some(ClockEventReasons(mask)),
        None if state.any_reason_column => Some(ClockEventReasons(state.mask_from_columns)),
        None => None,
    };
    Ok(sample)
}

fn column_count_error(layout: &FieldLayout, line: &str) -> CsvError {
    CsvError::ColumnCount {
        expected: layout.columns.len(),
        found: line.bytes().filter(|&b| b == b',').count() + 1,
    }
}

fn fill(column: Column, value: &str, s: &mut GpuSample, st: &mut LineState) {
    match column {
        Column::Index => st.index = parse_u64(value).and_then(|v| u32::try_from(v).ok()),
        Column::Uuid => s.uuid = text(value).map(SharedText::from).unwrap_or_default(),
        Column::Name => s.name = text(value).map(SharedText::from).unwrap_or_default(),
        Column::BusId => s.bus_id = text(value).map(SharedText::from).unwrap_or_default(),
        Column::DriverVersion => s.driver_version = text(value).map(SharedText::from),
        Column::MemoryTotal => s.memory_total_mib = parse_u64(value),
        Column::MemoryUsed => s.memory_used_mib = parse_u64(value),
        Column::UtilizationGpu => s.utilization_gpu_pct = parse_f64(value),
        Column::UtilizationMemory => s.utilization_memory_pct = parse_f64(value),
        Column::Temperature => s.temperature_c = parse_f64(value),
        Column::TemperatureMemory => s.temperature_memory_c = parse_f64(value),
        Column::PowerDraw => {
            // Several draw aliases may be queried; the first one that has a value wins.
            if s.power_draw_w.is_none() {
                s.power_draw_w = parse_f64(value);
            }
        }
        Column::PowerRequestedLimit => st.requested_limit_w = parse_f64(value),
        Column::PowerEnforcedLimit => st.enforced_limit_w = parse_f64(value),
        Column::PowerMinLimit => s.power_min_limit_w = parse_f64(value),
        Column::PowerMaxLimit => s.power_max_limit_w = parse_f64(value),
        Column::PowerDefaultLimit => s.power_default_limit_w = parse_f64(value),
        Column::ClockSm => s.clock_sm_mhz = parse_u32(value),
        Column::ClockSmMax => s.clock_sm_max_mhz = parse_u32(value),
        Column::ClockMem => s.clock_mem_mhz = parse_u32(value),
        Column::Pstate => s.pstate = pstate_text(value),
        Column::FanSpeed => s.fan_speed_pct = parse_f64(value),
        Column::ReasonsActive => st.mask = parse_hex_mask(value),
        Column::Reason(bit) => match parse_active(value) {
            Some(true) => {
                st.any_reason_column = true;
                st.mask_from_columns |= bit;
            }
            Some(false) => st.any_reason_column = true,
            None => {}
        },
        Column::EccUncorrectedVolatile => s.ecc_uncorrected_volatile = parse_u64(value),
        Column::RetiredPagesPending => s.retired_pages_pending = parse_yes_no(value),
        Column::PersistenceMode => s.persistence_mode = parse_enabled(value),
        Column::Ignored => {}
    }
}

/// A streamed sample completed from the last full one of the same GPU: every field a column of
/// `layout` (the stream's) fills comes from `streamed`, even when it read as unknown there, and
/// every other field keeps its `detail` value.
///
/// Two exceptions follow how [`parse_gpu_line`] resolves them. The power limit is the enforced
/// one or else the requested one; when the stream carries only one of the two and it reads
/// unknown, the detail's resolution stands rather than a blank. Clock-event reasons do not fall
/// back: a mask from a full query up to a refresh interval old would claim a slowdown that has
/// ended.
pub fn overlay_sample(
    layout: &FieldLayout,
    mut streamed: GpuSample,
    detail: &GpuSample,
) -> GpuSample {
    let mut out = detail.clone();
    let (mut requested, mut enforced) = (false, false);
    for &column in &layout.columns {
        let s = &mut streamed;
        match column {
            Column::Index => out.index = s.index,
            Column::Uuid => out.uuid = std::mem::take(&mut s.uuid),
            Column::Name => out.name = std::mem::take(&mut s.name),
            Column::BusId => out.bus_id = std::mem::take(&mut s.bus_id),
            Column::DriverVersion => out.driver_version = s.driver_version.take(),
            Column::MemoryTotal => out.memory_total_mib = s.memory_total_mib,
            Column::MemoryUsed => out.memory_used_mib = s.memory_used_mib,
            Column::UtilizationGpu => out.utilization_gpu_pct = s.utilization_gpu_pct,
            Column::UtilizationMemory => out.utilization_memory_pct = s.utilization_memory_pct,
            Column::Temperature => out.temperature_c = s.temperature_c,
            Column::TemperatureMemory => out.temperature_memory_c = s.temperature_memory_c,
            Column::PowerDraw => out.power_draw_w = s.power_draw_w,
            Column::PowerRequestedLimit => requested = true,
            Column::PowerEnforcedLimit => enforced = true,
            Column::PowerMinLimit => out.power_min_limit_w = s.power_min_limit_w,
            Column::PowerMaxLimit => out.power_max_limit_w = s.power_max_limit_w,
            Column::PowerDefaultLimit => out.power_default_limit_w = s.power_default_limit_w,
            Column::ClockSm => out.clock_sm_mhz = s.clock_sm_mhz,
            Column::ClockSmMax => out.clock_sm_max_mhz = s.clock_sm_max_mhz,
            Column::ClockMem => out.clock_mem_mhz = s.clock_mem_mhz,
            // The same P-state as the full reading's keeps its text: the reading then holds
            // no text of its own, so nothing is allocated for it where it is made or freed where
            // it is dropped (the fleet's loop, on another thread).
            Column::Pstate if s.pstate != out.pstate => out.pstate = s.pstate.take(),
            Column::Pstate => {}
            Column::FanSpeed => out.fan_speed_pct = s.fan_speed_pct,
            Column::ReasonsActive | Column::Reason(_) => {
                out.clock_event_reasons = s.clock_event_reasons;
            }
            Column::EccUncorrectedVolatile => {
                out.ecc_uncorrected_volatile = s.ecc_uncorrected_volatile;
            }
            Column::RetiredPagesPending => out.retired_pages_pending = s.retired_pages_pending,
            Column::PersistenceMode => out.persistence_mode = s.persistence_mode,
            Column::Ignored => {}
        }
    }
    if requested && enforced {
        out.power_limit_w = streamed.power_limit_w;
    } else if requested || enforced {
        out.power_limit_w = streamed.power_limit_w.or(out.power_limit_w);
    }
    out
}

/// Parses one line of `--query-compute-apps=pid,process_name,used_memory,gpu_uuid` output,
/// with or without units (`58352 MiB`).
///
/// The pid and the last two columns are taken from the ends of the line, so a process name
/// that itself contains a comma stays whole.
pub fn parse_compute_app_line(line: &str) -> Result<GpuProcess, CsvError> {
    let line = line.trim_end_matches(['\r', '\n']);
    let split = line.split_once(',').and_then(|(pid, rest)| {
        let (rest, uuid) = rest.rsplit_once(',')?;
        let (name, memory) = rest.rsplit_once(',')?;
        Some((pid, name, memory, uuid))
    });
    let Some((pid_raw, name_raw, memory_raw, uuid_raw)) = split else {
        return Err(CsvError::AppColumnCount {
            found: line.bytes().filter(|&b| b == b',').count() + 1,
        });
    };
    let pid_value = pid_raw.trim_ascii();
    let Some(pid) = parse_u64(pid_value).and_then(|v| u32::try_from(v).ok()) else {
        return Err(CsvError::MissingPid {
            value: pid_value.to_string(),
        });
    };
    Ok(GpuProcess {
        gpu_index: None,
        pid,
        name: text(name_raw.trim_ascii())
            .map(str::to_string)
            .unwrap_or_default(),
        gpu_uuid: text(uuid_raw.trim_ascii())
            .map(str::to_string)
            .unwrap_or_default(),
        used_memory_mib: parse_u64(memory_raw.trim_ascii()),
    })
}

/// Recognises the texts nvidia-smi prints when it cannot read the GPUs at all.
///
/// Returns `None` for ordinary data lines and for field markers such as `[Unknown Error]`,
/// which make one field unknown but do not end the stream.
pub fn classify_failure(text: &str) -> Option<LostReason> {
    // Data lines start with the GPU index; the stream source may call this on every line, so
    // skip the substring scans for them.
    if text.as_bytes().first().is_some_and(u8::is_ascii_digit) && !text.contains('\n') {
        return None;
    }
    let has = |needle: &str| contains_ignore_ascii_case(text, needle);
    let handle_failed = has("unable to determine the device handle");
    if has("driver/library version mismatch") || has("nvml/rm version mismatch") {
        Some(LostReason::DriverLibraryMismatch)
    } else if has("couldn't communicate with the nvidia driver")
        || has("failed to initialize nvml: driver not loaded")
    {
        Some(LostReason::DriverNotLoaded)
    } else if has("gpu is lost") || has("has fallen off the bus") {
        Some(LostReason::GpuLost)
    } else if handle_failed && has("unknown error") {
        // On bare metal this is a GPU that dropped off the bus without NVML saying "lost"
        // (https://github.com/NVIDIA/open-gpu-kernel-modules/issues/387,
        // https://github.com/NVIDIA/nvidia-docker/issues/1553).
        Some(LostReason::GpuLost)
    } else if has("no devices were found") {
        Some(LostReason::NoDevices)
    } else if handle_failed || has("failed to initialize nvml") || has("nvidia-smi has failed") {
        Some(LostReason::Other)
    } else {
        None
    }
}

/// The field name nvidia-smi refused, from `Field "x" is not a valid field to query.`
pub fn rejected_field(stderr: &str) -> Option<String> {
    const MARK: &str = "is not a valid field to query";
    stderr.lines().find_map(|line| {
        let before = line[..line.find(MARK)?].trim_end();
        let name = match before.strip_suffix('"') {
            Some(quoted) => &quoted[quoted.rfind('"')? + 1..],
            // Some drivers print the name bare: `compute_cap is not a valid field to query`.
            None => before.rsplit(char::is_whitespace).next()?,
        };
        (!name.is_empty()).then(|| name.to_string())
    })
}

#[cfg(test)]
mod tests {
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
        let s = parse_gpu_line(&layout, "0, 143771 MiB, 99 %, 692.02 W, 1455 MHz, 60\r\n")
            .expect("parses");
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
                gpu_index: None,
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
}
