//! The pure state transition: `update(&mut Model, Event) -> Vec<Command>`; no I/O, no clocks.

use crate::app::action::Action;
use crate::app::command::Command;
use crate::app::event::{Event, HostEvent};
use crate::app::keymap::{InputMode, action_for};
use crate::app::model::{HostFocus, Model, View};
use crate::app::prompt::PromptAnswer;
use crate::diagnose::live_findings;

/// Rows a PageUp/PageDown moves.
const PAGE_ROWS: usize = 10;

pub fn update(model: &mut Model, event: Event) -> Vec<Command> {
    match event {
        Event::Host { host, event } => {
            // Events are stamped by our own reader threads, so they may move the clock forward.
            if let Some(at_ms) = event.at_ms() {
                model.now_ms = model.now_ms.max(at_ms);
            }
            if let HostEvent::Sample { at_ms, .. } = &event {
                model.note_sample(*at_ms);
            }
            if let Some(state) = model.hosts.get_mut(host) {
                state.apply(event);
                model.mark_dirty();
            }
            Vec::new()
        }
        Event::Tick { now_ms } => {
            model.advance_clock(now_ms);
            refresh_findings(model);
            Vec::new()
        }
        Event::Resize => {
            model.mark_dirty();
            Vec::new()
        }
        Event::Prompt(prompt) => {
            model.prompts.push_back(prompt);
            model.mark_dirty();
            Vec::new()
        }
        Event::Key(key) => match action_for(key, model.input_mode()) {
            Some(action) => {
                model.mark_dirty();
                apply_action(model, action)
            }
            None => Vec::new(),
        },
    }
}

/// Applies one user action.
pub fn apply_action(model: &mut Model, action: Action) -> Vec<Command> {
    match action {
        Action::Quit => return vec![Command::Quit],
        Action::ToggleHelp => {
            model.mode = match model.mode {
                InputMode::Help => InputMode::Normal,
                _ => InputMode::Help,
            };
        }
        Action::StartFilter => {
            model.view = View::Fleet;
            model.mode = InputMode::Filter;
        }
        Action::TextInput(c) if model.input_mode() == InputMode::Secret => {
            model.secret_input.push(c);
        }
        Action::TextBackspace if model.input_mode() == InputMode::Secret => {
            model.secret_input.pop();
        }
        Action::TextInput(c) => {
            model.filter.push(c);
            model.fleet_cursor = 0;
        }
        Action::TextBackspace => {
            model.filter.pop();
            model.fleet_cursor = 0;
        }
        Action::FilterAccept => model.mode = InputMode::Normal,
        Action::FilterCancel => {
            model.filter.clear();
            model.mode = InputMode::Normal;
            model.fleet_cursor = 0;
        }
        Action::PromptAccept => return answer_prompt(model, true),
        Action::PromptDecline => return answer_prompt(model, false),
        Action::CycleSort => {
            let selected = model.selected_host();
            model.sort = model.sort.next();
            keep_selection(model, selected);
        }
        Action::Open => {
            if model.view == View::Fleet
                && let Some(host) = model.selected_host()
            {
                model.view = View::Host(host);
                model.gpu_cursor = 0;
                model.process_cursor = 0;
                model.host_focus = HostFocus::Gpus;
            }
        }
        Action::Back => match model.view {
            View::Host(_) => model.view = View::Fleet,
            View::Fleet => {
                model.filter.clear();
                model.fleet_cursor = 0;
            }
        },
        Action::NextPane => {
            model.host_focus = match model.host_focus {
                HostFocus::Gpus => HostFocus::Processes,
                HostFocus::Processes => HostFocus::Gpus,
            };
        }
        Action::Up => move_cursor(model, -1),
        Action::Down => move_cursor(model, 1),
        Action::PageUp => move_cursor(model, -(PAGE_ROWS as i64)),
        Action::PageDown => move_cursor(model, PAGE_ROWS as i64),
        Action::Top => move_cursor(model, i64::MIN / 2),
        Action::Bottom => move_cursor(model, i64::MAX / 2),
        Action::Left => move_gpu(model, -1),
        Action::Right => move_gpu(model, 1),
    }
    Vec::new()
}

/// Recomputes every host's live findings (once a second: they are measured over windows of
/// tens of seconds, so a faster pace would show nothing new).
fn refresh_findings(model: &mut Model) {
    let now_ms = model.now_ms;
    let mut live = model.options.live.clone();
    live.interval_ms = model.options.interval_ms;
    let mut changed = false;
    for host in &mut model.hosts {
        let findings = live_findings(host, now_ms, &live);
        if findings != host.findings {
            host.findings = findings;
            changed = true;
        }
    }
    if changed {
        model.mark_dirty();
    }
}

/// Closes the prompt on top and sends its answer; a declined secret prompt answers `None`.
fn answer_prompt(model: &mut Model, accept: bool) -> Vec<Command> {
    let Some(prompt) = model.prompts.pop_front() else {
        return Vec::new();
    };
    let typed = std::mem::take(&mut model.secret_input);
    let answer = if prompt.wants_secret() {
        PromptAnswer::Secret(accept.then_some(typed))
    } else {
        PromptAnswer::HostKey(accept)
    };
    vec![Command::AnswerPrompt {
        id: prompt.id,
        answer,
    }]
}

fn keep_selection(model: &mut Model, selected: Option<usize>) {
    if let Some(host) = selected
        && let Some(pos) = model.visible_hosts().iter().position(|&h| h == host)
    {
        model.fleet_cursor = pos;
    }
}

fn step(cursor: usize, delta: i64, len: usize) -> usize {
    if len == 0 {
        return 0;
    }
    (cursor as i64 + delta).clamp(0, len as i64 - 1) as usize
}

fn move_cursor(model: &mut Model, delta: i64) {
    match model.view {
        View::Fleet => {
            let len = model.visible_hosts().len();
            model.fleet_cursor = step(model.fleet_cursor, delta, len);
        }
        View::Host(host) => match model.host_focus {
            HostFocus::Gpus => move_gpu(model, delta),
            HostFocus::Processes => {
                let len = model.hosts.get(host).map_or(0, |h| h.processes.len());
                model.process_cursor = step(model.process_cursor, delta, len);
            }
        },
    }
}

fn move_gpu(model: &mut Model, delta: i64) {
    if let View::Host(host) = model.view {
        let len = model.hosts.get(host).map_or(0, |h| h.gpus.len());
        model.gpu_cursor = step(model.gpu_cursor, delta, len);
    }
}
