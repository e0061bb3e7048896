//! The fleet view: one row per host with its status, GPUs, load and badges (or why it is not
//! streaming), a line under each host with a bar per GPU and the last ten minutes of load when
//! there is room for it, and the fleet's totals on the last line.

use rust_i18n::t;

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders};

use crate::app::model::Model;
use crate::app::screen::ListArea;
use crate::fleet::HostId;
use crate::fleet::host::{HostState, HostStatus};
use crate::fleet::outage::{Outage, outage};
use crate::telemetry::TimestampMs;
use crate::theme::Theme;
use crate::ui::fleet_columns::{Column, Want, plan};
use crate::ui::fleet_row::{HostRow, MAX_BARS, RowInput};
use crate::ui::format::{Noun, count, fit_pieces, width_of};
use crate::ui::grid::{self, Cell};
use crate::ui::trail::{blocks, level_char, utilization_slices};
use crate::ui::{fleet_totals, outage_text, plain_box};

/// From this width badges are drawn padded, as chips.
const WIDE_FROM: u16 = 110;
/// From this width the table also shows what each host costs.
const COST_FROM: u16 = 140;
/// The trail under a host covers this much time.
const TRAIL_WINDOW_MS: u64 = 10 * 60 * 1000;
/// The figure columns widen for an outage's words up to this many columns.
const OUTAGE_MAX_COLUMNS: usize = 48;
/// The trail is at most this many columns.
const TRAIL_MAX_COLUMNS: usize = 60;

/// Where the fleet table's parts go inside its frame: one computation for drawing and for the
/// mouse, so a click lands on the host drawn there.
struct Rows {
    /// The header line and the host rows.
    table: Rect,
    /// The totals take the last line when a host row still fits above it.
    with_totals: bool,
    /// A second line per host when every host gets one.
    two_lines: bool,
    /// How many hosts are shown.
    rows_fit: usize,
    /// The first host shown: the window a fresh table state scrolls to, from the top or with
    /// the cursor on the last line.
    first: usize,
}

fn rows(inner: Rect, hosts: usize, cursor: usize) -> Rows {
    let with_totals = inner.height >= 3;
    let table = Rect {
        height: inner.height - u16::from(with_totals),
        ..inner
    };
    let room = usize::from(table.height.saturating_sub(1)).max(1);
    let two_lines = hosts > 0 && hosts * 2 <= room;
    let rows_fit = if two_lines { hosts } else { room };
    Rows {
        table,
        with_totals,
        two_lines,
        rows_fit,
        first: crate::ui::scroll::window_start(cursor, rows_fit),
    }
}

/// The host rows of the fleet table drawn in `area` (the pane with its frame), for the mouse.
pub fn host_rows(area: Rect, model: &Model, visible: usize) -> ListArea {
    let cursor = model.fleet_cursor.min(visible.saturating_sub(1));
    let inner = Block::default().borders(Borders::ALL).inner(area);
    let Rows {
        table,
        two_lines,
        rows_fit,
        first,
        ..
    } = rows(inner, visible, cursor);
    let lines_per_item: u16 = if two_lines { 2 } else { 1 };
    let shown = u16::try_from(rows_fit.min(visible.saturating_sub(first))).unwrap_or(u16::MAX);
    ListArea {
        rows: Rect {
            y: table.y + 1,
            height: shown
                .saturating_mul(lines_per_item)
                .min(table.height.saturating_sub(1)),
            ..table
        },
        first,
        lines_per_item,
    }
}

pub fn draw(frame: &mut Frame, area: Rect, model: &Model, theme: &Theme) {
    let visible = model.visible_hosts();
    let title = t!(
        "fleet.title",
        hosts = count(visible.len(), Noun::Host),
        sort = model.sort.label()
    );
    let title = Line::from(Span::styled(title, theme.title()));
    let inner = plain_box::draw(frame.buffer_mut(), area, &title, theme.border_focused());
    if inner.is_empty() {
        return;
    }
    let cursor = model.fleet_cursor.min(visible.len().saturating_sub(1));
    let Rows {
        table,
        with_totals,
        two_lines,
        rows_fit,
        first,
    } = rows(inner, visible.len(), cursor);
    if with_totals {
        let totals = Rect {
            y: inner.bottom() - 1,
            height: 1,
            ..inner
        };
        frame.render_widget(
            fleet_totals::line(model, theme, usize::from(totals.width)),
            totals,
        );
    }
    // Only the rows that fit are built (formatting dominates a frame's cost), and only those
    // that changed since the last frame.
    let fleet = &model.fleet;
    let shown: Vec<(HostId, &HostState, HostStatus, Option<Outage>)> = visible
        .iter()
        .skip(first)
        .take(rows_fit)
        .filter_map(|&i| {
            let host = fleet.hosts.get(i)?;
            let status = host.status(fleet.now_ms, fleet.options.interval_ms);
            let down = outage(host, fleet.now_ms, fleet.options.interval_ms);
            Some((i, host, status, down))
        })
        .collect();
    let built = model.screen.fleet_rows.rows(
        shown.iter().map(|(i, host, status, down)| {
            let input = RowInput {
                host,
                status,
                outage: down.clone(),
                cost: fleet.money.cost(*i),
                released: fleet.money.is_released(*i),
            };
            (*i, input)
        }),
        theme,
    );
    let shown: Vec<(&HostState, &Option<Outage>, &HostRow)> = shown
        .iter()
        .zip(&built)
        .map(|((_, host, _, down), row)| (*host, down, row.as_ref()))
        .collect();
    let wide = area.width >= WIDE_FROM;
    let columns = plan(
        table.width,
        &wants(
            shown.iter().map(|(_, _, row)| *row),
            two_lines,
            area.width >= COST_FROM,
        ),
    );
    let widths: Vec<Constraint> = columns
        .iter()
        .map(|(_, w)| Constraint::Length(*w))
        .collect();
    let header = columns
        .iter()
        .map(|(c, w)| Line::raw(c.header(*w)))
        .collect();
    let span_all = columns.len();
    let now_ms = fleet.now_ms;
    // The trails start in one column: the bars are padded to the most GPUs shown.
    let bars_width = shown
        .iter()
        .map(|(host, _, _)| host.gpus.len())
        .max()
        .unwrap_or(0)
        .min(MAX_BARS);
    // A row is laid out by the columns shown and their widths: the same, and its kept line
    // is drawn again as it is.
    let layout = (columns.clone(), wide);
    let (layout, columns) = (&layout, &columns);
    let rows = shown.iter().flat_map(|(host, down, row)| {
        let mut lines = vec![grid::Row::Kept {
            line: &row.kept,
            key: layout,
            cells: Box::new(move || row.cells(columns, theme, wide)),
        }];
        if two_lines {
            let width = usize::from(table.width);
            lines.push(grid::Row::Cells(vec![Cell::spanning(
                detail_line(host, down.as_ref(), (width, bars_width), now_ms, theme),
                span_all,
            )]));
        }
        lines
    });
    let per_host = if two_lines { 2 } else { 1 };
    let selected = (cursor - first) * per_host;
    if !visible.is_empty() {
        grid::draw(
            frame.buffer_mut(),
            table,
            &widths,
            (header, theme.header()),
            rows,
            Some((selected, theme.selected())),
        );
    } else {
        let message = if model.filter.is_empty() {
            t!("fleet.no_hosts")
        } else {
            t!("fleet.no_match")
        };
        let line = Rect {
            x: inner.x + 1,
            y: inner.y + 1,
            width: inner.width.saturating_sub(2),
            height: 1,
        };
        frame.render_widget(
            Line::styled(
                crate::ui::format::fit(&message, usize::from(line.width)),
                theme.dim(),
            ),
            line,
        );
    }
}

/// What each column asks for, most needed first; numbers as wide as their widest value.
fn wants<'a>(
    rows: impl Iterator<Item = &'a HostRow> + Clone,
    two_lines: bool,
    money: bool,
) -> Vec<Want> {
    let widest = |column: Column| {
        rows.clone()
            .map(|r| r.column_width(column))
            .max()
            .unwrap_or(0)
    };
    let widest_text = |f: fn(&HostRow) -> usize| {
        let w = rows.clone().map(f).max().unwrap_or(0);
        u16::try_from(w).unwrap_or(u16::MAX)
    };
    let name = widest_text(|r| r.text_widths().0).max(4);
    let status = widest_text(|r| r.text_widths().1).max(6);
    let gpus = widest_text(|r| r.text_widths().2).max(4);
    // A host that is not streaming says why across the figure columns (and the badges', but
    // the money columns come between when shown): when there is room, the utilization column
    // widens until they hold its words.
    let figures: usize = [Column::Util, Column::Vram, Column::Hot, Column::Power]
        .iter()
        .map(|&c| Want::numbers(c, widest(c)).min as usize + 1)
        .sum::<usize>()
        - 1;
    let outage = if money {
        rows.clone()
            .map(HostRow::outage_width)
            .max()
            .unwrap_or(0)
            .min(OUTAGE_MAX_COLUMNS)
    } else {
        0
    };
    let util = Want::numbers(Column::Util, widest(Column::Util));
    let util = Want::text(
        Column::Util,
        util.min,
        util.max
            .saturating_add(u16::try_from(outage.saturating_sub(figures)).unwrap_or(0)),
    );
    let mut wants = vec![
        Want::text(Column::Host, name.min(15), name.min(24)),
        // At least as wide as `unreachable` when there is room, so the columns do not move
        // each time a host's status changes.
        Want::text(Column::Status, status.min(11), status.clamp(11, 17)),
        util,
        Want::text(Column::Badges, 7, u16::MAX),
        Want::numbers(Column::Vram, widest(Column::Vram)),
        Want::text(Column::Gpus, gpus.min(9), gpus.min(18)),
        Want::numbers(Column::Power, widest(Column::Power)),
        Want::numbers(Column::Hot, widest(Column::Hot)),
    ];
    // The line under each host has the bars; without it, a column may.
    let bars = widest(Column::Bars);
    if !two_lines && bars > 1 {
        wants.push(Want::numbers(Column::Bars, bars));
    }
    if money {
        for column in [Column::Price, Column::Spent, Column::Idle, Column::Eff] {
            wants.push(Want::numbers(column, widest(column)));
        }
    }
    wants
}

/// The line under a host: a bar per GPU and the host's load over the last ten minutes; for a
/// host that is not streaming, why, since when and when it retries, in full.
fn detail_line(
    host: &HostState,
    down: Option<&Outage>,
    (width, bars_width): (usize, usize),
    now_ms: TimestampMs,
    theme: &Theme,
) -> Line<'static> {
    const INDENT: &str = "  ";
    let room = width.saturating_sub(width_of(INDENT));
    let mut spans = vec![Span::raw(INDENT)];
    if let Some(down) = down {
        spans.extend(fit_pieces(
            outage_text::full_pieces(down, theme),
            " · ",
            theme.dim(),
            room,
        ));
        return Line::from(spans);
    }
    if host.gpus.is_empty() {
        return Line::from(spans);
    }
    let bar_style = theme.chart(crate::theme::Series::Utilization);
    let mut bars: String = host
        .gpus
        .iter()
        .take(MAX_BARS)
        .map(|g| g.latest.utilization_gpu_pct.map_or('·', level_char))
        .collect();
    if host.gpus.len() > MAX_BARS {
        bars.push('+');
    }
    let pad = bars_width.saturating_sub(width_of(&bars));
    bars.extend(std::iter::repeat_n(' ', pad));
    let label = "GPU ";
    let used = width_of(label) + width_of(&bars);
    if used > room {
        return Line::from(spans);
    }
    spans.push(Span::styled(label, theme.dim()));
    spans.push(Span::styled(bars, bar_style));
    // The trail covers the history there is, in whole minutes, up to ten.
    let oldest_ms = host
        .gpus
        .iter()
        .filter_map(|g| g.history.points().next().map(|p| p.at_ms))
        .min()
        .unwrap_or(now_ms);
    let minutes = now_ms
        .saturating_sub(oldest_ms)
        .div_ceil(60_000)
        .clamp(1, TRAIL_WINDOW_MS / 60_000);
    let trail_label = format!("  {minutes}m ");
    let columns = room
        .saturating_sub(used + width_of(&trail_label))
        .min(TRAIL_MAX_COLUMNS);
    if columns >= 10 {
        let slices = utilization_slices(
            host.gpus.iter().map(|g| &g.history),
            now_ms,
            minutes * 60_000,
            columns,
        );
        spans.push(Span::styled(trail_label, theme.dim()));
        spans.push(Span::styled(blocks(&slices), bar_style));
    }
    Line::from(spans)
}
