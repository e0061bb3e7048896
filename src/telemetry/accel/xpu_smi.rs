//! Intel `xpu-smi dump -d ... -m ...`: a CSV stream, one header line naming the metrics
//! asked for, then one line per device per interval. Columns are read by their header names;
//! a metric the device does not report is an empty cell or `N/A`. The dump prints no version,
//! so errors carry none.

use super::{AccelError, AccelReading, Vendor, mhz, number_cell};

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

#[cfg(test)]
mod tests {
    use super::*;

    const FLEX170: &str =
        include_str!("../../../tests/fixtures/accelerators/xpu-smi/dump_flex170_issue69.txt");
    const MAX1550: &str = include_str!(
        "../../../tests/fixtures/accelerators/xpu-smi/dump_1.2.39_max1550_issue98.txt"
    );

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
