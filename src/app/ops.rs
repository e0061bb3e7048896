//! Acting on a host from the console: the one panel that can be open over the views (runbook
//! picker, playbook pane, check, audit log), where the console's hosts are, and the runbooks it
//! knows. Pure: the runtime's ops bridge runs what these panels ask for.

use std::sync::{Arc, OnceLock};

use crate::app::action::Action;
use crate::app::audit_view::AuditView;
use crate::app::check_pane::CheckRun;
use crate::app::command::Command;
use crate::app::keymap::InputMode;
use crate::app::model::{Model, View};
use crate::app::playbook_pane::{Picker, PlaybookRun};
use crate::app::{audit_view, check_pane, playbook_pane};
use crate::playbook::Catalog;

/// Where the console's hosts are, which decides what `p` and `c` can run there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HostSource {
    /// The simulated fleet: nothing real to run.
    #[default]
    Demo,
    /// This machine (`--local`).
    Local,
    /// SSH hosts.
    Ssh,
}

/// The runbooks the picker lists, shared; two are equal when they list the same runbooks.
#[derive(Debug, Clone)]
pub struct Runbooks(pub Arc<Catalog>);

impl Runbooks {
    pub fn new(catalog: Catalog) -> Self {
        Self(Arc::new(catalog))
    }

    pub fn catalog(&self) -> &Catalog {
        &self.0
    }
}

impl PartialEq for Runbooks {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0.entries() == other.0.entries()
    }
}

impl Default for Runbooks {
    /// The curated runbooks embedded in the binary (parsed once per process).
    fn default() -> Self {
        static CURATED: OnceLock<Arc<Catalog>> = OnceLock::new();
        Self(Arc::clone(CURATED.get_or_init(|| {
            Arc::new(Catalog::curated().unwrap_or_default())
        })))
    }
}

/// The panel open over the views; keys go to it until it closes.
#[derive(Debug, Clone, PartialEq)]
pub enum Panel {
    Picker(Picker),
    Playbook(PlaybookRun),
    Check(CheckRun),
    Audit(AuditView),
}

impl Panel {
    /// What keys mean while this panel is open.
    pub fn input_mode(&self) -> InputMode {
        match self {
            Panel::Picker(picker) => picker.input_mode(),
            Panel::Playbook(run) => run.input_mode(),
            Panel::Check(check) => check.input_mode(),
            Panel::Audit(_) => InputMode::Audit,
        }
    }
}

/// The host `p` and `c` act on: the open one, else the one under the fleet cursor.
pub fn target_host(model: &Model) -> Option<usize> {
    match model.view {
        View::Host(host) => Some(host),
        View::Fleet => model.selected_host(),
    }
}

/// Why nothing can run on the console's hosts, if so.
pub fn refusal(model: &Model) -> Option<&'static str> {
    (model.options.source == HostSource::Demo)
        .then_some("the demo fleet is simulated: there is nothing real to run on it")
}

/// Shows `text` in the bottom bar.
pub fn notify(model: &mut Model, text: impl Into<String>, warning: bool) {
    let now_ms = model.now_ms;
    model.money.notify(text, warning, now_ms);
    model.mark_dirty();
}

/// The actions that belong to the open panel (or open one); `None` for the rest.
pub fn apply(model: &mut Model, action: &Action) -> Option<Vec<Command>> {
    let commands = match action {
        Action::OpenRunbooks => playbook_pane::open_picker(model),
        Action::CheckHost => check_pane::start(model),
        Action::OpenAudit => audit_view::open(model),
        Action::RunbookChoose => playbook_pane::choose(model),
        Action::PanelBack => playbook_pane::back(model),
        Action::StepConfirm => playbook_pane::answer(model, true),
        Action::StepDecline => playbook_pane::answer(model, false),
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
            playbook_pane::type_char(model, Some(*c));
            Vec::new()
        }
        Action::TextBackspace if model.input_mode() == InputMode::RunbookParams => {
            playbook_pane::type_char(model, None);
            Vec::new()
        }
        _ => return None,
    };
    Some(commands)
}

/// Esc / `x` while something runs: asks it to stop; a second press leaves it behind.
fn stop(model: &mut Model) -> Vec<Command> {
    match &model.panel {
        Some(Panel::Playbook(_)) => playbook_pane::stop(model),
        Some(Panel::Check(_)) => check_pane::stop(model),
        _ => Vec::new(),
    }
}

/// Closes the panel; a run still going is told to stop.
pub fn close(model: &mut Model) -> Vec<Command> {
    let commands = match model.panel.take() {
        Some(Panel::Playbook(run)) if !run.is_finished() => {
            vec![Command::StopPlaybook { id: run.id }]
        }
        Some(Panel::Check(check)) if !check.is_finished() => {
            vec![Command::StopCheck { id: check.id }]
        }
        _ => Vec::new(),
    };
    model.mark_dirty();
    commands
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
        Some(Panel::Playbook(run)) => run.scroll_by(delta),
        Some(Panel::Check(check)) => check.scroll_by(delta),
        Some(Panel::Audit(view)) => view.scroll_by(delta),
        None => {}
    }
}

/// `cursor + delta` within `0..len`.
pub fn step(cursor: usize, delta: i64, len: usize) -> usize {
    if len == 0 {
        return 0;
    }
    (cursor as i64)
        .saturating_add(delta)
        .clamp(0, len as i64 - 1) as usize
}
