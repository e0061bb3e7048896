//! Moore Threads `mthreads-gmi`: the default table (with its process table) and the
//! `mthreads-gmi --query --json` report.
//!
//! The table comes in two published layouts (tests/fixtures/accel/README.md): mthreads-gmi 1.x
//! and 2.0 (`Device Type` under the name) and 2.2 on (`Device Type   Perf`). Each GPU is three
//! lines under a `+---+` rule; the device table ends with a rule of dashes. The header is
//! checked before any number is read; a table with other columns is refused, and so is a table
//! that ends without its closing rule (a cut-off output would hide GPUs). The table prints no
//! power, clock, fan or health: those stay unknown.
//!
//! The JSON report gives every value as a string with its unit (`"81920MiB"`, `"27C"`,
//! `"96.66W"`); the key `"Power Draw "` carries a trailing space as the tool prints it. A
//! report that lists fewer GPUs than its `Attached GPUs` is refused rather than read in part.

use serde_json::Value;

use super::{AccelError, AccelProcess, AccelReading, Vendor, count_cell, number_cell};
use crate::remote::sanitize;

const TOOL: &str = "mthreads-gmi";

/// The arguments of the machine-readable report.
pub const QUERY_JSON_ARGS: [&str; 2] = ["--query", "--json"];

/// One row of the table's `Processes:` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GmiProcess {
    /// The GPU's `ID`.
    pub gpu: u32,
    pub pid: u32,
    /// As printed (the tool cuts long paths to `...tail`), sanitized.
    pub name: String,
    pub memory_mib: Option<u64>,
}

/// Parses the output of the poll: the JSON report when the text is one, else the table.
pub fn parse(text: &str) -> Result<Vec<AccelReading>, AccelError> {
    if text.trim_start().starts_with('{') {
        parse_query_json(text)
    } else {
        parse_table(text).map(|(readings, _)| readings)
    }
}

/// The processes the poll's output lists: the table's `Processes:` rows, tied to their GPU by
/// its `ID`. `None` for the JSON report (its only published sample carries no processes), for
/// a table without a `Processes:` section, and for output that cannot be read, so the host's
/// processes stay unknown rather than none.
pub fn listed_processes(text: &str) -> Option<Vec<AccelProcess>> {
    if text.trim_start().starts_with('{') || !text.lines().any(|l| l.trim() == "Processes:") {
        return None;
    }
    let (_, processes) = parse_table(text).ok()?;
    Some(
        processes
            .into_iter()
            .map(|p| AccelProcess {
                index: p.gpu,
                chip: None,
                pid: p.pid,
                name: p.name,
                memory_mib: p.memory_mib,
            })
            .collect(),
    )
}

/// Where the table's device cells are, by the header's second line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// `Device Type` alone (mthreads-gmi 1.x, 2.0).
    Plain,
    /// `Device Type   Perf` (mthreads-gmi 2.2 and later).
    WithPerf,
}

/// Parses the default table: one reading per GPU block, in table order, and the process rows.
pub fn parse_table(text: &str) -> Result<(Vec<AccelReading>, Vec<GmiProcess>), AccelError> {
    let (version, driver) = version_line(text).unzip();
    let version = version.map(|v| sanitize(&v));
    let driver = driver.map(|d| sanitize(&d));
    let unsupported =
        |reason: &str| AccelError::unsupported(TOOL, version.as_deref(), reason, text);
    if version.is_none() {
        return Err(unsupported(
            "no `mthreads-gmi:VERSION Driver Version:VERSION` line",
        ));
    }
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    let header_at = lines
        .iter()
        .position(|l| words(l.split('|').next().unwrap_or_default()) == "ID Name")
        .ok_or_else(|| unsupported("no `ID Name` table header"))?;
    let layout =
        header_layout(&lines[header_at..]).ok_or_else(|| unsupported("unknown table header"))?;

    let mut readings = Vec::new();
    let mut at = header_at + 3;
    let mut closed = false;
    while let Some(line) = lines.get(at) {
        if is_dash_rule(line) {
            closed = true;
            break;
        }
        if !is_plus_rule(line) {
            return Err(unsupported(&format!(
                "unexpected line `{line}` in the GPU table"
            )));
        }
        let block = lines.get(at + 1..at + 4);
        match block {
            Some([first, second, third]) if !is_dash_rule(first) => {
                let mut reading = gpu_block(first, second, third, layout)
                    .ok_or_else(|| unsupported(&format!("unreadable GPU block at `{first}`")))?;
                reading.driver_version = driver.clone();
                readings.push(reading);
                at += 4;
            }
            Some([first, ..]) if is_dash_rule(first) => {
                closed = true;
                break;
            }
            _ => {
                at += 1;
                if lines.get(at).is_some_and(|l| !l.trim().is_empty()) {
                    return Err(unsupported("a GPU block is cut off"));
                }
            }
        }
    }
    if !closed {
        return Err(unsupported(&format!(
            "the GPU table is cut off after {} GPU(s): no closing rule",
            readings.len()
        )));
    }
    if readings.is_empty() {
        return Err(unsupported("no GPU rows"));
    }
    let processes = process_rows(&lines)
        .map_err(|line| unsupported(&format!("unreadable process row `{line}`")))?;
    Ok((readings, processes))
}

/// `mthreads-gmi:1.14.0          Driver Version:2.7.0` → (tool version, driver version).
fn version_line(text: &str) -> Option<(String, String)> {
    text.lines().take(6).find_map(|line| {
        let rest = line.trim().strip_prefix("mthreads-gmi:")?;
        let (tool, driver) = rest.split_once("Driver Version:")?;
        let tool = tool.trim();
        let driver = driver.trim();
        let plain = |s: &str| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
        };
        (plain(tool) && plain(driver)).then(|| (tool.to_string(), driver.to_string()))
    })
}

/// The cell's words joined by single spaces.
fn words(cell: &str) -> String {
    cell.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn cells(line: &str) -> Vec<String> {
    line.split('|').map(words).collect()
}

fn header_layout(lines: &[&str]) -> Option<Layout> {
    let [first, second, third, ..] = lines else {
        return None;
    };
    if cells(first) != ["ID Name", "PCIe", "%GPU Mem"] {
        return None;
    }
    let layout = match cells(second).as_slice() {
        [a, b, c] if b == "Pcie Lane Width" && c == "Temp MPC Capable" => match a.as_str() {
            "Device Type" => Layout::Plain,
            "Device Type Perf" => Layout::WithPerf,
            _ => return None,
        },
        _ => return None,
    };
    (cells(third) == ["", "ECC Mode"]).then_some(layout)
}

fn is_dash_rule(line: &str) -> bool {
    let line = line.trim();
    line.len() > 10 && line.chars().all(|c| c == '-')
}

fn is_plus_rule(line: &str) -> bool {
    let line = line.trim();
    line.len() > 10
        && line.starts_with('+')
        && line.ends_with('+')
        && line[1..line.len() - 1].chars().all(|c| c == '-')
}

/// The three lines of one GPU:
/// `0    MTT S80        |00000000:01:00.0    |98%   1339MiB(16384MiB)`,
/// `     Physical       |16x(16x)            |56C   YES`, `|      N/A`.
fn gpu_block(first: &str, second: &str, third: &str, layout: Layout) -> Option<AccelReading> {
    let [id_name, bus, usage] = cells(first).try_into().ok()?;
    let [kind, _lanes, temp_mpc] = cells(second).try_into().ok()?;
    let [empty, _ecc] = cells(third).try_into().ok()?;
    if !empty.is_empty() {
        return None;
    }
    let (index, name) = id_name.split_once(' ')?;
    let mut reading = AccelReading::new(Vendor::Mthreads, index.parse().ok()?);
    reading.name = Some(sanitize(name));
    reading.bus_id = Some(sanitize(&bus)).filter(|b| !b.is_empty());
    let (util, memory) = usage.split_once(' ')?;
    reading.utilization_pct = unit_number(util, "%")?;
    let (used, total) = memory.strip_suffix(')')?.split_once('(')?;
    reading.memory_used_mib = unit_count(used, "MiB")?;
    reading.memory_total_mib = unit_count(total, "MiB")?;
    let temp = temp_mpc.split_whitespace().next()?;
    reading.temperature_c = unit_number(temp, "C")?;
    let kind_words = kind.split_whitespace().count();
    let expected = match layout {
        Layout::Plain => 1,
        Layout::WithPerf => 2,
    };
    (kind_words == expected).then_some(reading)
}

/// `98%` → `Some(Some(98.0))`, `N/A` → `Some(None)`, anything else `None` (refused).
fn unit_number(cell: &str, unit: &str) -> Option<Option<f64>> {
    let cell = cell.trim();
    number_cell(cell.strip_suffix(unit).unwrap_or(cell))
        .ok()
        .filter(|v| v.is_none() || cell.ends_with(unit))
}

fn unit_count(cell: &str, unit: &str) -> Option<Option<u64>> {
    let cell = cell.trim();
    count_cell(cell.strip_suffix(unit).unwrap_or(cell))
        .ok()
        .filter(|v| v.is_none() || cell.ends_with(unit))
}

/// The rows of the `Processes:` section; `Err(line)` for a row that is not
/// `ID  PID  NAME  MEMORYMiB`.
fn process_rows<'a>(lines: &[&'a str]) -> Result<Vec<GmiProcess>, &'a str> {
    let Some(start) = lines.iter().position(|l| l.trim() == "Processes:") else {
        return Ok(Vec::new());
    };
    let Some(rule) = lines[start..].iter().position(|l| is_plus_rule(l)) else {
        return Ok(Vec::new());
    };
    let mut processes = Vec::new();
    for &line in &lines[start + rule + 1..] {
        if is_dash_rule(line) || line.trim().is_empty() {
            break;
        }
        processes.push(process_row(line).ok_or(line)?);
    }
    Ok(processes)
}

fn process_row(line: &str) -> Option<GmiProcess> {
    let mut parts = line.split_whitespace();
    let gpu = parts.next()?.parse().ok()?;
    let pid = parts.next()?.parse().ok()?;
    let rest: Vec<&str> = parts.collect();
    let (memory, name) = rest.split_last()?;
    if name.is_empty() {
        return None;
    }
    Some(GmiProcess {
        gpu,
        pid,
        name: sanitize(&name.join(" ")),
        memory_mib: unit_count(memory, "MiB")?,
    })
}

/// Parses `mthreads-gmi --query --json`.
pub fn parse_query_json(text: &str) -> Result<Vec<AccelReading>, AccelError> {
    let unsupported = |reason: &str| AccelError::unsupported(TOOL, None, reason, text);
    let doc: Value =
        serde_json::from_str(text).map_err(|e| unsupported(&format!("not JSON ({e})")))?;
    let gpus = doc
        .get("GPU")
        .and_then(Value::as_array)
        .ok_or_else(|| unsupported("no `GPU` list"))?;
    let attached = doc
        .get("Attached GPUs")
        .and_then(Value::as_str)
        .and_then(|n| n.trim().parse::<usize>().ok())
        .ok_or_else(|| unsupported("no `Attached GPUs` count"))?;
    if gpus.len() != attached {
        return Err(unsupported(&format!(
            "the report lists {} of the {attached} attached GPUs",
            gpus.len()
        )));
    }
    let driver = doc
        .get("Driver Version")
        .and_then(Value::as_str)
        .map(sanitize);
    let mut readings = Vec::new();
    for (position, gpu) in gpus.iter().enumerate() {
        let mut reading = gpu_entry(gpu)
            .ok_or_else(|| unsupported(&format!("unreadable entry {position} of `GPU`")))?;
        reading.driver_version = driver.clone();
        readings.push(reading);
    }
    if readings.is_empty() {
        return Err(unsupported("no GPU entries"));
    }
    Ok(readings)
}

/// One entry of `GPU`: the string at `section.key`, where present.
fn field<'a>(gpu: &'a Value, section: Option<&str>, key: &str) -> Option<&'a str> {
    let holder = match section {
        Some(section) => gpu.get(section)?,
        None => gpu,
    };
    holder.get(key)?.as_str()
}

/// A present value must read (`Some(None)` only for an absent key or `N/A`).
fn json_number(value: Option<&str>, unit: &str) -> Option<Option<f64>> {
    value.map_or(Some(None), |v| unit_number(v, unit))
}

fn json_count(value: Option<&str>, unit: &str) -> Option<Option<u64>> {
    value.map_or(Some(None), |v| unit_count(v, unit))
}

fn gpu_entry(gpu: &Value) -> Option<AccelReading> {
    let index = field(gpu, None, "Index")?.trim().parse().ok()?;
    let mut r = AccelReading::new(Vendor::Mthreads, index);
    r.name = field(gpu, None, "Product Name").map(sanitize);
    r.bus_id = field(gpu, Some("PCI"), "Bus ID").map(sanitize);
    let memory = Some("FB Memory Usage");
    r.memory_total_mib = json_count(field(gpu, memory, "Total"), "MiB")?;
    r.memory_used_mib = json_count(field(gpu, memory, "Used"), "MiB")?;
    r.utilization_pct = json_number(field(gpu, Some("Utilization"), "Gpu"), "%")?;
    r.utilization_memory_pct = json_number(field(gpu, Some("Utilization"), "Memory"), "%")?;
    r.temperature_c = json_number(field(gpu, Some("Temperature"), "GPU Current Temp"), "C")?;
    let power = Some("Power Readings");
    let draw = field(gpu, power, "Power Draw ").or_else(|| field(gpu, power, "Power Draw"));
    r.power_draw_w = json_number(draw, "W")?;
    r.power_limit_w = json_number(field(gpu, power, "Current Power Limit"), "W")?;
    Some(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let root = env!("CARGO_MANIFEST_DIR");
        std::fs::read_to_string(format!("{root}/tests/fixtures/accel/{name}")).expect("fixture")
    }

    #[test]
    fn s80_table_reads_gpu_and_processes_and_leaves_power_unknown() {
        let (readings, processes) =
            parse_table(&fixture("mthreads-mthreads-gmi-table-01.txt")).expect("parse");
        assert_eq!(readings.len(), 1);
        let r = &readings[0];
        assert_eq!((r.vendor, r.index), (Vendor::Mthreads, 0));
        assert_eq!(r.name.as_deref(), Some("MTT S80"));
        assert_eq!(r.bus_id.as_deref(), Some("00000000:01:00.0"));
        assert_eq!(r.utilization_pct, Some(98.0));
        assert_eq!(
            (r.memory_used_mib, r.memory_total_mib),
            (Some(1339), Some(16384))
        );
        assert_eq!(r.temperature_c, Some(56.0));
        assert_eq!(r.driver_version.as_deref(), Some("2.7.0"));
        // The table prints no power, clock, fan or health.
        assert_eq!((r.power_draw_w, r.power_limit_w), (None, None));
        assert_eq!(
            (r.clock_core_mhz, r.fan_speed_pct, r.health.clone()),
            (None, None, None)
        );
        assert_eq!(
            processes,
            [
                GmiProcess {
                    gpu: 0,
                    pid: 120,
                    name: "...ird_party/bin/llama-box/llama-box".to_string(),
                    memory_mib: Some(2),
                },
                GmiProcess {
                    gpu: 0,
                    pid: 2022,
                    name: "...ird_party/bin/llama-box/llama-box".to_string(),
                    memory_mib: Some(1333),
                },
            ]
        );
    }

    #[test]
    fn the_poll_lists_the_table_processes_but_none_from_the_json_report() {
        let listed = listed_processes(&fixture("mthreads-mthreads-gmi-table-02.txt"));
        let rows: Vec<_> = listed
            .expect("listed")
            .iter()
            .map(|p| (p.index, p.chip, p.pid, p.memory_mib))
            .collect();
        assert_eq!(rows, [(0, None, 1123, Some(134)), (0, None, 1361, Some(1))]);
        // The published JSON report carries no processes; a table cut before its Processes
        // section lists none: both unknown, not an empty list.
        let json = fixture("mthreads-mthreads-gmi-query-json-01.txt");
        assert_eq!(listed_processes(&json), None);
        let cut = fixture("mthreads-mthreads-gmi-table-04.txt");
        assert_eq!(listed_processes(&cut), None);
    }

    #[test]
    fn version_2_table_with_trailing_spaces_reads_the_same_way() {
        let (readings, processes) =
            parse_table(&fixture("mthreads-mthreads-gmi-table-02.txt")).expect("parse");
        assert_eq!(readings[0].utilization_pct, Some(0.0));
        assert_eq!(readings[0].memory_used_mib, Some(662));
        assert_eq!(readings[0].temperature_c, Some(41.0));
        assert_eq!(readings[0].driver_version.as_deref(), Some("3.0.0"));
        let names: Vec<_> = processes.iter().map(|p| (p.pid, p.name.as_str())).collect();
        assert_eq!(
            names,
            [
                (1123, "/usr/lib/xorg/Xorg"),
                (1361, "/usr/sbin/unity-greeter")
            ]
        );
        assert_eq!(processes[1].memory_mib, Some(1));
    }

    #[test]
    fn cut_off_tables_are_refused_naming_what_was_read() {
        for (name, version, gpus) in [
            ("mthreads-mthreads-gmi-table-03.txt", "1.12.2", 1),
            ("mthreads-mthreads-gmi-table-04.txt", "2.2.0", 2),
            ("mthreads-mthreads-gmi-table-05.txt", "2.3.2", 2),
        ] {
            let err = parse(&fixture(name)).unwrap_err().to_string();
            assert!(
                err.starts_with(&format!("unsupported output from mthreads-gmi {version}: the GPU table is cut off after {gpus} GPU(s)")),
                "{name}: {err}"
            );
        }
    }

    #[test]
    fn the_perf_layout_is_known_and_its_blocks_read() {
        let text = fixture("mthreads-mthreads-gmi-table-05.txt");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(header_layout(&lines[4..]), Some(Layout::WithPerf));
        let r = gpu_block(lines[8], lines[9], lines[10], Layout::WithPerf).expect("block");
        assert_eq!(r.name.as_deref(), Some("MTT S5000"));
        assert_eq!(
            (r.memory_used_mib, r.memory_total_mib),
            (Some(66641), Some(81920))
        );
        assert_eq!(r.temperature_c, Some(52.0));
        // A Perf block is not read under the plain layout.
        assert!(gpu_block(lines[8], lines[9], lines[10], Layout::Plain).is_none());
    }

    #[test]
    fn the_json_sample_lists_two_of_eight_gpus_and_is_refused() {
        let err = parse(&fixture("mthreads-mthreads-gmi-query-json-01.txt"))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(
                "unsupported output from mthreads-gmi: the report lists 2 of the 8 attached GPUs"
            ),
            "{err}"
        );
    }

    #[test]
    fn json_entries_read_units_and_leave_missing_keys_unknown() {
        let doc: Value = serde_json::from_str(&fixture("mthreads-mthreads-gmi-query-json-01.txt"))
            .expect("json");
        let first = gpu_entry(&doc["GPU"][0]).expect("gpu 0");
        assert_eq!(first.name.as_deref(), Some("MTT S5000"));
        assert_eq!(first.bus_id.as_deref(), Some("00000000:2a:00.0"));
        assert_eq!(
            (first.memory_used_mib, first.memory_total_mib),
            (Some(0), Some(81920))
        );
        assert_eq!(first.temperature_c, Some(27.0));
        assert_eq!(first.power_draw_w, Some(96.66));
        assert_eq!(first.power_limit_w, Some(950.0));
        assert_eq!(first.utilization_memory_pct, Some(0.0));
        let second = gpu_entry(&doc["GPU"][1]).expect("gpu 1");
        assert_eq!(second.power_draw_w, Some(97.09));
        // GPU 1 carries no limit, memory utilization or PCI section: unknown, not 0.
        assert_eq!(second.power_limit_w, None);
        assert_eq!(second.utilization_memory_pct, None);
        assert_eq!(second.bus_id, None);
    }

    #[test]
    fn a_value_without_its_unit_is_refused() {
        assert_eq!(unit_number("27C", "C"), Some(Some(27.0)));
        assert_eq!(unit_number("N/A", "C"), Some(None));
        assert_eq!(unit_number("27", "C"), None);
        assert_eq!(unit_count("12GiB", "MiB"), None);
    }

    #[test]
    fn other_output_is_unsupported_with_its_first_lines() {
        let err = parse("mthreads-gmi: command failed\nno device\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("unsupported output from mthreads-gmi: no `mthreads-gmi:VERSION"),
            "{err}"
        );
        assert!(err.contains("command failed"), "{err}");
    }

    #[test]
    fn a_hostile_name_is_sanitized() {
        let text = fixture("mthreads-mthreads-gmi-table-01.txt").replacen(
            "MTT S80",
            "MTT\u{1b}]0;x\u{7}S80",
            1,
        );
        let (readings, _) = parse_table(&text).expect("parse");
        let name = readings[0].name.clone().unwrap_or_default();
        assert!(
            !name.contains('\u{1b}') && !name.contains('\u{7}'),
            "{name:?}"
        );
    }
}
