//! `report.md`: the report for people, from the same [`Report`] as `report.json`.

use std::fmt::Write;

use rust_i18n::t;

use super::analyse::FindingSeen;
use super::words::result_word;
use super::{CheckLine, Report};

/// Evidence lines shown in the Markdown at most (the raw files have them all).
const MD_EVIDENCE: usize = 200;

/// The language tag of the code fences that quote text verbatim.
const FENCE_TEXT: &str = "text";

pub fn render(r: &Report) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# {}\n", t!("report_md.title", host = r.host));
    let _ = writeln!(md, "| | |\n| --- | --- |");
    let _ = writeln!(md, "| {} | {} |", t!("report_md.row_host"), r.host);
    let _ = writeln!(md, "| {} | {} |", t!("report_md.row_verdict"), verdict(r));
    let window = t!("report_md.window", from = r.window.from, to = r.window.to);
    let _ = writeln!(md, "| {} | {window} |", t!("report_md.row_window"));
    let _ = writeln!(md, "| {} | {} |", t!("report_md.row_from"), r.source);
    if let Some(driver) = &r.analysis.driver_version {
        let cuda = r.analysis.cuda_version.as_deref().unwrap_or("?");
        let _ = writeln!(md, "| {} | {driver} / {cuda} |", t!("report_md.row_driver"));
    }
    if let Some(b) = &r.billing {
        let _ = writeln!(md, "| {} | {} |", t!("report_md.billed"), b.text());
    }
    let written = t!(
        "report_md.written",
        at = r.generated_at,
        version = r.gpufleet
    );
    let _ = writeln!(md, "| {} | {written} |\n", t!("report_md.row_written"));

    heading(&mut md, &t!("report_md.what_happened"));
    if r.analysis.timeline.is_empty() {
        let _ = writeln!(md, "{}\n", t!("report_md.nothing_of_note"));
    }
    for m in &r.analysis.timeline {
        let _ = writeln!(md, "- `{}` {}", m.at, one_line(&m.what));
    }
    if r.analysis.timeline_left_out > 0 {
        let more = t!("report_md.and_more", count = r.analysis.timeline_left_out);
        let _ = writeln!(md, "- {more}");
    }
    let _ = writeln!(md);

    heading(&mut md, &t!("report_md.findings"));
    if r.analysis.findings.is_empty() {
        let _ = writeln!(md, "{}\n", t!("report_md.none"));
    }
    for f in &r.analysis.findings {
        let _ = writeln!(md, "- {}", finding(f));
    }
    let _ = writeln!(md);

    heading(&mut md, &t!("report_md.gpus"));
    let model = t!("report_md.column_model");
    let _ = writeln!(
        md,
        "| GPU | {model} | PCI | UUID |\n| --- | --- | --- | --- |"
    );
    for g in &r.analysis.gpus {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} |",
            g.index,
            cell(&g.name),
            cell(&g.bus_id),
            cell(&g.uuid)
        );
    }
    let samples =
        crate::words::Words::counted("report_md.samples", r.analysis.samples as u64).localized();
    let _ = writeln!(md, "\n{samples}\n");

    heading(&mut md, &t!("report_md.evidence"));
    if r.analysis.evidence.is_empty() {
        let _ = writeln!(md, "{}\n", t!("report_md.no_host_lines"));
    } else {
        let _ = writeln!(md, "```{FENCE_TEXT}");
        for e in r.analysis.evidence.iter().take(MD_EVIDENCE) {
            let _ = writeln!(md, "{} [{}] {}", e.at, e.kind, fence_safe(&e.text));
        }
        let _ = writeln!(md, "```");
        let more = r.analysis.evidence.len().saturating_sub(MD_EVIDENCE);
        if more > 0 {
            let more = crate::words::Words::counted("report_md.more_lines", more as u64);
            let _ = writeln!(md, "\n{}", more.localized());
        }
        let _ = writeln!(md);
    }

    heading(&mut md, &t!("report_md.check"));
    match &r.check {
        None => {
            let _ = writeln!(md, "{}\n", t!("report_md.no_check"));
        }
        Some(c) => {
            let result = result_word(c.result, &rust_i18n::locale());
            let newest = t!("report_md.newest_check", at = c.started_at, result = result);
            let _ = writeln!(md, "{newest}\n");
            for l in &c.not_passed {
                let _ = writeln!(md, "- {}", check_line(l));
            }
            let _ = writeln!(md);
        }
    }

    heading(&mut md, &t!("report_md.audit"));
    if r.runbook_steps.is_empty() {
        let _ = writeln!(md, "{}\n", t!("report_md.none_in_window"));
    }
    for a in &r.runbook_steps {
        let what = match (&a.runbook, &a.step) {
            (Some(rb), Some(step)) => format!("{rb} / {step}: "),
            _ => String::new(),
        };
        let _ = writeln!(
            md,
            "- `{}` {what}`{}` -> {}",
            crate::utc::rfc3339(a.at_ms),
            one_line(&a.command).replace('`', "'"),
            one_line(&a.outcome)
        );
    }
    let _ = writeln!(md);

    heading(&mut md, &t!("report_md.billed"));
    match &r.billing {
        None => {
            let _ = writeln!(md, "{}\n", t!("report_md.no_fault_billed"));
        }
        Some(b) => {
            let line = t!("report_md.billed_line", billed = b.text(), note = b.note);
            let _ = writeln!(md, "{line}\n");
        }
    }

    for (title, ticket) in [
        (t!("report_md.ticket_en"), &r.ticket.en),
        (t!("report_md.ticket_zh"), &r.ticket.zh),
    ] {
        heading(&mut md, &title);
        let _ = writeln!(md, "```{FENCE_TEXT}\n{}```\n", fence_safe(ticket));
    }

    heading(&mut md, &t!("report_md.files"));
    for f in &r.files {
        let _ = writeln!(md, "- `{f}`");
    }
    if !r.notes.is_empty() {
        let _ = writeln!(md);
        heading(&mut md, &t!("report_md.notes"));
        for n in &r.notes {
            let _ = writeln!(md, "- {}", one_line(n));
        }
    }
    md
}

/// `## TITLE` and the blank line after it.
fn heading(md: &mut String, title: &str) {
    let _ = writeln!(md, "## {title}\n");
}

fn verdict(r: &Report) -> String {
    match r.broken_since.as_deref() {
        Some(since) => t!("report_md.verdict_fault", since = since),
        None => t!("report_md.verdict_none"),
    }
    .into_owned()
}

/// One finding: label, severity, where, when, what it means and what to do.
fn finding(f: &FindingSeen) -> String {
    let gpu = f
        .gpu
        .map(|g| t!("report_md.finding_gpu", gpu = g).into_owned())
        .unwrap_or_default();
    let pci = f
        .pci
        .as_deref()
        .map(|p| t!("report_md.finding_pci", pci = p).into_owned())
        .unwrap_or_default();
    let runbook = f
        .runbook
        .as_deref()
        .map(|rb| t!("report_md.finding_runbook", runbook = rb).into_owned())
        .unwrap_or_default();
    t!(
        "report_md.finding",
        label = f.label,
        severity = f.severity.said(),
        gpu = gpu,
        pci = pci,
        first = f.first_seen,
        last = f.last_seen,
        summary = one_line(&f.summary),
        action = one_line(&f.action),
        runbook = runbook
    )
    .into_owned()
}

/// A check that did not pass: its status, id, GPU, figures and message (the check's own words).
fn check_line(l: &CheckLine) -> String {
    let status = match l.status {
        "warn" => t!("check_report.warn"),
        "fail" => t!("check_report.fail"),
        other => other.into(),
    };
    let gpu = l.gpu.map(|g| format!(" GPU {g}")).unwrap_or_default();
    t!(
        "report_md.check_line",
        status = status,
        id = l.id,
        gpu = gpu,
        measured = one_line(&l.measured),
        expected = one_line(&l.expected),
        message = one_line(&l.message)
    )
    .into_owned()
}

fn one_line(text: &str) -> String {
    text.replace(['\n', '\r'], " ")
}

fn cell(text: &str) -> String {
    one_line(text).replace('|', "\\|")
}

/// Remote text inside a code fence cannot close the fence.
fn fence_safe(text: &str) -> String {
    text.replace("```", "'''")
}
