//! The alerts panel (`!`): who sends the alerts and how each sink is doing, then every alert
//! since the console started, newest first: when (UTC), state, severity, where, label, summary.

use rust_i18n::t;

use ratatui::Frame;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Cell, Paragraph, Row, Table};

use crate::alerts::AlertState;
use crate::app::alert_log::{AlertLog, AlertSender};
use crate::cells::fit_words;
use crate::diagnose::Severity;
use crate::theme::Theme;
use crate::ui::audit::utc_time;
use crate::ui::format::clean;
use crate::ui::panel::{self, key_hint};

/// From this width the full date and the severity are shown.
const WIDE_FROM: u16 = 110;

pub fn draw(f: &mut Frame, area: Rect, log: &AlertLog, scroll: usize, theme: &Theme) {
    let firing = log.firing();
    let title = t!("alerts.title", firing = firing, logged = log.entries.len()).into_owned();
    let inner = panel::frame(f, area, title, theme.border_focused(), theme);
    let sinks = sink_lines(log, theme);
    let [head, body, foot] = Layout::vertical([
        Constraint::Length(1 + sinks.len() as u16),
        Constraint::Min(1),
        Constraint::Length(1),
    ])
    .areas(inner);
    let sender_style = match log.sender {
        AlertSender::Here(_) => theme.ok(),
        AlertSender::Elsewhere(_) => theme.dialog(),
        AlertSender::Nobody => theme.dim(),
    };
    let room = usize::from(head.width);
    let mut lines = vec![Line::styled(
        fit_words(&format!(" {}", clean(&log.sender.describe())), room),
        sender_style,
    )];
    lines.extend(sinks.into_iter().map(|(text, style)| {
        let text = fit_words(&text, room);
        Line::styled(text, style)
    }));
    f.render_widget(Paragraph::new(lines), head);
    f.render_widget(
        Paragraph::new(key_hint(
            &[
                ("↑↓ PgUp PgDn", t!("keyhint.scroll")),
                ("Esc / !", t!("keyhint.close")),
            ],
            theme,
        )),
        foot,
    );
    if log.entries.is_empty() {
        f.render_widget(
            Paragraph::new(Line::styled(
                fit_words(&t!("alerts.none"), usize::from(body.width)),
                theme.dim(),
            )),
            body,
        );
        return;
    }
    let wide = area.width >= WIDE_FROM;
    let mut widths = vec![
        Constraint::Length(if wide { 19 } else { 8 }),
        Constraint::Length(8),
    ];
    let titles = if wide {
        t!("alerts.header_wide")
    } else {
        t!("alerts.header")
    };
    let titles: Vec<String> = titles.split('|').map(str::to_string).collect();
    if wide {
        widths.push(Constraint::Length(8));
    }
    widths.extend([
        Constraint::Length(if wide { 20 } else { 12 }),
        Constraint::Length(if wide { 26 } else { 14 }),
        Constraint::Min(10),
    ]);
    // Each cell's text is cut to its column between words with an ellipsis, never by the
    // table's edge (`flaky-h200…`, not `flaky-h200 G`).
    let columns: Vec<usize> = Layout::horizontal(widths.clone())
        .flex(Flex::Start)
        .spacing(1)
        .split(Rect::new(0, 0, body.width, 1))
        .iter()
        .map(|r| usize::from(r.width))
        .collect();
    let cell = |i: usize, text: &str| -> Cell<'static> {
        let width = columns.get(i).copied().unwrap_or(0);
        Cell::from(fit_words(text, width))
    };
    let header = Row::new(
        titles
            .iter()
            .enumerate()
            .map(|(i, title)| cell(i, title))
            .collect::<Vec<_>>(),
    )
    .style(theme.header());
    let rows = log.entries.iter().skip(scroll).map(|a| {
        let time = utc_time(a.at_ms);
        // Narrow: `08:01:07`.
        let time = if wide {
            time
        } else {
            time.get(11..).unwrap_or(&time).to_string()
        };
        let (state, style) = match (a.state, a.severity) {
            (AlertState::Resolved, _) => (t!("alerts.resolved"), theme.ok()),
            (AlertState::Firing, Severity::Critical) => {
                (t!("alerts.firing_loud"), theme.critical())
            }
            (AlertState::Firing, Severity::Warning) => (t!("alerts.firing_loud"), theme.warning()),
            (AlertState::Firing, _) => (t!("alerts.firing"), theme.dialog()),
        };
        let mut texts = vec![time, state.into_owned()];
        if wide {
            texts.push(a.severity.word().to_string());
        }
        texts.extend([
            clean(&a.place()),
            clean(&a.label),
            clean(&a.summary_after_place()),
        ]);
        let cells: Vec<Cell> = texts
            .iter()
            .enumerate()
            .map(|(i, text)| match i {
                1 => cell(i, text).style(style),
                _ => cell(i, text),
            })
            .collect();
        Row::new(cells).style(theme.dialog())
    });
    f.render_widget(Table::new(rows, widths).header(header), body);
}

/// One line per sink that reported a delivery: counts, and the last problem; each with its
/// style.
fn sink_lines(log: &AlertLog, theme: &Theme) -> Vec<(String, Style)> {
    log.sinks
        .iter()
        .map(|(name, tally)| {
            let mut text =
                t!("alerts.delivered", sink = clean(name), n = tally.delivered).into_owned();
            if tally.retrying > 0 {
                text.push_str(&t!("alerts.retried", n = tally.retrying));
            }
            if tally.failed > 0 {
                text.push_str(&t!("alerts.failed", n = tally.failed));
            }
            if tally.dropped > 0 {
                text.push_str(&t!("alerts.dropped", n = tally.dropped));
            }
            if tally.down {
                text.push_str(&t!("alert_sink_state.pane_down"));
            }
            let style = match &tally.last_error {
                Some((at_ms, why)) => {
                    let time = utc_time(*at_ms);
                    let time = time.get(11..).unwrap_or(&time).to_string();
                    text.push_str(&t!("alerts.last_problem", time = time, why = clean(why)));
                    theme.warning()
                }
                None => theme.ok(),
            };
            (text, style)
        })
        .collect()
}
