//! `report.md`: the report for people, from the same [`Report`] as `report.json`.

use std::fmt::Write;

use rust_i18n::t;

use super::analyse::FindingSeen;
use super::result_words;
use super::{CheckLine, Report};

/// Evidence lines shown in the Markdown at most (the raw files have them all).
const MD_EVIDENCE: usize = 200;

/// The language tag of the code fences that quote text verbatim.
const FENCE_TEXT: &str = "text";

pub fn render(r: &Report) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# {}\n", t!("report_md.title", host = r.host));
    let _ = writeln!(md, "| | |\n| --- | --- |");
    let _ = writeln!(md, "| {} | {} |", t!("report_md.row_host"), cell(&r.host));
    let _ = writeln!(md, "| {} | {} |", t!("report_md.row_verdict"), verdict(r));
    let window = t!("report_md.window", from = r.window.from, to = r.window.to);
    let _ = writeln!(md, "| {} | {window} |", t!("report_md.row_window"));
    let _ = writeln!(md, "| {} | {} |", t!("report_md.row_from"), cell(&r.source));
    if let Some(driver) = &r.analysis.driver_version {
        let cuda = r.analysis.cuda_version.as_deref().unwrap_or("?");
        let (driver, cuda) = (code_cell(driver), code_cell(cuda));
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
        let _ = writeln!(md, "- `{}` {}", m.at, text(&m.what));
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
            code_cell(&g.name),
            code_cell(&g.bus_id),
            code_cell(&g.uuid)
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
            let result = result_words(c.result).localized();
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
            "- `{}` {}{} -> {}",
            crate::utc::rfc3339(a.at_ms),
            text(&what),
            code(&a.command),
            text(&a.outcome)
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
            let _ = writeln!(md, "- {}", text(n));
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
        .map(|p| t!("report_md.finding_pci", pci = text(p)).into_owned())
        .unwrap_or_default();
    let runbook = f
        .runbook
        .as_deref()
        .map(|rb| t!("report_md.finding_runbook", runbook = text(rb)).into_owned())
        .unwrap_or_default();
    t!(
        "report_md.finding",
        label = f.label,
        severity = f.severity.said(),
        gpu = gpu,
        pci = pci,
        first = f.first_seen,
        last = f.last_seen,
        summary = text(&f.summary),
        action = text(&f.action),
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
        id = text(&l.id),
        gpu = gpu,
        measured = text(&l.measured),
        expected = text(&l.expected),
        message = text(&l.message)
    )
    .into_owned()
}

fn one_line(text: &str) -> String {
    text.replace(['\n', '\r'], " ")
}

/// Text for a table cell: escaped, its pipes too.
fn cell(raw: &str) -> String {
    text(raw)
}

/// Text that may come from the host (a driver's words, a GPU's name, a failure text), fit to
/// stand in Markdown outside a code block: one line, and every character that could start a
/// link, an image, HTML, an entity, emphasis or a table cell escaped with a backslash
/// (brackets disarm `![..](..)` and `[..](..)` alike), so it reads as the host wrote it and
/// does nothing. `://` is broken too, so no bare URL becomes a link. Backticks are left: a code
/// span only makes its text more inert, and gpufleet's own sentences quote commands with them.
fn text(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len() + 8);
    let line = one_line(raw);
    let mut previous: Option<char> = None;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        let next = chars.peek().copied();
        // `_` inside a word (`xid_79`) cannot start or end emphasis: left as written.
        let in_word = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
        match c {
            '_' if in_word(previous) && in_word(next) => out.push(c),
            '\\' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '~' | '&' => {
                out.push('\\');
                out.push(c);
            }
            ':' if next == Some('/') => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
        previous = Some(c);
    }
    out
}

/// `raw` as inline code, one line: a fence longer than any run of backticks inside it, with a
/// space inside each end where the text would touch the fence.
fn code(raw: &str) -> String {
    let line = one_line(raw);
    let mut longest = 0;
    let mut run = 0;
    for c in line.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    let fence = "`".repeat(longest + 1);
    let pad = if line.starts_with('`') || line.ends_with('`') || line.is_empty() {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{line}{pad}{fence}")
}

/// Inline code in a table cell: its pipes escaped (in a GitHub table a pipe ends the cell even
/// inside code; `\\|` stands for one there).
fn code_cell(raw: &str) -> String {
    code(raw).replace('|', "\\|")
}

/// Remote text inside a code fence cannot close the fence.
fn fence_safe(text: &str) -> String {
    text.replace("```", "'''")
}
