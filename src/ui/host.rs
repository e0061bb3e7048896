//! The host view: a header, a grid of GPU cards, charts of the selected GPU and its processes.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row, Table, TableState};

use crate::app::model::{HostFocus, Model};
use crate::fleet::host::{HostState, HostStatus};
use crate::theme::Theme;
use crate::ui::format::{clean, fit};
use crate::ui::{charts, findings, gpu_card};

/// Most cards per grid row (8 GPUs fit as two rows of four on a 160-column terminal).
const MAX_COLUMNS: u16 = 4;

pub fn draw(frame: &mut Frame, area: Rect, model: &Model, host_id: usize, theme: &Theme) {
    let Some(host) = model.fleet.hosts.get(host_id) else {
        return;
    };
    let big = area.height >= 40;
    let charts_h: u16 = if big { 14 } else { 7 };
    let procs_min: u16 = if big { 8 } else { 5 };
    let columns = (area.width / gpu_card::CARD_MIN_WIDTH).clamp(1, MAX_COLUMNS);
    let card_rows_needed = (host.gpus.len() as u16).div_ceil(columns).max(1);
    let room = area.height.saturating_sub(1 + charts_h + procs_min);
    let card_rows = card_rows_needed.min((room / gpu_card::CARD_HEIGHT).max(1));
    let [header, cards, chart_area, procs] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(card_rows * gpu_card::CARD_HEIGHT),
        Constraint::Length(charts_h),
        Constraint::Min(3),
    ])
    .areas(area);

    draw_header(frame, header, model, host, host_id, theme);
    if host.gpus.is_empty() {
        let text = match host.lost_raw() {
            Some(raw) => format!("no readings: {}", clean(raw)),
            None => "waiting for the first sample…".to_string(),
        };
        frame.render_widget(
            Paragraph::new(Span::styled(text, theme.dim())).block(
                Block::default()
                    .borders(Borders::ALL)
                    .border_style(theme.border()),
            ),
            cards,
        );
    } else {
        draw_cards(frame, cards, model, host_id, columns, card_rows, theme);
        let selected = model.gpu_cursor.min(host.gpus.len() - 1);
        charts::draw(
            frame,
            chart_area,
            &host.gpus[selected],
            model.fleet.now_ms,
            theme,
        );
    }
    if host.findings.is_empty() {
        draw_processes(frame, procs, model, host, theme);
    } else if procs.width >= 120 {
        let [left, right] =
            Layout::horizontal([Constraint::Percentage(40), Constraint::Percentage(60)])
                .areas(procs);
        draw_processes(frame, left, model, host, theme);
        findings::draw(frame, right, host, theme);
    } else {
        let wanted = (host.findings.len() as u16 * 2 + 2).min(procs.height.saturating_sub(3));
        let [top, bottom] =
            Layout::vertical([Constraint::Length(wanted), Constraint::Min(3)]).areas(procs);
        findings::draw(frame, top, host, theme);
        draw_processes(frame, bottom, model, host, theme);
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
                status.as_ref().map(|s| s.text()).unwrap_or_default()
            ),
            theme.base(),
        ),
    ];
    if let Some(reason) = status.as_ref().and_then(|s| s.reason()) {
        spans.push(Span::styled(
            format!("({}) ", clean(reason)),
            theme.warning(),
        ));
    }
    let info = &host.info;
    let mut facts = Vec::new();
    if !info.source.is_empty() {
        facts.push(clean(&info.source));
    }
    if let Some(d) = &info.driver_version {
        facts.push(format!("driver {}", clean(d)));
    }
    if let Some(c) = &info.cuda_version {
        facts.push(format!("CUDA {}", clean(c)));
    }
    facts.push(format!("{} GPU", host.gpus.len()));
    spans.push(Span::styled(facts.join(" · "), theme.dim()));
    if let Some(raw) = host.lost_raw() {
        spans.push(Span::styled(format!("  {}", clean(raw)), theme.critical()));
    } else if let Some((_, line)) = host.kernel_lines.back() {
        spans.push(Span::styled(format!("  {}", clean(line)), theme.critical()));
    } else if let Some(notice) = host.notices.last() {
        spans.push(Span::styled(
            format!("  {}", clean(notice)),
            theme.warning(),
        ));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn draw_cards(
    frame: &mut Frame,
    area: Rect,
    model: &Model,
    host_id: usize,
    columns: u16,
    rows: u16,
    theme: &Theme,
) {
    let Some(host) = model.fleet.hosts.get(host_id) else {
        return;
    };
    let last_known = model.status(host_id) != Some(HostStatus::Live);
    let selected = model.gpu_cursor.min(host.gpus.len().saturating_sub(1));
    let selected_row = selected as u16 / columns;
    let first_row = selected_row.saturating_sub(rows - 1);
    let card_width = area.width / columns;
    for (i, gpu) in host.gpus.iter().enumerate() {
        let row = i as u16 / columns;
        if row < first_row || row >= first_row + rows {
            continue;
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
        let ctx = gpu_card::CardContext {
            selected: i == selected,
            last_known,
            now_ms: model.fleet.now_ms,
        };
        gpu_card::draw(frame, rect, gpu, ctx, theme);
    }
}

fn draw_processes(frame: &mut Frame, area: Rect, model: &Model, host: &HostState, theme: &Theme) {
    let focused = model.host_focus == HostFocus::Processes;
    let header =
        Row::new(["PID", "GPU", "PROCESS", "VRAM MiB"].map(Cell::from)).style(theme.header());
    let rows = host.processes.iter().map(|p| {
        let gpu = host
            .gpus
            .iter()
            .find(|g| g.latest.uuid == p.gpu_uuid)
            .map_or_else(|| "?".to_string(), |g| g.latest.index.to_string());
        Row::new(vec![
            Cell::from(p.pid.to_string()),
            Cell::from(gpu),
            Cell::from(fit(&clean(&p.name), 40)),
            Cell::from(
                p.used_memory_mib
                    .map_or_else(|| "-".to_string(), |m| m.to_string()),
            ),
        ])
    });
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
    .block(
        Block::default()
            .borders(Borders::ALL)
            .border_style(if focused {
                theme.border_focused()
            } else {
                theme.border()
            })
            .title(Span::styled(
                format!(" Processes ({}) ", host.processes.len()),
                theme.title(),
            )),
    );
    let mut state = TableState::default();
    if focused && !host.processes.is_empty() {
        state.select(Some(model.process_cursor.min(host.processes.len() - 1)));
    }
    frame.render_stateful_widget(table, area, &mut state);
}
