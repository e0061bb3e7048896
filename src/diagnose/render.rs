//! Findings as text for people and as JSON for scripts, and the exit status they map to.

use std::fmt::Write as _;

use serde::Serialize;

use crate::diagnose::finding::Finding;

/// Exit status when nothing was found.
pub const EXIT_HEALTHY: u8 = 0;
/// Exit status when anything was found.
pub const EXIT_FOUND: u8 = 1;
/// Exit status for input that could not be read (empty, unreadable, not UTF-8); the caller's.
pub const EXIT_BAD_INPUT: u8 = 2;

/// The words shown when there is nothing to report.
pub const HEALTHY: &str = "healthy: no findings";

/// A human-readable report, most severe first; [`HEALTHY`] when there are no findings.
pub fn render_text(findings: &[Finding]) -> String {
    if findings.is_empty() {
        return format!("{HEALTHY}\n");
    }
    let mut out = String::new();
    for (i, f) in findings.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let gpu = f.gpu.map(|g| format!(" (GPU {g})")).unwrap_or_default();
        let _ = writeln!(
            out,
            "{} {}{gpu}: {}",
            f.severity.word().to_uppercase(),
            f.label,
            f.summary
        );
        let _ = writeln!(out, "  action: {}", f.action);
        if let Some(id) = &f.runbook {
            let _ = writeln!(out, "  runbook: {id}");
        }
        if !f.evidence.is_empty() {
            let _ = writeln!(out, "  evidence:");
            for line in &f.evidence {
                let _ = writeln!(out, "    {line}");
            }
        }
    }
    out
}

#[derive(Serialize)]
struct Report<'a> {
    findings: &'a [Finding],
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    notes: &'a [String],
}

/// `{"findings":[{"label":...,"severity":...,"evidence":[...],"summary":...,"action":...,
/// "runbook":...,"gpu":...}]}`; `gpu` only when the finding belongs to one GPU, `runbook` is
/// `null` when there is none.
pub fn render_json(findings: &[Finding]) -> String {
    render_json_with_notes(findings, &[])
}

/// [`render_json`] with `"notes":[...]` (what was not read in full, e.g. "input truncated
/// after 1024 MiB") when there are any.
pub fn render_json_with_notes(findings: &[Finding], notes: &[String]) -> String {
    // Serializing strings, numbers and a unit enum cannot fail; the fallback keeps the output
    // valid JSON should that ever change.
    serde_json::to_string(&Report { findings, notes }).unwrap_or_else(|e| {
        let message = serde_json::Value::from(e.to_string());
        format!("{{\"findings\":[],\"error\":{message}}}")
    })
}

/// [`EXIT_HEALTHY`] when there are no findings, else [`EXIT_FOUND`].
pub fn exit_code(findings: &[Finding]) -> u8 {
    if findings.is_empty() {
        EXIT_HEALTHY
    } else {
        EXIT_FOUND
    }
}
