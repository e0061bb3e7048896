//! AMD `amd-smi monitor`: a header of column names, then one row per GPU (or per logical GPU of
//! a partitioned card), each value followed by its unit (`199 W`, `103 °C`, `99 %`,
//! `1920 MHz`, `1235 MB`, `3.0/191.7 GB`).
//!
//! Column names differ by release (`GPU_TEMP`, `GFX_UTIL`, `GFX_CLOCK`, `VRAM_USED` +
//! `VRAM_TOTAL` in the 6.x CHANGELOG and blog samples; `GPU_T`, `GFX%`, `GFX_CLK`,
//! `VRAM_USAGE` in amd-smi 25.x and the current documentation; `GTT_USAGE` on an APU), so each
//! metric lists the spellings the samples show, and a column no sample names is read past but
//! never guessed at. amd-smi's `MB` and `GB` are binary (196300 MB is printed as 191.7 GB).
//!
//! amd-smi has no published complete machine-format (`--json`/`--csv`) sample of its metrics,
//! so the table is read. The tool prints no version in the table; its failure texts end with a
//! line `AMDSMI Tool: VERSION | ...`, which errors carry. The published failure texts (driver
//! not initialized, no GPU devices) are recognised by [`failure_reason`] so the host is reported
//! with the right reason instead of "unsupported output".

use super::{
    AccelError, AccelProcess, AccelReading, Vendor, amd_smi_report, count_cell, mhz, number_cell,
};
use crate::telemetry::LostReason;

const TOOL: &str = "amd-smi";
const MIB_PER_GIB: f64 = 1024.0;

/// What `gpufleet` runs, as one fixed script: the default monitor table (power, temperatures,
/// utilization, clock, memory); where amd-smi refuses `monitor` (ROCm 6.0's amd-smi has no such
/// command: it came with ROCm 6.1), `amd-smi metric` instead; with the first argument `static`,
/// first `amd-smi static` (model, bus id, VRAM size, driver: read once a connection); with the
/// second `process`, then the process list as CSV, or where amd-smi refuses `--csv`, the
/// `amd-smi process` report (at the process lists' pace, not every reading: each amd-smi run
/// starts a Python interpreter on the host). Each report follows a line of its own
/// ([`SECTION_MARK`] and its name: `static`, `monitor`, `metric`, `process`, `process-report`);
/// the script ends with the monitor's exit status, or 0 where `metric` answered for it.
pub const POLL_SCRIPT: &str = "if [ \"$1\" = static ]; then echo 'gpufleet-amd-smi static'; amd-smi static 2>&1; fi; \
echo 'gpufleet-amd-smi monitor'; amd-smi monitor 2>&1; s=$?; \
if [ $s -ne 0 ]; then echo 'gpufleet-amd-smi metric'; amd-smi metric 2>&1 && s=0; fi; \
if [ \"$2\" = process ]; then echo 'gpufleet-amd-smi process'; amd-smi process --csv 2>&1 || \
{ echo 'gpufleet-amd-smi process-report'; amd-smi process 2>&1; }; fi; exit $s";

/// What the poll script prints before each report, then the report's name.
pub const SECTION_MARK: &str = "gpufleet-amd-smi ";

/// The report `name` (`static`, `monitor`, `process`) of the poll script's output; text before
/// any mark is the monitor table (the tool run alone). `None` when the output has no such part.
pub fn section<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    super::section(text, SECTION_MARK, "monitor", name)
}

/// The processes of the poll's `process` report (`amd-smi process --csv`), or where amd-smi
/// refused the CSV, of its `process-report` (the `amd-smi process` report); `None` where the
/// output has neither or amd-smi printed something else there, so they stay unknown.
pub fn listed_processes(text: &str) -> Option<Vec<AccelProcess>> {
    match section(text, "process-report") {
        Some(report) => amd_smi_report::parse_process_report(report).ok(),
        None => amd_smi_report::parse_process_csv(section(text, "process")?).ok(),
    }
}

/// One reading of the poll script's output: the monitor table, or where amd-smi refused
/// `monitor` and answered `amd-smi metric` ([`POLL_SCRIPT`]), that report. The monitor's error
/// where neither reads, so a failure text is reported as amd-smi printed it.
pub fn parse_reading(text: &str) -> Result<Vec<AccelReading>, AccelError> {
    let monitor = parse_monitor(text);
    match (&monitor, section(text, "metric")) {
        (Err(_), Some(metric)) => amd_smi_report::parse_metric(metric).or(monitor),
        _ => monitor,
    }
}

/// What the poll's `static` report says of each GPU (model, bus id, VRAM size, driver);
/// `None` where the output has no such report or amd-smi refused it.
pub fn static_facts(text: &str) -> Option<Vec<AccelReading>> {
    amd_smi_report::parse_static(section(text, "static")?).ok()
}

/// Units amd-smi prints after a value, each its own word.
const UNITS: [&str; 11] = [
    "W", "°C", "%", "MHz", "MB", "GB", "KB", "B", "Mb/s", "ns", "mV",
];

/// Parses `amd-smi monitor` (or the poll script's output, by its `monitor` report) into one
/// reading per row, in table order.
pub fn parse_monitor(text: &str) -> Result<Vec<AccelReading>, AccelError> {
    let text = section(text, "monitor").unwrap_or_default();
    let version = tool_version(text);
    let unsupported =
        |reason: &str| AccelError::unsupported(TOOL, version.as_deref(), reason, text);
    let mut lines = text
        .lines()
        .filter(|line| !line.trim().is_empty())
        .skip_while(|line| line.trim_start().starts_with("WARNING:"));
    let header: Vec<&str> = match lines.next() {
        Some(line) => line.split_whitespace().collect(),
        None => return Err(unsupported("no output")),
    };
    if header.first() != Some(&"GPU") {
        return Err(unsupported("no monitor table header"));
    }
    if !header.iter().any(|name| reads(name)) {
        return Err(unsupported("no column gpufleet reads"));
    }
    let mut readings = Vec::new();
    for line in text
        .lines()
        .skip_while(|line| line.split_whitespace().next() != Some("GPU"))
        .skip(1)
    {
        let Some(first) = line.split_whitespace().next() else {
            break;
        };
        if first.parse::<u32>().is_err() {
            break;
        }
        let cells = cells(line);
        if cells.len() != header.len() {
            return Err(unsupported(&format!(
                "a row has {} values under {} columns",
                cells.len(),
                header.len()
            )));
        }
        let reading = read_row(&header, &cells)
            .map_err(|column| unsupported(&format!("an unreadable `{column}` value")))?;
        readings.push(reading);
    }
    if readings.is_empty() {
        return Err(unsupported("no GPU rows"));
    }
    Ok(readings)
}

/// Whether gpufleet reads the column (all others are read past).
fn reads(name: &str) -> bool {
    matches!(
        name,
        "POWER"
            | "GPU_TEMP"
            | "GPU_T"
            | "MEM_TEMP"
            | "MEM_T"
            | "GFX_UTIL"
            | "GFX%"
            | "GFX_CLOCK"
            | "GFX_CLK"
            | "MEM_UTIL"
            | "MEM%"
            | "MEM_CLOCK"
            | "VRAM_USED"
            | "VRAM_TOTAL"
            | "VRAM_USAGE"
            | "GTT_USAGE"
            | "DOUBLE_ECC"
            | "PCIE_REPLAY"
    )
}

/// A row's values, each with its unit dropped: `0.5/ 48.0 GB` is one value `0.5/48.0`.
fn cells(line: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut open = false;
    for word in line.split_whitespace() {
        if UNITS.contains(&word) && !open && !out.is_empty() {
            continue;
        }
        match out.last_mut() {
            Some(last) if open => last.push_str(word),
            _ => out.push(word.to_string()),
        }
        open = word.ends_with('/');
    }
    out
}

/// One row under the header; `Err(column)` names a value that is not a number.
fn read_row(header: &[&str], cells: &[String]) -> Result<AccelReading, String> {
    let bad = |name: &str| name.to_string();
    let index = cells
        .first()
        .and_then(|c| c.parse::<u32>().ok())
        .ok_or_else(|| bad("GPU"))?;
    let mut r = AccelReading::new(Vendor::Amd, index);
    for (name, cell) in header.iter().zip(cells).skip(1) {
        let number = || number_cell(cell).map_err(|()| bad(name));
        match *name {
            "POWER" => r.power_draw_w = number()?,
            "GPU_TEMP" | "GPU_T" => r.temperature_c = number()?,
            "MEM_TEMP" | "MEM_T" => r.temperature_memory_c = number()?,
            "GFX_UTIL" | "GFX%" => r.utilization_pct = number()?,
            "MEM_UTIL" | "MEM%" => r.utilization_memory_pct = number()?,
            "GFX_CLOCK" | "GFX_CLK" => r.clock_core_mhz = number()?.and_then(mhz),
            "MEM_CLOCK" => r.clock_mem_mhz = number()?.and_then(mhz),
            "VRAM_USED" => r.memory_used_mib = count_cell(cell).map_err(|()| bad(name))?,
            "VRAM_TOTAL" => r.memory_total_mib = count_cell(cell).map_err(|()| bad(name))?,
            "VRAM_USAGE" | "GTT_USAGE" => {
                let (used, total) = usage_gib(cell).ok_or_else(|| bad(name))?;
                r.memory_used_mib = used;
                r.memory_total_mib = total;
            }
            "DOUBLE_ECC" => r.ecc_uncorrected = count_cell(cell).map_err(|()| bad(name))?,
            "PCIE_REPLAY" => r.pcie_replay_count = count_cell(cell).map_err(|()| bad(name))?,
            _ => {}
        }
    }
    Ok(r)
}

/// `3.0/191.7` (GB, binary) as used and total MiB; `N/A` is both unknown.
fn usage_gib(cell: &str) -> Option<(Option<u64>, Option<u64>)> {
    if number_cell(cell) == Ok(None) {
        return Some((None, None));
    }
    let (used, total) = cell.split_once('/')?;
    let mib = |v: &str| -> Option<Option<u64>> {
        let gib = number_cell(v).ok()?;
        Some(
            gib.filter(|g| *g >= 0.0)
                .map(|g| (g * MIB_PER_GIB).round() as u64),
        )
    };
    Some((mib(used)?, mib(total)?))
}

/// The version from amd-smi's `AMDSMI Tool: 26.1.0+b5522cc8 | ...` line, where printed.
pub fn tool_version(text: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let rest = line.trim().strip_prefix("AMDSMI Tool:")?;
        let version = rest.split('|').next()?.trim();
        (!version.is_empty()).then(|| version.to_string())
    })
}

/// The reason a failing amd-smi gives in its published failure texts: the amdgpu driver not
/// initialized, or no GPU devices found; `None` for anything else.
pub fn failure_reason(text: &str) -> Option<LostReason> {
    if text.contains("Unable to get devices, driver not initialized") {
        Some(LostReason::DriverNotLoaded)
    } else if text.contains("Unable to detect any GPU devices") {
        Some(LostReason::NoDevices)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let root = env!("CARGO_MANIFEST_DIR");
        std::fs::read_to_string(format!("{root}/tests/fixtures/accel/{name}")).expect("fixture")
    }

    #[test]
    fn the_wide_monitor_row_reads_every_metric_it_prints() {
        let r = parse_monitor(&fixture("amd-amd-smi-monitor-01.txt")).expect("parse");
        assert_eq!(r.len(), 1);
        let g = &r[0];
        assert_eq!(g.vendor, Vendor::Amd);
        assert_eq!(g.power_draw_w, Some(199.0));
        assert_eq!(g.temperature_c, Some(103.0));
        assert_eq!(g.temperature_memory_c, Some(84.0));
        assert_eq!(g.utilization_pct, Some(99.0));
        assert_eq!(g.utilization_memory_pct, Some(31.0));
        assert_eq!(
            (g.clock_core_mhz, g.clock_mem_mhz),
            (Some(1920), Some(1000))
        );
        assert_eq!(
            (g.memory_used_mib, g.memory_total_mib),
            (Some(1235), Some(16335))
        );
        assert_eq!((g.ecc_uncorrected, g.pcie_replay_count), (Some(0), Some(0)));
    }

    #[test]
    fn the_current_layout_reads_usage_in_binary_gigabytes() {
        let r = parse_monitor(&fixture("amd-amd-smi-monitor-05.txt")).expect("parse");
        let g = &r[0];
        assert_eq!(g.power_draw_w, Some(305.0));
        assert_eq!(g.clock_core_mhz, Some(2106));
        assert_eq!(g.utilization_pct, Some(97.0));
        // 3.0 of 191.7 GB, as amd-smi's binary gigabytes.
        assert_eq!(
            (g.memory_used_mib, g.memory_total_mib),
            (Some(3072), Some(196301))
        );
        // The memory clock is not in this layout: unknown, not 0.
        assert_eq!(g.clock_mem_mhz, None);
    }

    #[test]
    fn secondary_partitions_keep_their_unknowns_and_padded_usage() {
        let r = parse_monitor(&fixture("amd-amd-smi-monitor-08.txt")).expect("parse");
        assert_eq!(r.len(), 8);
        assert_eq!(r[1].index, 1);
        assert_eq!(r[1].power_draw_w, None);
        assert_eq!(r[1].temperature_c, None);
        assert_eq!(r[1].memory_total_mib, Some(49152));
        assert_eq!(r[4].power_draw_w, Some(182.0));
    }

    #[test]
    fn a_table_of_columns_gpufleet_does_not_read_is_unsupported() {
        let err = parse_monitor(&fixture("amd-amd-smi-monitor-03.txt")).expect_err("violation");
        assert!(err.to_string().contains("PVIOL"), "{err}");
    }

    #[test]
    fn failure_texts_name_their_reason_and_version() {
        let text = fixture("amd-amd-smi-error-02.txt");
        assert_eq!(failure_reason(&text), Some(LostReason::DriverNotLoaded));
        assert_eq!(tool_version(&text).as_deref(), Some("26.1.0+b5522cc8"));
        let err = parse_monitor(&text).expect_err("error text");
        assert!(
            err.to_string()
                .starts_with("unsupported output from amd-smi 26.1.0+b5522cc8")
        );
        let text = fixture("amd-amd-smi-error-04.txt");
        assert_eq!(failure_reason(&text), Some(LostReason::NoDevices));
        assert_eq!(failure_reason(&fixture("amd-amd-smi-error-06.txt")), None);
    }

    #[test]
    fn the_poll_scripts_reports_are_read_apart() {
        let text = format!(
            "gpufleet-amd-smi static\n{}gpufleet-amd-smi monitor\n{}gpufleet-amd-smi process\n{}",
            fixture("amd-amd-smi-static-05.txt"),
            fixture("amd-amd-smi-monitor-05.txt"),
            fixture("amd-amd-smi-process-csv-01.txt")
        );
        let r = parse_monitor(&text).expect("monitor");
        assert_eq!((r.len(), r[0].power_draw_w), (1, Some(305.0)));
        let facts = static_facts(&text).expect("static");
        assert_eq!(facts[0].name.as_deref(), Some("AMD Instinct MI350X"));
        let processes = listed_processes(&text).expect("processes");
        assert_eq!(processes.len(), 8);
        // The monitor alone (no marks) is still its table, with no other report.
        let alone = fixture("amd-amd-smi-monitor-05.txt");
        assert_eq!(parse_monitor(&alone).expect("alone").len(), 1);
        assert_eq!(static_facts(&alone), None);
        assert_eq!(listed_processes(&alone), None);
        // A process report amd-smi refused is unknown, not "no processes".
        let refused =
            format!("{alone}gpufleet-amd-smi process\nUnable to detect any GPU devices\n");
        assert_eq!(listed_processes(&refused), None);
    }

    #[test]
    fn a_refused_monitor_reads_metric_and_a_refused_csv_the_process_report() {
        // amd-smi's published refusal of an argument it does not know stands for the refused
        // commands.
        let refused = fixture("amd-amd-smi-error-06.txt");
        let text = format!(
            "gpufleet-amd-smi monitor\n{refused}gpufleet-amd-smi metric\n{}\
             gpufleet-amd-smi process\n{refused}gpufleet-amd-smi process-report\n{}",
            fixture("amd-amd-smi-metric-07.txt"),
            fixture("amd-amd-smi-process-02.txt")
        );
        assert!(parse_monitor(&text).is_err());
        let r = parse_reading(&text).expect("metric");
        assert_eq!((r.len(), r[0].power_draw_w), (1, Some(234.0)));
        let p = listed_processes(&text).expect("report");
        assert_eq!((p[0].pid, p[0].name.as_str()), (1693982, "TransferBench"));
        // Both refused: the monitor's error, no numbers.
        let both = format!("gpufleet-amd-smi monitor\n{refused}gpufleet-amd-smi metric\n{refused}");
        assert!(parse_reading(&both).is_err());
        // A monitor that answered is read even where a metric report follows.
        let monitor = format!(
            "{}gpufleet-amd-smi metric\n{}",
            fixture("amd-amd-smi-monitor-05.txt"),
            fixture("amd-amd-smi-metric-07.txt")
        );
        assert_eq!(
            parse_reading(&monitor).expect("monitor")[0].power_draw_w,
            Some(305.0)
        );
    }

    #[test]
    fn a_row_that_does_not_fit_its_header_is_refused() {
        let text = "GPU  POWER  GPU_TEMP\n  0  199 W    103 °C  7 %\n";
        assert!(parse_monitor(text).is_err());
        let text = "GPU  POWER  GPU_TEMP\n  0  lots W    103 °C\n";
        assert!(parse_monitor(text).is_err());
    }
}
