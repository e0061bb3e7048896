//! Pasted `nvidia-smi -q` text and `-q -x` XML, read a line at a time: the `-q` reader keeps
//! the section path of the current line, the XML reader keeps the first report until its end
//! tag and parses it at the end.

use crate::diagnose::finding::Findings;
use crate::diagnose::labels;
use crate::diagnose::pci::normalize_pci;
use crate::diagnose::smi_reading::{LineHints, Reading, Snapshot, is_yes};
use crate::telemetry::ClockEventReasons;
use crate::telemetry::smi_xml::parse_report;

/// Section levels of `-q` text kept; real reports nest four deep.
const MAX_SECTIONS: usize = 32;

/// Bytes of one `-q -x` report kept; a real one for eight GPUs is ~200 KB. A longer one is not
/// parsed.
pub const MAX_XML_BYTES: usize = 16 * 1024 * 1024;

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
#[derive(Default)]
pub struct QueryReader {
    block: Option<QueryBlock>,
    /// GPU blocks (`GPU 00000000:4C:00.0` headers) read.
    blocks: usize,
    sections: Vec<(usize, String)>,
    out: Findings,
}

impl QueryReader {
    pub fn line(&mut self, line: &str, snapshot: &mut Snapshot) {
        let indent = line.len() - line.trim_start_matches(' ').len();
        let content = line.trim();
        if indent == 0 {
            if let Some(bus) = content
                .strip_prefix("GPU ")
                .filter(|b| normalize_pci(b).is_some())
            {
                if let Some(done) = self.block.take() {
                    snapshot.add(done.reading());
                }
                self.blocks += 1;
                self.block = Some(QueryBlock {
                    bus: bus.to_string(),
                    ..QueryBlock::default()
                });
                self.sections.clear();
            }
            return;
        }
        // An excerpt may start inside a GPU block, without its `GPU <bus id>` line.
        let b = self.block.get_or_insert_with(QueryBlock::default);
        let sections = &mut self.sections;
        let out = &mut self.out;
        sections.retain(|(level, _)| *level < indent);
        let Some((key, value)) = content.split_once(':') else {
            if sections.len() < MAX_SECTIONS {
                sections.push((indent, content.to_string()));
            }
            return;
        };
        let (key, value) = (key.trim(), value.trim());
        let section = sections.last().map(|(_, s)| s.as_str()).unwrap_or("");
        let in_volatile = sections.iter().any(|(_, s)| s == "Volatile")
            && sections.iter().any(|(_, s)| s == "ECC Errors");
        let evidence = || format!("{}{section} {key}: {value}", b.who());
        if in_volatile
            && (key.contains("Uncorrectable") || section == "Double Bit")
            && value.parse::<u64>().is_ok_and(|n| n > 0)
        {
            out.push(labels::ecc_uncorrectable().with_evidence(&evidence()));
        }
        match (section, key) {
            ("Remapped Rows", "Pending") if is_yes(value) => {
                out.push(labels::row_remap_pending().with_evidence(&evidence()));
            }
            ("Remapped Rows", "Remapping Failure Occurred") if is_yes(value) => {
                out.push(labels::remap_failed().with_evidence(&evidence()));
            }
            ("Retired Pages", "Pending Page Blacklist" | "Pending") if is_yes(value) => {
                out.push(labels::retired_pages_pending().with_evidence(&evidence()));
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

    /// Adds the findings to `out` and the last block's reading to `snapshot`; says whether a
    /// GPU block was read.
    pub fn finish(self, out: &mut Findings, snapshot: &mut Snapshot) -> bool {
        if let Some(done) = self.block {
            snapshot.add(done.reading());
        }
        out.absorb(self.out);
        self.blocks > 0
    }
}

const XML_START: &str = "<nvidia_smi_log";
const XML_END: &str = "</nvidia_smi_log>";

/// `nvidia-smi -q -x`: the first report in the paste, from its start tag to its end tag (or to
/// the end of the paste), through the report parser's ECC and row-remapping fields.
#[derive(Default)]
pub struct XmlReader {
    report: String,
    state: XmlState,
}

#[derive(Default, PartialEq, Eq)]
enum XmlState {
    #[default]
    Before,
    Inside,
    Done,
    TooLong,
}

impl XmlReader {
    pub fn line(&mut self, line: &str, hints: LineHints) {
        let part = match self.state {
            XmlState::Before if !hints.xml_start => return,
            XmlState::Before => match line.find(XML_START) {
                Some(at) => {
                    self.state = XmlState::Inside;
                    &line[at..]
                }
                None => return,
            },
            XmlState::Inside => line,
            XmlState::Done | XmlState::TooLong => return,
        };
        let end = if hints.xml_end {
            part.find(XML_END)
        } else {
            None
        };
        let part = match end {
            Some(at) => {
                self.state = XmlState::Done;
                &part[..at + XML_END.len()]
            }
            None => part,
        };
        if self.report.len() + part.len() >= MAX_XML_BYTES {
            self.state = XmlState::TooLong;
            self.report = String::new();
            return;
        }
        self.report.push_str(part);
        self.report.push('\n');
    }

    /// Adds the findings to `out`; says whether a report with GPUs was read.
    pub fn finish(self, out: &mut Findings) -> bool {
        if matches!(self.state, XmlState::Before | XmlState::TooLong) {
            return false;
        }
        let Ok(report) = parse_report(&self.report) else {
            return false;
        };
        for gpu in &report.gpus {
            let who = format!("GPU {}", gpu.bus_id);
            if let Some(n) = gpu.ecc_uncorrected_volatile.filter(|n| *n > 0) {
                out.push(labels::ecc_uncorrectable().with_evidence(&rust_i18n::t!(
                    "live_evidence.ecc_volatile",
                    who = who,
                    n = n
                )));
            }
            if gpu.remapped_rows_pending == Some(true) {
                out.push(
                    labels::row_remap_pending()
                        .with_evidence(&format!("{who}: remapped_row_pending Yes")),
                );
            }
            if gpu.remapped_rows_failure == Some(true) {
                out.push(
                    labels::remap_failed()
                        .with_evidence(&format!("{who}: remapped_row_failure Yes")),
                );
            }
        }
        !report.gpus.is_empty()
    }
}
