//! Readings of non-NVIDIA accelerators from their vendors' command-line tools (`npu-smi`,
//! `rocm-smi`, `xpu-smi`, `mthreads-gmi`, `cnmon`), as one vendor-neutral shape.
//!
//! Pure functions: text in, readings out. A metric the tool does not print is `None`, never
//! `0`; output the parser does not recognise is an [`AccelError::Unsupported`] naming the tool,
//! its version when printed, and the first lines, never a guessed number. Text taken from the
//! output passes through [`crate::remote::sanitize`] like every other remote text.

pub mod amd_smi;
pub mod amd_smi_report;
pub mod cnmon;
pub mod mthreads_gmi;
pub mod npu_smi;
pub mod rocm_smi;
pub mod sample;
pub mod xpu_smi;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::remote::sanitize;

/// Who made the accelerator; the word is what `snapshot --json` would print.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Vendor {
    #[default]
    Nvidia,
    Huawei,
    Mthreads,
    Cambricon,
    Intel,
    Amd,
}

impl Vendor {
    /// The machine word: `nvidia`, `huawei`, `mthreads`, `cambricon`, `intel`, `amd`.
    pub fn word(self) -> &'static str {
        match self {
            Vendor::Nvidia => "nvidia",
            Vendor::Huawei => "huawei",
            Vendor::Mthreads => "mthreads",
            Vendor::Cambricon => "cambricon",
            Vendor::Intel => "intel",
            Vendor::Amd => "amd",
        }
    }

    /// The maker and product line, for the action text of a finding: `Huawei Ascend`, `AMD`.
    pub fn label(self) -> &'static str {
        match self {
            Vendor::Nvidia => "NVIDIA",
            Vendor::Huawei => "Huawei Ascend",
            Vendor::Mthreads => "Moore Threads",
            Vendor::Cambricon => "Cambricon",
            Vendor::Intel => "Intel",
            Vendor::Amd => "AMD",
        }
    }
}

/// The vendor tools gpufleet reads and whose accelerators they report, by the tool's name.
pub const TOOLS: [(&str, Vendor); 6] = [
    ("npu-smi", Vendor::Huawei),
    ("amd-smi", Vendor::Amd),
    ("rocm-smi", Vendor::Amd),
    ("xpu-smi", Vendor::Intel),
    ("mthreads-gmi", Vendor::Mthreads),
    ("cnmon", Vendor::Cambricon),
];

/// How an [`AccelError::Unsupported`] reads, up to the tool's name.
pub const UNSUPPORTED_PREFIX: &str = "unsupported output from ";

impl Vendor {
    /// The tool gpufleet reads this vendor's accelerators with; `None` where it has none yet.
    pub fn tool(self) -> Option<&'static str> {
        TOOLS
            .iter()
            .find(|(_, v)| *v == self)
            .map(|(tool, _)| *tool)
    }

    /// The vendor's documented command for one device's health details, where one is known
    /// (`npu-smi info -t health -i N`, `xpu-smi health -d N`).
    pub fn health_command(self, index: u32) -> Option<String> {
        match self {
            Vendor::Huawei => Some(format!("npu-smi info -t health -i {index}")),
            Vendor::Intel => Some(format!("xpu-smi health -d {index}")),
            _ => None,
        }
    }
}

/// A health state as the vendor tool prints it (`npu-smi`: `OK`, `Warning`, `Alarm`,
/// `Critical`); anything else is kept, sanitized, as `Other`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Health {
    Ok,
    Warning,
    Alarm,
    Critical,
    Other(String),
}

impl Health {
    /// The word as the tool printed it (`OK`, `Warning`, `Alarm`, `Critical`, or the other word).
    pub fn word(&self) -> &str {
        match self {
            Health::Ok => "OK",
            Health::Warning => "Warning",
            Health::Alarm => "Alarm",
            Health::Critical => "Critical",
            Health::Other(word) => word,
        }
    }

    pub(crate) fn from_word(word: &str) -> Health {
        let word = sanitize(word);
        match word.as_str() {
            "OK" => Health::Ok,
            "Warning" => Health::Warning,
            "Alarm" => Health::Alarm,
            "Critical" => Health::Critical,
            _ => Health::Other(word),
        }
    }
}

/// One reading of one accelerator (one chip for multi-chip cards), vendor-neutral.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AccelReading {
    pub vendor: Vendor,
    /// The device number the tool uses (`npu-smi`'s NPU ID, `rocm-smi`'s `cardN`, `xpu-smi`'s
    /// DeviceId).
    pub index: u32,
    /// The chip on a multi-chip card (`npu-smi`'s Chip column); `None` where the tool has none.
    pub chip: Option<u32>,
    pub name: Option<String>,
    pub bus_id: Option<String>,
    /// Compute utilization (AI Core on Ascend, GFX on AMD, GPU on Intel).
    pub utilization_pct: Option<f64>,
    /// Memory-controller or memory-bandwidth utilization, where the tool reports one.
    pub utilization_memory_pct: Option<f64>,
    pub memory_used_mib: Option<u64>,
    pub memory_total_mib: Option<u64>,
    /// The main die temperature (AMD: edge, falling back to junction).
    pub temperature_c: Option<f64>,
    /// AMD's junction (hotspot) temperature.
    pub temperature_hotspot_c: Option<f64>,
    pub temperature_memory_c: Option<f64>,
    pub power_draw_w: Option<f64>,
    pub power_limit_w: Option<f64>,
    pub clock_core_mhz: Option<u32>,
    pub clock_mem_mhz: Option<u32>,
    pub fan_speed_pct: Option<f64>,
    pub health: Option<Health>,
    /// PCIe replay count (`rocm-smi`), a link-health counter.
    pub pcie_replay_count: Option<u64>,
    /// Uncorrectable ECC errors (`amd-smi monitor`'s DOUBLE_ECC), where the tool prints them.
    pub ecc_uncorrected: Option<u64>,
    pub driver_version: Option<String>,
}

impl AccelReading {
    /// A reading with only its identity set; every metric unknown.
    pub fn new(vendor: Vendor, index: u32) -> AccelReading {
        AccelReading {
            vendor,
            index,
            chip: None,
            name: None,
            bus_id: None,
            utilization_pct: None,
            utilization_memory_pct: None,
            memory_used_mib: None,
            memory_total_mib: None,
            temperature_c: None,
            temperature_hotspot_c: None,
            temperature_memory_c: None,
            power_draw_w: None,
            power_limit_w: None,
            clock_core_mhz: None,
            clock_mem_mhz: None,
            fan_speed_pct: None,
            health: None,
            pcie_replay_count: None,
            ecc_uncorrected: None,
            driver_version: None,
        }
    }
}

/// One process a vendor tool lists on one accelerator, tied to it by the numbers the tool
/// prints (these tools print no UUID): a metric the row does not print is `None`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccelProcess {
    /// The device number, as [`AccelReading::index`].
    pub index: u32,
    /// The chip, as [`AccelReading::chip`]; `None` where the tool has none.
    pub chip: Option<u32>,
    pub pid: u32,
    /// As printed (tools cut long names to their column), sanitized.
    pub name: String,
    pub memory_mib: Option<u64>,
}

/// The report `name` of a fixed script's output whose reports each follow a line `mark` then
/// the report's name (`gpufleet-amd-smi monitor`); text before any such line is the report
/// `first` (the tool run alone). `None` when the output has no such report.
pub fn section<'a>(text: &'a str, mark: &str, first: &str, name: &str) -> Option<&'a str> {
    let mut current = first;
    let mut start = 0;
    let mut offset = 0;
    let mut found = None;
    for line in text.split_inclusive('\n') {
        let end = offset + line.len();
        if let Some(next) = line.trim_end().strip_prefix(mark) {
            if current == name && (start < offset || current != first) {
                found = Some(&text[start..offset]);
            }
            current = next;
            start = end;
        }
        offset = end;
    }
    if current == name {
        found = Some(&text[start..]);
    }
    found
}

/// How many lines of unrecognised output an error carries, and how long each may be.
const ERROR_LINES: usize = 3;
const ERROR_LINE_CHARS: usize = 160;

/// Why a tool's output gave no readings.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AccelError {
    /// The output is not a format (or version) this parser knows: the "unsupported output from
    /// TOOL VERSION" the user reads, with the first lines, sanitized.
    #[error("unsupported output from {tool}{}: {reason}; first lines: {first_lines}", version_suffix(.version))]
    Unsupported {
        tool: &'static str,
        version: Option<String>,
        reason: String,
        first_lines: String,
    },
}

fn version_suffix(version: &Option<String>) -> String {
    version
        .as_deref()
        .map(|v| format!(" {v}"))
        .unwrap_or_default()
}

impl AccelError {
    pub(crate) fn unsupported(
        tool: &'static str,
        version: Option<&str>,
        reason: impl Into<String>,
        text: &str,
    ) -> AccelError {
        AccelError::Unsupported {
            tool,
            version: version.map(sanitize),
            reason: sanitize(&reason.into()),
            first_lines: first_lines(text),
        }
    }
}

/// The first non-empty lines of `text`, sanitized, each cut to a bounded length, joined by ` | `.
fn first_lines(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .take(ERROR_LINES)
        .map(|line| {
            sanitize(line)
                .chars()
                .take(ERROR_LINE_CHARS)
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join(" | ")
}

/// A number cell: `N/A`, `NA`, `-` and empty mean "not reported" (`Ok(None)`); anything else
/// must parse as a finite number or the cell is refused (`Err(())`).
pub(crate) fn number_cell(cell: &str) -> Result<Option<f64>, ()> {
    let cell = cell.trim();
    if matches!(cell, "" | "N/A" | "NA" | "-") {
        return Ok(None);
    }
    match cell.parse::<f64>() {
        Ok(value) if value.is_finite() => Ok(Some(value)),
        _ => Err(()),
    }
}

/// Like [`number_cell`] for whole non-negative numbers.
pub(crate) fn count_cell(cell: &str) -> Result<Option<u64>, ()> {
    let cell = cell.trim();
    if matches!(cell, "" | "N/A" | "NA" | "-") {
        return Ok(None);
    }
    cell.parse::<u64>().map(Some).map_err(|_| ())
}

/// MHz as a whole number from a float reading (`1600.00`).
pub(crate) fn mhz(value: f64) -> Option<u32> {
    (value >= 0.0 && value <= f64::from(u32::MAX)).then(|| value.round() as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_error_text_starts_with_the_prefix_findings_look_for() {
        let err = AccelError::unsupported("xpu-smi", None, "r", "x");
        assert!(err.to_string().starts_with(UNSUPPORTED_PREFIX));
        assert_eq!(Vendor::Amd.tool(), Some("amd-smi"));
        assert_eq!(Vendor::Cambricon.tool(), Some("cnmon"));
        assert_eq!(Vendor::Nvidia.tool(), None);
    }

    #[test]
    fn unsupported_names_tool_version_and_first_lines() {
        let err = AccelError::unsupported("npu-smi", Some("99.0"), "no table", "a\n\nb\nc\nd");
        assert_eq!(
            err.to_string(),
            "unsupported output from npu-smi 99.0: no table; first lines: a | b | c"
        );
    }

    #[test]
    fn error_lines_are_sanitized_and_bounded() {
        let hostile = format!("\u{1b}]0;pwned\u{7}ok\u{202e}x{}\n", "y".repeat(500));
        let AccelError::Unsupported { first_lines, .. } =
            AccelError::unsupported("xpu-smi", None, "r", &hostile);
        assert!(first_lines.starts_with("okx"));
        assert!(!first_lines.contains('\u{1b}') && !first_lines.contains('\u{202e}'));
        assert_eq!(first_lines.chars().count(), ERROR_LINE_CHARS);
    }

    #[test]
    fn missing_cells_are_none_and_garbage_is_refused() {
        assert_eq!(number_cell(" N/A "), Ok(None));
        assert_eq!(number_cell("-"), Ok(None));
        assert_eq!(number_cell("43.72"), Ok(Some(43.72)));
        assert_eq!(number_cell("inf"), Err(()));
        assert_eq!(number_cell("12%"), Err(()));
        assert_eq!(count_cell("-3"), Err(()));
    }

    #[test]
    fn vendor_words_match_the_issue() {
        let words: Vec<_> = [
            Vendor::Nvidia,
            Vendor::Huawei,
            Vendor::Mthreads,
            Vendor::Cambricon,
            Vendor::Intel,
            Vendor::Amd,
        ]
        .iter()
        .map(|v| v.word())
        .collect();
        assert_eq!(
            words,
            ["nvidia", "huawei", "mthreads", "cambricon", "intel", "amd"]
        );
        assert_eq!(
            serde_json::to_string(&Vendor::Mthreads).unwrap(),
            "\"mthreads\""
        );
    }
}
