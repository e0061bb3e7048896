//! The report as text for a terminal (grouped by category, with the previous check's key
//! figures side by side when there is one) and as JSON (see `SCHEMA.md`).

use std::fmt::Write;

use rust_i18n::t;

use crate::cells;

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
        "{}",
        t!(
            "check_report.head",
            host = report.host,
            target = report.target,
            status = loud(report.status),
            code = code
        )
    );
    let mut about = vec![
        format!(
            "{}, {:.0} s",
            utc_text(report.started_at_ms),
            report.duration_ms as f64 / 1000.0
        ),
        t!(
            "check_report.driver",
            driver = report.driver_version.as_deref().unwrap_or("?"),
            cuda = report.cuda_version.as_deref().unwrap_or("?")
        )
        .into_owned(),
    ];
    if let Some(t) = &report.torch_version {
        let none = t!("check_report.none");
        about.push(
            t!(
                "check_report.torch",
                version = t,
                cuda = report.torch_cuda.as_deref().unwrap_or(&none)
            )
            .into_owned(),
        );
    }
    let _ = writeln!(out, "{}", about.join("; "));
    let _ = writeln!(
        out,
        "{}",
        t!("check_report.expected", what = expected_text(report))
    );

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
        "\n{}",
        t!(
            "check_report.result",
            status = loud(report.status),
            pass = count(Status::Pass),
            warn = count(Status::Warn),
            fail = count(Status::Fail),
            skip = count(Status::Skip)
        )
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
        parts.push(t!("check_report.expect_gpu", gpu = g).into_owned());
    }
    if let Some(c) = e.count {
        parts.push(t!("check_report.expect_count", count = c).into_owned());
    }
    if let Some(m) = e.memory_gib {
        parts.push(t!("check_report.expect_memory", gib = m).into_owned());
    }
    if let Some(c) = &e.min_cuda {
        parts.push(format!("CUDA ≥ {c}"));
    }
    if parts.is_empty() {
        t!("check_report.expect_nothing").into_owned()
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
    let _ = write!(
        out,
        "  {}  {} {measured}",
        cells::pad(&quiet(c.status), 4),
        cells::pad(&subject, 20)
    );
    if !c.expected.is_empty() {
        let _ = write!(
            out,
            "  [{}]",
            t!("check_report.expected_value", what = c.expected)
        );
    }
    let _ = writeln!(out);
    if !c.message.is_empty() {
        let _ = writeln!(out, "        {}", c.message);
    }
}

/// A comparison row: its label and how to read the figure from a GPU's figures.
/// A verdict in capitals, as the report's first and last lines write it (`PASS`, `通过`).
fn loud(status: Status) -> String {
    match status {
        Status::Pass => t!("check.pass"),
        Status::Warn => t!("check.warn"),
        Status::Fail => t!("check.fail"),
        Status::Skip => t!("check.skip"),
    }
    .into_owned()
}

/// A verdict as each check's line writes it (`pass`, `通过`).
fn quiet(status: Status) -> String {
    match status {
        Status::Pass => t!("check_report.pass"),
        Status::Warn => t!("check_report.warn"),
        Status::Fail => t!("check_report.fail"),
        Status::Skip => t!("check_report.skip"),
    }
    .into_owned()
}

type Row = (&'static str, fn(&GpuFigures) -> Option<String>);

fn write_comparison(out: &mut String, now: &CheckReport, before: &CheckReport) {
    let _ = writeln!(
        out,
        "\n{}",
        t!(
            "check_report.compared",
            time = utc_text(before.started_at_ms),
            status = quiet(before.status)
        )
    );
    for g in &now.gpus {
        let Some(b) = before.figures_matching(g) else {
            let _ = writeln!(
                out,
                "  {}",
                t!("check_report.not_before", index = g.index, name = g.name)
            );
            continue;
        };
        let _ = writeln!(out, "  GPU {} {}", g.index, g.name);
        let _ = writeln!(
            out,
            "    {:<18}{}{}",
            "",
            cells::pad_left(&t!("check_report.now"), 16),
            cells::pad_left(&t!("check_report.before"), 16)
        );
        let rows: [Row; 8] = [
            ("check_report.row_matmul", |f| f.matmul_tflops.map(tflops)),
            ("check_report.row_copy", |f| f.copy_gb_per_s.map(bandwidth)),
            ("check_report.row_vram", |f| {
                f.usable_vram_gib.map(|v| format!("{v:.1} GiB"))
            }),
            ("check_report.row_sustained", |f| {
                f.sustained_tflops.map(tflops)
            }),
            ("check_report.row_temperature", |f| {
                f.load_temperature_max_c.map(|t| format!("{t:.0} °C"))
            }),
            ("check_report.row_sm_clock", |f| {
                f.load_sm_clock_mean_mhz.map(|c| format!("{c:.0} MHz"))
            }),
            ("check_report.row_power_limit", |f| {
                f.power_limit_w.map(watts)
            }),
            ("check_report.row_pcie", |f| {
                Some(format!("Gen{} x{}", f.pcie_gen?, f.pcie_width?))
            }),
        ];
        for (key, get) in rows {
            let label = cells::pad(&t!(key), 18);
            let (a, b) = (get(g), get(b));
            if a.is_none() && b.is_none() {
                continue;
            }
            let dash = || "-".to_string();
            let _ = writeln!(
                out,
                "    {label}{}{}",
                cells::pad_left(&a.unwrap_or_else(dash), 16),
                cells::pad_left(&b.unwrap_or_else(dash), 16)
            );
        }
    }
}
