//! What a run has learned about the host so far: per-GPU columns from `nvidia-smi` CSV rows and
//! single values taken from other outputs. Later steps' parameters, conditions and commands
//! read them.

use std::collections::BTreeMap;

use crate::runbook::model::{Capture, Source};
use crate::runbook::validate::is_plain_word;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Facts {
    scalars: BTreeMap<String, String>,
    gpus: BTreeMap<u32, BTreeMap<String, String>>,
}

impl Facts {
    /// The value of `name`: the selected GPU's column when there is one, else the single value.
    pub fn get(&self, name: &str, gpu: Option<u32>) -> Option<&str> {
        gpu.and_then(|g| self.gpus.get(&g))
            .and_then(|row| row.get(name))
            .or_else(|| self.scalars.get(name))
            .map(String::as_str)
    }

    /// Whether `name` is a per-GPU column (so reading it needs a chosen GPU).
    pub fn is_per_gpu(&self, name: &str) -> bool {
        self.gpus.values().any(|row| row.contains_key(name))
    }

    /// The GPU indexes rows were read for, in order.
    pub fn gpu_indexes(&self) -> Vec<u32> {
        self.gpus.keys().copied().collect()
    }

    pub fn set(&mut self, name: &str, value: impl Into<String>) {
        self.scalars.insert(name.to_string(), value.into());
    }

    /// Takes what `captures` ask for from a step's output lines. Values the output does not
    /// hold are left unset, so conditions on them fail safe. A step that failed captures only
    /// versions: its other lines are error messages ("bash: lsmod: command not found" would
    /// count as "no nvidia module"), while NVML names its library version in its own failure.
    pub fn capture(&mut self, captures: &[Capture], lines: &[String], succeeded: bool) {
        for capture in captures {
            if !succeeded && capture.from != Some(Source::VersionAfter) {
                continue;
            }
            if let Some(columns) = &capture.csv {
                self.capture_csv(columns, lines);
                continue;
            }
            let (Some(fact), Some(from)) = (&capture.fact, capture.from) else {
                continue;
            };
            if let Some(value) = extract(from, capture, lines) {
                self.scalars.insert(fact.clone(), value);
            }
        }
    }

    fn capture_csv(&mut self, columns: &[String], lines: &[String]) {
        let rows = lines.iter().map(|l| l.trim()).filter(|l| !l.is_empty());
        for (position, line) in rows.enumerate() {
            let values: Vec<&str> = line.split(',').map(str::trim).collect();
            // A line of another shape is a message (an error, a warning), not a row.
            if values.len() != columns.len() {
                continue;
            }
            let key = match columns.iter().position(|c| c == "gpu") {
                Some(i) => match values[i].parse::<u32>() {
                    Ok(index) => index,
                    Err(_) => continue,
                },
                None => match u32::try_from(position) {
                    Ok(index) => index,
                    Err(_) => continue,
                },
            };
            let row = self.gpus.entry(key).or_default();
            for (column, value) in columns.iter().zip(values) {
                if column != "gpu" {
                    row.insert(column.clone(), value.to_string());
                }
            }
        }
    }
}

fn first_line(lines: &[String]) -> Option<&str> {
    lines.iter().map(|l| l.trim()).find(|l| !l.is_empty())
}

fn extract(from: Source, capture: &Capture, lines: &[String]) -> Option<String> {
    let text = capture.text.as_deref().unwrap_or("");
    match from {
        Source::FirstLine => first_line(lines).map(str::to_string),
        Source::LineCount => Some(
            lines
                .iter()
                .filter(|l| !l.trim().is_empty())
                .count()
                .to_string(),
        ),
        Source::LinesStarting => Some(
            lines
                .iter()
                .filter(|l| l.starts_with(text))
                .count()
                .to_string(),
        ),
        Source::LinesContaining => Some(
            lines
                .iter()
                .filter(|l| contains_loose(l, text))
                .count()
                .to_string(),
        ),
        Source::VersionAfter => lines.iter().find_map(|line| {
            let rest = if text.is_empty() {
                line.as_str()
            } else {
                &line[line.find(text)? + text.len()..]
            };
            rest.split(|c: char| c.is_whitespace() || c == ',')
                .map(|w| w.trim_matches(|c: char| c == '"' || c == '\''))
                .find(|w| is_version(w))
                .map(str::to_string)
        }),
        Source::Word => {
            let line = if text.is_empty() {
                first_line(lines)?
            } else {
                lines.iter().find(|l| l.starts_with(text))?.as_str()
            };
            line.split_whitespace()
                .nth(capture.index?)
                .map(str::to_string)
        }
        Source::After => lines
            .iter()
            .find_map(|l| l.strip_prefix(text))
            .map(|rest| rest.trim().to_string()),
    }
}

/// `580.159.04`, `13.0`: digits, a dot, digits, and so on.
fn is_version(word: &str) -> bool {
    let parts: Vec<&str> = word.split('.').collect();
    parts.len() >= 2
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
}

/// Whether `haystack` contains `needle`, ignoring ASCII case and treating every run of
/// whitespace as one space (`-q` output pads names with a varying number of spaces).
pub fn contains_loose(haystack: &str, needle: &str) -> bool {
    let squeeze = |s: &str| {
        s.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_ascii_lowercase()
    };
    let needle = squeeze(needle);
    !needle.is_empty() && squeeze(haystack).contains(&needle)
}

/// A fact's value as a command argument: only plain words, so a host cannot smuggle an option
/// or shell syntax into a later command through its own output.
pub fn as_argument(value: &str) -> Option<&str> {
    is_plain_word(value).then_some(value)
}

/// Parses a number as nvidia-smi prints it (`700.00`, `250`), rejecting `[N/A]` and friends.
pub fn number(text: &str) -> Option<f64> {
    text.trim().parse::<f64>().ok().filter(|v| v.is_finite())
}

/// Equal as numbers when both are numbers (`700.00` = `700`), else as trimmed text.
pub fn same_value(a: &str, b: &str) -> bool {
    match (number(a), number(b)) {
        (Some(x), Some(y)) => (x - y).abs() < 0.005,
        _ => a.trim() == b.trim(),
    }
}

/// `{name}` placeholders in display text replaced by what is known; unknown ones stay visible.
pub fn fill_text(text: &str, lookup: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close) => {
                let name = &after[..close];
                match lookup(name) {
                    Some(value) => out.push_str(&crate::remote::sanitize(&value)),
                    None => {
                        out.push('{');
                        out.push_str(name);
                        out.push('}');
                    }
                }
                rest = &after[close + 1..];
            }
            None => {
                out.push_str(&rest[open..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(str::to_string).collect()
    }

    #[test]
    fn csv_rows_become_per_gpu_facts() {
        let mut facts = Facts::default();
        let cols: Vec<String> = ["gpu", "min_w", "max_w"].map(String::from).to_vec();
        let capture = Capture {
            csv: Some(cols),
            fact: None,
            from: None,
            text: None,
            index: None,
        };
        facts.capture(
            &[capture],
            &lines("0, 200.00, 700.00\n1, 100.00, [N/A]\nwarning"),
            true,
        );
        assert_eq!(facts.gpu_indexes(), vec![0, 1]);
        assert_eq!(facts.get("max_w", Some(0)), Some("700.00"));
        assert_eq!(facts.get("max_w", Some(1)), Some("[N/A]"));
        assert_eq!(facts.get("max_w", None), None);
        assert!(facts.is_per_gpu("min_w"));
    }

    #[test]
    fn versions_are_found_after_their_marker() {
        let capture = |text: &str| Capture {
            csv: None,
            fact: Some("v".into()),
            from: Some(Source::VersionAfter),
            text: Some(text.into()),
            index: None,
        };
        // /proc/driver/nvidia/version on the H200 (open kernel module).
        let proc_version = lines(
            "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (nixbld@)  \nGCC version:  gcc version 15.3.0 (GCC) ",
        );
        let mut facts = Facts::default();
        facts.capture(&[capture("Kernel Module")], &proc_version, true);
        assert_eq!(facts.get("v", None), Some("580.159.04"));
        let mismatch = lines(
            "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 570.124",
        );
        facts.capture(&[capture("")], &mismatch, false);
        assert_eq!(facts.get("v", None), Some("570.124"));
    }

    #[test]
    fn loose_matching_ignores_padding_and_case() {
        assert!(contains_loose(
            "        HW Power Brake Slowdown                        : Active",
            "HW Power Brake Slowdown : Active"
        ));
        assert!(!contains_loose("x", " "));
        assert!(same_value("700.00", "700"));
        assert!(!same_value("[N/A]", "700"));
        assert_eq!(as_argument("-rf"), None);
        assert_eq!(as_argument("700.00"), Some("700.00"));
    }

    #[test]
    fn display_text_fills_known_names_only() {
        let lookup = |n: &str| (n == "w").then(|| "700".to_string());
        assert_eq!(fill_text("{w} W, {x}", &lookup), "700 W, {x}");
    }
}
