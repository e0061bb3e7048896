//! The report as text for a terminal (grouped by category, with the previous check's key
//! figures side by side when there is one) and as JSON (see `SCHEMA.md`).

use std::fmt::Write;

use crate::check::format::{bandwidth, tflops, utc_text, watts};
use crate::check::report::{Category, CheckReport, CheckResult, GpuFigures, Status, exit_code};

/// The report as pretty-printed JSON.
pub fn render_json(report: &CheckReport) -> String {
    serde_json::to_string_pretty(report)
        .unwrap_or_else(|e| format!("{{\"error\": \"cannot serialize the report: {e}\"}}"))
}

/// The report as text; `previous` (an earlier check of the same host) adds a comparison of
/// each GPU's key figures.
pub fn render_text(report: &CheckReport, previous: Option<&CheckReport>) -> String {
    let mut out = String::new();
    let code = exit_code(report);
    let _ = writeln!(
        out,
        "gpufleet check: {} ({}) — {} (exit {code})",
        report.host,
        report.target,
        report.status.word().to_ascii_uppercase()
    );
    let mut about = vec![
        format!(
            "{}, {:.0} s",
            utc_text(report.started_at_ms),
            report.duration_ms as f64 / 1000.0
        ),
        format!(
            "driver {}, CUDA {}",
            report.driver_version.as_deref().unwrap_or("?"),
            report.cuda_version.as_deref().unwrap_or("?")
        ),
    ];
    if let Some(t) = &report.torch_version {
        about.push(format!(
            "PyTorch {t} (CUDA {})",
            report.torch_cuda.as_deref().unwrap_or("none")
        ));
    }
    let _ = writeln!(out, "{}", about.join("; "));
    let _ = writeln!(out, "Expected: {}", expected_text(report));

    for category in Category::ALL {
        let checks: Vec<&CheckResult> = report
            .checks
            .iter()
            .filter(|c| c.category == category)
            .collect();
        if checks.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n{}", category.title());
        for c in checks {
            write_check(&mut out, c);
        }
    }

    let count = |s: Status| report.checks.iter().filter(|c| c.status == s).count();
    let _ = writeln!(
        out,
        "\nResult: {} — {} pass, {} warn, {} fail, {} skip",
        report.status.word().to_ascii_uppercase(),
        count(Status::Pass),
        count(Status::Warn),
        count(Status::Fail),
        count(Status::Skip)
    );
    if let Some(prev) = previous {
        write_comparison(&mut out, report, prev);
    }
    out
}

fn expected_text(report: &CheckReport) -> String {
    let e = &report.expect;
    let mut parts = Vec::new();
    if let Some(g) = &e.gpu {
        parts.push(format!("gpu {g}"));
    }
    if let Some(c) = e.count {
        parts.push(format!("count {c}"));
    }
    if let Some(m) = e.memory_gib {
        parts.push(format!("memory {m} GiB"));
    }
    if let Some(c) = &e.min_cuda {
        parts.push(format!("CUDA ≥ {c}"));
    }
    if parts.is_empty() {
        "nothing given; graded against the card's own limits and the reference table".to_string()
    } else {
        parts.join(", ")
    }
}

fn write_check(out: &mut String, c: &CheckResult) {
    let what = c.id.split_once('.').map_or(c.id.as_str(), |(_, w)| w);
    let subject = match c.gpu {
        Some(g) => format!("GPU {g} {what}"),
        None => what.to_string(),
    };
    let measured = if c.measured.is_empty() {
        "-"
    } else {
        c.measured.as_str()
    };
    let _ = write!(out, "  {:<4}  {subject:<20} {measured}", c.status.word());
    if !c.expected.is_empty() {
        let _ = write!(out, "  [expected {}]", c.expected);
    }
    let _ = writeln!(out);
    if !c.message.is_empty() {
        let _ = writeln!(out, "        {}", c.message);
    }
}

/// A comparison row: its label and how to read the figure from a GPU's figures.
type Row = (&'static str, fn(&GpuFigures) -> Option<String>);

fn write_comparison(out: &mut String, now: &CheckReport, before: &CheckReport) {
    let _ = writeln!(
        out,
        "\nCompared with the check of {} ({}):",
        utc_text(before.started_at_ms),
        before.status.word()
    );
    for g in &now.gpus {
        let Some(b) = before.figures_matching(g) else {
            let _ = writeln!(
                out,
                "  GPU {} {}: not in the previous check",
                g.index, g.name
            );
            continue;
        };
        let _ = writeln!(out, "  GPU {} {}", g.index, g.name);
        let _ = writeln!(out, "    {:<18}{:>16}{:>16}", "", "now", "before");
        let rows: [Row; 8] = [
            ("matmul", |f| f.matmul_tflops.map(tflops)),
            ("copy", |f| f.copy_gb_per_s.map(bandwidth)),
            ("usable VRAM", |f| {
                f.usable_vram_gib.map(|v| format!("{v:.1} GiB"))
            }),
            ("sustained", |f| f.sustained_tflops.map(tflops)),
            ("max temp (load)", |f| {
                f.load_temperature_max_c.map(|t| format!("{t:.0} °C"))
            }),
            ("SM clock (load)", |f| {
                f.load_sm_clock_mean_mhz.map(|c| format!("{c:.0} MHz"))
            }),
            ("power limit", |f| f.power_limit_w.map(watts)),
            ("PCIe", |f| {
                Some(format!("Gen{} x{}", f.pcie_gen?, f.pcie_width?))
            }),
        ];
        for (label, get) in rows {
            let (a, b) = (get(g), get(b));
            if a.is_none() && b.is_none() {
                continue;
            }
            let dash = || "-".to_string();
            let _ = writeln!(
                out,
                "    {label:<18}{:>16}{:>16}",
                a.unwrap_or_else(dash),
                b.unwrap_or_else(dash)
            );
        }
    }
}
