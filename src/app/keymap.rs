//! The one place that knows which key does what; the help screen is generated from `BINDINGS`.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use crate::app::action::Action;
use crate::release::ReleaseAction;

/// What keys currently mean: normal navigation, typing a filter, or the help overlay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputMode {
    Normal,
    Filter,
    /// The help overlay: Esc or `?` closes it, `q` quits, ↑↓ PgUp PgDn g G scroll it; other keys
    /// do nothing.
    Help,
    /// A host-key question: y accepts, anything else declines.
    Confirm,
    /// Typing a passphrase or password.
    Secret,
    /// The cost panel is open: any key but `q` closes it.
    Cost,
    /// Quitting with dead-man switches armed: y or Enter leaves them armed, d disarms them, Esc
    /// stays.
    QuitAsk,
    /// An auto-release counts down: any key cancels it and does nothing else.
    Countdown,
    /// Release dialog, plan shown: Enter runs the backup, Tab / s / t switch the action.
    ReleaseReview,
    /// Release dialog: typing the host name.
    ReleaseTyping,
    /// Release dialog: the backup failed; `o` overrides, Esc or Enter cancels.
    ReleaseBackupFailed,
    /// Release dialog: planning, backing up or sending; Esc cancels (not while sending).
    ReleaseBusy,
    /// Release dialog: finished or refused; any key closes it.
    ReleaseDone,
    /// Runbook picker: ↑↓ choose, Enter takes it, Esc closes.
    Runbooks,
    /// Runbook parameters: typing a value, ↑↓ / Tab between them, Enter starts, Esc goes back.
    RunbookParams,
    /// A runbook runs: Esc / x stops it, ↑↓ scroll its output.
    RunbookRunning,
    /// A step waits for confirmation: y runs it, anything else cancels.
    RunbookConfirm,
    /// The run ended: ↑↓ scroll, Esc / Enter / x close.
    RunbookDone,
    /// A check runs: Esc / x stops it.
    CheckRunning,
    /// The check ended: ↑↓ scroll the report, Esc / Enter / x close.
    CheckDone,
    /// The audit log: ↑↓ scroll, Esc / a close.
    Audit,
    /// The alerts panel: ↑↓ scroll, Esc / ! close.
    Alerts,
}

/// (keys, the catalogue key of what they do) for the help screen, in the order shown. The
/// keys are written as the keyboard says them (`Esc`, `PgUp`); the help overlay translates the
/// few that are words (`any key`, `wheel`, `click`).
pub const BINDINGS: &[(&str, &str)] = &[
    ("↑ ↓ / k j", "help.move"),
    ("← → / h l", "help.prev_next_gpu"),
    ("PgUp PgDn", "help.page"),
    ("g / G", "help.first_last"),
    ("Enter", "help.open"),
    ("Esc / Backspace", "help.back"),
    ("Tab", "help.next_pane"),
    ("/", "help.filter"),
    ("s", "help.sort"),
    ("$", "help.cost"),
    ("R", "help.release"),
    ("r / S", "instance_action.help_key"),
    ("Tab / s t", "help.release_switch"),
    ("o", "help.release_override"),
    ("any key", "help.cancel_countdown"),
    ("p c a", "help.panes"),
    ("!", "help.alerts"),
    ("e", "help.report"),
    ("K", "help.ask_again"),
    ("H", "dead_man.help_key"),
    ("y / Esc x", "help.step"),
    ("wheel", "help.wheel"),
    ("click", "help.click"),
    ("?", "help.this_help"),
    ("q / Ctrl-C", "help.quit"),
];

/// Translates a key press into an action for the given mode; `None` for keys with no meaning.
pub fn action_for(key: KeyEvent, mode: InputMode) -> Option<Action> {
    if key.kind == KeyEventKind::Release {
        return None;
    }
    // Before Ctrl-C: whatever the user presses stops a countdown first, and only that.
    if mode == InputMode::Countdown {
        return Some(Action::CancelCountdown);
    }
    if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
        return Some(Action::Interrupt);
    }
    match mode {
        // Only an answer answers: a key meant for the screen below (an arrow, a page key)
        // must not decline a host key.
        InputMode::Confirm => match key.code {
            KeyCode::Char('y') | KeyCode::Char('Y') => Some(Action::PromptAccept),
            KeyCode::Char('n') | KeyCode::Char('N') | KeyCode::Esc => Some(Action::PromptDecline),
            _ => None,
        },
        InputMode::Secret => match key.code {
            KeyCode::Enter => Some(Action::PromptAccept),
            KeyCode::Esc => Some(Action::PromptDecline),
            KeyCode::Backspace => Some(Action::TextBackspace),
            KeyCode::Char(c) if !c.is_control() => Some(Action::TextInput(c)),
            _ => None,
        },
        InputMode::Filter => filter_action(key),
        InputMode::Help => match key.code {
            KeyCode::Esc | KeyCode::Char('?') => Some(Action::ToggleHelp),
            KeyCode::Char('q') => Some(Action::Quit),
            _ => scroll_action(key),
        },
        InputMode::Cost => match key.code {
            KeyCode::Char('q') => Some(Action::Quit),
            _ => Some(Action::ToggleCost),
        },
        InputMode::Countdown => Some(Action::CancelCountdown),
        InputMode::QuitAsk => match key.code {
            KeyCode::Char('y') | KeyCode::Char('Y') | KeyCode::Enter | KeyCode::Char('q') => {
                Some(Action::QuitAnswer { disarm: false })
            }
            KeyCode::Char('d') | KeyCode::Char('D') => Some(Action::QuitAnswer { disarm: true }),
            KeyCode::Esc => Some(Action::QuitStay),
            _ => None,
        },
        InputMode::ReleaseReview => match key.code {
            KeyCode::Enter => Some(Action::ReleaseProceed),
            KeyCode::Esc => Some(Action::ReleaseCancel),
            KeyCode::Tab | KeyCode::BackTab => Some(Action::ReleaseSwitch),
            KeyCode::Char('s') => Some(Action::ReleaseChoose(ReleaseAction::Stop)),
            KeyCode::Char('t') => Some(Action::ReleaseChoose(ReleaseAction::Terminate)),
            _ => None,
        },
        InputMode::ReleaseTyping => match key.code {
            KeyCode::Enter => Some(Action::ReleaseProceed),
            KeyCode::Esc => Some(Action::ReleaseCancel),
            KeyCode::Tab | KeyCode::BackTab => Some(Action::ReleaseSwitch),
            KeyCode::Backspace => Some(Action::TextBackspace),
            KeyCode::Char(c) if !c.is_control() => Some(Action::TextInput(c)),
            _ => None,
        },
        InputMode::ReleaseBackupFailed => match key.code {
            KeyCode::Char('o') => Some(Action::ReleaseOverride),
            KeyCode::Esc | KeyCode::Enter => Some(Action::ReleaseCancel),
            _ => None,
        },
        InputMode::ReleaseBusy => match key.code {
            KeyCode::Esc => Some(Action::ReleaseCancel),
            _ => None,
        },
        InputMode::ReleaseDone => Some(Action::ReleaseClose),
        InputMode::Runbooks => match key.code {
            KeyCode::Enter => Some(Action::RunbookChoose),
            KeyCode::Esc | KeyCode::Char('p') => Some(Action::PanelClose),
            KeyCode::Char('q') => Some(Action::Quit),
            _ => scroll_action(key),
        },
        InputMode::RunbookParams => match key.code {
            KeyCode::Enter => Some(Action::RunbookChoose),
            KeyCode::Esc => Some(Action::PanelBack),
            KeyCode::Up | KeyCode::BackTab => Some(Action::Up),
            KeyCode::Down | KeyCode::Tab => Some(Action::Down),
            KeyCode::Backspace => Some(Action::TextBackspace),
            KeyCode::Char(c) if !c.is_control() => Some(Action::TextInput(c)),
            _ => None,
        },
        InputMode::RunbookRunning | InputMode::CheckRunning => match key.code {
            KeyCode::Esc | KeyCode::Char('x') => Some(Action::StopRun),
            _ => scroll_action(key),
        },
        InputMode::RunbookConfirm => Some(match key.code {
            KeyCode::Char('y') | KeyCode::Char('Y') => Action::StepConfirm,
            _ => Action::StepDecline,
        }),
        InputMode::RunbookDone | InputMode::CheckDone => match key.code {
            KeyCode::Esc | KeyCode::Enter | KeyCode::Char('x') => Some(Action::PanelClose),
            KeyCode::Char('q') => Some(Action::Quit),
            _ => scroll_action(key),
        },
        InputMode::Audit => match key.code {
            KeyCode::Esc | KeyCode::Enter | KeyCode::Char('a') => Some(Action::PanelClose),
            KeyCode::Char('q') => Some(Action::Quit),
            _ => scroll_action(key),
        },
        InputMode::Alerts => match key.code {
            KeyCode::Esc | KeyCode::Enter | KeyCode::Char('!') => Some(Action::PanelClose),
            KeyCode::Char('q') => Some(Action::Quit),
            _ => scroll_action(key),
        },
        InputMode::Normal => normal_action(key),
    }
}

/// What the help overlay says closes it; `Help` mode's keys are exactly these. This is the
/// English text of the catalogue's `help.close_hint`, which the overlay shows (a test holds
/// the two equal).
pub const HELP_CLOSE_HINT: &str = "Esc or ? closes · ↑↓ scroll · q quits";

/// Moving through a list or scrolling a panel's text.
fn scroll_action(key: KeyEvent) -> Option<Action> {
    Some(match key.code {
        KeyCode::Up | KeyCode::Char('k') => Action::Up,
        KeyCode::Down | KeyCode::Char('j') => Action::Down,
        KeyCode::PageUp => Action::PageUp,
        KeyCode::PageDown => Action::PageDown,
        KeyCode::Home | KeyCode::Char('g') => Action::Top,
        KeyCode::End | KeyCode::Char('G') => Action::Bottom,
        _ => return None,
    })
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
        KeyCode::Char('$') => Action::ToggleCost,
        KeyCode::Char('R') => Action::Release,
        KeyCode::Char('r') => Action::InstanceAction(ReleaseAction::Restart),
        KeyCode::Char('S') => Action::InstanceAction(ReleaseAction::Start),
        KeyCode::Char('p') => Action::OpenRunbooks,
        KeyCode::Char('c') => Action::CheckHost,
        KeyCode::Char('a') => Action::OpenAudit,
        KeyCode::Char('e') => Action::WriteReport,
        KeyCode::Char('K') => Action::AskHostKeyAgain,
        KeyCode::Char('H') => Action::HoldDeadMan,
        KeyCode::Char('!') => Action::OpenAlerts,
        _ => return None,
    })
}
