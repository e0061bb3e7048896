//! The one place that knows which key does what; the help screen is generated from `BINDINGS`.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use crate::app::action::Action;

/// What keys currently mean: normal navigation, typing a filter, or the help overlay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputMode {
    Normal,
    Filter,
    Help,
    /// A host-key question: y accepts, anything else declines.
    Confirm,
    /// Typing a passphrase or password.
    Secret,
}

/// (keys, what they do) for the help screen, in the order shown.
pub const BINDINGS: &[(&str, &str)] = &[
    ("↑ ↓ / k j", "move the selection"),
    ("← → / h l", "previous / next GPU in the host view"),
    ("PgUp PgDn", "move a page"),
    ("g / G", "first / last"),
    ("Enter", "open the selected host"),
    ("Esc / Backspace", "back to the fleet; clear the filter"),
    ("Tab", "switch pane (GPUs / processes)"),
    ("/", "filter hosts by name, GPU model or status"),
    ("s", "cycle the fleet sort order"),
    ("?", "this help"),
    ("q / Ctrl-C", "quit"),
];

/// Translates a key press into an action for the given mode; `None` for keys with no meaning.
pub fn action_for(key: KeyEvent, mode: InputMode) -> Option<Action> {
    if key.kind == KeyEventKind::Release {
        return None;
    }
    if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
        return Some(Action::Quit);
    }
    match mode {
        InputMode::Confirm => Some(match key.code {
            KeyCode::Char('y') | KeyCode::Char('Y') => Action::PromptAccept,
            _ => Action::PromptDecline,
        }),
        InputMode::Secret => match key.code {
            KeyCode::Enter => Some(Action::PromptAccept),
            KeyCode::Esc => Some(Action::PromptDecline),
            KeyCode::Backspace => Some(Action::TextBackspace),
            KeyCode::Char(c) if !c.is_control() => Some(Action::TextInput(c)),
            _ => None,
        },
        InputMode::Filter => filter_action(key),
        InputMode::Help => match key.code {
            KeyCode::Char('q') => Some(Action::Quit),
            _ => Some(Action::ToggleHelp),
        },
        InputMode::Normal => normal_action(key),
    }
}

fn filter_action(key: KeyEvent) -> Option<Action> {
    match key.code {
        KeyCode::Enter => Some(Action::FilterAccept),
        KeyCode::Esc => Some(Action::FilterCancel),
        KeyCode::Backspace => Some(Action::TextBackspace),
        KeyCode::Up => Some(Action::Up),
        KeyCode::Down => Some(Action::Down),
        KeyCode::Char(c) if !c.is_control() => Some(Action::TextInput(c)),
        _ => None,
    }
}

fn normal_action(key: KeyEvent) -> Option<Action> {
    Some(match key.code {
        KeyCode::Char('q') => Action::Quit,
        KeyCode::Up | KeyCode::Char('k') => Action::Up,
        KeyCode::Down | KeyCode::Char('j') => Action::Down,
        KeyCode::Left | KeyCode::Char('h') => Action::Left,
        KeyCode::Right | KeyCode::Char('l') => Action::Right,
        KeyCode::PageUp => Action::PageUp,
        KeyCode::PageDown => Action::PageDown,
        KeyCode::Home | KeyCode::Char('g') => Action::Top,
        KeyCode::End | KeyCode::Char('G') => Action::Bottom,
        KeyCode::Enter => Action::Open,
        KeyCode::Esc | KeyCode::Backspace => Action::Back,
        KeyCode::Tab | KeyCode::BackTab => Action::NextPane,
        KeyCode::Char('?') => Action::ToggleHelp,
        KeyCode::Char('s') => Action::CycleSort,
        KeyCode::Char('/') => Action::StartFilter,
        _ => return None,
    })
}
