//! Drawing: `draw(&Model, &Theme)` only reads; one file per screen or widget.

pub mod charts;
pub mod findings;
pub mod fleet;
pub mod format;
pub mod gpu_card;
pub mod help;
pub mod host;
pub mod prompt;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};

use crate::app::host::HostStatus;
use crate::app::keymap::InputMode;
use crate::app::model::{Model, View};
use crate::theme::Theme;

pub fn draw(frame: &mut Frame, model: &Model, theme: &Theme) {
    let area = frame.area();
    frame.render_widget(Block::default().style(theme.base()), area);
    let [top, body, bottom] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(1),
    ])
    .areas(area);
    draw_top(frame, top, model, theme);
    match model.view {
        View::Fleet => fleet::draw(frame, body, model, theme),
        View::Host(id) => host::draw(frame, body, model, id, theme),
    }
    draw_bottom(frame, bottom, model, theme);
    if model.input_mode() == InputMode::Help {
        help::draw(frame, body, theme);
    }
    if !model.prompts.is_empty() {
        prompt::draw(frame, body, model, theme);
    }
}

fn draw_top(frame: &mut Frame, area: Rect, model: &Model, theme: &Theme) {
    let (mut live, mut down) = (0, 0);
    let mut gpus = 0;
    for (i, h) in model.hosts.iter().enumerate() {
        gpus += h.gpus.len();
        match model.status(i) {
            Some(HostStatus::Live) => live += 1,
            Some(HostStatus::Unreachable { .. } | HostStatus::Lost { .. }) => down += 1,
            _ => {}
        }
    }
    let mut spans = vec![
        Span::styled(" gpufleet ", theme.title()),
        Span::styled(
            format!(" {} hosts · {gpus} GPUs · {live} live", model.hosts.len()),
            theme.base(),
        ),
    ];
    if down > 0 {
        spans.push(Span::styled(format!(" · {down} down"), theme.critical()));
    }
    if model.options.read_only {
        spans.push(Span::styled(" · read-only", theme.warning()));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn draw_bottom(frame: &mut Frame, area: Rect, model: &Model, theme: &Theme) {
    let line = match model.input_mode() {
        InputMode::Filter => Line::from(vec![
            Span::styled(" filter: /", theme.filter()),
            Span::styled(format::clean(&model.filter), theme.filter()),
            Span::styled("▏", theme.filter()),
            Span::styled("  Enter keeps · Esc clears", theme.dim()),
        ]),
        _ => {
            let mut spans = Vec::new();
            if !model.filter.is_empty() {
                spans.push(Span::styled(
                    format!(" /{} ", format::clean(&model.filter)),
                    theme.filter(),
                ));
            }
            let hints = match model.view {
                View::Fleet => " ↑↓ select · Enter open · / filter · s sort · ? help · q quit",
                View::Host(_) => " ←→ GPU · Tab pane · Esc back · ? help · q quit",
            };
            spans.push(Span::styled(hints, theme.dim()));
            Line::from(spans)
        }
    };
    frame.render_widget(Paragraph::new(line), area);
}
