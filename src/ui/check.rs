//! The check pane: while `gpufleet check` runs, a progress bar with the phase and each GPU's
//! live reading (temperature, power, SM clock, TFLOP/s); then the report, with the host's
//! previous report beside it where there is room (below it where there is not).

use rust_i18n::t;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::app::check_run::{CheckRun, CheckStage};
use crate::check::{LiveReading, Status};
use crate::theme::{Level, Theme};
use crate::ui::format::{clean, fit};
use crate::ui::panel::{self, bar, key_hint};

/// From this width the previous report is shown beside the new one.
const SIDE_BY_SIDE_FROM: u16 = 120;

fn status_style(status: Status, theme: &Theme) -> Style {
    match status {
        Status::Pass => theme.ok(),
        Status::Skip => theme.dim(),
        Status::Warn => theme.warning(),
        Status::Fail => theme.critical(),
    }
}

pub fn draw(f: &mut Frame, area: Rect, check: &CheckRun, theme: &Theme) {
    let title = t!("check.title", host = clean(&check.host_name)).into_owned();
    let inner = panel::frame(f, area, title, theme.border_focused(), theme);
    match &check.stage {
        CheckStage::Running | CheckStage::Stopping => draw_progress(f, inner, check, theme),
        CheckStage::Done {
            status,
            report,
            previous,
            note,
        } => {
            let [body, foot] =
                Layout::vertical([Constraint::Min(1), Constraint::Length(2)]).areas(inner);
            draw_report(f, body, check.scroll, report, previous.as_deref(), theme);
            let mut verdict = vec![Span::styled(
                format!(" {} ", verdict_word(*status)),
                status_style(*status, theme),
            )];
            if let Some(note) = note {
                let room = (foot.width as usize).saturating_sub(8);
                verdict.push(Span::styled(fit(note, room), theme.dim()));
            }
            let lines = vec![
                Line::from(verdict),
                key_hint(
                    &[
                        ("↑↓ PgUp PgDn g G", t!("keyhint.scroll")),
                        ("Esc", t!("keyhint.close")),
                    ],
                    theme,
                ),
            ];
            f.render_widget(Paragraph::new(lines), foot);
        }
        CheckStage::Failed { reason } => {
            let text = t!("check.not_finished", reason = reason);
            let mut lines: Vec<Line> = crate::ui::wrap::rows(&text, usize::from(inner.width))
                .into_iter()
                .map(|row| Line::styled(row, theme.critical()))
                .collect();
            lines.push(Line::from(""));
            lines.push(key_hint(&[("Esc", t!("keyhint.close"))], theme));
            f.render_widget(Paragraph::new(lines), inner);
        }
    }
}

fn draw_progress(f: &mut Frame, area: Rect, check: &CheckRun, theme: &Theme) {
    let width = area.width as usize;
    let pct = format!(" {:>3.0}%", check.fraction * 100.0);
    let bar_width = width.saturating_sub(crate::cells::width(&pct) + 2);
    let mut bar_line = vec![Span::raw(" ")];
    bar_line.extend(bar(
        check.fraction,
        bar_width,
        theme.gauge(Level::Ok),
        theme,
    ));
    bar_line.push(Span::styled(pct, theme.title()));
    let mut lines = vec![
        Line::from(vec![
            Span::styled(t!("check.phase"), theme.header()),
            Span::styled(check.phase.clone(), theme.title()),
        ]),
        Line::from(bar_line),
        Line::styled(
            if check.message == check.phase {
                String::new()
            } else {
                format!(" {}", fit(&check.message, width.saturating_sub(1)))
            },
            theme.dim(),
        ),
        Line::from(""),
    ];
    if check.readings.is_empty() {
        lines.push(Line::styled(t!("check.readings_wait"), theme.dim()));
    } else {
        lines.push(Line::styled(readings_header(), theme.header()));
        for reading in &check.readings {
            lines.push(reading_line(reading, theme));
        }
    }
    lines.push(Line::from(""));
    lines.push(match check.stage {
        CheckStage::Stopping => key_hint(&[("Esc", t!("keyhint.close_leave"))], theme),
        _ => key_hint(&[("Esc / x", t!("keyhint.stop_check"))], theme),
    });
    f.render_widget(Paragraph::new(lines), area);
}

/// The readings' header, its columns as wide (in cells) as the readings' own.
fn readings_header() -> String {
    let titles = t!("check.readings_header");
    let mut out = String::new();
    for (i, title) in titles.split('|').enumerate() {
        let cell = match i {
            0 => crate::cells::pad(title, 4),
            1 => crate::cells::pad_left(title, 6),
            2 => crate::cells::pad_left(title, 14),
            3 => crate::cells::pad_left(title, 10),
            4 => crate::cells::pad_left(title, 8),
            _ => crate::cells::pad_left(title, 6),
        };
        out.push(' ');
        out.push_str(&cell);
    }
    out
}

/// The verdict as the pane's footer says it: `PASS`, `WARN`, `FAIL`, `SKIP`.
fn verdict_word(status: Status) -> String {
    match status {
        Status::Pass => t!("check.pass"),
        Status::Skip => t!("check.skip"),
        Status::Warn => t!("check.warn"),
        Status::Fail => t!("check.fail"),
    }
    .into_owned()
}

fn reading_line<'a>(r: &LiveReading, theme: &Theme) -> Line<'a> {
    let opt = |v: Option<f64>, unit: &str| v.map_or("-".to_string(), |v| format!("{v:.0}{unit}"));
    let power = match (r.power_w, r.power_limit_w) {
        (Some(w), Some(limit)) => format!("{w:.0}/{limit:.0} W"),
        (Some(w), None) => format!("{w:.0} W"),
        _ => "-".to_string(),
    };
    let clock = r
        .sm_clock_mhz
        .map_or("-".to_string(), |c| format!("{c} MHz"));
    let tflops = r.tflops.map_or("-".to_string(), |t| format!("{t:.1}"));
    Line::styled(
        format!(
            " {:<4} {:>6} {:>14} {:>10} {:>8} {:>6}",
            r.gpu,
            opt(r.temperature_c, "°C"),
            power,
            clock,
            tflops,
            opt(r.utilization_pct, "%")
        ),
        theme.dialog(),
    )
}

fn draw_report(
    f: &mut Frame,
    area: Rect,
    scroll: usize,
    report: &[String],
    previous: Option<&[String]>,
    theme: &Theme,
) {
    let column = |lines: &[String], heading: &str, width: usize| -> Vec<Line<'static>> {
        let mut out = vec![Line::styled(fit(heading, width), theme.header())];
        out.extend(
            lines
                .iter()
                .skip(scroll)
                .map(|l| Line::styled(fit(&format!(" {l}"), width), report_style(l, theme))),
        );
        out
    };
    match previous {
        Some(previous) if area.width >= SIDE_BY_SIDE_FROM => {
            let [left, right] =
                Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)])
                    .areas(area);
            let lw = left.width as usize;
            let rw = right.width.saturating_sub(1) as usize;
            f.render_widget(Paragraph::new(column(report, &t!("check.this"), lw)), left);
            let right_lines: Vec<Line> = column(previous, &t!("check.previous"), rw)
                .into_iter()
                .map(|l| {
                    let mut spans = vec![Span::styled("│", theme.border())];
                    spans.extend(l.spans);
                    Line::from(spans).style(l.style)
                })
                .collect();
            f.render_widget(Paragraph::new(right_lines), right);
        }
        _ => {
            let width = area.width as usize;
            let mut all: Vec<String> = report.to_vec();
            if let Some(previous) = previous {
                all.push(String::new());
                all.push(t!("check.previous_rule").into_owned());
                all.extend(previous.iter().cloned());
            }
            f.render_widget(Paragraph::new(column(&all, &t!("check.this"), width)), area);
        }
    }
}

/// Verdict words colour their line.
fn report_style(line: &str, theme: &Theme) -> Style {
    let word = line.split_whitespace().next().unwrap_or("");
    match word {
        "FAIL" | "fail" => theme.critical(),
        "WARN" | "warn" => theme.warning(),
        "PASS" | "pass" => theme.ok(),
        "SKIP" | "skip" => theme.dim(),
        _ => theme.dialog(),
    }
}
