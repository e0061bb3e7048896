//! The fleet view: one row per host with its status, GPUs, load and badges.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders};

use crate::app::badges::{BadgeLevel, host_badges};
use crate::app::model::Model;
use crate::fleet::host::{HostState, HostStatus};
use crate::theme::{Level, Theme};
use crate::ui::cost::{hours_cell, money_cell, pct_cell, price_cell};
use crate::ui::format::{clean, fit, gib, opt_c, opt_pct, whole};
use crate::ui::grid;

/// Below this width the table drops to narrower columns.
const WIDE_FROM: u16 = 110;
/// From this width the table also shows what each host costs.
const COST_FROM: u16 = 140;

pub fn draw(frame: &mut Frame, area: Rect, model: &Model, theme: &Theme) {
    let visible = model.visible_hosts();
    let wide = area.width >= WIDE_FROM;
    let money = area.width >= COST_FROM;
    // The name column is as wide as the longest name, within limits, so short names leave room
    // for badges.
    let longest_name = visible
        .iter()
        .map(|&i| model.fleet.hosts[i].name.chars().count())
        .max()
        .unwrap_or(4) as u16;
    let name_width = longest_name.clamp(8, if wide { 24 } else { 15 });
    let mut widths: Vec<Constraint> = if wide {
        vec![
            Constraint::Length(name_width),
            Constraint::Length(15),
            Constraint::Length(18),
            Constraint::Length(5),
            Constraint::Length(13),
            Constraint::Length(6),
            Constraint::Length(12),
            Constraint::Min(10),
        ]
    } else {
        vec![
            Constraint::Length(name_width),
            Constraint::Length(11),
            Constraint::Length(12),
            Constraint::Length(4),
            Constraint::Length(9),
            Constraint::Length(4),
            Constraint::Length(9),
            Constraint::Min(4),
        ]
    };
    let mut titles = vec![
        "HOST", "STATUS", "GPUS", "UTIL", "VRAM GiB", "HOT", "POWER W",
    ];
    if money {
        // Before the badges, which take what is left.
        widths.splice(
            7..7,
            [
                Constraint::Length(12),
                Constraint::Length(13),
                Constraint::Length(6),
                Constraint::Length(4),
            ],
        );
        titles.extend(["$/h", "SPENT", "IDLE h", "EFF%"]);
    }
    titles.push("BADGES");
    // Only the rows that fit are built (formatting dominates a frame's cost). The window is the
    // one a fresh table state scrolls to: from the top, or with the cursor on the last line.
    let rows_fit = usize::from(area.height.saturating_sub(3)).max(1);
    let cursor = model.fleet_cursor.min(visible.len().saturating_sub(1));
    let first = (cursor + 1).saturating_sub(rows_fit);
    let title = format!(
        " Fleet · {} hosts · sort: {} ",
        visible.len(),
        model.sort.label()
    );
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border_focused())
        .title(Span::styled(title, theme.title()));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let header = titles.into_iter().map(Line::raw).collect();
    let rows = visible.iter().skip(first).take(rows_fit).map(|&i| {
        let host = &model.fleet.hosts[i];
        let status = host.status(model.fleet.now_ms, model.fleet.options.interval_ms);
        let mut row = host_row(
            host,
            &status,
            model.fleet.money.is_released(i),
            theme,
            wide,
            name_width as usize,
        );
        if money {
            let cells = match model.fleet.money.cost(i) {
                Some(cost) => [
                    Line::raw(price_cell(cost)),
                    Line::raw(money_cell(cost.spent(), cost)),
                    Line::styled(
                        hours_cell(cost.totals.idle_ms),
                        if cost.totals.idle_ms > 0 {
                            theme.warning()
                        } else {
                            theme.base()
                        },
                    ),
                    Line::raw(pct_cell(cost.totals.effective_utilization())),
                ],
                None => ["-", "-", "-", "-"].map(Line::raw),
            };
            row.splice(7..7, cells);
        }
        row
    });
    let selected = (!visible.is_empty()).then(|| cursor - first);
    grid::draw(
        frame.buffer_mut(),
        inner,
        &widths,
        (header, theme.header()),
        rows,
        selected.map(|row| (row, theme.selected())),
    );
    if visible.is_empty() {
        let message = if model.filter.is_empty() {
            "no hosts configured: add [[hosts]] to the config, name hosts on the command line, or try --demo"
        } else {
            "no host matches the filter (Esc clears it)"
        };
        let inner = Rect {
            x: area.x + 2,
            y: area.y + 2,
            width: area.width.saturating_sub(4),
            height: 1,
        };
        frame.render_widget(Line::styled(message, theme.dim()), inner);
    }
}

fn status_style(status: &HostStatus, theme: &Theme) -> Style {
    match status {
        HostStatus::Live => theme.ok(),
        HostStatus::Connecting { .. } => theme.dim(),
        HostStatus::Stale { .. } => theme.stale(),
        HostStatus::Flooding { .. } => theme.warning(),
        HostStatus::Unreachable { .. } | HostStatus::Lost { .. } => theme.critical(),
    }
}

/// The cells of one host's row (the cost cells go in before the badges, the last cell).
fn host_row<'a>(
    host: &HostState,
    status: &HostStatus,
    released: bool,
    theme: &Theme,
    wide: bool,
    name_width: usize,
) -> Vec<Line<'a>> {
    let util = host.mean_utilization_pct();
    let memory = host.memory_mib();
    let hottest = host.hottest_c();
    let power = host.power_w();
    let hot_level = host
        .gpus
        .iter()
        .filter_map(|g| {
            let t = g.latest.temperature_c?;
            Some(crate::ui::gpu_card::temperature_level(
                t,
                g.latest.temperature_slowdown_c,
            ))
        })
        .max()
        .unwrap_or(Level::Ok);
    let memory_text = memory.map_or_else(
        || "-".to_string(),
        |(u, t)| format!("{}/{}", gib(u), gib(t)),
    );
    let power_text = power.map_or_else(
        || "-".to_string(),
        |(d, l)| format!("{}/{}", whole(d), whole(l)),
    );
    let memory_level = memory.map_or(Level::Ok, |(u, t)| {
        crate::theme::level_for(u as f64 * 100.0 / t.max(1) as f64, 90.0, 97.0)
    });
    let mut badges: Vec<Span> = host_badges(host, status)
        .into_iter()
        .take(if wide { 4 } else { 1 })
        .flat_map(|b| {
            let style = match b.level {
                BadgeLevel::Critical => theme.badge_critical(),
                BadgeLevel::Warning => theme.badge_warning(),
            };
            if wide {
                vec![Span::styled(format!(" {} ", b.text), style), Span::raw(" ")]
            } else {
                vec![Span::styled(b.text, style), Span::raw(" ")]
            }
        })
        .collect();
    // Why a host is unreachable or flooding, in what room the badges leave.
    if let Some(reason) = status.reason().filter(|_| !released) {
        badges.push(Span::styled(clean(reason), theme.dim()));
    }
    let dim_when_down = |style: Style| match status {
        HostStatus::Live => style,
        _ => theme.dim(),
    };
    // A released host no longer bills; whatever its link says matters less.
    let status_cell = if released {
        Line::styled("released", theme.dim())
    } else {
        Line::styled(status.text(), status_style(status, theme))
    };
    vec![
        Line::raw(fit(&clean(&host.name), name_width)),
        status_cell,
        Line::raw(fit(
            &clean(&host.gpu_model_summary()),
            if wide { 18 } else { 12 },
        )),
        Line::styled(opt_pct(util), dim_when_down(theme.base())),
        Line::styled(memory_text, dim_when_down(theme.gauge(memory_level))),
        Line::styled(opt_c(hottest), dim_when_down(theme.gauge(hot_level))),
        Line::styled(power_text, dim_when_down(theme.base())),
        Line::from(badges),
    ]
}
