//! Acting on a host from the console: the keys that belong to the open panel (runbook picker,
//! runbook pane, check, audit log) go to its handler. Pure: the runtime's ops bridge runs what
//! these panels ask for.

use rust_i18n::t;

use crate::app::action::Action;
use crate::app::command::Command;
use crate::app::keymap::InputMode;
use crate::app::model::Model;
use crate::app::pane_common::close;
use crate::app::panel::Panel;
use crate::app::{alerts_view, audit_view, check_pane, runbook_pane};

/// The actions that belong to the open panel (or open one); `None` for the rest.
pub fn apply(model: &mut Model, action: &Action) -> Option<Vec<Command>> {
    let commands = match action {
        Action::OpenRunbooks => runbook_pane::open_picker(model),
        Action::CheckHost => check_pane::start(model),
        Action::OpenAudit => audit_view::open(model),
        Action::WriteReport => write_report(model),
        Action::OpenAlerts => alerts_view::open(model),
        Action::RunbookChoose => runbook_pane::choose(model),
        Action::PanelBack => runbook_pane::back(model),
        Action::StepConfirm => runbook_pane::answer(model, true),
        Action::StepDecline => runbook_pane::answer(model, false),
        Action::StopRun => stop(model),
        Action::PanelClose => close(model),
        Action::Up
        | Action::Down
        | Action::PageUp
        | Action::PageDown
        | Action::Top
        | Action::Bottom
            if model.panel.is_some() =>
        {
            navigate(model, action);
            Vec::new()
        }
        Action::TextInput(c) if model.input_mode() == InputMode::RunbookParams => {
            runbook_pane::type_char(model, Some(*c));
            Vec::new()
        }
        Action::TextBackspace if model.input_mode() == InputMode::RunbookParams => {
            runbook_pane::type_char(model, None);
            Vec::new()
        }
        _ => return None,
    };
    Some(commands)
}

/// Esc / `x` while something runs: asks it to stop; a second press leaves it behind.
fn stop(model: &mut Model) -> Vec<Command> {
    match &model.panel {
        Some(Panel::Runbook(_)) => runbook_pane::stop(model),
        Some(Panel::Check(_)) => check_pane::stop(model),
        _ => Vec::new(),
    }
}

/// Moves the picker's cursor or scrolls the open panel.
fn navigate(model: &mut Model, action: &Action) {
    const PAGE: i64 = 10;
    let delta = match action {
        Action::Up => -1,
        Action::Down => 1,
        Action::PageUp => -PAGE,
        Action::PageDown => PAGE,
        Action::Top => i64::MIN / 2,
        _ => i64::MAX / 2,
    };
    match model.panel.as_mut() {
        Some(Panel::Picker(picker)) => picker.move_cursor(delta),
        Some(Panel::Runbook(run)) => run.scroll_by(delta),
        Some(Panel::Check(check)) => check.scroll_by(delta),
        Some(Panel::Audit(view)) => view.scroll_by(delta),
        Some(Panel::Alerts { scroll }) => {
            *scroll = crate::app::cursor::step(*scroll, delta, model.alerts.entries.len());
        }
        None => {}
    }
}

/// `e`: the selected host's incident bundle, written in the background (the answer is a
/// notice with the folder).
fn write_report(model: &mut Model) -> Vec<Command> {
    let Some(host) = crate::app::pane_common::target_host(model)
        .and_then(|h| model.fleet.hosts.get(h))
        .map(|h| h.name.clone())
    else {
        return Vec::new();
    };
    model.notify(
        t!("notice.writing_report", host = host.as_str()).into_owned(),
        false,
    );
    vec![Command::WriteReport { host }]
}
