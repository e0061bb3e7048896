//! Money on screen: the cost panel (`$`) with each host's billed, busy, idle and parked hours, its
//! spending and effective utilization, and the fleet's totals per currency (never summed across
//! currencies).

use rust_i18n::t;

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Row, Table};

use crate::app::model::Model;
use crate::app::unwatched::UnwatchedLine;
use crate::cost::{format_duration_ms, format_money};
use crate::theme::Theme;
use crate::ui::cost_cells::{eff_cell, hours_cell, money_cell, pct_cell, price_cell};
use crate::ui::format::{clean, fit};

/// Below this width the panel leaves out the price and the state columns.
const WIDE_FROM: u16 = 110;

pub fn draw(frame: &mut Frame, area: Rect, model: &Model, theme: &Theme) {
    let fleet = &model.fleet.money.fleet;
    let wide = area.width >= WIDE_FROM;
    let header_text = if wide {
        t!("cost.header_wide")
    } else {
        t!("cost.header")
    };
    let header: Vec<String> = header_text.split('|').map(str::to_string).collect();
    let name_width = fleet
        .hosts
        .iter()
        .map(|h| crate::cells::width(&h.host))
        .max()
        .unwrap_or(4)
        .clamp(6, if wide { 20 } else { 12 });
    let mut widths = vec![Constraint::Length(name_width as u16)];
    if wide {
        widths.push(Constraint::Length(12));
    }
    // Durations up to `999d23h`, whole.
    widths.extend([
        Constraint::Length(8),
        Constraint::Length(7),
        Constraint::Length(7),
        Constraint::Length(7),
        Constraint::Length(4),
        Constraint::Length(13),
        Constraint::Length(13),
    ]);
    if wide {
        widths.push(Constraint::Min(10));
    }
    let mut rows: Vec<Row> = Vec::new();
    let retired = |id: usize| model.fleet.hosts.get(id).is_some_and(|h| h.retired);
    for (_, cost) in fleet
        .hosts
        .iter()
        .enumerate()
        .filter(|(id, _)| !retired(*id))
    {
        let t = &cost.totals;
        let now = match (&t.released, t.current_idle_ms) {
            (Some(released), _) => {
                t!("cost.released", action = released.action.as_str()).into_owned()
            }
            (None, 0) => String::new(),
            (None, idle_ms) => t!("cost.idle", time = format_duration_ms(idle_ms)).into_owned(),
        };
        let mut cells = vec![Cell::from(fit(&clean(&cost.host), name_width))];
        if wide {
            cells.push(Cell::from(price_cell(cost)));
        }
        cells.extend([
            Cell::from(hours_cell(t.billed_ms)),
            Cell::from(hours_cell(t.busy_ms)),
            Cell::from(hours_cell(t.idle_ms)).style(if t.idle_ms > 0 {
                theme.warning()
            } else {
                theme.dialog()
            }),
            Cell::from(hours_cell(t.parked_ms)),
            Cell::from(eff_cell(t)),
            Cell::from(money_cell(cost.spent(), cost)),
            Cell::from(money_cell(cost.spent_idle(), cost)),
        ]);
        if wide {
            cells.push(Cell::from(now));
        }
        let style = if t.released.is_some() {
            theme.dim()
        } else {
            theme.dialog()
        };
        rows.push(Row::new(cells).style(style));
    }
    // The fleet: hours add up across hosts, money only within one currency.
    let currencies: Vec<(String, String)> = if fleet.by_currency.is_empty() {
        vec![("-".to_string(), "-".to_string())]
    } else {
        fleet
            .by_currency
            .iter()
            .map(|c| {
                (
                    format_money(c.spent, &c.currency),
                    format_money(c.spent_idle, &c.currency),
                )
            })
            .collect()
    };
    for (i, (spent, spent_idle)) in currencies.into_iter().enumerate() {
        let first = i == 0;
        let text = |s: String| if first { s } else { String::new() };
        let mut cells = vec![Cell::from(if first {
            t!("cost.fleet").into_owned()
        } else {
            String::new()
        })];
        if wide {
            cells.push(Cell::from(""));
        }
        cells.extend([
            Cell::from(text(hours_cell(fleet.billed_ms))),
            Cell::from(text(hours_cell(fleet.busy_ms))),
            Cell::from(text(hours_cell(fleet.idle_ms))),
            Cell::from(text(hours_cell(fleet.parked_ms))),
            Cell::from(text(pct_cell(fleet.effective_utilization()))),
            Cell::from(spent),
            Cell::from(spent_idle),
        ]);
        if wide {
            cells.push(Cell::from(""));
        }
        rows.push(Row::new(cells).style(theme.title()));
    }
    let settings = &model.fleet.options.money.settings;
    let legend = t!(
        "cost.legend",
        busy = format!("{:.0}", settings.busy_util_pct),
        idle = format!("{:.0}", settings.idle_util_pct),
        after = format_duration_ms(settings.idle_after_ms)
    );
    let needed_width: u16 = widths
        .iter()
        .map(|c| match c {
            Constraint::Length(n) => *n + 1,
            _ => 24,
        })
        .sum::<u16>()
        + 2;
    let unwatched = unwatched_lines(model);
    let extra = if unwatched.is_empty() {
        0
    } else {
        unwatched.len() as u16 + 1
    };
    let width = area.width.min(needed_width.max(60));
    let table_rows = rows.len() as u16;
    let height = (table_rows + 3 + extra).min(area.height);
    let rect = crate::ui::panel::centred(area, width, height);
    let table = Table::new(rows, widths)
        .header(
            Row::new(header.into_iter().map(Cell::from).collect::<Vec<_>>()).style(theme.header()),
        )
        .column_spacing(1)
        .style(theme.dialog())
        .block(
            Block::default()
                .borders(Borders::ALL)
                .border_style(theme.border_focused())
                .title(Span::styled(t!("cost.title"), theme.title()))
                .title_bottom(Line::styled(
                    fit(&legend, width.saturating_sub(2) as usize),
                    theme.dim(),
                )),
        );
    crate::ui::panel::clear(frame, rect);
    frame.render_widget(table, rect);
    // Under the table, inside its frame: the money nobody watches.
    let top = rect.y + 2 + table_rows;
    let bottom = rect.y + rect.height.saturating_sub(1);
    let inner = width.saturating_sub(2);
    if extra == 0 {
        return;
    }
    let title = Line::styled(fit(&t!("unwatched.title"), inner as usize), theme.warning());
    let lines = std::iter::once(title).chain(
        unwatched
            .into_iter()
            .map(|text| Line::styled(fit(&clean(&text), inner as usize), theme.critical())),
    );
    for (y, line) in (top..bottom).zip(lines) {
        frame.render_widget(line, Rect::new(rect.x + 1, y, inner, 1));
    }
}

/// The cost panel's lines about the money nobody watches, one per instance.
fn unwatched_lines(model: &Model) -> Vec<String> {
    model.unwatched.iter().map(UnwatchedLine::text).collect()
}
