//! Drawing: `draw(&Model, &Theme)` only reads; one file per screen or widget.

use rust_i18n::t;

pub mod alerts;
pub mod audit;
pub mod banner;
pub mod charts;
pub mod check;
pub mod cost;
pub mod cost_cells;
pub mod findings;
pub mod fleet;
pub mod fleet_columns;
pub mod fleet_row;
pub mod fleet_totals;
pub mod format;
pub mod gpu_card;
pub mod grid;
pub mod help;
pub mod host;
pub mod job_line;
pub mod job_sparks;
pub mod outage_text;
pub mod panel;
pub mod plain_box;
pub mod prompt;
pub mod quit_ask;
pub mod regions;
pub mod release;
pub mod row_cache;
pub mod runbook_pane;
pub mod runbooks;
pub mod scroll;
pub mod trail;
pub mod wrap;

use std::borrow::Cow;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};

use crate::app::keymap::InputMode;
use crate::app::model::{Model, View};
use crate::app::panel::{HostSource, Panel};
use crate::fleet::host::HostStatus;
use crate::theme::Theme;

/// The screen's rows: the top bar, the warning banner, the body (a view and whatever is open
/// over it) and the bottom bar.
pub fn areas(area: Rect, model: &Model, theme: &Theme) -> [Rect; 4] {
    Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(banner::height(model, theme)),
        Constraint::Min(3),
        Constraint::Length(1),
    ])
    .areas(area)
}

pub fn draw(frame: &mut Frame, model: &Model, theme: &Theme) {
    let area = frame.area();
    frame.render_widget(Block::default().style(theme.base()), area);
    let [top, warnings, body, bottom] = areas(area, model, theme);
    draw_top(frame, top, model, theme);
    banner::draw(frame, warnings, model, theme);
    match model.view {
        View::Fleet => fleet::draw(frame, body, model, theme),
        View::Host(id) => host::draw(frame, body, model, id, theme),
    }
    draw_bottom(frame, bottom, model, theme);
    if model.mode == InputMode::Help {
        help::draw(frame, body, model.screen.help_scroll, theme);
    }
    if model.mode == InputMode::Cost {
        cost::draw(frame, body, model, theme);
    }
    match &model.panel {
        Some(Panel::Picker(picker)) => runbooks::draw(frame, body, model, picker, theme),
        Some(Panel::Runbook(run)) => runbook_pane::draw(frame, body, run, theme),
        Some(Panel::Check(check)) => check::draw(frame, body, check, theme),
        Some(Panel::Audit(view)) => audit::draw(frame, body, view, theme),
        Some(Panel::Alerts { scroll }) => alerts::draw(frame, body, &model.alerts, *scroll, theme),
        None => {}
    }
    if model.dialog.is_some() {
        release::draw(frame, body, model, theme);
    }
    if !model.prompts.is_empty() {
        prompt::draw(frame, body, model, theme);
    }
    if let Some(hosts) = &model.quit_ask {
        quit_ask::draw(frame, body, hosts, theme);
    }
}

fn draw_top(frame: &mut Frame, area: Rect, model: &Model, theme: &Theme) {
    let (mut live, mut down) = (0, 0);
    let mut gpus = 0;
    for (i, h) in model.fleet.watched() {
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
            t!(
                "top.summary",
                hosts = format::count(model.fleet.watched().count(), format::Noun::Host),
                gpus = format::count(gpus, format::Noun::Gpu),
                live = live
            ),
            theme.base(),
        ),
    ];
    if down > 0 {
        spans.push(Span::styled(t!("top.down", down = down), theme.critical()));
    }
    if model.fleet.options.read_only {
        spans.push(Span::styled(t!("top.read_only"), theme.warning()));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn draw_bottom(frame: &mut Frame, area: Rect, model: &Model, theme: &Theme) {
    let line = match model.input_mode() {
        InputMode::Filter => Line::from(vec![
            Span::styled(t!("bottom.filter"), theme.filter()),
            Span::styled(format::clean(&model.filter), theme.filter()),
            Span::styled("▏", theme.filter()),
            Span::styled(t!("bottom.filter_keys"), theme.dim()),
        ]),
        _ => {
            let mut spans = Vec::new();
            let mut used = 0;
            if let Some(notice) = &model.notice {
                // A notice longer than the bar is cut between words, the cut marked.
                let room = usize::from(area.width).saturating_sub(2);
                let clean = format::clean(&notice.text);
                let text = format!(" {} ", crate::cells::fit_words(&clean, room));
                used += format::width_of(&text);
                let style = if notice.warning {
                    theme.warning()
                } else {
                    theme.ok()
                };
                spans.push(Span::styled(text, style));
            }
            if !model.filter.is_empty() {
                let text = format!(" /{} ", format::clean(&model.filter));
                used += format::width_of(&text);
                spans.push(Span::styled(text, theme.filter()));
            }
            let room = (area.width as usize).saturating_sub(used);
            spans.push(Span::styled(hints(model, room), theme.dim()));
            Line::from(spans)
        }
    };
    frame.render_widget(Paragraph::new(line), area);
}

/// The key hints of the bottom bar that fit in `room` columns, least needed dropped first; the
/// release hint only where releasing is possible.
fn hints(model: &Model, room: usize) -> String {
    // (keys, what, drop order: lower goes first)
    let mut items: Vec<(&str, Cow<str>, u8)> = match model.view {
        View::Fleet => vec![
            ("↑↓", t!("hint.select"), 3),
            ("Enter", t!("hint.open"), 6),
            ("/", t!("hint.filter"), 5),
            ("s", t!("hint.sort"), 4),
        ],
        // Tab stays longest: on a short screen it is how the processes and findings get room.
        View::Host(_) => vec![
            ("←→", t!("hint.gpu"), 4),
            ("Tab", t!("hint.pane"), 9),
            ("Esc", t!("hint.back"), 6),
        ],
    };
    // What acts on a host goes first when room is short (`?` lists it too); the runbooks last.
    items.push(("p", t!("hint.runbooks"), 2));
    if model.source != HostSource::Demo {
        items.push(("c", t!("hint.check"), 1));
    }
    items.push(("a", t!("hint.audit"), 0));
    items.push(("!", t!("hint.alerts"), 0));
    items.push(("$", t!("hint.cost"), 7));
    if !model.fleet.options.read_only {
        items.push(("R", t!("hint.release"), 7));
    }
    items.push(("?", t!("hint.help"), 8));
    items.push(("q", t!("hint.quit"), 8));
    let text = |items: &[(&str, Cow<str>, u8)]| {
        let joined = items
            .iter()
            .map(|(key, what, _)| format!("{key} {what}"))
            .collect::<Vec<_>>()
            .join(" · ");
        format!(" {joined}")
    };
    while format::width_of(&text(&items)) > room && !items.is_empty() {
        let Some(pos) = items
            .iter()
            .enumerate()
            .min_by_key(|(_, item)| item.2)
            .map(|(pos, _)| pos)
        else {
            break;
        };
        items.remove(pos);
    }
    text(&items)
}
