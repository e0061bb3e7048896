//! Intel `xpu-smi`: `dump -d ... -m ...`, a CSV stream, one header line naming the metrics
//! asked for, then one line per device per interval; and the `discovery` (table or `--dump`
//! CSV), `health -l` and `stats -d N` reports. Columns and keys are read by their names; a
//! metric the device does not report is an empty cell or `N/A`, which stays unknown. None of
//! these prints a version, so errors carry none.

use super::{AccelError, AccelReading, Health, Vendor, mhz, number_cell};
use crate::remote::sanitize;

const TOOL: &str = "xpu-smi";

/// What one dump column fills in a reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Column {
    Timestamp,
    DeviceId,
    Utilization,
    Power,
    Frequency,
    CoreTemperature,
    MemoryTemperature,
    MemoryUtilization,
    MemoryUsedMib,
    Other,
}

impl Column {
    fn from_header(name: &str) -> Column {
        match name {
            "Timestamp" => Column::Timestamp,
            "DeviceId" => Column::DeviceId,
            "GPU Utilization (%)" => Column::Utilization,
            "GPU Power (W)" => Column::Power,
            "GPU Frequency (MHz)" => Column::Frequency,
            "GPU Core Temperature (Celsius Degree)" => Column::CoreTemperature,
            "GPU Memory Temperature (Celsius Degree)" => Column::MemoryTemperature,
            "GPU Memory Utilization (%)" => Column::MemoryUtilization,
            "GPU Memory Used (MiB)" => Column::MemoryUsedMib,
            _ => Column::Other,
        }
    }
}

/// Parses a dump: one reading per data line, in order (the caller keeps the newest per
/// device). Lines before the header (xpu-smi prints none, a shell may) are refused.
pub fn parse_dump(text: &str) -> Result<Vec<AccelReading>, AccelError> {
    let text = section(text, "dump").unwrap_or_default();
    let unsupported = |reason: String| AccelError::unsupported(TOOL, None, reason, text);
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header = lines.next().unwrap_or_default();
    let columns: Vec<Column> = header
        .split(',')
        .map(|h| Column::from_header(h.trim()))
        .collect();
    if columns.first() != Some(&Column::Timestamp) || columns.get(1) != Some(&Column::DeviceId) {
        return Err(unsupported("no `Timestamp, DeviceId` header".to_string()));
    }
    if !columns.iter().skip(2).any(|c| *c != Column::Other) {
        return Err(unsupported("no known metric column".to_string()));
    }

    let mut readings = Vec::new();
    for line in lines {
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        if cells.len() != columns.len() {
            return Err(unsupported(format!(
                "a line has {} cells for {} columns",
                cells.len(),
                columns.len()
            )));
        }
        let bad = |what: &str| unsupported(format!("unreadable {what} in `{line}`"));
        let index = cells[1].parse::<u32>().map_err(|_| bad("DeviceId"))?;
        let mut r = AccelReading::new(Vendor::Intel, index);
        for (column, cell) in columns.iter().zip(&cells).skip(2) {
            let value = || number_cell(cell).map_err(|()| bad("number"));
            match column {
                Column::Utilization => r.utilization_pct = value()?,
                Column::Power => r.power_draw_w = value()?,
                Column::Frequency => r.clock_core_mhz = value()?.and_then(mhz),
                Column::CoreTemperature => r.temperature_c = value()?,
                Column::MemoryTemperature => r.temperature_memory_c = value()?,
                Column::MemoryUtilization => r.utilization_memory_pct = value()?,
                Column::MemoryUsedMib => {
                    r.memory_used_mib = value()?.filter(|v| *v >= 0.0).map(|v| v.round() as u64)
                }
                Column::Timestamp | Column::DeviceId | Column::Other => {}
            }
        }
        readings.push(r);
    }
    if readings.is_empty() {
        return Err(unsupported("a header but no data line".to_string()));
    }
    Ok(readings)
}

/// The `| key | value |` rows of an xpu-smi report table, in order; rules and other lines are
/// left out. `None` when a row has other than two cells.
fn table_rows(text: &str) -> Option<Vec<(String, String)>> {
    let mut rows = Vec::new();
    for line in text.lines().map(str::trim) {
        let Some(inner) = line.strip_prefix('|').and_then(|l| l.strip_suffix('|')) else {
            continue;
        };
        let cells: Vec<&str> = inner.split('|').map(str::trim).collect();
        let [key, value] = cells.as_slice() else {
            return None;
        };
        rows.push((key.to_string(), value.to_string()));
    }
    Some(rows)
}

/// What a device's `Key: value` line or CSV column fills in a discovery reading.
fn discovery_field(r: &mut AccelReading, key: &str, value: &str) -> Result<(), ()> {
    let value = value.trim();
    let text = || (!matches!(value, "" | "N/A" | "unknown")).then(|| sanitize(value));
    match key {
        "Device Name" => r.name = text(),
        "PCI BDF Address" => r.bus_id = text(),
        "Driver Version" => r.driver_version = text(),
        "Memory Physical Size" => {
            let number = value.strip_suffix(" MiB").unwrap_or(value);
            r.memory_total_mib = number_cell(number)?
                .filter(|v| *v >= 0.0)
                .map(|v| v.round() as u64);
        }
        _ => {}
    }
    Ok(())
}

/// The fixed script of a connection's first reading: the discovery fields of the published
/// `xpu-smi discovery --dump 1,2,6,16` (device id, name, core clock, memory size); with the
/// first argument `health`, the `xpu-smi health -l` report (each device's worst component
/// status; only for a one-shot reading, since the first reading's report holds for the whole
/// connection); then the dump (its arguments are the script's after the first), each after a
/// line of its own ([`SECTION_MARK`] and its name).
pub const FIRST_SCRIPT: &str = "echo 'gpufleet-xpu-smi discovery'; xpu-smi discovery --dump 1,2,6,16 2>&1; \
if [ \"$1\" = health ]; then echo 'gpufleet-xpu-smi health'; xpu-smi health -l 2>&1; fi; shift; \
echo 'gpufleet-xpu-smi dump'; exec xpu-smi \"$@\"";

/// What [`FIRST_SCRIPT`] prints before each report, then the report's name.
pub const SECTION_MARK: &str = "gpufleet-xpu-smi ";

/// The report `name` (`discovery`, `health`, `dump`) of the first reading's output; text before any mark
/// is the dump (the tool run alone).
pub fn section<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    super::section(text, SECTION_MARK, "dump", name)
}

/// What the first reading's discovery report says of each device (name, memory size) and its
/// health report the health of each; `None` where the output has neither or xpu-smi refused
/// both.
pub fn discovery_facts(text: &str) -> Option<Vec<AccelReading>> {
    let discovery = section(text, "discovery").and_then(|t| parse_discovery(t).ok());
    let health = section(text, "health").and_then(|t| parse_health(t).ok());
    if discovery.is_none() && health.is_none() {
        return None;
    }
    let mut facts = discovery.unwrap_or_default();
    for r in health.unwrap_or_default() {
        match facts.iter_mut().find(|f| f.index == r.index) {
            Some(f) => f.health = r.health,
            None => facts.push(r),
        }
    }
    Some(facts)
}

/// Parses `xpu-smi discovery` (the `Device ID | Device Information` table, with or without
/// `-d`) or `xpu-smi discovery --dump ...` (CSV): one reading per device with its name, PCI
/// address, memory size and driver version where printed; no metric.
pub fn parse_discovery(text: &str) -> Result<Vec<AccelReading>, AccelError> {
    let unsupported = |reason: String| AccelError::unsupported(TOOL, None, reason, text);
    let first = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default();
    if first.starts_with("Device ID,") {
        return parse_discovery_csv(text).map_err(unsupported);
    }
    let rows = table_rows(text).ok_or_else(|| unsupported("a row without two cells".into()))?;
    if rows.first().map(|(k, v)| (k.as_str(), v.as_str()))
        != Some(("Device ID", "Device Information"))
    {
        return Err(unsupported(
            "no `Device ID | Device Information` header".into(),
        ));
    }
    let mut readings: Vec<AccelReading> = Vec::new();
    for (id, info) in rows.iter().skip(1) {
        if !id.is_empty() {
            let index = id
                .parse()
                .map_err(|_| unsupported(format!("unreadable Device ID `{id}`")))?;
            readings.push(AccelReading::new(Vendor::Intel, index));
        }
        if info.is_empty() {
            continue;
        }
        let (Some(r), Some((key, value))) = (readings.last_mut(), info.split_once(": ")) else {
            return Err(unsupported(format!("unreadable line `{info}`")));
        };
        discovery_field(r, key, value)
            .map_err(|()| unsupported(format!("`{key}` is not a size")))?;
    }
    if readings.is_empty() {
        return Err(unsupported("no device".into()));
    }
    Ok(readings)
}

fn parse_discovery_csv(text: &str) -> Result<Vec<AccelReading>, String> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header = csv_fields(lines.next().unwrap_or_default()).ok_or("unreadable header")?;
    let mut readings = Vec::new();
    for line in lines {
        let cells = csv_fields(line).ok_or_else(|| format!("unreadable line `{line}`"))?;
        if cells.len() != header.len() {
            return Err(format!(
                "a line has {} cells for {} columns",
                cells.len(),
                header.len()
            ));
        }
        let index = cells[0]
            .parse()
            .map_err(|_| format!("unreadable Device ID `{}`", cells[0]))?;
        let mut r = AccelReading::new(Vendor::Intel, index);
        for (key, value) in header.iter().zip(&cells).skip(1) {
            discovery_field(&mut r, key, value).map_err(|()| format!("`{key}` is not a size"))?;
        }
        readings.push(r);
    }
    if readings.is_empty() {
        return Err("a header but no device line".into());
    }
    Ok(readings)
}

/// The fields of one CSV line whose fields are plain or wholly `"quoted"` (no quote inside a
/// field, as xpu-smi writes them); `None` for anything else.
fn csv_fields(line: &str) -> Option<Vec<String>> {
    let mut fields = Vec::new();
    let mut rest = line.trim_end();
    loop {
        let (field, tail) = if let Some(quoted) = rest.strip_prefix('"') {
            let (field, after) = quoted.split_once('"')?;
            match after.strip_prefix(',') {
                Some(tail) => (field, Some(tail)),
                None if after.is_empty() => (field, None),
                None => return None,
            }
        } else {
            match rest.split_once(',') {
                Some((field, tail)) => (field, Some(tail)),
                None => (rest, None),
            }
        };
        if !rest.starts_with('"') && field.contains('"') {
            return None;
        }
        fields.push(field.trim().to_string());
        match tail {
            Some(tail) => rest = tail,
            None => return Some(fields),
        }
    }
}

/// Parses `xpu-smi health -l` (or `health -d N`): per `Device ID` block, the worst `Status:` of
/// its components (`Ok`/`OK` is fine; `Warning`, `Critical` and any other word are kept). One
/// reading per device with only its health set.
pub fn parse_health(text: &str) -> Result<Vec<AccelReading>, AccelError> {
    let unsupported = |reason: String| AccelError::unsupported(TOOL, None, reason, text);
    let rows = table_rows(text).ok_or_else(|| unsupported("a row without two cells".into()))?;
    let mut readings: Vec<AccelReading> = Vec::new();
    for (key, value) in &rows {
        if key == "Device ID" {
            let index = value
                .parse()
                .map_err(|_| unsupported(format!("unreadable Device ID `{value}`")))?;
            readings.push(AccelReading::new(Vendor::Intel, index));
            continue;
        }
        let Some(word) = value.strip_prefix("Status:").map(str::trim) else {
            continue;
        };
        let Some(r) = readings.last_mut() else {
            return Err(unsupported("a status before any Device ID".into()));
        };
        let state = if word.eq_ignore_ascii_case("ok") {
            Health::Ok
        } else {
            Health::from_word(word)
        };
        if r.health.as_ref().is_none_or(|h| rank(&state) > rank(h)) {
            r.health = Some(state);
        }
    }
    if readings.is_empty() || readings.iter().any(|r| r.health.is_none()) {
        return Err(unsupported("no device with a `Status:` line".into()));
    }
    Ok(readings)
}

/// How bad a health state is, to keep the worst of a device's components.
fn rank(health: &Health) -> u8 {
    match health {
        Health::Ok => 0,
        Health::Warning => 1,
        Health::Other(_) => 2,
        Health::Alarm => 3,
        Health::Critical => 4,
    }
}

/// Parses `xpu-smi stats -d N`: the `| key | value |` rows of one device. Empty cells are
/// metrics the device does not report and stay unknown.
pub fn parse_stats(text: &str) -> Result<AccelReading, AccelError> {
    let unsupported = |reason: String| AccelError::unsupported(TOOL, None, reason, text);
    let rows = table_rows(text).ok_or_else(|| unsupported("a row without two cells".into()))?;
    let Some((_, id)) = rows.first().filter(|(k, _)| k == "Device ID") else {
        return Err(unsupported("no `Device ID` row".into()));
    };
    let index = id
        .parse()
        .map_err(|_| unsupported(format!("unreadable Device ID `{id}`")))?;
    let mut r = AccelReading::new(Vendor::Intel, index);
    let mut known = 0;
    for (key, value) in &rows {
        let number =
            || number_cell(value).map_err(|()| unsupported(format!("`{key}` is not a number")));
        match key.as_str() {
            // The label spans two rows; its value sits on the first.
            "Average % utilization of" => r.utilization_pct = number()?,
            "GPU Power (W)" => r.power_draw_w = number()?,
            "GPU Frequency (MHz)" => r.clock_core_mhz = number()?.and_then(mhz),
            "GPU Core Temperature (C)" => r.temperature_c = number()?,
            "GPU Memory Temperature (C)" => r.temperature_memory_c = number()?,
            "GPU Memory Util (%)" => r.utilization_memory_pct = number()?,
            "GPU Memory Used (MiB)" => {
                r.memory_used_mib = number()?.filter(|v| *v >= 0.0).map(|v| v.round() as u64)
            }
            _ => continue,
        }
        known += 1;
    }
    if known == 0 {
        return Err(unsupported("no known metric row".into()));
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FLEX170: &str =
        include_str!("../../../tests/fixtures/accelerators/xpu-smi/dump_flex170_issue69.txt");
    const MAX1550: &str = include_str!(
        "../../../tests/fixtures/accelerators/xpu-smi/dump_1.2.39_max1550_issue98.txt"
    );

    fn sample(name: &str) -> String {
        let root = env!("CARGO_MANIFEST_DIR");
        std::fs::read_to_string(format!("{root}/tests/fixtures/accel/{name}")).expect("fixture")
    }

    #[test]
    fn dump_of_an_arc_a310_reads_memory_used_and_no_utilization() {
        let readings = parse_dump(&sample("intel-xpu-smi-dump-02.txt")).unwrap();
        assert_eq!(readings.len(), 4);
        let r = &readings[3];
        assert_eq!(r.power_draw_w, Some(15.36));
        assert_eq!(r.clock_core_mhz, Some(2450));
        assert_eq!(r.utilization_memory_pct, Some(2.03));
        assert_eq!(r.memory_used_mib, Some(82));
        assert_eq!((r.utilization_pct, r.temperature_c), (None, None));
    }

    #[test]
    fn a_cut_dump_reads_its_complete_rows_with_na_as_unknown() {
        // Published cut inside its fifth row: the four complete rows are four devices.
        let readings = parse_dump(&sample("intel-xpu-smi-dump-03.txt")).unwrap();
        let indexes: Vec<u32> = readings.iter().map(|r| r.index).collect();
        assert_eq!(indexes, [0, 1, 2, 3]);
        assert!(readings.iter().all(|r| r.utilization_pct.is_none()));
        assert_eq!(readings[2].memory_used_mib, Some(49));
        assert_eq!(readings[2].utilization_memory_pct, Some(0.30));
    }

    #[test]
    fn the_first_dump_sample_reads_power_and_blank_temperature() {
        let readings = parse_dump(&sample("intel-xpu-smi-dump-01.txt")).unwrap();
        assert_eq!(readings.len(), 6);
        assert_eq!(readings[1].power_draw_w, Some(43.74));
        assert_eq!(readings[1].temperature_c, None);
    }

    #[test]
    fn discovery_tables_read_name_bus_memory_and_driver() {
        let short = parse_discovery(&sample("intel-xpu-smi-discovery-01.txt")).unwrap();
        assert_eq!(short.len(), 1);
        assert_eq!(short[0].name.as_deref(), Some("Intel(R) Graphics [0x020a]"));
        assert_eq!(short[0].bus_id.as_deref(), Some("0000:4d:00.0"));
        assert_eq!(short[0].memory_total_mib, None);
        let long = &parse_discovery(&sample("intel-xpu-smi-discovery-02.txt")).unwrap()[0];
        assert_eq!(long.memory_total_mib, Some(32768));
        assert_eq!(long.driver_version.as_deref(), Some("16929133"));
        assert_eq!(long.utilization_pct, None);
    }

    #[test]
    fn discovery_csv_reads_quoted_names_and_na_memory() {
        let two = parse_discovery(&sample("intel-xpu-smi-discovery-03.txt")).unwrap();
        assert_eq!(two.len(), 2);
        assert_eq!(two[1].index, 1);
        assert_eq!(two[1].name.as_deref(), Some("Intel(R) Graphics [0x56c0]"));
        let arc = &parse_discovery(&sample("intel-xpu-smi-discovery-04.txt")).unwrap()[0];
        assert_eq!(
            arc.name.as_deref(),
            Some("Intel(R) Arc(TM) A310 LP Graphics")
        );
        assert_eq!(arc.memory_total_mib, None);
    }

    #[test]
    fn the_first_readings_discovery_and_dump_are_read_apart() {
        let text = format!(
            "gpufleet-xpu-smi discovery\n{}gpufleet-xpu-smi dump\n{}",
            sample("intel-xpu-smi-discovery-04.txt"),
            sample("intel-xpu-smi-dump-02.txt")
        );
        let facts = discovery_facts(&text).expect("facts");
        assert_eq!(
            facts[0].name.as_deref(),
            Some("Intel(R) Arc(TM) A310 LP Graphics")
        );
        assert_eq!(parse_dump(&text).expect("dump").len(), 4);
        // A refused discovery gives no facts, and the dump alone none either.
        let refused = "gpufleet-xpu-smi discovery\nunknown option\ngpufleet-xpu-smi dump\n";
        assert_eq!(discovery_facts(refused), None);
        assert_eq!(discovery_facts(&sample("intel-xpu-smi-dump-02.txt")), None);
        // The health report joins each device's facts, with or without a discovery.
        let health = sample("intel-xpu-smi-health-01.txt");
        let text = format!(
            "gpufleet-xpu-smi discovery\n{}gpufleet-xpu-smi health\n{health}gpufleet-xpu-smi dump\n",
            sample("intel-xpu-smi-discovery-01.txt")
        );
        let facts = discovery_facts(&text).expect("facts");
        assert_eq!(facts.len(), 1);
        assert_eq!(facts[0].health, Some(Health::Ok));
        assert!(facts[0].name.is_some());
        let text = format!(
            "gpufleet-xpu-smi discovery\nunknown option\ngpufleet-xpu-smi health\n{health}"
        );
        let facts = discovery_facts(&text).expect("health alone");
        assert_eq!(
            (facts[0].index, facts[0].health.clone()),
            (0, Some(Health::Ok))
        );
    }

    #[test]
    fn health_reads_ok_in_both_spellings_and_keeps_the_worst() {
        let text = sample("intel-xpu-smi-health-01.txt");
        let readings = parse_health(&text).unwrap();
        assert_eq!(readings.len(), 1);
        assert_eq!(readings[0].health, Some(Health::Ok));
        let warned = text.replacen("Status: Ok    ", "Status: Warning", 2);
        assert_eq!(
            parse_health(&warned).unwrap()[0].health,
            Some(Health::Warning)
        );
        let critical = warned.replacen("Status: OK      ", "Status: Critical", 1);
        assert_eq!(
            parse_health(&critical).unwrap()[0].health,
            Some(Health::Critical)
        );
    }

    #[test]
    fn stats_read_what_is_printed_and_leave_blank_cells_unknown() {
        let r = parse_stats(&sample("intel-xpu-smi-stats-01.txt")).unwrap();
        assert_eq!(r.index, 0);
        assert_eq!(r.utilization_pct, Some(0.0));
        assert_eq!(r.power_draw_w, Some(15.0));
        assert_eq!(r.clock_core_mhz, Some(2050));
        assert_eq!(r.temperature_c, Some(41.0));
        assert_eq!(r.temperature_memory_c, None);
        assert_eq!(r.memory_used_mib, Some(24));
        assert_eq!(r.utilization_memory_pct, Some(0.0));
    }

    #[test]
    fn reports_in_another_form_are_unsupported() {
        let dump = sample("intel-xpu-smi-dump-01.txt");
        for err in [
            parse_discovery(&dump).unwrap_err(),
            parse_health(&dump).unwrap_err(),
            parse_stats(&sample("intel-xpu-smi-health-01.txt")).unwrap_err(),
        ] {
            assert!(
                err.to_string()
                    .starts_with("unsupported output from xpu-smi"),
                "{err}"
            );
        }
    }

    #[test]
    fn flex170_blank_cells_are_unknown_not_zero() {
        let readings = parse_dump(FLEX170).unwrap();
        assert_eq!(readings.len(), 6);
        let r = &readings[0];
        assert_eq!((r.vendor, r.index), (Vendor::Intel, 0));
        assert_eq!(r.utilization_pct, None);
        assert_eq!(r.power_draw_w, Some(43.72));
        assert_eq!(r.clock_core_mhz, Some(2050));
        assert_eq!(r.temperature_c, None);
        assert_eq!(readings[5].power_draw_w, Some(43.70));
        // The dump has no name, memory size or limit columns.
        assert_eq!(
            (r.name.clone(), r.memory_total_mib, r.power_limit_w),
            (None, None, None)
        );
    }

    #[test]
    fn max1550_reads_six_devices_and_na_cells() {
        let readings = parse_dump(MAX1550).unwrap();
        assert_eq!(readings.len(), 13);
        let d3 = &readings[3];
        assert_eq!(d3.index, 3);
        assert_eq!(d3.utilization_pct, None);
        assert_eq!(d3.power_draw_w, Some(293.19));
        assert_eq!(d3.clock_core_mhz, Some(1600));
        assert_eq!(d3.temperature_c, Some(37.5));
        assert_eq!(d3.temperature_memory_c, Some(32.5));
        assert_eq!(d3.utilization_memory_pct, None);
        let second_round = &readings[6];
        assert_eq!(second_round.index, 0);
        assert_eq!(second_round.utilization_memory_pct, Some(20.41));
        assert_eq!(readings[12].power_draw_w, Some(409.54));
    }

    #[test]
    fn truncated_line_is_refused() {
        let cut = &MAX1550[..MAX1550.len() - 12];
        let err = parse_dump(cut).unwrap_err().to_string();
        assert!(err.contains("cells for 8 columns"), "{err}");
    }

    #[test]
    fn unknown_header_is_refused_with_first_lines() {
        let err = parse_dump("Error: Level Zero initialization failed\n").unwrap_err();
        let message = err.to_string();
        assert!(message.starts_with("unsupported output from xpu-smi: no `Timestamp, DeviceId`"));
        assert!(message.contains("Level Zero initialization failed"));
    }

    #[test]
    fn hostile_cell_is_refused_and_not_echoed_raw() {
        let text = FLEX170.replacen("43.72", "\u{1b}]0;x\u{7}43.72", 1);
        let message = parse_dump(&text).unwrap_err().to_string();
        assert!(
            !message.contains('\u{1b}') && !message.contains('\u{7}'),
            "{message:?}"
        );
    }
}
