//! Findings from pasted nvidia-smi reports: the table, `--query-*` CSV (with or without a
//! header), `-q` text and `-q -x` XML.
//!
//! A paste is a snapshot, not a history, so a clock-event condition counts when it holds in at
//! least half of a GPU's readings (one reading of one: that reading).

use std::collections::BTreeMap;

use crate::diagnose::finding::{Finding, Findings};
use crate::diagnose::kernel::normalize_pci;
use crate::diagnose::{labels, rules};
use crate::telemetry::ClockEventReasons;
use crate::telemetry::smi_csv::{FieldLayout, QUERY_FIELDS, parse_gpu_line};
use crate::telemetry::smi_xml::parse_report;

pub fn collect(text: &str, out: &mut Findings) {
    table(text, out);
    let mut snapshot = Snapshot::default();
    csv(text, out, &mut snapshot);
    query_text(text, out, &mut snapshot);
    xml(text, out);
    snapshot.finish(out);
}

/// One reading of one GPU's clock-event state, wherever it came from.
struct Reading {
    key: String,
    gpu: Option<u32>,
    mask: Option<u64>,
    temperature_c: Option<f64>,
    slowdown_c: Option<f64>,
    draw_w: Option<f64>,
    limit_w: Option<f64>,
    default_w: Option<f64>,
}

#[derive(Default)]
struct GpuReadings {
    gpu: Option<u32>,
    total: usize,
    thermal: Vec<String>,
    hw_thermal: bool,
    brake: Vec<String>,
    capped: Vec<String>,
}

/// Readings per GPU, judged once all of the paste has been read.
#[derive(Default)]
struct Snapshot {
    gpus: BTreeMap<String, GpuReadings>,
}

impl Snapshot {
    fn add(&mut self, r: Reading) {
        let g = self.gpus.entry(r.key.clone()).or_default();
        g.gpu = r.gpu;
        g.total += 1;
        if rules::thermal(r.mask, r.temperature_c, r.slowdown_c) {
            let temp = r
                .temperature_c
                .map(|t| format!(" at {t:.0} C"))
                .unwrap_or_default();
            g.thermal.push(format!("{}: thermal slowdown{temp}", r.key));
            g.hw_thermal |= rules::hw_thermal(r.mask);
        }
        if rules::power_brake(r.mask) {
            g.brake
                .push(format!("{}: hardware power brake active", r.key));
        }
        if let Some(cap) = rules::power_capped(r.mask, r.draw_w, r.limit_w, r.default_w) {
            g.capped.push(format!("{}: {}", r.key, cap.describe()));
        }
    }

    fn finish(self, out: &mut Findings) {
        for g in self.gpus.into_values() {
            let judge = |hits: &[String], finding: Finding, out: &mut Findings| {
                if !hits.is_empty() && hits.len() * 2 >= g.total {
                    let mut f = finding.on_gpu(g.gpu);
                    for line in hits {
                        f.add_evidence(line);
                    }
                    out.push(f);
                }
            };
            judge(&g.thermal, labels::thermal_throttle(g.hw_thermal), out);
            judge(&g.brake, labels::power_brake(), out);
            judge(&g.capped, labels::power_throttle(), out);
        }
    }
}

/// The plain `nvidia-smi` table: a non-zero "Volatile Uncorr. ECC" cell on a GPU row.
fn table(text: &str, out: &mut Findings) {
    if !text.contains("Volatile Uncorr. ECC") {
        return;
    }
    for line in text.lines() {
        let line = line.trim();
        // GPU rows have three cells; process and MIG rows have one or four.
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        let [first, _, ecc] = cells.as_slice() else {
            continue;
        };
        let Some(index) = first
            .split_whitespace()
            .next()
            .and_then(|i| i.parse::<u32>().ok())
        else {
            continue;
        };
        if ecc.parse::<u64>().is_ok_and(|n| n > 0) {
            out.push(
                labels::ecc_uncorrectable()
                    .on_gpu(Some(index))
                    .with_evidence(line),
            );
        }
    }
}

/// Field names of a CSV header or a `--query-*=` list, with `[unit]` suffixes dropped.
fn field_names(list: &str) -> Vec<String> {
    list.split(',')
        .map(|f| f.split(" [").next().unwrap_or(f).trim().to_string())
        .collect()
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

fn looks_like_header(names: &[String]) -> bool {
    names.len() >= 2
        && names.iter().all(|n| {
            !n.is_empty()
                && n.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'.')
        })
        && names
            .iter()
            .any(|n| KNOWN_PREFIXES.iter().any(|p| n.starts_with(p)))
}

/// `--query-gpu` / `--query-remapped-rows` output. The layout comes from a header line, from a
/// `--query-...=` command line above headerless data, or, for headerless lines with exactly
/// gpufleet's own field count, from gpufleet's field list.
fn csv(text: &str, out: &mut Findings, snapshot: &mut Snapshot) {
    let mut names: Vec<String> = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if let Some(list) = trimmed
            .split_whitespace()
            .find_map(|w| w.split_once("--query-").map(|(_, rest)| rest))
            .and_then(|rest| rest.split_once('=').map(|(_, list)| list))
        {
            names = field_names(list);
            continue;
        }
        let candidate = field_names(trimmed);
        if looks_like_header(&candidate) {
            names = candidate;
            continue;
        }
        if !trimmed.contains(',') {
            continue;
        }
        let columns = trimmed.split(',').count();
        if columns == names.len() {
            csv_row(&names, trimmed, out, snapshot);
        } else if columns == QUERY_FIELDS.len() {
            let own: Vec<String> = QUERY_FIELDS.iter().map(|f| f.to_string()).collect();
            csv_row(&own, trimmed, out, snapshot);
        }
    }
}

fn is_yes(value: &str) -> bool {
    value.trim().eq_ignore_ascii_case("yes")
}

fn csv_row(names: &[String], line: &str, out: &mut Findings, snapshot: &mut Snapshot) {
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
}

/// What one `-q` GPU block says, filled as its lines are read.
#[derive(Default)]
struct QueryBlock {
    bus: String,
    mask: u64,
    any_reason: bool,
    temperature_c: Option<f64>,
    slowdown_c: Option<f64>,
    tlimit_c: Option<f64>,
    slowdown_tlimit_c: Option<f64>,
    draw_w: Option<f64>,
    limit_w: Option<f64>,
    default_w: Option<f64>,
}

impl QueryBlock {
    fn who(&self) -> String {
        if self.bus.is_empty() {
            String::new()
        } else {
            format!("GPU {}: ", self.bus)
        }
    }

    fn reading(&self) -> Reading {
        // Newer drivers print T.Limit margins instead of absolute thresholds; the slowdown
        // point is the current temperature plus the current margin, less the slowdown margin
        // (the same derivation as the XML report parser's).
        let derived = match (self.temperature_c, self.tlimit_c, self.slowdown_tlimit_c) {
            (Some(t), Some(margin), Some(slow)) => Some(t + margin - slow),
            _ => None,
        };
        Reading {
            key: format!("GPU {}", self.bus).trim_end().to_string(),
            gpu: None,
            mask: self.any_reason.then_some(self.mask),
            temperature_c: self.temperature_c,
            slowdown_c: self.slowdown_c.or(derived),
            draw_w: self.draw_w,
            limit_w: self.limit_w,
            default_w: self.default_w,
        }
    }
}

fn number(value: &str) -> Option<f64> {
    value.split_whitespace().next()?.parse().ok()
}

/// `nvidia-smi -q` text: indentation gives the section of each `Key : Value` line. GPU blocks
/// carry a bus id but no index, so these findings name the bus id and leave `gpu` empty.
fn query_text(text: &str, out: &mut Findings, snapshot: &mut Snapshot) {
    let mut block: Option<QueryBlock> = None;
    let mut sections: Vec<(usize, String)> = Vec::new();
    for line in text.lines() {
        let indent = line.len() - line.trim_start_matches(' ').len();
        let content = line.trim();
        if indent == 0 {
            if let Some(bus) = content
                .strip_prefix("GPU ")
                .filter(|b| normalize_pci(b).is_some())
            {
                if let Some(done) = block.take() {
                    snapshot.add(done.reading());
                }
                block = Some(QueryBlock {
                    bus: bus.to_string(),
                    ..QueryBlock::default()
                });
                sections.clear();
            }
            continue;
        }
        // An excerpt may start inside a GPU block, without its `GPU <bus id>` line.
        let b = block.get_or_insert_with(QueryBlock::default);
        sections.retain(|(level, _)| *level < indent);
        let Some((key, value)) = content.split_once(':') else {
            sections.push((indent, content.to_string()));
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        let section = sections.last().map(|(_, s)| s.as_str()).unwrap_or("");
        let in_volatile = sections.iter().any(|(_, s)| s == "Volatile")
            && sections.iter().any(|(_, s)| s == "ECC Errors");
        let evidence = format!("{}{section} {key}: {value}", b.who());
        if in_volatile
            && (key.contains("Uncorrectable") || section == "Double Bit")
            && value.parse::<u64>().is_ok_and(|n| n > 0)
        {
            out.push(labels::ecc_uncorrectable().with_evidence(&evidence));
        }
        match (section, key) {
            ("Remapped Rows", "Pending") if is_yes(value) => {
                out.push(labels::row_remap_pending().with_evidence(&evidence));
            }
            ("Remapped Rows", "Remapping Failure Occurred") if is_yes(value) => {
                out.push(labels::remap_failed().with_evidence(&evidence));
            }
            ("Retired Pages", "Pending Page Blacklist" | "Pending") if is_yes(value) => {
                out.push(labels::retired_pages_pending().with_evidence(&evidence));
            }
            ("Clocks Event Reasons" | "Clocks Throttle Reasons", _) => {
                let bit = match key {
                    "SW Power Cap" => ClockEventReasons::SW_POWER_CAP,
                    "HW Slowdown" => ClockEventReasons::HW_SLOWDOWN,
                    "HW Thermal Slowdown" => ClockEventReasons::HW_THERMAL_SLOWDOWN,
                    "HW Power Brake Slowdown" => ClockEventReasons::HW_POWER_BRAKE,
                    "SW Thermal Slowdown" => ClockEventReasons::SW_THERMAL_SLOWDOWN,
                    _ => 0,
                };
                b.any_reason = true;
                if value == "Active" {
                    b.mask |= bit;
                }
            }
            ("GPU Power Readings" | "Power Readings", _) => match key {
                "Average Power Draw" | "Power Draw" => b.draw_w = number(value),
                "Instantaneous Power Draw" => b.draw_w = b.draw_w.or(number(value)),
                "Current Power Limit" | "Enforced Power Limit" => b.limit_w = number(value),
                "Requested Power Limit" | "Power Limit" => b.limit_w = b.limit_w.or(number(value)),
                "Default Power Limit" => b.default_w = number(value),
                _ => {}
            },
            ("Temperature", _) => match key {
                "GPU Current Temp" => b.temperature_c = number(value),
                "GPU Slowdown Temp" => b.slowdown_c = number(value),
                "GPU T.Limit Temp" => b.tlimit_c = number(value),
                "GPU Slowdown T.Limit Temp" => b.slowdown_tlimit_c = number(value),
                _ => {}
            },
            _ => {}
        }
    }
    if let Some(done) = block {
        snapshot.add(done.reading());
    }
}

/// `nvidia-smi -q -x`: the report parser's ECC and row-remapping fields.
fn xml(text: &str, out: &mut Findings) {
    let Some(start) = text.find("<nvidia_smi_log") else {
        return;
    };
    const END: &str = "</nvidia_smi_log>";
    let end = text[start..]
        .find(END)
        .map_or(text.len(), |at| start + at + END.len());
    let Ok(report) = parse_report(&text[start..end]) else {
        return;
    };
    for gpu in &report.gpus {
        let who = format!("GPU {}", gpu.bus_id);
        if let Some(n) = gpu.ecc_uncorrected_volatile.filter(|n| *n > 0) {
            out.push(
                labels::ecc_uncorrectable()
                    .with_evidence(&format!("{who}: {n} uncorrectable ECC errors (volatile)")),
            );
        }
        if gpu.remapped_rows_pending == Some(true) {
            out.push(
                labels::row_remap_pending()
                    .with_evidence(&format!("{who}: remapped_row_pending Yes")),
            );
        }
        if gpu.remapped_rows_failure == Some(true) {
            out.push(
                labels::remap_failed().with_evidence(&format!("{who}: remapped_row_failure Yes")),
            );
        }
    }
}
