//! The runbook pane: the run's lines (each step's exact command before it runs, its output as
//! it streams in, outcomes and explanations), newest at the bottom unless scrolled back, and
//! under them the confirmation a change or disruptive step waits for, or how the run ended.

use rust_i18n::t;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::app::runbook_run::{LineKind, PaneLine, RunStage, RunbookRun, StepAsk};
use crate::runbook::Danger;
use crate::theme::Theme;
use crate::ui::format::clean;
use crate::ui::panel::{self, key_hint, wrap_rows};
use crate::ui::wrap;

fn danger_style(danger: Danger, theme: &Theme) -> Style {
    match danger {
        Danger::Read => theme.title(),
        Danger::Change => theme.warning(),
        Danger::Disruptive => theme.critical(),
    }
}

fn line_style(line: &PaneLine, theme: &Theme) -> Style {
    match line.kind {
        LineKind::Heading => theme.title(),
        LineKind::Step(danger) => danger_style(danger, theme),
        LineKind::Why | LineKind::Skipped => theme.dim(),
        LineKind::Command => theme.help_key(),
        LineKind::Output => theme.dialog(),
        LineKind::Ok => theme.ok(),
        LineKind::Failed => theme.critical(),
        LineKind::Note | LineKind::Advice => theme.dialog(),
        LineKind::Warning => theme.warning(),
    }
}

/// How far a line is indented under its step.
fn indent(kind: LineKind) -> &'static str {
    match kind {
        LineKind::Heading | LineKind::Step(_) => " ",
        LineKind::Output => "   │ ",
        _ => "   ",
    }
}

pub fn draw(f: &mut Frame, area: Rect, run: &RunbookRun, theme: &Theme) {
    let border = match &run.stage {
        RunStage::Confirm(ask) => danger_style(ask.danger, theme),
        _ => theme.border_focused(),
    };
    let title = t!(
        "playbook.title",
        runbook = clean(&run.runbook),
        host = clean(&run.host_name)
    )
    .into_owned();
    let inner = panel::frame(f, area, title, border, theme);
    let width = inner.width as usize;
    let footer = footer_lines(run, width, theme);
    let footer_rows = (footer.len() as u16).min(inner.height.saturating_sub(3));
    let [body, foot] =
        Layout::vertical([Constraint::Min(1), Constraint::Length(footer_rows)]).areas(inner);

    // Every line cut into rows so that a long command is shown whole.
    let mut rows: Vec<(String, Style)> = Vec::new();
    for line in &run.lines {
        let prefix = indent(line.kind);
        let style = line_style(line, theme);
        let room = width.saturating_sub(crate::cells::width(prefix)).max(1);
        // Commands and output are cut by cells (none of their spaces lost); prose is wrapped.
        let cut = match line.kind {
            LineKind::Command | LineKind::Output => wrap_rows(&line.text, room),
            _ => wrap::rows(&line.text, room),
        };
        for (i, row) in cut.into_iter().enumerate() {
            let lead = if i == 0 {
                prefix.to_string()
            } else {
                " ".repeat(crate::cells::width(prefix))
            };
            rows.push((format!("{lead}{row}"), style));
        }
    }
    let height = body.height as usize;
    let back = run.scroll.min(rows.len().saturating_sub(height));
    let end = rows.len().saturating_sub(back);
    let start = end.saturating_sub(height);
    let shown: Vec<Line> = rows[start..end]
        .iter()
        .map(|(text, style)| Line::styled(text.clone(), *style))
        .collect();
    f.render_widget(Paragraph::new(shown), body);
    f.render_widget(Paragraph::new(footer), foot);
}

fn ask_lines<'a>(ask: &StepAsk, width: usize, theme: &Theme) -> Vec<Line<'a>> {
    let style = danger_style(ask.danger, theme);
    let mut lines = vec![
        Line::from(""),
        Line::from(vec![
            Span::styled(
                match ask.danger {
                    Danger::Read => t!("playbook.step_read"),
                    Danger::Change => t!("playbook.step_change"),
                    Danger::Disruptive => t!("playbook.step_disruptive"),
                },
                style,
            ),
            Span::styled(clean(&ask.title), theme.title()),
        ]),
    ];
    for row in wrap::rows(
        &t!("playbook.why", why = clean(&ask.why)),
        width.saturating_sub(3),
    ) {
        lines.push(Line::styled(format!("   {row}"), theme.dim()));
    }
    for row in wrap_rows(
        &format!("$ {}", clean(&ask.command)),
        width.saturating_sub(3),
    ) {
        lines.push(Line::styled(format!("   {row}"), theme.help_key()));
    }
    let question = Span::styled(t!("playbook.question"), style);
    let answers = vec![
        Span::styled("y", theme.help_key()),
        Span::styled(t!("playbook.run_it"), theme.dialog()),
        Span::styled(t!("keyname.any_other_key"), theme.help_key()),
        Span::styled(t!("playbook.cancel_default"), theme.dialog()),
    ];
    let one_line = question.width() + answers.iter().map(Span::width).sum::<usize>();
    if one_line <= width {
        lines.push(Line::from([vec![question], answers].concat()));
    } else {
        // A narrow pane: the keys on a line of their own rather than cut off.
        lines.push(Line::from(question));
        lines.push(Line::from([vec![Span::raw("   ")], answers].concat()));
    }
    lines
}

fn footer_lines<'a>(run: &RunbookRun, width: usize, theme: &Theme) -> Vec<Line<'a>> {
    let scrolled = if run.scroll > 0 {
        crate::words::Words::counted("playbook.scrolled", run.scroll as u64).localized()
    } else {
        String::new()
    };
    match &run.stage {
        RunStage::Confirm(ask) => ask_lines(ask, width, theme),
        RunStage::Running => vec![
            Line::styled(t!("playbook.running", scrolled = scrolled), theme.warning()),
            key_hint(
                &[
                    ("Esc / x", t!("keyhint.stop_step")),
                    ("↑↓ PgUp", t!("keyhint.scroll")),
                ],
                theme,
            ),
        ],
        RunStage::Stopping => vec![
            Line::styled(t!("playbook.stopping"), theme.warning()),
            key_hint(&[("Esc", t!("keyhint.close_leave"))], theme),
        ],
        RunStage::Finished { text, good } => vec![
            Line::styled(
                format!(" {}{scrolled}", clean(text)),
                if *good { theme.ok() } else { theme.critical() },
            ),
            key_hint(
                &[
                    ("Esc / Enter", t!("keyhint.close")),
                    ("↑↓ PgUp", t!("keyhint.scroll")),
                ],
                theme,
            ),
        ],
    }
}
