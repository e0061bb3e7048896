//! Findings from pasted nvidia-smi reports: the table, `--query-*` CSV (with or without a
//! header), `-q` text and `-q -x` XML.
//!
//! A paste is a snapshot, not a history, so a clock-event condition counts when it holds in at
//! least half of a GPU's readings (one reading of one: that reading).

use crate::diagnose::finding::Findings;
use crate::diagnose::labels;
use crate::diagnose::pci::normalize_pci;
use crate::diagnose::smi_query::{QueryReader, XmlReader};
use crate::diagnose::smi_reading::{LineHints, Reading, Snapshot, is_yes};
use crate::telemetry::smi_csv::{FieldLayout, QUERY_FIELDS, parse_gpu_line};

/// The nvidia-smi readers, fed one line at a time.
///
/// Each format collects apart, and [`Collector::finish`] adds them in a fixed order (table,
/// CSV, `-q` text, XML, then the clock-event judgement), so the result is the same as reading
/// the whole paste once per format.
#[derive(Default)]
pub struct Collector {
    /// The table's rows only count when its header ("Volatile Uncorr. ECC") is somewhere in
    /// the paste.
    table_header_seen: bool,
    table: Findings,
    /// The GPU block of the table being read.
    table_gpu: Option<TableGpu>,
    /// GPU rows (with a bus id) read in the table.
    table_gpus: usize,
    /// The table's process rows, as `GPU 0: pid 549 python3 58352MiB`.
    processes: Vec<String>,
    /// GPUs whose block reads `ERR!` in most cells; `ERR!` is nvidia-smi's own, so these count
    /// without the header.
    table_lost: Findings,
    csv: CsvReader,
    query: QueryReader,
    xml: XmlReader,
    snapshot: Snapshot,
}

impl Collector {
    pub fn line(&mut self, line: &str, hints: LineHints) {
        if hints.table_header && !self.table_header_seen && line.contains("Volatile Uncorr. ECC") {
            self.table_header_seen = true;
        }
        if line.contains('|') {
            self.table_row(line);
        }
        self.csv.line(line, hints.query_flag, &mut self.snapshot);
        self.query.line(line, &mut self.snapshot);
        self.xml.line(line, hints);
    }

    /// Adds the findings to `out`; says whether the paste showed GPUs that nvidia-smi could
    /// read (a table with GPU rows, CSV rows, a `-q` GPU block or an XML report with GPUs).
    pub fn finish(mut self, out: &mut Findings) -> bool {
        self.flush_table_gpu();
        // A GPU row with a bus id is nvidia-smi's own even in an excerpt without the header.
        let table_gpus = self.table_gpus > 0;
        if self.table_header_seen {
            out.absorb(self.table);
        }
        out.absorb(self.table_lost);
        let csv_gpus = self.csv.rows > 0;
        out.absorb(self.csv.out);
        let query_gpus = self.query.finish(out, &mut self.snapshot);
        let xml_gpus = self.xml.finish(out);
        self.snapshot.finish(out);
        table_gpus || csv_gpus || query_gpus || xml_gpus
    }

    /// A row of the plain `nvidia-smi` table: a non-zero "Volatile Uncorr. ECC" cell on a GPU
    /// row; and `ERR!` in most cells of one GPU's block, which is a GPU nvidia-smi lost.
    fn table_row(&mut self, line: &str) {
        let line = line.trim();
        // GPU rows have three cells; process and MIG rows have one or four.
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        if let [row] = cells.as_slice() {
            self.process_row(row);
            return;
        }
        let [first, bus, ecc] = cells.as_slice() else {
            return;
        };
        let errs = line.matches("ERR!").count();
        let index = first
            .split_whitespace()
            .next()
            .and_then(|i| i.parse::<u32>().ok());
        let Some(index) = index else {
            // The second (and third) line of the GPU block above.
            if let Some(gpu) = &mut self.table_gpu {
                gpu.errs += errs;
                gpu.lines.push(line.to_string());
            }
            return;
        };
        self.flush_table_gpu();
        let pci = bus.split_whitespace().next().and_then(normalize_pci);
        self.table_gpus += usize::from(pci.is_some());
        self.table_gpu = Some(TableGpu {
            index,
            pci,
            errs,
            lines: vec![line.to_string()],
        });
        if ecc.parse::<u64>().is_ok_and(|n| n > 0) {
            self.table.push(
                labels::ecc_uncorrectable()
                    .on_gpu(Some(index))
                    .with_evidence(line),
            );
        }
    }

    /// `0   N/A  N/A   549   C   python3   58352MiB`: GPU, GPU and compute instance, PID,
    /// type, name, memory.
    fn process_row(&mut self, row: &str) {
        let words: Vec<&str> = row.split_whitespace().collect();
        let [gpu, _, _, pid, _, name @ .., memory] = words.as_slice() else {
            return;
        };
        let numeric = |w: &str| w.parse::<u64>().is_ok();
        if !numeric(gpu) || !numeric(pid) || !memory.ends_with("MiB") || name.is_empty() {
            return;
        }
        if self.processes.len() < MAX_PROCESSES {
            let name = name.join(" ");
            let line = rust_i18n::t!(
                "live_evidence.process",
                gpu = gpu,
                pid = pid,
                name = name,
                memory = memory
            );
            self.processes.push(line.into_owned());
        }
    }

    /// The process rows of the table read so far.
    pub fn take_processes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.processes)
    }

    fn flush_table_gpu(&mut self) {
        let Some(gpu) = self.table_gpu.take() else {
            return;
        };
        if gpu.errs < ERR_CELLS_LOST {
            return;
        }
        let mut f = labels::gpu_lost().on_gpu(Some(gpu.index));
        f.pci = gpu.pci;
        for line in &gpu.lines {
            f.add_evidence(line);
        }
        self.table_lost.push(f);
    }
}

/// `ERR!` cells in one GPU's block of the table from which the GPU counts as lost. nvidia-smi
/// prints `ERR!` for a single field it cannot read on a working GPU (a fan sensor, the power
/// reading); a GPU whose every reading fails shows it in most cells.
const ERR_CELLS_LOST: usize = 4;

/// Process rows kept from one paste.
const MAX_PROCESSES: usize = 16;

/// One GPU's block in the table, read until the next GPU row.
struct TableGpu {
    index: u32,
    pci: Option<String>,
    errs: usize,
    lines: Vec<String>,
}

/// One field name of a CSV header or a `--query-*=` list, its ` [unit]` suffix dropped.
fn field_name(field: &str) -> &str {
    let bytes = field.as_bytes();
    let unit = bytes
        .iter()
        .enumerate()
        .position(|(i, &b)| b == b'[' && i > 0 && bytes[i - 1] == b' ')
        .map_or(field.len(), |i| i - 1);
    field[..unit].trim()
}

/// Field names of a CSV header or a `--query-*=` list.
fn field_names(list: &str) -> Vec<String> {
    list.split(',').map(|f| field_name(f).to_string()).collect()
}

const KNOWN_PREFIXES: &[&str] = &[
    "index",
    "pci.bus_id",
    "gpu_bus_id",
    "uuid",
    "gpu_uuid",
    "clocks_event_reasons.",
    "clocks_throttle_reasons.",
    "ecc.errors.",
    "retired_pages.",
    "remapped_rows.",
    "power.",
    "temperature.",
];

fn looks_like_header(line: &str) -> bool {
    let names = || line.split(',').map(field_name);
    let is_name = |n: &str| {
        !n.is_empty()
            && n.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'.')
    };
    names().all(is_name)
        && names().nth(1).is_some()
        && names().any(|n| KNOWN_PREFIXES.iter().any(|p| n.starts_with(p)))
}

/// `--query-gpu` / `--query-remapped-rows` output. The layout comes from a header line, from a
/// `--query-...=` command line above headerless data, or, for headerless lines with exactly
/// gpufleet's own field count, from gpufleet's field list.
#[derive(Default)]
struct CsvReader {
    names: Vec<String>,
    /// gpufleet's own field list, made on first use.
    own: Vec<String>,
    out: Findings,
    /// Rows read as a GPU's reading.
    rows: usize,
}

impl CsvReader {
    /// `query_flag`: whether the line may hold "--query-".
    fn line(&mut self, line: &str, query_flag: bool, snapshot: &mut Snapshot) {
        let trimmed = line.trim();
        if query_flag
            && let Some(list) = trimmed
                .split_whitespace()
                .find_map(|w| w.split_once("--query-").map(|(_, rest)| rest))
                .and_then(|rest| rest.split_once('=').map(|(_, list)| list))
        {
            self.names = field_names(list);
            return;
        }
        // Without a comma a line is neither a header nor a row.
        if !trimmed.contains(',') {
            return;
        }
        if looks_like_header(trimmed) {
            self.names = field_names(trimmed);
            return;
        }
        let columns = trimmed.split(',').count();
        let read = if columns == self.names.len() {
            csv_row(&self.names, trimmed, &mut self.out, snapshot)
        } else if columns == QUERY_FIELDS.len() {
            if self.own.is_empty() {
                self.own = QUERY_FIELDS.iter().map(|f| f.to_string()).collect();
            }
            csv_row(&self.own, trimmed, &mut self.out, snapshot)
        } else {
            false
        };
        self.rows += usize::from(read);
    }
}

/// Reads one CSV row; says whether it was a GPU's reading (it had an index that parsed).
fn csv_row(names: &[String], line: &str, out: &mut Findings, snapshot: &mut Snapshot) -> bool {
    let values: Vec<&str> = line.split(',').map(str::trim).collect();
    let value = |name: &str| {
        names
            .iter()
            .position(|n| n == name)
            .and_then(|i| values.get(i).copied())
    };
    let bus = value("pci.bus_id").or_else(|| value("gpu_bus_id"));
    let mut gpu = None;
    if names.iter().any(|n| n == "index") {
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        if let Ok(sample) = parse_gpu_line(&FieldLayout::new(&refs), line) {
            gpu = Some(sample.index);
            let key = format!("GPU {}", sample.index);
            if sample.ecc_uncorrected_volatile.is_some_and(|n| n > 0) {
                out.push(
                    labels::ecc_uncorrectable()
                        .on_gpu(gpu)
                        .with_evidence(&format!("{key}: {line}")),
                );
            }
            if sample.retired_pages_pending == Some(true) {
                out.push(
                    labels::retired_pages_pending()
                        .on_gpu(gpu)
                        .with_evidence(&format!("{key}: {line}")),
                );
            }
            snapshot.add(Reading {
                key,
                gpu,
                mask: sample.clock_event_reasons.map(|r| r.0),
                temperature_c: sample.temperature_c,
                slowdown_c: sample.temperature_slowdown_c,
                draw_w: sample.power_draw_w,
                limit_w: sample.power_limit_w,
                default_w: sample.power_default_limit_w.or(sample.power_max_limit_w),
            });
        }
    }
    let who = match (gpu, bus) {
        (Some(i), _) => format!("GPU {i}"),
        (None, Some(b)) => format!("GPU {b}"),
        (None, None) => "GPU".to_string(),
    };
    if value("remapped_rows.pending").is_some_and(is_yes) {
        out.push(
            labels::row_remap_pending()
                .on_gpu(gpu)
                .with_evidence(&format!("{who}: remapped_rows.pending Yes")),
        );
    }
    if value("remapped_rows.failure").is_some_and(is_yes) {
        out.push(
            labels::remap_failed()
                .on_gpu(gpu)
                .with_evidence(&format!("{who}: remapped_rows.failure Yes")),
        );
    }
    gpu.is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// GPU 14 of utkuozdemir/nvidia_gpu_exporter#393: one `ERR!` (the fan) on a working GPU.
    const ONE_ERR: [&str; 3] = [
        "|  14  NVIDIA RTX 4000 Ada Gene...    On  |   00000000:CC:00.0 Off |                  Off |",
        "|ERR!   68C    P2             99W /  130W |       1MiB /  20475MiB |     93%      Default |",
        "|                                         |                        |                  N/A |",
    ];

    fn read(lines: &[&str]) -> Collector {
        let mut c = Collector::default();
        for line in lines {
            c.table_row(line);
        }
        c
    }

    #[test]
    fn one_err_cell_is_a_working_gpu() {
        let c = read(&ONE_ERR);
        let gpu = c.table_gpu.as_ref().expect("block");
        assert_eq!((gpu.index, gpu.errs), (14, 1));
        assert_eq!(gpu.pci.as_deref(), Some("0000:cc:00"));
        let mut out = Findings::default();
        assert!(c.finish(&mut out), "a GPU row is evidence of a working GPU");
        assert!(out.is_empty());
    }

    /// No public report shows a table whose every cell reads `ERR!` (see the fixtures README),
    /// so the rule is checked on the count it keys on, with the real lines as evidence.
    #[test]
    fn err_in_most_cells_is_a_lost_gpu() {
        let mut c = read(&ONE_ERR);
        if let Some(gpu) = c.table_gpu.as_mut() {
            gpu.errs = ERR_CELLS_LOST;
        }
        let mut out = Findings::default();
        c.finish(&mut out);
        let found = out.into_items();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].label, "gpu_lost");
        assert_eq!(found[0].gpu, Some(14));
        assert_eq!(found[0].pci.as_deref(), Some("0000:cc:00"));
        assert_eq!(found[0].evidence.len(), 3);
    }
}
