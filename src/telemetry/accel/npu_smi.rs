//! Huawei Ascend `npu-smi`: the `npu-smi info` table with its process table, the
//! `npu-smi info -m` chip map and the `npu-smi info -t common|usages` key-value reports.
//!
//! The table comes in layouts that differ by version and chip (see
//! tests/fixtures/accelerators/README.md and tests/fixtures/accel/README.md): its header names
//! the second row's first column `Chip`, `Chip Device` or `Chip Phy-ID`, the first row's last
//! cell holds `Power(W) Temp(C)` with or without `Hugepages-Usage(page)` (npu-smi 1.9 and 20.2
//! have none), and the second row's last cell holds `Memory-Usage(MB)` with or without
//! `HBM-Usage(MB)`. The header is checked before any number is read; a table with other columns
//! is refused, and so is a table cut before its closing rule.

use super::{AccelError, AccelProcess, AccelReading, Health, Vendor, count_cell, mhz, number_cell};
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
    let mut closed = true;
    for &line in &device_lines {
        let Some(cells) = table_cells(line) else {
            closed |= is_rule(line);
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
                closed = false;
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
    if !closed {
        return Err(unsupported(
            "the table ends without its closing rule (cut short)",
        ));
    }
    Ok(readings)
}

/// A rule line of the table: `+----+`, `+====+`.
fn is_rule(line: &str) -> bool {
    line.len() > 2
        && line.starts_with('+')
        && line.ends_with('+')
        && line.chars().all(|c| matches!(c, '+' | '-' | '='))
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
        && matches!(
            words(&first[2]).as_slice(),
            [p, t] | [p, t, _] if p == "Power(W)" && t == "Temp(C)"
        )
        && words(&first[2])
            .get(2)
            .is_none_or(|h| h == "Hugepages-Usage(page)");
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

/// One row of the process table under `npu-smi info`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NpuProcess {
    /// The NPU ID and chip the process runs on, as the device table numbers them.
    pub npu: u32,
    pub chip: u32,
    pub pid: u32,
    /// The name as printed, sanitized (npu-smi cuts it to its column).
    pub name: String,
    pub memory_mib: Option<u64>,
}

/// Parses the process table under `npu-smi info` (`NPU Chip | Process id | Process name |
/// Process memory(MB)`): one entry per process row; `No running processes found in NPU N` rows
/// hold none. An output without a process table (npu-smi 1.9, 20.2) has no processes.
pub fn parse_processes(text: &str) -> Result<Vec<NpuProcess>, AccelError> {
    let version = table_version(text);
    let unsupported =
        |reason: &str| AccelError::unsupported(TOOL, version.as_deref(), reason, text);
    let mut lines = text
        .lines()
        .map(str::trim)
        .skip_while(|line| !line.contains("Process id") && !line.contains("Process ID"));
    let Some(header) = lines.next() else {
        return Ok(Vec::new());
    };
    let known = table_cells(header).is_some_and(|cells| {
        let words: Vec<Vec<&str>> = cells
            .iter()
            .map(|c| c.split_whitespace().collect())
            .collect();
        words.len() == 4
            && words[0] == ["NPU", "Chip"]
            && words[1].join(" ").eq_ignore_ascii_case("Process id")
            && words[2].join(" ").eq_ignore_ascii_case("Process name")
            && words[3]
                .join(" ")
                .eq_ignore_ascii_case("Process memory(MB)")
    });
    if !known {
        return Err(unsupported("unknown process table header"));
    }
    let mut processes = Vec::new();
    for line in lines {
        let Some(cells) = table_cells(line) else {
            continue;
        };
        if let [only] = cells.as_slice()
            && only.starts_with("No running processes found")
        {
            continue;
        }
        let process = process_row(&cells)
            .ok_or_else(|| unsupported(&format!("unreadable process row `{line}`")))?;
        processes.push(process);
    }
    Ok(processes)
}

/// The processes `npu-smi info` lists under its devices, tied to their chips; `None` where the
/// output has no process table (npu-smi 1.9, 20.2) or one that cannot be read, so the host's
/// processes stay unknown rather than none.
pub fn listed_processes(text: &str) -> Option<Vec<AccelProcess>> {
    if !text.contains("Process id") && !text.contains("Process ID") {
        return None;
    }
    let processes = parse_processes(text).ok()?;
    Some(
        processes
            .into_iter()
            .map(|p| AccelProcess {
                index: p.npu,
                chip: Some(p.chip),
                pid: p.pid,
                name: p.name,
                memory_mib: p.memory_mib,
            })
            .collect(),
    )
}

/// `| 0       0            | 37656         | hlt_host_devmm_          | 686                     |`
fn process_row(cells: &[String]) -> Option<NpuProcess> {
    let [ids, pid, name, memory] = cells else {
        return None;
    };
    let mut ids = ids.split_whitespace();
    let npu = ids.next()?.parse().ok()?;
    let chip = ids.next()?.parse().ok()?;
    if ids.next().is_some() || name.is_empty() {
        return None;
    }
    Some(NpuProcess {
        npu,
        chip,
        pid: pid.parse().ok()?,
        name: sanitize(name),
        memory_mib: count_cell(memory).ok()?,
    })
}

/// One row of `npu-smi info -m`: which chip of which NPU, and its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChipEntry {
    pub npu: u32,
    pub chip: u32,
    /// The logic ID programs use (`ASCEND_RT_VISIBLE_DEVICES`); `None` (`-`) for the card's
    /// management MCU, which is not a compute chip.
    pub logic_id: Option<u32>,
    pub name: String,
}

/// Parses `npu-smi info -m`: the `NPU ID  Chip ID  Chip Logic ID  Chip Name` header, then one
/// row per chip. The map prints no version, so errors carry none.
pub fn parse_chip_map(text: &str) -> Result<Vec<ChipEntry>, AccelError> {
    let unsupported = |reason: &str| AccelError::unsupported(TOOL, None, reason, text);
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let header: Vec<&str> = lines
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    if header
        != [
            "NPU", "ID", "Chip", "ID", "Chip", "Logic", "ID", "Chip", "Name",
        ]
    {
        return Err(unsupported(
            "no `NPU ID  Chip ID  Chip Logic ID  Chip Name` header",
        ));
    }
    let mut entries = Vec::new();
    for line in lines {
        let entry = chip_entry(line)
            .ok_or_else(|| unsupported(&format!("unreadable chip map row `{line}`")))?;
        entries.push(entry);
    }
    if entries.is_empty() {
        return Err(unsupported("a header but no chip row"));
    }
    Ok(entries)
}

fn chip_entry(line: &str) -> Option<ChipEntry> {
    let mut words = line.split_whitespace();
    let npu = words.next()?.parse().ok()?;
    let chip = words.next()?.parse().ok()?;
    let logic_id = match words.next()? {
        "-" => None,
        id => Some(id.parse().ok()?),
    };
    let name = words.collect::<Vec<_>>().join(" ");
    (!name.is_empty()).then(|| ChipEntry {
        npu,
        chip,
        logic_id,
        name: sanitize(&name),
    })
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
mod tests {
    //! Tests of the `npu-smi` parsers on the real outputs in tests/fixtures/accelerators/npu-smi.

    use super::*;

    const INFO_910B1: &str = include_str!(
        "../../../tests/fixtures/accelerators/npu-smi/info_23.0.rc2_910B1_arthurchiao.txt"
    );
    const INFO_310B1: &str = include_str!(
        "../../../tests/fixtures/accelerators/npu-smi/info_23.0.rc3_310B1_ascend_yolo.txt"
    );
    const COMMON_910B1: &str = include_str!(
        "../../../tests/fixtures/accelerators/npu-smi/info_t_common_23.0.rc2_910B1_arthurchiao.txt"
    );
    const USAGES_910B1: &str = include_str!(
        "../../../tests/fixtures/accelerators/npu-smi/info_t_usages_23.0.rc2_910B1_arthurchiao.txt"
    );

    fn sample(name: &str) -> String {
        let root = env!("CARGO_MANIFEST_DIR");
        std::fs::read_to_string(format!("{root}/tests/fixtures/accel/{name}")).expect("fixture")
    }

    #[test]
    fn info_23_0_3_910b2c_reads_hbm_and_an_empty_process_table() {
        let text = sample("huawei-npu-smi-info-01.txt");
        let readings = parse_info(&text).unwrap();
        assert_eq!(readings.len(), 2);
        let r = &readings[1];
        assert_eq!((r.index, r.chip), (1, Some(0)));
        assert_eq!(r.name.as_deref(), Some("910B2C"));
        assert_eq!((r.power_draw_w, r.temperature_c), (Some(93.8), Some(53.0)));
        assert_eq!(r.bus_id.as_deref(), Some("0000:29:00.0"));
        assert_eq!(
            (r.memory_used_mib, r.memory_total_mib),
            (Some(3316), Some(65536))
        );
        assert_eq!(r.driver_version.as_deref(), Some("23.0.3"));
        assert_eq!(parse_processes(&text).unwrap(), []);
    }

    #[test]
    fn listed_processes_tell_an_empty_table_from_none_printed() {
        // 23.0.3 prints the table with "No running processes found": none run.
        let empty = listed_processes(&sample("huawei-npu-smi-info-01.txt"));
        assert_eq!(empty, Some(Vec::new()));
        // 1.9.3 prints no process table: the processes are unknown, not none.
        assert_eq!(
            listed_processes(&sample("huawei-npu-smi-info-02.txt")),
            None
        );
        let listed = listed_processes(&sample("huawei-npu-smi-info-03.txt")).expect("listed");
        assert_eq!(listed.len(), 32);
        assert_eq!(
            listed[4],
            AccelProcess {
                index: 1,
                chip: Some(0),
                pid: 37665,
                name: "hlt_host_devmm_".to_string(),
                memory_mib: Some(686),
            }
        );
    }

    #[test]
    fn info_1_9_3_without_hugepages_column_reads_the_910a_cards() {
        let text = sample("huawei-npu-smi-info-02.txt");
        let readings = parse_info(&text).unwrap();
        let indexes: Vec<u32> = readings.iter().map(|r| r.index).collect();
        assert_eq!(indexes, [4, 5, 6, 7]);
        let r = &readings[3];
        assert_eq!(r.name.as_deref(), Some("910A"));
        assert_eq!((r.power_draw_w, r.temperature_c), (Some(65.5), Some(30.0)));
        // The HBM pool holds the card's memory; the Memory-Usage pool is the small DDR one.
        assert_eq!(
            (r.memory_used_mib, r.memory_total_mib),
            (Some(0), Some(32768))
        );
        assert_eq!(r.driver_version.as_deref(), Some("1.9.3"));
        assert_eq!(parse_processes(&text).unwrap(), []);
    }

    #[test]
    fn info_24_1_rc2_reads_warning_health_and_every_process() {
        let text = sample("huawei-npu-smi-info-03.txt");
        let readings = parse_info(&text).unwrap();
        assert_eq!(readings.len(), 8);
        let warned: Vec<u32> = readings
            .iter()
            .filter(|r| r.health == Some(Health::Warning))
            .map(|r| r.index)
            .collect();
        assert_eq!(warned, [3, 7]);
        assert_eq!(readings[3].power_draw_w, Some(206.9));
        assert_eq!(readings[3].memory_used_mib, Some(0));
        let processes = parse_processes(&text).unwrap();
        assert_eq!(processes.len(), 32);
        assert_eq!(
            processes[0],
            NpuProcess {
                npu: 0,
                chip: 0,
                pid: 37656,
                name: "hlt_host_devmm_".to_string(),
                memory_mib: Some(686),
            }
        );
        assert_eq!((processes[31].npu, processes[31].pid), (7, 37663));
    }

    #[test]
    fn info_20_2_0_and_21_0_4_read_four_310_chips_under_one_npu_id() {
        for (file, temps) in [
            ("huawei-npu-smi-info-04.txt", [56.0, 57.0, 57.0, 55.0]),
            ("huawei-npu-smi-info-05.txt", [73.0, 74.0, 70.0, 65.0]),
        ] {
            let readings = parse_info(&sample(file)).unwrap();
            let chips: Vec<Option<u32>> = readings.iter().map(|r| r.chip).collect();
            assert_eq!(chips, [Some(0), Some(1), Some(2), Some(3)], "{file}");
            let read: Vec<f64> = readings.iter().filter_map(|r| r.temperature_c).collect();
            assert_eq!(read, temps, "{file}");
            assert!(readings.iter().all(|r| r.memory_total_mib == Some(8192)));
            assert_eq!(readings[0].power_draw_w, Some(12.8));
        }
        let old = parse_info(&sample("huawei-npu-smi-info-04.txt")).unwrap();
        assert_eq!(old[0].index, 215);
        assert_eq!(old[3].bus_id.as_deref(), Some("0000:DB:00.0"));
    }

    #[test]
    fn a_table_cut_before_its_closing_rule_is_refused() {
        // Published cut off after the second chip of NPU 0.
        let err = parse_info(&sample("huawei-npu-smi-info-06.txt")).unwrap_err();
        let message = err.to_string();
        assert!(
            message.starts_with("unsupported output from npu-smi 26.0.rc2"),
            "{message}"
        );
        assert!(message.contains("closing rule"), "{message}");
    }

    #[test]
    fn the_newest_layout_reads_a_second_chip_without_power() {
        // The same rows with the rule the cut took away.
        let mut text = sample("huawei-npu-smi-info-06.txt");
        text.push_str("+-----+\n");
        let readings = parse_info(&text).unwrap();
        assert_eq!(readings.len(), 2);
        assert_eq!(readings[0].power_draw_w, Some(162.6));
        assert_eq!(readings[1].power_draw_w, None);
        assert_eq!(readings[1].chip, Some(1));
        assert_eq!(readings[1].memory_used_mib, Some(2874));
        assert_eq!(readings[1].name.as_deref(), Some("Ascend910"));
    }

    #[test]
    fn the_chip_map_names_chips_and_leaves_the_mcu_without_logic_id() {
        let map = parse_chip_map(&sample("huawei-npu-smi-info-m-01.txt")).unwrap();
        assert_eq!(map.len(), 8);
        assert_eq!(
            map[7],
            ChipEntry {
                npu: 7,
                chip: 0,
                logic_id: Some(7),
                name: "Ascend 910A".to_string()
            }
        );
        let map = parse_chip_map(&sample("huawei-npu-smi-info-m-02.txt")).unwrap();
        let logic: Vec<Option<u32>> = map.iter().map(|e| e.logic_id).collect();
        assert_eq!(logic, [Some(0), Some(1), Some(2), Some(3), None]);
        assert_eq!((map[4].chip, map[4].name.as_str()), (4, "Mcu"));
        assert_eq!(map[0].name, "MiniD");
        let err = parse_chip_map(&sample("huawei-npu-smi-info-01.txt")).unwrap_err();
        assert!(err.to_string().contains("header"), "{err}");
    }

    #[test]
    fn failure_texts_are_unsupported_with_their_lines() {
        for file in ["huawei-npu-smi-error-01.txt", "huawei-npu-smi-error-02.txt"] {
            let message = parse_info(&sample(file)).unwrap_err().to_string();
            assert!(
                message.starts_with("unsupported output from npu-smi:"),
                "{message}"
            );
            assert!(message.contains("dcmi mod"), "{message}");
        }
    }

    #[test]
    fn info_910b1_reads_every_card_with_hbm_as_memory() {
        let readings = parse_info(INFO_910B1).unwrap();
        let indexes: Vec<u32> = readings.iter().map(|r| r.index).collect();
        // The author elided cards 2-6 with `...`; the three printed ones are read.
        assert_eq!(indexes, [0, 1, 7]);
        let first = &readings[0];
        assert_eq!(first.vendor, Vendor::Huawei);
        assert_eq!(first.name.as_deref(), Some("910B1"));
        assert_eq!(first.chip, Some(0));
        assert_eq!(first.health, Some(Health::Ok));
        assert_eq!(first.power_draw_w, Some(88.4));
        assert_eq!(first.temperature_c, Some(46.0));
        assert_eq!(first.bus_id.as_deref(), Some("0000:C1:00.0"));
        assert_eq!(first.utilization_pct, Some(0.0));
        assert_eq!(first.memory_used_mib, Some(4175));
        assert_eq!(first.memory_total_mib, Some(65536));
        assert_eq!(first.driver_version.as_deref(), Some("23.0.rc2"));
        let last = &readings[2];
        assert_eq!(last.power_draw_w, Some(92.7));
        assert_eq!(last.temperature_c, Some(48.0));
        assert_eq!(last.bus_id.as_deref(), Some("0000:42:00.0"));
        assert_eq!(last.memory_used_mib, Some(4174));
        // What the table does not print stays unknown.
        assert_eq!(first.clock_core_mhz, None);
        assert_eq!(first.power_limit_w, None);
        assert_eq!(first.temperature_memory_c, None);
    }

    #[test]
    fn info_310b1_without_hbm_column_reads_the_memory_pool() {
        let readings = parse_info(INFO_310B1).unwrap();
        assert_eq!(readings.len(), 1);
        let r = &readings[0];
        assert_eq!(r.name.as_deref(), Some("310B1"));
        assert_eq!(r.power_draw_w, Some(9.2));
        assert_eq!(r.temperature_c, Some(53.0));
        // `NA` in the Bus-Id column is not a bus id.
        assert_eq!(r.bus_id, None);
        assert_eq!(r.memory_used_mib, Some(3841));
        assert_eq!(r.memory_total_mib, Some(11577));
        assert_eq!(r.driver_version.as_deref(), Some("23.0.rc3"));
    }

    #[test]
    fn common_report_reads_the_compute_chip_not_the_mcu() {
        let r = parse_key_values(COMMON_910B1).unwrap();
        assert_eq!((r.index, r.chip), (1, Some(0)));
        assert_eq!(r.utilization_pct, Some(0.0));
        assert_eq!(r.clock_core_mhz, Some(800));
        // 46, the chip's; the MCU's 38 comes after `Chip Name : mcu`.
        assert_eq!(r.temperature_c, Some(46.0));
        assert_eq!(r.power_draw_w, Some(93.4));
        assert_eq!(r.memory_total_mib, None);
    }

    #[test]
    fn usages_report_reads_hbm_capacity() {
        let r = parse_key_values(USAGES_910B1).unwrap();
        assert_eq!((r.index, r.chip), (0, Some(0)));
        assert_eq!(r.memory_total_mib, Some(65536));
        assert_eq!(r.utilization_pct, Some(0.0));
        assert_eq!(r.memory_used_mib, None);
        assert_eq!(r.temperature_c, None);
    }

    #[test]
    fn unknown_version_header_layout_is_refused_with_the_version() {
        // A table whose third column grew a field this parser does not know.
        let text = INFO_310B1.replace(
            "AICore(%)    Memory-Usage(MB)                       ",
            "AICore(%)    Memory-Usage(MB)       Widgets(MB)     ",
        );
        let text = text.replace("23.0.rc3", "99.9.rc9");
        let err = parse_info(&text).unwrap_err();
        let message = err.to_string();
        assert!(
            message.starts_with("unsupported output from npu-smi 99.9.rc9: unknown table header"),
            "{message}"
        );
        assert!(message.contains("npu-smi 99.9.rc9"));
    }

    #[test]
    fn output_without_title_is_refused() {
        let err = parse_info("npu-smi: command not found\n").unwrap_err();
        assert!(err.to_string().contains("no `npu-smi VERSION` title line"));
        assert!(err.to_string().contains("npu-smi: command not found"));
    }

    #[test]
    fn truncated_table_is_refused_not_half_read() {
        // Cut after the first card row: its chip row (bus, memory) never arrived.
        let cut: String = INFO_910B1
            .lines()
            .take(7)
            .map(|l| format!("{l}\n"))
            .collect();
        let err = parse_info(&cut).unwrap_err();
        assert!(err.to_string().contains("ends between a card row"), "{err}");
    }

    #[test]
    fn garbage_in_a_number_cell_is_refused() {
        let text = INFO_910B1.replacen("88.4", "8x.4", 1);
        assert!(parse_info(&text).is_err());
    }

    #[test]
    fn hostile_bytes_in_name_and_health_are_removed() {
        let text = INFO_310B1
            .replacen(
                "310B1                ",
                "3\u{1b}]0;own\u{7}10B1\u{202e}      ",
                1,
            )
            .replacen("| OK              |", "| Al\u{1b}[2Jarm         |", 1);
        let r = &parse_info(&text).unwrap()[0];
        assert_eq!(r.name.as_deref(), Some("310B1"));
        assert_eq!(r.health, Some(Health::Alarm));
    }

    #[test]
    fn health_words_map_to_states() {
        let text = INFO_310B1.replacen("| OK              |", "| Warning         |", 1);
        assert_eq!(parse_info(&text).unwrap()[0].health, Some(Health::Warning));
    }
}
