//! The mouse. A left click selects what is under it (a host row, a GPU card, a process row, the
//! findings pane); a click on the host row already selected opens it, so a double click opens
//! too. The wheel scrolls the list or pane under the pointer, which takes the focus, or the
//! overlay that is open (help, runbooks, a run's output, a check, the audit log, alerts).
//! Where things are comes from the last frame's [`Regions`](crate::app::screen::Regions), so a
//! click means what the user saw. Prompts, dialogs, countdowns and the filter ignore the mouse:
//! a stray click must never answer a question or cancel anything.

use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::Position;

use crate::app::action::Action;
use crate::app::keymap::InputMode;
use crate::app::model::{HostFocus, Model, View};

/// Lines one notch of the wheel scrolls an overlay's text.
pub const WHEEL_LINES: usize = 3;

/// What a mouse event does: the model's selection changed in place, and the actions to apply
/// after (opening a host, scrolling).
pub fn on_mouse(model: &mut Model, mouse: MouseEvent) -> Vec<Action> {
    let at = Position::new(mouse.column, mouse.row);
    let wheel = match mouse.kind {
        MouseEventKind::ScrollUp => Some(Action::Up),
        MouseEventKind::ScrollDown => Some(Action::Down),
        MouseEventKind::Down(MouseButton::Left) => None,
        _ => return Vec::new(),
    };
    match model.input_mode() {
        InputMode::Normal => {}
        InputMode::Help
        | InputMode::Runbooks
        | InputMode::RunbookRunning
        | InputMode::RunbookDone
        | InputMode::CheckRunning
        | InputMode::CheckDone
        | InputMode::Audit
        | InputMode::Alerts => {
            return wheel.map_or_else(Vec::new, |action| {
                let notches = if model.input_mode() == InputMode::Runbooks {
                    1
                } else {
                    WHEEL_LINES
                };
                vec![action; notches]
            });
        }
        _ => return Vec::new(),
    }
    match (model.view, wheel) {
        (View::Fleet, wheel) => on_fleet(model, at, wheel),
        (View::Host(host), wheel) => on_host(model, host, at, wheel),
    }
}

fn on_fleet(model: &mut Model, at: Position, wheel: Option<Action>) -> Vec<Action> {
    let Some(rows) = model.screen.regions.fleet_rows else {
        return Vec::new();
    };
    if let Some(action) = wheel {
        // Anywhere over the table (its rows and the lines around them).
        let table = rows.rows.outer(ratatui::layout::Margin::new(1, 2));
        return if table.contains(at) {
            vec![action]
        } else {
            Vec::new()
        };
    }
    match rows.item_at(at) {
        Some(pos) if pos == model.fleet_cursor => vec![Action::Open],
        Some(pos) if pos < model.visible_hosts().len() => {
            model.fleet_cursor = pos;
            model.mark_dirty();
            Vec::new()
        }
        _ => Vec::new(),
    }
}

fn on_host(model: &mut Model, host: usize, at: Position, wheel: Option<Action>) -> Vec<Action> {
    let regions = &model.screen.regions;
    let on_card = regions
        .cards
        .iter()
        .find(|(rect, _)| rect.contains(at))
        .map(|(_, gpu)| *gpu);
    let on_findings = regions.findings.is_some_and(|pane| pane.area.contains(at));
    let processes = regions.processes;
    let on_processes = processes.is_some_and(|list| {
        list.rows
            .outer(ratatui::layout::Margin::new(1, 2))
            .contains(at)
    });
    let focus = if on_card.is_some() {
        HostFocus::Gpus
    } else if on_findings {
        HostFocus::Findings
    } else if on_processes {
        HostFocus::Processes
    } else {
        return Vec::new();
    };
    model.host_focus = focus;
    model.mark_dirty();
    if let Some(action) = wheel {
        let action = match (focus, action) {
            (HostFocus::Gpus, Action::Up) => Action::Left,
            (HostFocus::Gpus, _) => Action::Right,
            (_, action) => action,
        };
        return vec![action];
    }
    if let Some(gpu) = on_card {
        model.gpu_cursor = gpu;
    }
    if let Some(row) = processes.and_then(|list| list.item_at(at)) {
        let count = model.fleet.hosts.get(host).map_or(0, |h| h.processes.len());
        if row < count {
            model.process_cursor = row;
        }
    }
    Vec::new()
}
