//! The host view: a header, a grid of GPU cards, charts of the selected GPU, its findings and
//! its processes, laid out so that each keeps a useful height (see [`layout`]).

use rust_i18n::t;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row, Table, TableState};

use crate::app::model::{HostFocus, Model};
use crate::fleet::host::{HostState, HostStatus};
use crate::theme::Theme;
use crate::ui::format::{clean, fit};
use crate::ui::job_line::ShownElsewhere;
use crate::ui::{charts, findings, gpu_card, job_sparks, scroll};

/// Most cards per grid row (8 GPUs fit as two rows of four on a 160-column terminal).
const MAX_COLUMNS: u16 = 4;
/// The cells of the header line a host's notice keeps from its facts (two of them the gap
/// before it).
const NOTICE_ROOM: usize = 32;
/// From this width the findings sit beside the processes rather than above them.
const SIDE_BY_SIDE_FROM: u16 = 120;
/// The fewest rows of a findings pane worth drawing above the processes (three of text).
const FINDINGS_MIN: u16 = 5;
/// The fewest rows of the charts worth drawing (three inside their frames).
const CHARTS_MIN: u16 = 5;

/// Where the host view puts its parts; a part left out has no area.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HostAreas {
    pub header: Rect,
    /// The GPU cards: `columns` per row, `card_rows` rows (none when the panes below need the
    /// room and have the focus).
    pub cards: Rect,
    pub columns: u16,
    pub card_rows: u16,
    pub charts: Option<Rect>,
    pub findings: Option<Rect>,
    pub processes: Option<Rect>,
}

/// The host view's layout. On a short screen (80x24) what matters goes first: the GPU cards,
/// then the findings (all their rows where they fit: a finding's action is the point), then the
/// processes; the charts only where all three keep their room, shrunk before they go. Below
/// that (60x15) the cards give their room to the processes and findings while one of those has
/// the focus (Tab).
pub fn layout(area: Rect, model: &Model, host: &HostState, theme: &Theme) -> HostAreas {
    let big = area.height >= 40;
    let has_findings = host.has_any_findings();
    let focus = match model.host_focus {
        HostFocus::Findings if !has_findings => HostFocus::Gpus,
        focus => focus,
    };
    let side_by_side = has_findings && area.width >= SIDE_BY_SIDE_FROM;
    let procs_min: u16 = if big { 8 } else { 5 };
    let panes_min = if has_findings && !side_by_side {
        procs_min + FINDINGS_MIN
    } else {
        procs_min
    };
    // The rows the panes need for the findings to show whole (beside the processes on a wide
    // screen, above them on a narrow one).
    let panes_wanted = if !has_findings {
        procs_min
    } else if side_by_side {
        let width = area.width - area.width * 2 / 5;
        procs_min.max(findings::height_wanted(host, width, theme))
    } else {
        let wanted = findings::height_wanted(host, area.width, theme).max(FINDINGS_MIN);
        procs_min.saturating_add(wanted)
    };
    let columns = (area.width / gpu_card::CARD_MIN_WIDTH).clamp(1, MAX_COLUMNS);
    let [header, rest] = Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(area);
    let card_rows_needed = (host.gpus.len() as u16).div_ceil(columns).max(1);
    let charts_wanted: u16 = if big { 14 } else { 7 };
    // A second row of cards only where the charts and panes keep their room.
    let room = rest
        .height
        .saturating_sub(charts_wanted.saturating_add(panes_wanted));
    let mut card_rows = card_rows_needed.min(room / gpu_card::CARD_HEIGHT).max(1);
    if focus != HostFocus::Gpus && rest.height < card_rows * gpu_card::CARD_HEIGHT + panes_min {
        card_rows = 0;
    }
    let below_cards = rest
        .height
        .saturating_sub(card_rows * gpu_card::CARD_HEIGHT);
    // The charts take what the panes leave, shrunk down to `CHARTS_MIN` before they go.
    let spare = below_cards.saturating_sub(panes_wanted);
    let charts_h = if spare >= CHARTS_MIN {
        spare.min(charts_wanted)
    } else {
        0
    };
    let [cards, charts, panes] = Layout::vertical([
        Constraint::Length(card_rows * gpu_card::CARD_HEIGHT),
        Constraint::Length(charts_h),
        Constraint::Min(0),
    ])
    .areas(rest);
    let (findings, processes) = if !has_findings {
        (None, Some(panes))
    } else if side_by_side {
        let [left, right] =
            Layout::horizontal([Constraint::Percentage(40), Constraint::Percentage(60)])
                .areas(panes);
        (Some(right), Some(left))
    } else if panes.height >= FINDINGS_MIN + 3 {
        // The findings get what their text wants, the processes keep at least two rows; the
        // focused findings take all but those.
        let wanted = if focus == HostFocus::Findings {
            u16::MAX
        } else {
            findings::height_wanted(host, panes.width, theme)
        };
        let most = panes
            .height
            .saturating_sub(procs_min.min(panes.height - FINDINGS_MIN));
        let height = wanted.clamp(FINDINGS_MIN.min(most), most);
        let [top, bottom] =
            Layout::vertical([Constraint::Length(height), Constraint::Min(0)]).areas(panes);
        (Some(top), Some(bottom))
    } else if focus == HostFocus::Processes {
        (None, Some(panes))
    } else {
        (Some(panes), None)
    };
    HostAreas {
        header,
        cards,
        columns,
        card_rows,
        charts: (charts_h > 0).then_some(charts),
        findings,
        processes,
    }
}

pub fn draw(frame: &mut Frame, area: Rect, model: &Model, host_id: usize, theme: &Theme) {
    let Some(host) = model.fleet.hosts.get(host_id) else {
        return;
    };
    let areas = layout(area, model, host, theme);
    draw_header(frame, areas.header, model, host, host_id, theme);
    if host.gpus.is_empty() {
        let text = match host.lost_raw() {
            Some(raw) => t!("host.no_readings", raw = clean(raw)),
            None => t!("host.waiting"),
        };
        frame.render_widget(
            Paragraph::new(Span::styled(text, theme.dim())).block(
                Block::default()
                    .borders(Borders::ALL)
                    .border_style(theme.border()),
            ),
            areas.cards,
        );
    } else {
        draw_cards(frame, &areas, model, host_id, theme);
        if let Some(chart_area) = areas.charts {
            let selected = model.gpu_cursor.min(host.gpus.len() - 1);
            charts::draw(
                frame,
                chart_area,
                &host.gpus[selected],
                model.fleet.now_ms,
                theme,
            );
        }
    }
    if let Some(findings_area) = areas.findings {
        let focused = model.host_focus == HostFocus::Findings;
        let scroll = model.screen.findings_scroll;
        findings::draw(frame, findings_area, host, (scroll, focused), theme);
    }
    if let Some(procs) = areas.processes {
        draw_processes(frame, procs, model, host_id, theme);
    }
}

fn draw_header(
    frame: &mut Frame,
    area: Rect,
    model: &Model,
    host: &HostState,
    host_id: usize,
    theme: &Theme,
) {
    let status = model.status(host_id);
    let mut spans = vec![
        Span::styled(format!(" {} ", clean(&host.name)), theme.title()),
        Span::styled(
            format!(
                " {} ",
                status
                    .as_ref()
                    .map(|s| s.words().localized())
                    .unwrap_or_default()
            ),
            theme.base(),
        ),
    ];
    let message = if let Some(raw) = host.lost_raw() {
        Some((clean(raw), theme.critical(), false))
    } else if let Some((_, line)) = host.kernel_lines.back() {
        Some((clean(line), theme.critical(), false))
    } else {
        host.notices.last().map(|notice| {
            let text = clean(&notice.localized());
            (text, theme.warning(), true)
        })
    };
    let mut used: usize = spans.iter().map(Span::width).sum();
    let room = usize::from(area.width);
    // A notice is said nowhere else: the facts leave it room (`NOTICE_ROOM` cells, or all it
    // needs), dropping those that no longer fit.
    let facts_room = match &message {
        Some((text, _, true)) => {
            room.saturating_sub((crate::cells::width(text) + 2).min(NOTICE_ROOM))
        }
        _ => room,
    };
    // Facts are shown whole or not at all: a version cut short reads as another version.
    let whole_or_none = |spans: &mut Vec<Span<'static>>, used: &mut usize, text: String, style| {
        let width = Span::raw(text.as_str()).width();
        if *used + width <= facts_room {
            *used += width;
            spans.push(Span::styled(text, style));
        }
    };
    // A link that is down says why in the interface's language when it can.
    let reason = host.down_reason().map(|w| w.localized()).or_else(|| {
        status
            .as_ref()
            .and_then(|s| s.reason_words().map(|w| w.localized()))
    });
    if let Some(reason) = reason {
        let text = format!("({}) ", clean(&reason));
        whole_or_none(&mut spans, &mut used, text, theme.warning());
    }
    let info = &host.info;
    // The facts in the order shown, each with its rank: where a notice needs room, the first
    // ranked are kept (the ssh target, by which the user chose the host, goes first).
    let mut facts: Vec<(u8, String)> = Vec::new();
    if !info.source.is_empty() {
        facts.push((3, clean(&info.source_words().localized())));
    }
    if let Some(d) = &info.driver_version {
        facts.push((0, t!("host.driver", version = clean(d)).into_owned()));
    }
    if let Some(c) = &info.cuda_version {
        facts.push((1, format!("CUDA {}", clean(c))));
    }
    facts.push((
        2,
        crate::ui::format::count(host.gpus.len(), crate::ui::format::Noun::Gpu),
    ));
    // Its dead-man switch: kept before the rest while it ought to be armed and is not.
    if let Some(dead_man) = &host.dead_man {
        let rank = if dead_man.warns() { 0 } else { 4 };
        facts.push((rank, clean(&dead_man.words().localized())));
    }
    // What the host said it is: a container's `reboot` restarts nothing.
    if let Some(kind) = host.kind {
        facts.push((4, kind.words().localized()));
    }
    let makes_room = matches!(message, Some((_, _, true)));
    let kept = if makes_room {
        kept_by_rank(&facts, facts_room.saturating_sub(used))
    } else {
        vec![true; facts.len()]
    };
    let mut first = true;
    for (i, ((_, fact), kept)) in facts.into_iter().zip(kept).enumerate() {
        if !kept {
            continue;
        }
        let lead = if makes_room { first } else { i == 0 };
        first = false;
        let text = if lead { fact } else { format!(" · {fact}") };
        whole_or_none(&mut spans, &mut used, text, theme.dim());
    }
    // Text, cut with an ellipsis where the line ends.
    if let Some((text, style, _)) = message {
        let left = room.saturating_sub(used + 2);
        if left >= 8 {
            spans.push(Span::styled(format!("  {}", fit(&text, left)), style));
        }
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// Which of `facts` (rank, text) fit in `room` cells joined by ` · `, the lowest ranks taken
/// first.
fn kept_by_rank(facts: &[(u8, String)], room: usize) -> Vec<bool> {
    let mut order: Vec<usize> = (0..facts.len()).collect();
    order.sort_by_key(|&i| facts[i].0);
    let mut kept = vec![false; facts.len()];
    let mut width = 0;
    for i in order {
        let more = crate::cells::width(&facts[i].1) + if width == 0 { 0 } else { 3 };
        if width + more <= room {
            width += more;
            kept[i] = true;
        }
    }
    kept
}

/// Where each visible card is, with the GPU it shows: the rows around the selected GPU.
pub fn card_rects(areas: &HostAreas, model: &Model, host: &HostState) -> Vec<(Rect, usize)> {
    let (area, columns, rows) = (areas.cards, areas.columns, areas.card_rows);
    if rows == 0 || host.gpus.is_empty() {
        return Vec::new();
    }
    let selected = model.gpu_cursor.min(host.gpus.len() - 1);
    let selected_row = selected as u16 / columns;
    let first_row = selected_row.saturating_sub(rows - 1);
    let card_width = area.width / columns;
    (0..host.gpus.len())
        .filter_map(|i| {
            let row = i as u16 / columns;
            if row < first_row || row >= first_row + rows {
                return None;
            }
            let col = i as u16 % columns;
            let rect = Rect {
                x: area.x + col * card_width,
                y: area.y + (row - first_row) * gpu_card::CARD_HEIGHT,
                width: if col == columns - 1 {
                    area.width - col * card_width
                } else {
                    card_width
                },
                height: gpu_card::CARD_HEIGHT,
            };
            Some((rect, i))
        })
        .collect()
}

fn draw_cards(frame: &mut Frame, areas: &HostAreas, model: &Model, host_id: usize, theme: &Theme) {
    let Some(host) = model.fleet.hosts.get(host_id) else {
        return;
    };
    let last_known = model.status(host_id) != Some(HostStatus::Live);
    let selected = model.gpu_cursor.min(host.gpus.len().saturating_sub(1));
    for (rect, i) in card_rects(areas, model, host) {
        let ctx = gpu_card::CardContext {
            selected: i == selected,
            last_known,
            now_ms: model.fleet.now_ms,
        };
        gpu_card::draw(frame, rect, &host.gpus[i], ctx, theme);
    }
}

/// The process table's rows (below its border and header) and the index of the first shown:
/// from the top, or scrolled as far as keeps the cursor on screen while the table has focus.
pub fn process_rows(area: Rect, model: &Model, host: &HostState) -> (Rect, usize) {
    let rows = Rect {
        x: area.x + 1,
        y: area.y + 2,
        width: area.width.saturating_sub(2),
        height: area.height.saturating_sub(3),
    };
    let first = if model.host_focus == HostFocus::Processes && !host.processes.is_empty() {
        let cursor = model.process_cursor.min(host.processes.len() - 1);
        scroll::window_start(cursor, usize::from(rows.height))
    } else {
        0
    };
    (rows, first)
}

/// True when the host is read but its vendor tool lists no processes (no list has come, and
/// none of its GPUs is NVIDIA's, whose list always comes): an empty table would read as "no
/// processes".
fn unlisted_processes(host: &HostState) -> bool {
    host.processes_at_ms.is_none()
        && !host.gpus.is_empty()
        && host
            .gpus
            .iter()
            .all(|g| g.latest.vendor != crate::telemetry::accel::Vendor::Nvidia)
}

fn draw_processes(frame: &mut Frame, area: Rect, model: &Model, host_id: usize, theme: &Theme) {
    let Some(host) = model.fleet.hosts.get(host_id) else {
        return;
    };
    let focused = model.host_focus == HostFocus::Processes;
    let (rows_area, first) = process_rows(area, model, host);
    let header = Row::new(
        t!("host.processes_header")
            .split('|')
            .map(|h| Cell::from(h.to_string())),
    )
    .style(theme.header());
    let unlisted = unlisted_processes(host).then(|| {
        Row::new(vec![
            Cell::from(String::new()),
            Cell::from(String::new()),
            Cell::from(t!("accel_processes.unlisted").into_owned()),
        ])
        .style(theme.dim())
    });
    let rows = host.processes.iter().map(|p| {
        let gpu = host
            .gpus
            .iter()
            .find(|g| p.runs_on(&g.latest))
            .map_or_else(|| "?".to_string(), |g| g.latest.index.to_string());
        Row::new(vec![
            Cell::from(p.pid.to_string()),
            Cell::from(gpu),
            Cell::from(fit(
                &clean(crate::ui::job_line::process_label(
                    host,
                    p.pid,
                    &p.gpu_uuid,
                    &p.name,
                )),
                40,
            )),
            Cell::from(
                p.used_memory_mib
                    .map_or_else(|| "-".to_string(), |m| m.to_string()),
            ),
        ])
    });
    let rows = rows.chain(unlisted);
    let title = scroll::title(
        &t!("pane.processes"),
        first,
        usize::from(rows_area.height),
        host.processes.len(),
    );
    // The job's loss sparklines right of the title, a cell of border between them.
    let sparks_room =
        usize::from(area.width.saturating_sub(2)).saturating_sub(crate::cells::width(&title) + 1);
    let sparks = crate::ui::job_line::shown_job(host)
        .map(|job| job_sparks::losses(job, sparks_room, theme))
        .unwrap_or_default();
    let elsewhere = ShownElsewhere {
        loss: sparks.loss,
        eval: sparks.eval,
    };
    let mut block = Block::default()
        .borders(Borders::ALL)
        .border_style(if focused {
            theme.border_focused()
        } else {
            theme.border()
        })
        .title(Span::styled(title, theme.title()));
    if !sparks.spans.is_empty() {
        block = block.title_top(Line::from(sparks.spans).right_aligned());
    }
    if let Some(job) = crate::ui::job_line::job_line(model, host_id, elsewhere) {
        let room = usize::from(area.width.saturating_sub(4));
        block = block.title_bottom(Span::styled(fit(&job, room), theme.title()));
    }
    let table = Table::new(
        rows,
        [
            Constraint::Length(8),
            Constraint::Length(4),
            Constraint::Min(12),
            Constraint::Length(9),
        ],
    )
    .header(header)
    .row_highlight_style(if focused {
        theme.selected()
    } else {
        theme.base()
    })
    .block(block);
    let mut state = TableState::default().with_offset(first);
    if focused && !host.processes.is_empty() {
        state.select(Some(model.process_cursor.min(host.processes.len() - 1)));
    }
    frame.render_stateful_widget(table, area, &mut state);
}
