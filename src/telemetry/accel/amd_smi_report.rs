//! amd-smi's per-device reports besides `monitor`: `amd-smi static` (model, bus id, VRAM size,
//! driver), `amd-smi list` (bus id and UUID), `amd-smi metric` (activity, power, clocks, PCIe
//! replays, ECC) and `amd-smi process` (the processes on each GPU), as the published samples
//! print them.
//!
//! The human form of these commands is one block per device, `GPU: N` (or `CPU: N`), then
//! indented `KEY: value` lines under section headers (`ASIC:`, `BUS:`, `PROCESS_INFO:`). amd-smi
//! 23.x prints the sections flush left, later releases indent them; both read the same here,
//! by the headers above each key. `amd-smi process --csv` (header `gpu,name,pid,...,vram_mem`,
//! memory in bytes) is read by column name; the published `--json` form is read too. A value
//! printed `N/A` stays unknown, and a raw PCI device id in place of a market name (`0x73bf`,
//! amd-smi 23.x on a Radeon) is no model name.

use serde::Deserialize;

use super::{AccelError, AccelProcess, AccelReading, Vendor, count_cell, mhz, number_cell};
use crate::remote::sanitize;

const TOOL: &str = "amd-smi";
const BYTES_PER_MIB: f64 = 1024.0 * 1024.0;

/// One `GPU: N` block: each `KEY: value` line with the headers above it joined by `.`
/// (`ASIC.MARKET_NAME`); a header line itself has no value.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Block {
    index: u32,
    entries: Vec<(String, Option<String>)>,
}

impl Block {
    /// The first value printed under `path`, unless `N/A` or empty.
    fn value(&self, path: &str) -> Option<&str> {
        self.entries
            .iter()
            .find(|(p, v)| p == path && v.is_some())
            .and_then(|(_, v)| v.as_deref())
            .filter(|v| !matches!(*v, "" | "N/A"))
    }
}

/// The GPU blocks of a report, in printed order (`CPU: N` blocks are read past); `Err` with a
/// reason when the text has none or a line that is not a `KEY: value` line.
fn gpu_blocks(text: &str) -> Result<Vec<Block>, String> {
    let mut blocks: Vec<Block> = Vec::new();
    let mut in_gpu = false;
    let mut started = false;
    let mut headers: Vec<(usize, String)> = Vec::new();
    for line in text.lines() {
        if line.trim().is_empty() {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        // A list value amd-smi wraps (`[0 %, N/A,` then `N/A]` on the next line) goes on.
        if let Some((_, Some(open))) = blocks
            .last_mut()
            .filter(|_| in_gpu)
            .and_then(|b| b.entries.last_mut())
            && open.starts_with('[')
            && !open.ends_with(']')
        {
            open.push(' ');
            open.push_str(line.trim());
            continue;
        }
        let Some((key, value)) = line.trim().split_once(':') else {
            return Err(format!("a line that is not `KEY: value`: {}", line.trim()));
        };
        let (key, value) = (key.trim(), value.trim());
        if key == "GPU" || key == "CPU" {
            headers.clear();
            started = true;
            in_gpu = key == "GPU";
            if in_gpu {
                let index = value
                    .parse::<u32>()
                    .map_err(|_| format!("a GPU number `{value}`"))?;
                blocks.push(Block {
                    index,
                    entries: Vec::new(),
                });
            }
            continue;
        }
        if !started {
            return Err("no `GPU: N` block".to_string());
        }
        let Some(block) = blocks.last_mut().filter(|_| in_gpu) else {
            continue;
        };
        while headers.last().is_some_and(|(at, _)| *at >= indent) {
            headers.pop();
        }
        let mut path: Vec<&str> = headers.iter().map(|(_, h)| h.as_str()).collect();
        path.push(key);
        let path = path.join(".");
        if value.is_empty() {
            headers.push((indent, key.to_string()));
            block.entries.push((path, None));
        } else {
            block.entries.push((path, Some(value.to_string())));
        }
    }
    if blocks.is_empty() {
        return Err("no `GPU: N` block".to_string());
    }
    Ok(blocks)
}

/// A size as amd-smi prints it (`16368 MB`, `10.1 GB`, `0.0 B`; binary units) in MiB; `None`
/// for anything else.
fn size_mib(value: &str) -> Option<u64> {
    let (number, unit) = value.split_once(' ')?;
    let number: f64 = number.trim().parse().ok().filter(|n: &f64| *n >= 0.0)?;
    let bytes = match unit.trim() {
        "B" => 1.0,
        "KB" => 1024.0,
        "MB" => 1024.0 * 1024.0,
        "GB" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    Some((number * bytes / BYTES_PER_MIB).round() as u64)
}

/// Parses `amd-smi static` (all sections or some) into one reading per GPU holding only what
/// the report states once: model (the market name, else the board's product name), bus id,
/// VRAM size and driver version. Every metric stays unknown.
pub fn parse_static(text: &str) -> Result<Vec<AccelReading>, AccelError> {
    let blocks =
        gpu_blocks(text).map_err(|reason| AccelError::unsupported(TOOL, None, reason, text))?;
    Ok(blocks.iter().map(static_reading).collect())
}

fn static_reading(block: &Block) -> AccelReading {
    let mut r = AccelReading::new(Vendor::Amd, block.index);
    let is_id = |v: &&str| v.starts_with("0x") && v.len() > 2;
    r.name = block
        .value("ASIC.MARKET_NAME")
        .filter(|v| !is_id(v))
        .or_else(|| block.value("BOARD.PRODUCT_NAME"))
        .map(sanitize);
    r.bus_id = block.value("BUS.BDF").map(sanitize);
    r.memory_total_mib = block
        .value("VRAM.SIZE")
        .or_else(|| block.value("VRAM.VRAM_SIZE_MB"))
        .and_then(size_mib);
    r.driver_version = block
        .value("DRIVER.VERSION")
        .or_else(|| block.value("DRIVER.DRIVER_VERSION"))
        .map(sanitize);
    r
}

/// Parses `amd-smi metric` (all sections or some: `--usage`, `--power`, `--clock`, `--pcie`,
/// `--ecc-block`) into one reading per GPU: GFX and memory-controller activity, socket power,
/// the first GFX clock and the memory clock, PCIe replays and the uncorrectable ECC errors of
/// every block, each where printed. A value that is not a number in its unit is refused.
pub fn parse_metric(text: &str) -> Result<Vec<AccelReading>, AccelError> {
    let unsupported = |reason: String| AccelError::unsupported(TOOL, None, reason, text);
    let blocks = gpu_blocks(text).map_err(unsupported)?;
    let mut out = Vec::new();
    for block in &blocks {
        let mut r = AccelReading::new(Vendor::Amd, block.index);
        let bad = |path: &str| unsupported(format!("GPU {}: an unreadable {path}", block.index));
        let number = |path: &str, unit: &str| -> Result<Option<f64>, AccelError> {
            let Some(value) = block.value(path) else {
                return Ok(None);
            };
            let value = value.strip_suffix(unit).unwrap_or(value).trim();
            number_cell(value).map_err(|()| bad(path))
        };
        r.utilization_pct = number("USAGE.GFX_ACTIVITY", "%")?;
        r.utilization_memory_pct = number("USAGE.UMC_ACTIVITY", "%")?;
        r.power_draw_w = number("POWER.SOCKET_POWER", "W")?;
        r.clock_core_mhz = number("CLOCK.GFX_0.CLK", "MHz")?.and_then(mhz);
        r.clock_mem_mhz = number("CLOCK.MEM_0.CLK", "MHz")?.and_then(mhz);
        r.pcie_replay_count = match block.value("PCIE.REPLAY_COUNT") {
            Some(v) => count_cell(v).map_err(|()| bad("PCIE.REPLAY_COUNT"))?,
            None => None,
        };
        let mut ecc: Option<u64> = None;
        for (path, value) in &block.entries {
            if path.starts_with("ECC_BLOCKS.") && path.ends_with(".UNCORRECTABLE_COUNT") {
                let count =
                    count_cell(value.as_deref().unwrap_or_default()).map_err(|()| bad(path))?;
                if let Some(count) = count {
                    ecc = Some(ecc.unwrap_or(0).saturating_add(count));
                }
            }
        }
        r.ecc_uncorrected = ecc;
        out.push(r);
    }
    Ok(out)
}

/// The title of amd-smi's default view (`amd-smi` with no command, AMD-SMI 26 and later).
pub const DEFAULT_VIEW_TITLE: &str = "| AMD-SMI ";

/// Parses amd-smi's default view: after its title box, two lines per GPU, `| BDF  GPU-Name |
/// Mem-Uti  Temp  UEC  Power-Usage |` then `| GPU  HIP-ID  OAM-ID  Partition-Mode | GFX-Uti
/// Fan  Mem-Usage |`. Each GPU gives its bus id, model (as printed, cut to its cell: a long
/// name starts with `...`), memory activity, temperature, uncorrectable errors (UEC), power,
/// GFX activity, fan and memory used/total; the driver version from the title box. A GPU line
/// whose cells are not those values is refused.
pub fn parse_default(text: &str) -> Result<Vec<AccelReading>, AccelError> {
    let unsupported = |reason: String| AccelError::unsupported(TOOL, None, reason, text);
    let mut lines = text.lines().map(str::trim);
    if !lines.any(|l| l.starts_with(DEFAULT_VIEW_TITLE)) {
        return Err(unsupported("no `AMD-SMI` title".into()));
    }
    let driver = text.lines().find_map(|l| {
        let lower = l.to_ascii_lowercase();
        let at = lower.find("amdgpu version:")? + "amdgpu version:".len();
        l.get(at..)?.split_whitespace().next().map(sanitize)
    });
    let rows: Vec<&str> = text
        .lines()
        .map(str::trim)
        .skip_while(|l| !l.starts_with("|====="))
        .skip(1)
        .take_while(|l| l.starts_with('|'))
        .filter(|l| !l.starts_with("|---"))
        .collect();
    if rows.is_empty() || !rows.len().is_multiple_of(2) {
        return Err(unsupported(format!("{} GPU lines, not pairs", rows.len())));
    }
    let mut out = Vec::new();
    for pair in rows.chunks(2) {
        let [first, second] = pair else {
            continue;
        };
        let r = default_gpu(first, second, driver.as_deref())
            .ok_or_else(|| unsupported(format!("an unreadable GPU line: {first}")))?;
        out.push(r);
    }
    Ok(out)
}

/// The two cells of a `| left | right |` line.
fn two_cells(line: &str) -> Option<(&str, &str)> {
    let inner = line.strip_prefix('|')?.strip_suffix('|')?;
    let (left, right) = inner.split_once('|')?;
    Some((left.trim(), right.trim()))
}

/// The values of a cell with their units dropped (`27 °C` is `27`, `40.0 %` is `40.0`).
fn values(cell: &str) -> Vec<&str> {
    cell.split_whitespace()
        .filter(|w| !matches!(*w, "%" | "°C" | "W" | "MB"))
        .collect()
}

fn default_gpu(first: &str, second: &str, driver: Option<&str>) -> Option<AccelReading> {
    let (bus_and_name, figures) = two_cells(first)?;
    let (ids, more) = two_cells(second)?;
    let index: u32 = ids.split_whitespace().next()?.parse().ok()?;
    let mut r = AccelReading::new(Vendor::Amd, index);
    let (bus, name) = bus_and_name.split_once(' ')?;
    r.bus_id = Some(sanitize(bus));
    r.name = Some(sanitize(name.trim())).filter(|n| !n.is_empty() && n != "N/A");
    r.driver_version = driver.map(str::to_string);
    let [mem_util, temp, uec, power] = <[&str; 4]>::try_from(values(figures)).ok()?;
    r.utilization_memory_pct = number_cell(mem_util).ok()?;
    r.temperature_c = number_cell(temp).ok()?;
    r.ecc_uncorrected = count_cell(uec).ok()?;
    let (draw, cap) = power.split_once('/').unwrap_or((power, "N/A"));
    r.power_draw_w = number_cell(draw).ok()?;
    r.power_limit_w = number_cell(cap).ok()?;
    let [gfx, fan, memory] = <[&str; 3]>::try_from(values(more)).ok()?;
    r.utilization_pct = number_cell(gfx).ok()?;
    r.fan_speed_pct = number_cell(fan).ok()?;
    let (used, total) = memory.split_once('/')?;
    r.memory_used_mib = count_cell(used).ok()?;
    r.memory_total_mib = count_cell(total).ok()?;
    Some(r)
}

/// One GPU of `amd-smi list`: its number, bus id and UUID as printed (`<redacted>` where the
/// publisher hid it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    pub index: u32,
    pub bus_id: Option<String>,
    pub uuid: Option<String>,
}

/// Parses `amd-smi list`: each GPU's number, bus id and UUID.
pub fn parse_list(text: &str) -> Result<Vec<Listed>, AccelError> {
    let blocks =
        gpu_blocks(text).map_err(|reason| AccelError::unsupported(TOOL, None, reason, text))?;
    Ok(blocks
        .iter()
        .map(|b| Listed {
            index: b.index,
            bus_id: b.value("BDF").map(sanitize),
            uuid: b.value("UUID").map(sanitize),
        })
        .collect())
}

/// Parses the `amd-smi process` report: each `PROCESS_INFO` of each GPU block, with its VRAM
/// (`MEMORY_USAGE.VRAM_MEM`). A name printed `N/A` (a process of another user, read without
/// root) is kept as printed.
pub fn parse_process_report(text: &str) -> Result<Vec<AccelProcess>, AccelError> {
    let unsupported = |reason: String| AccelError::unsupported(TOOL, None, reason, text);
    let blocks = gpu_blocks(text).map_err(unsupported)?;
    let mut out = Vec::new();
    for block in &blocks {
        let mut current: Option<(Option<&str>, Option<&str>, Option<&str>)> = None;
        let mut rows = Vec::new();
        for (path, value) in &block.entries {
            match (path.as_str(), value.as_deref()) {
                ("PROCESS_INFO", None) => {
                    rows.extend(current.take());
                    current = Some((None, None, None));
                }
                ("PROCESS_INFO.NAME", Some(v)) => {
                    current.get_or_insert((None, None, None)).0 = Some(v);
                }
                ("PROCESS_INFO.PID", Some(v)) => {
                    current.get_or_insert((None, None, None)).1 = Some(v);
                }
                ("PROCESS_INFO.MEMORY_USAGE.VRAM_MEM", Some(v)) => {
                    current.get_or_insert((None, None, None)).2 = Some(v);
                }
                _ => {}
            }
        }
        rows.extend(current);
        for (name, pid, vram) in rows {
            let pid = pid.and_then(|p| p.parse::<u32>().ok()).ok_or_else(|| {
                unsupported(format!("GPU {}: a process without a PID", block.index))
            })?;
            let memory_mib = match vram {
                None | Some("N/A") => None,
                Some(v) => Some(size_mib(v).ok_or_else(|| {
                    unsupported(format!("GPU {}: an unreadable VRAM_MEM `{v}`", block.index))
                })?),
            };
            out.push(AccelProcess {
                index: block.index,
                chip: None,
                pid,
                name: sanitize(name.unwrap_or("N/A")),
                memory_mib,
            });
        }
    }
    Ok(out)
}

/// The header `amd-smi process --csv` starts with, as far as gpufleet reads it.
const CSV_COLUMNS: [&str; 4] = ["gpu", "name", "pid", "vram_mem"];

/// Parses `amd-smi process --csv`: one process per row, its VRAM from `vram_mem` (bytes). A
/// header alone is no process; anything but that header and its rows is refused.
pub fn parse_process_csv(text: &str) -> Result<Vec<AccelProcess>, AccelError> {
    let unsupported = |reason: String| AccelError::unsupported(TOOL, None, reason, text);
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_reader(text.trim_start().as_bytes());
    let header = reader
        .headers()
        .map_err(|e| unsupported(format!("no CSV header: {e}")))?
        .clone();
    let column = |name: &str| header.iter().position(|h| h == name);
    let Some([gpu, name, pid, vram]) = CSV_COLUMNS
        .iter()
        .map(|c| column(c))
        .collect::<Option<Vec<usize>>>()
        .and_then(|v| <[usize; 4]>::try_from(v).ok())
    else {
        return Err(unsupported(format!(
            "a CSV header without {}",
            CSV_COLUMNS.join(", ")
        )));
    };
    let mut out = Vec::new();
    for (row, record) in reader.records().enumerate() {
        let record = record.map_err(|e| unsupported(format!("CSV row {}: {e}", row + 1)))?;
        let cell = |at: usize| record.get(at).unwrap_or_default();
        let bad = |what: &str| unsupported(format!("CSV row {}: an unreadable {what}", row + 1));
        let index = cell(gpu).parse::<u32>().map_err(|_| bad("gpu"))?;
        let pid = cell(pid).parse::<u32>().map_err(|_| bad("pid"))?;
        let bytes = count_cell(cell(vram)).map_err(|()| bad("vram_mem"))?;
        out.push(AccelProcess {
            index,
            chip: None,
            pid,
            name: sanitize(cell(name)),
            memory_mib: bytes.map(|b| (b as f64 / BYTES_PER_MIB).round() as u64),
        });
    }
    Ok(out)
}

#[derive(Deserialize)]
struct JsonGpu {
    gpu: u32,
    process_list: Vec<JsonEntry>,
}

#[derive(Deserialize)]
struct JsonEntry {
    process_info: JsonProcess,
}

#[derive(Deserialize)]
struct JsonProcess {
    name: String,
    pid: u32,
}

/// Parses `amd-smi process --json` as published: each GPU's `process_list`. Its `mem_usage`
/// is the process's memory of every kind, not its VRAM, so the memory stays unknown.
pub fn parse_process_json(text: &str) -> Result<Vec<AccelProcess>, AccelError> {
    let gpus: Vec<JsonGpu> = serde_json::from_str(text)
        .map_err(|e| AccelError::unsupported(TOOL, None, format!("not its JSON: {e}"), text))?;
    Ok(gpus
        .into_iter()
        .flat_map(|g| {
            g.process_list.into_iter().map(move |e| AccelProcess {
                index: g.gpu,
                chip: None,
                pid: e.process_info.pid,
                name: sanitize(&e.process_info.name),
                memory_mib: None,
            })
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let root = env!("CARGO_MANIFEST_DIR");
        std::fs::read_to_string(format!("{root}/tests/fixtures/accel/{name}")).expect("fixture")
    }

    #[test]
    fn static_reads_model_bus_vram_and_driver_of_each_apu() {
        let r = parse_static(&fixture("amd-amd-smi-static-01.txt")).expect("parse");
        // Four MI300A; the report's CPU blocks are no GPUs.
        assert_eq!(r.len(), 4);
        assert_eq!(r[0].name.as_deref(), Some("MI300A"));
        assert_eq!(r[3].bus_id.as_deref(), Some("0003:01:00.0"));
        assert_eq!(r[1].memory_total_mib, Some(64289));
        assert_eq!(r[2].driver_version.as_deref(), Some("6.9.0-rc5+"));
        assert_eq!(r[0].power_draw_w, None);
    }

    #[test]
    fn the_flush_left_layout_reads_the_same_and_a_device_id_is_no_model() {
        let r = parse_static(&fixture("amd-amd-smi-static-02.txt")).expect("parse");
        assert_eq!(r.len(), 1);
        // MARKET_NAME is the raw id 0x73bf and PRODUCT_NAME N/A: no model, not a guess.
        assert_eq!(r[0].name, None);
        assert_eq!(r[0].bus_id.as_deref(), Some("0000:23:00.0"));
        assert_eq!(r[0].memory_total_mib, Some(16368));
        assert_eq!(r[0].driver_version.as_deref(), Some("6.1.10"));
    }

    #[test]
    fn partial_static_reports_read_what_they_print() {
        let r = parse_static(&fixture("amd-amd-smi-static-03.txt")).expect("parse");
        assert_eq!(r[0].name.as_deref(), Some("MI308X"));
        assert_eq!(r[0].bus_id, None);
        let r = parse_static(&fixture("amd-amd-smi-static-05.txt")).expect("parse");
        assert_eq!(r[0].name.as_deref(), Some("AMD Instinct MI350X"));
        assert_eq!(r[0].bus_id.as_deref(), Some("0000:05:00.0"));
        assert_eq!(r[0].driver_version.as_deref(), Some("6.18.3"));
        let r = parse_static(&fixture("amd-amd-smi-static-04.txt")).expect("parse");
        assert_eq!(r.len(), 2);
        assert_eq!((r[1].index, r[1].name.as_deref()), (1, None));
    }

    #[test]
    fn the_list_ties_each_gpu_to_its_bus_id_and_uuid() {
        let l = parse_list(&fixture("amd-amd-smi-list-02.txt")).expect("parse");
        assert_eq!(l.len(), 3);
        assert_eq!(l[2].bus_id.as_deref(), Some("0000:46:00.0"));
        assert_eq!(
            l[0].uuid.as_deref(),
            Some("afff74a1-0000-1000-8054-e92b0a5d57c8")
        );
        let l = parse_list(&fixture("amd-amd-smi-list-01.txt")).expect("parse");
        assert_eq!(
            (l[1].index, l[1].bus_id.as_deref()),
            (1, Some("0000:26:00.0"))
        );
    }

    #[test]
    fn the_process_report_reads_each_gpus_processes_and_vram() {
        let p = parse_process_report(&fixture("amd-amd-smi-process-03.txt")).expect("parse");
        assert_eq!(p.len(), 2);
        assert_eq!((p[0].index, p[0].pid), (0, 207590));
        assert_eq!(p[0].name, "pt_main_thread");
        // 7.3 GB, binary, as MiB.
        assert_eq!(p[0].memory_mib, Some(7475));
        assert_eq!(
            (p[1].index, p[1].pid, p[1].memory_mib),
            (1, 207591, Some(7578))
        );
        let p = parse_process_report(&fixture("amd-amd-smi-process-01.txt")).expect("parse");
        assert_eq!((p[0].pid, p[0].name.as_str()), (1693982, "N/A"));
        let p = parse_process_report(&fixture("amd-amd-smi-process-02.txt")).expect("parse");
        assert_eq!(p[0].name, "TransferBench");
        let p = parse_process_report(&fixture("amd-amd-smi-process-04.txt")).expect("parse");
        assert_eq!((p[0].pid, p[0].memory_mib), (2266127, Some(1946)));
    }

    #[test]
    fn the_process_csv_reads_every_row_in_bytes() {
        let p = parse_process_csv(&fixture("amd-amd-smi-process-csv-01.txt")).expect("parse");
        assert_eq!(p.len(), 8);
        assert_eq!((p[3].index, p[3].pid), (3, 207588));
        // 7889485824 bytes of VRAM.
        assert_eq!(p[0].memory_mib, Some(7524));
        assert_eq!(p[7].name, "pt_main_thread");
        assert!(
            parse_process_csv("gpu,name,pid,gtt_mem,cpu_mem,vram_mem\n")
                .expect("empty")
                .is_empty()
        );
        assert!(parse_process_csv("No running processes\n").is_err());
    }

    #[test]
    fn the_process_json_lists_both_processes_of_its_gpu() {
        let p = parse_process_json(&fixture("amd-amd-smi-process-json-01.txt")).expect("parse");
        let pids: Vec<u32> = p.iter().map(|p| p.pid).collect();
        assert_eq!(pids, [420157, 420315]);
        assert_eq!(p[1].name, "rvs");
        assert!(p.iter().all(|p| p.index == 0 && p.memory_mib.is_none()));
    }

    #[test]
    fn metric_reports_read_activity_power_clocks_replays_and_ecc() {
        let r = parse_metric(&fixture("amd-amd-smi-metric-04.txt")).expect("power");
        assert_eq!(r.len(), 2);
        assert_eq!(
            (r[0].power_draw_w, r[1].power_draw_w),
            (Some(11.0), Some(17.0))
        );
        assert_eq!(r[0].utilization_pct, None);
        let r = parse_metric(&fixture("amd-amd-smi-metric-05.txt")).expect("clock");
        assert_eq!(
            (r[0].clock_core_mhz, r[0].clock_mem_mhz),
            (Some(113), Some(900))
        );
        let r = parse_metric(&fixture("amd-amd-smi-metric-06.txt")).expect("ecc");
        // Seven blocks, every count 0: none, as a number, not unknown.
        assert_eq!(r[0].ecc_uncorrected, Some(0));
        let r = parse_metric(&fixture("amd-amd-smi-metric-07.txt")).expect("all");
        assert_eq!(r[0].utilization_pct, Some(100.0));
        assert_eq!(r[0].utilization_memory_pct, Some(0.0));
        assert_eq!(r[0].power_draw_w, Some(234.0));
        assert_eq!(r[0].clock_core_mhz, Some(2102));
        // A wrapped JPEG_ACTIVITY list reads on; cut inside CLOCK, as published.
        let r = parse_metric(&fixture("amd-amd-smi-metric-08.txt")).expect("wrapped");
        assert_eq!(r[0].utilization_memory_pct, Some(1.0));
        let r = parse_metric(&fixture("amd-amd-smi-metric-01.txt"));
        // Its publisher's closing `...` is no amd-smi line.
        assert!(r.is_err());
        let pcie = fixture("amd-amd-smi-metric-03.txt");
        assert!(parse_metric(&pcie).is_err());
        let r = parse_metric(&pcie.replace("\n...\n", "\n")).expect("pcie");
        assert_eq!((r.len(), r[1].pcie_replay_count), (2, Some(0)));
    }

    #[test]
    fn the_default_view_reads_each_gpus_two_lines() {
        let r = parse_default(&fixture("amd-amd-smi-default-01.txt")).expect("27");
        assert_eq!(r.len(), 4);
        assert_eq!(r[3].index, 3);
        assert_eq!(r[0].name.as_deref(), Some("AMD Instinct MI300A"));
        assert_eq!(r[1].bus_id.as_deref(), Some("0001:01:00.0"));
        assert_eq!(r[0].driver_version.as_deref(), Some("6.19.4"));
        assert_eq!(
            (r[0].temperature_c, r[0].power_draw_w),
            (Some(27.0), Some(49.0))
        );
        assert_eq!(
            (r[0].utilization_pct, r[0].ecc_uncorrected),
            (Some(6.0), Some(0))
        );
        assert_eq!(
            (r[0].memory_used_mib, r[0].memory_total_mib),
            (Some(25), Some(385728))
        );
        // Fan N/A and no power cap printed: unknown.
        assert_eq!((r[0].fan_speed_pct, r[0].power_limit_w), (None, None));
        let r = parse_default(&fixture("amd-amd-smi-default-02.txt")).expect("26");
        assert_eq!(r.len(), 2);
        // The name is cut to its cell, as printed.
        assert_eq!(r[1].name.as_deref(), Some("...Radeon AI PRO R9700"));
        assert_eq!(r[0].driver_version.as_deref(), Some("6.16.6"));
        assert_eq!(
            (r[0].power_draw_w, r[0].power_limit_w),
            (Some(103.0), Some(300.0))
        );
        assert_eq!(
            (r[0].fan_speed_pct, r[1].fan_speed_pct),
            (Some(38.82), Some(40.0))
        );
        assert_eq!(r[1].utilization_pct, Some(100.0));
        assert_eq!(r[0].memory_total_mib, Some(32624));
        assert!(parse_default(&fixture("amd-amd-smi-monitor-05.txt")).is_err());
    }

    #[test]
    fn other_text_is_refused() {
        assert!(parse_static("").is_err());
        assert!(parse_static("GPU  POWER  GPU_TEMP\n  0  199 W\n").is_err());
        assert!(parse_process_report("GPU: x\n").is_err());
        let hostile =
            "GPU: 0\n    PROCESS_INFO:\n        NAME: \u{1b}]0;x\u{7}evil\n        PID: 7\n";
        let p = parse_process_report(hostile).expect("parse");
        assert!(!p[0].name.contains('\u{1b}'));
    }
}
