//! `report.md`: the report for people, from the same [`Report`] as `report.json`.

use std::fmt::Write;

use super::Report;

/// Evidence lines shown in the Markdown at most (the raw files have them all).
const MD_EVIDENCE: usize = 200;

pub fn render(r: &Report) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# Incident report: {}\n", r.host);
    let _ = writeln!(md, "| | |\n| --- | --- |");
    let _ = writeln!(md, "| Host | {} |", r.host);
    let verdict = match r.broken_since.as_deref() {
        Some(since) => format!("**fault** since {since}"),
        None => "no fault recorded".to_string(),
    };
    let _ = writeln!(md, "| Verdict | {verdict} |");
    let _ = writeln!(
        md,
        "| Window (UTC) | {} to {} |",
        r.window.from, r.window.to
    );
    let _ = writeln!(md, "| From | {} |", r.source);
    if let Some(driver) = &r.analysis.driver_version {
        let cuda = r.analysis.cuda_version.as_deref().unwrap_or("?");
        let _ = writeln!(md, "| Driver / CUDA | {driver} / {cuda} |");
    }
    if let Some(b) = &r.billing {
        let _ = writeln!(md, "| Billed while broken | {} |", b.text());
    }
    let _ = writeln!(
        md,
        "| Written | {} by gpufleet {} |\n",
        r.generated_at, r.gpufleet
    );

    let _ = writeln!(md, "## What happened\n");
    if r.analysis.timeline.is_empty() {
        let _ = writeln!(md, "Nothing of note was recorded.\n");
    }
    for m in &r.analysis.timeline {
        let _ = writeln!(md, "- `{}` {}", m.at, one_line(&m.what));
    }
    if r.analysis.timeline_left_out > 0 {
        let _ = writeln!(md, "- ... and {} more", r.analysis.timeline_left_out);
    }
    let _ = writeln!(md);

    let _ = writeln!(md, "## Findings\n");
    if r.analysis.findings.is_empty() {
        let _ = writeln!(md, "None.\n");
    }
    for f in &r.analysis.findings {
        let gpu = f.gpu.map(|g| format!(", GPU {g}")).unwrap_or_default();
        let pci = f
            .pci
            .as_deref()
            .map(|p| format!(", PCI {p}"))
            .unwrap_or_default();
        let _ = writeln!(
            md,
            "- **{}** ({}{gpu}{pci}), first {} last {}: {}  \n  What to do: {}{}",
            f.label,
            f.severity.word(),
            f.first_seen,
            f.last_seen,
            one_line(&f.summary),
            one_line(&f.action),
            f.runbook
                .as_deref()
                .map(|rb| format!(" (runbook `{rb}`)"))
                .unwrap_or_default()
        );
    }
    let _ = writeln!(md);

    let _ = writeln!(md, "## GPUs\n");
    let _ = writeln!(
        md,
        "| GPU | Model | PCI | UUID |\n| --- | --- | --- | --- |"
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
    let _ = writeln!(
        md,
        "\n{} samples in the window (`samples.csv`).\n",
        r.analysis.samples
    );

    let _ = writeln!(md, "## Evidence, verbatim\n");
    if r.analysis.evidence.is_empty() {
        let _ = writeln!(md, "No lines from the host were recorded.\n");
    } else {
        let _ = writeln!(md, "```text");
        for e in r.analysis.evidence.iter().take(MD_EVIDENCE) {
            let _ = writeln!(md, "{} [{}] {}", e.at, e.kind, fence_safe(&e.text));
        }
        let _ = writeln!(md, "```");
        let more = r.analysis.evidence.len().saturating_sub(MD_EVIDENCE);
        if more > 0 {
            let _ = writeln!(md, "\n{more} more lines in `kernel.log` and `failure.txt`.");
        }
        let _ = writeln!(md);
    }

    let _ = writeln!(md, "## Acceptance check\n");
    match &r.check {
        None => {
            let _ = writeln!(md, "No `gpufleet check` of this host was kept.\n");
        }
        Some(c) => {
            let _ = writeln!(
                md,
                "Newest check: {}, result **{}**.\n",
                c.started_at, c.result
            );
            for l in &c.not_passed {
                let gpu = l.gpu.map(|g| format!(" GPU {g}")).unwrap_or_default();
                let _ = writeln!(
                    md,
                    "- {} {}{gpu}: measured {}, expected {}: {}",
                    l.status,
                    l.id,
                    one_line(&l.measured),
                    one_line(&l.expected),
                    one_line(&l.message)
                );
            }
            let _ = writeln!(md);
        }
    }

    let _ = writeln!(md, "## Runbook steps and actions (audit log)\n");
    if r.runbook_steps.is_empty() {
        let _ = writeln!(md, "None in the window.\n");
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

    let _ = writeln!(md, "## Billed while broken\n");
    match &r.billing {
        None => {
            let _ = writeln!(md, "No fault, so nothing billed while broken.\n");
        }
        Some(b) => {
            let _ = writeln!(md, "{}: {}.\n", b.text(), b.note);
        }
    }

    let _ = writeln!(
        md,
        "## Ticket (English)\n\n```text\n{}```\n",
        fence_safe(&r.ticket.en)
    );
    let _ = writeln!(
        md,
        "## 工单（简体中文）\n\n```text\n{}```\n",
        fence_safe(&r.ticket.zh)
    );

    let _ = writeln!(md, "## Files\n");
    for f in &r.files {
        let _ = writeln!(md, "- `{f}`");
    }
    if !r.notes.is_empty() {
        let _ = writeln!(md, "\n## Notes\n");
        for n in &r.notes {
            let _ = writeln!(md, "- {}", one_line(n));
        }
    }
    md
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
