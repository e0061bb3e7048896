//! Huawei Ascend `npu-smi`: the `npu-smi info` table and the `npu-smi info -t common|usages`
//! key-value reports.
//!
//! The table comes in layouts that differ by version and chip (see
//! tests/fixtures/accelerators/README.md): its header names the second row's first column
//! `Chip`, `Chip Device` or `Chip Phy-ID`, and the last cell holds `Memory-Usage(MB)` with or
//! without `HBM-Usage(MB)`. The header is checked before any number is read; a table with other
//! columns is refused.

use super::{AccelError, AccelReading, Health, Vendor, count_cell, mhz, number_cell};
use crate::remote::sanitize;

const TOOL: &str = "npu-smi";

/// The columns of the table's last cell, as the header row names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Layout {
    /// `HBM-Usage(MB)` follows `Memory-Usage(MB)`.
    has_hbm: bool,
}

/// Parses `npu-smi info`: one reading per chip row pair, in table order. Stops at the process
/// table. A card whose Power cell is `-` (the second chip of a two-chip card) has no power.
pub fn parse_info(text: &str) -> Result<Vec<AccelReading>, AccelError> {
    let version = table_version(text);
    let unsupported =
        |reason: &str| AccelError::unsupported(TOOL, version.as_deref(), reason, text);
    if version.is_none() {
        return Err(unsupported("no `npu-smi VERSION` title line"));
    }
    let device_lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .take_while(|line| !line.contains("Process id") && !line.contains("Process ID"))
        .collect();
    let layout = header_layout(&device_lines).ok_or_else(|| unsupported("unknown table header"))?;

    let mut readings = Vec::new();
    let mut pending: Option<AccelReading> = None;
    for &line in &device_lines {
        let Some(cells) = table_cells(line) else {
            continue;
        };
        let title = cells.len() == 1 && cells[0].starts_with("npu-smi ");
        if title || is_header_row(&cells) || cells.iter().all(|c| c.is_empty()) {
            continue;
        }
        match pending.take() {
            None => {
                let reading = card_row(&cells)
                    .ok_or_else(|| unsupported(&format!("unreadable card row `{line}`")))?;
                pending = Some(reading);
            }
            Some(mut reading) => {
                chip_row(&cells, layout, &mut reading)
                    .ok_or_else(|| unsupported(&format!("unreadable chip row `{line}`")))?;
                reading.driver_version = version.clone();
                readings.push(reading);
            }
        }
    }
    if pending.is_some() {
        return Err(unsupported(
            "the table ends between a card row and its chip row",
        ));
    }
    if readings.is_empty() {
        return Err(unsupported("no NPU rows"));
    }
    Ok(readings)
}

/// The version from the title line `| npu-smi 23.0.rc2     Version: 23.0.rc2 |`.
fn table_version(text: &str) -> Option<String> {
    text.lines().take(5).find_map(|line| {
        let rest = line.trim().trim_start_matches('|').trim();
        let rest = rest.strip_prefix("npu-smi ")?;
        let version = rest.split_whitespace().next()?;
        let plain = version
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-');
        plain.then(|| version.to_string())
    })
}

/// The known header: `NPU Name | Health | Power(W) Temp(C) Hugepages-Usage(page)` over
/// `Chip [Device|Phy-ID] | Bus-Id | AICore(%) Memory-Usage(MB) [HBM-Usage(MB)]`.
fn header_layout(device_lines: &[&str]) -> Option<Layout> {
    let rows: Vec<Vec<String>> = device_lines
        .iter()
        .filter_map(|line| table_cells(line))
        .filter(|cells| is_header_row(cells))
        .collect();
    let [first, second] = rows.as_slice() else {
        return None;
    };
    let words = |cell: &String| {
        cell.split_whitespace()
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    let first_ok = first.len() == 3
        && words(&first[0]) == ["NPU", "Name"]
        && first[1] == "Health"
        && words(&first[2]) == ["Power(W)", "Temp(C)", "Hugepages-Usage(page)"];
    let chip_ok = matches!(
        words(&second[0]).as_slice(),
        [c] if c == "Chip"
    ) || matches!(
        words(&second[0]).as_slice(),
        [c, d] if c == "Chip" && (d == "Device" || d == "Phy-ID")
    );
    let last = words(&second[2]);
    let has_hbm = match last.as_slice() {
        [a, m] if a == "AICore(%)" && m == "Memory-Usage(MB)" => false,
        [a, m, h] if a == "AICore(%)" && m == "Memory-Usage(MB)" && h == "HBM-Usage(MB)" => true,
        _ => return None,
    };
    (first_ok && chip_ok && second.len() == 3 && second[1] == "Bus-Id")
        .then_some(Layout { has_hbm })
}

fn is_header_row(cells: &[String]) -> bool {
    cells
        .first()
        .is_some_and(|c| c.starts_with("NPU ") || c.starts_with("Chip"))
}

/// The cells of one `| a | b | c |` row; `None` for rules (`+---`, `+===`) and other lines.
fn table_cells(line: &str) -> Option<Vec<String>> {
    let inner = line.strip_prefix('|')?.strip_suffix('|')?;
    Some(inner.split('|').map(|c| c.trim().to_string()).collect())
}

/// `| 0     910B1 | OK | 88.4   46   0 / 0 |`: index, name, health, power, temperature.
fn card_row(cells: &[String]) -> Option<AccelReading> {
    let [id_name, health, metrics] = cells else {
        return None;
    };
    let mut words = id_name.split_whitespace();
    let index: u32 = words.next()?.parse().ok()?;
    let name = words.collect::<Vec<_>>().join(" ");
    let mut values = metrics.split_whitespace();
    let power = number_cell(values.next()?).ok()?;
    let temperature = number_cell(values.next()?).ok()?;
    // The hugepages pair (`0 / 0`) is not a metric gpufleet shows.
    let mut reading = AccelReading::new(Vendor::Huawei, index);
    reading.name = (!name.is_empty()).then(|| sanitize(&name));
    reading.health = (!health.is_empty()).then(|| Health::from_word(health));
    reading.power_draw_w = power;
    reading.temperature_c = temperature;
    Some(reading)
}

/// `| 0  [phy] | 0000:C1:00.0 | 0   0 / 0   4175 / 65536 |`: chip, bus, AI Core %, memory.
fn chip_row(cells: &[String], layout: Layout, reading: &mut AccelReading) -> Option<()> {
    let [chip, bus, metrics] = cells else {
        return None;
    };
    reading.chip = Some(chip.split_whitespace().next()?.parse().ok()?);
    reading.bus_id = match bus.as_str() {
        "" | "NA" | "N/A" | "-" => None,
        other => Some(sanitize(other)),
    };
    let (aicore, pools) = metrics.split_once(char::is_whitespace)?;
    reading.utilization_pct = number_cell(aicore).ok()?;
    let pairs = used_total_pairs(pools)?;
    let (memory, hbm) = match (layout.has_hbm, pairs.as_slice()) {
        (false, [memory]) => (*memory, None),
        (true, [memory, hbm]) => (*memory, Some(*hbm)),
        _ => return None,
    };
    // On HBM cards the Memory-Usage pool is the small DDR one (0 / 0 on 910B); the HBM pool is
    // the accelerator's memory. A pool whose total is 0 is absent, not empty.
    let chosen = match hbm {
        Some(hbm) if hbm.1 > 0 => hbm,
        _ => memory,
    };
    if chosen.1 > 0 {
        reading.memory_used_mib = Some(chosen.0);
        reading.memory_total_mib = Some(chosen.1);
    }
    Some(())
}

/// Every `used / total` pair in a cell, in order.
fn used_total_pairs(text: &str) -> Option<Vec<(u64, u64)>> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut pairs = Vec::new();
    let mut rest = words.as_slice();
    while !rest.is_empty() {
        let [used, "/", total, tail @ ..] = rest else {
            return None;
        };
        pairs.push((used.parse().ok()?, total.parse().ok()?));
        rest = tail;
    }
    Some(pairs)
}

/// Parses `npu-smi info -t common -i N` or `-t usages -i N` (`Key : value` lines) into the
/// reading of the first chip listed. Lines after a `Chip Name : mcu` (the management MCU, not
/// a compute chip) are ignored. The report carries no version, so errors carry none.
pub fn parse_key_values(text: &str) -> Result<AccelReading, AccelError> {
    let unsupported = |reason: &str| AccelError::unsupported(TOOL, None, reason, text);
    let mut fields: Vec<(&str, &str)> = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let Some((key, value)) = line.split_once(" : ") else {
            return Err(unsupported(&format!("line without ` : ` `{line}`")));
        };
        let (key, value) = (key.trim(), value.trim());
        if key == "Chip Name" {
            break;
        }
        fields.push((key, value));
    }
    let get = |key: &str| fields.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
    let index = get("NPU ID")
        .and_then(|v| v.parse::<u32>().ok())
        .ok_or_else(|| unsupported("no `NPU ID`"))?;
    let number = |key: &str| -> Result<Option<f64>, AccelError> {
        get(key).map_or(Ok(None), |v| {
            number_cell(v).map_err(|()| unsupported(&format!("`{key}` is not a number")))
        })
    };
    let count = |key: &str| -> Result<Option<u64>, AccelError> {
        get(key).map_or(Ok(None), |v| {
            count_cell(v).map_err(|()| unsupported(&format!("`{key}` is not a count")))
        })
    };

    let mut reading = AccelReading::new(Vendor::Huawei, index);
    reading.chip = count("Chip ID")?.and_then(|c| u32::try_from(c).ok());
    reading.utilization_pct = number("Aicore Usage Rate(%)")?;
    reading.temperature_c = number("Temperature(C)")?;
    reading.power_draw_w = number("NPU Real-time Power(W)")?;
    reading.clock_core_mhz = number("Aicore curFreq(MHZ)")?.and_then(mhz);
    // `usages` gives the capacity; a capacity of 0 means the pool is absent.
    reading.memory_total_mib = match count("HBM Capacity(MB)")? {
        Some(hbm) if hbm > 0 => Some(hbm),
        _ => count("DDR Capacity(MB)")?.filter(|ddr| *ddr > 0),
    };
    let any_metric = reading.utilization_pct.is_some()
        || reading.temperature_c.is_some()
        || reading.power_draw_w.is_some()
        || reading.memory_total_mib.is_some();
    if !any_metric {
        return Err(unsupported("no known metric keys"));
    }
    Ok(reading)
}

#[cfg(test)]
#[path = "npu_smi_tests.rs"]
mod tests;
