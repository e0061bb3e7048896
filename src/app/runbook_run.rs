//! The runbook pane's state: the runbook picker and its parameter form, a run's lines and
//! stage, and what the ops bridge reports about a run. Data only; `runbook_pane` changes it.

use std::collections::VecDeque;

use crate::app::cursor::step;
use crate::app::keymap::InputMode;
use crate::fleet::HostId;
use crate::runbook::model::Danger;

/// Lines of a run the pane keeps; older ones scroll away.
pub const PANE_LINES_KEPT: usize = 2000;

/// One runbook in the picker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PickerItem {
    pub id: String,
    pub title: String,
    /// The finding it addresses, for the runbooks listed first.
    pub for_label: Option<String>,
}

/// One parameter the user may type before the run; empty leaves it to the runbook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamField {
    pub name: String,
    /// What an empty field means (the runbook's proposal, its default, or its help).
    pub hint: String,
    pub value: String,
}

/// The parameters of the chosen runbook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamForm {
    pub runbook: String,
    pub fields: Vec<ParamField>,
    pub cursor: usize,
    /// Why the values typed were not accepted.
    pub error: Option<String>,
}

/// The runbook picker of one host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Picker {
    pub host: HostId,
    pub host_name: String,
    pub items: Vec<PickerItem>,
    pub cursor: usize,
    pub form: Option<ParamForm>,
    /// Why nothing was started (the demo fleet), shown in the picker.
    pub note: Option<String>,
}

impl Picker {
    pub fn input_mode(&self) -> InputMode {
        match self.form {
            Some(_) => InputMode::RunbookParams,
            None => InputMode::Runbooks,
        }
    }

    pub fn move_cursor(&mut self, delta: i64) {
        match &mut self.form {
            Some(form) => form.cursor = step(form.cursor, delta, form.fields.len()),
            None => self.cursor = step(self.cursor, delta, self.items.len()),
        }
    }

    pub fn selected(&self) -> Option<&PickerItem> {
        self.items.get(self.cursor)
    }
}

/// How a line of the pane is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    Heading,
    /// `[2/5] Title (CHANGE)`; the danger colours it.
    Step(Danger),
    Why,
    Command,
    Output,
    Ok,
    Failed,
    Skipped,
    Note,
    Advice,
    Warning,
}

/// One line of the pane, already sanitized.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaneLine {
    pub kind: LineKind,
    pub text: String,
}

impl PaneLine {
    pub fn new(kind: LineKind, text: impl Into<String>) -> Self {
        Self {
            kind,
            text: text.into(),
        }
    }
}

/// A step that waits for the user's yes, with exactly what it will run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepAsk {
    pub title: String,
    pub why: String,
    pub danger: Danger,
    pub command: String,
}

/// Where a run stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunStage {
    Running,
    /// A step waits for `y`; anything else cancels it.
    Confirm(StepAsk),
    /// Esc was pressed: the step is being stopped.
    Stopping,
    Finished {
        text: String,
        good: bool,
    },
}

/// What the ops bridge reports about a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunbookEvent {
    Line { id: u64, line: PaneLine },
    Confirm { id: u64, ask: StepAsk },
    Finished { id: u64, text: String, good: bool },
}

impl RunbookEvent {
    pub fn id(&self) -> u64 {
        match self {
            Self::Line { id, .. } | Self::Confirm { id, .. } | Self::Finished { id, .. } => *id,
        }
    }
}

/// A runbook running (or run) on a host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunbookRun {
    pub id: u64,
    pub host: HostId,
    pub host_name: String,
    pub runbook: String,
    pub title: String,
    pub read_only: bool,
    pub lines: VecDeque<PaneLine>,
    pub stage: RunStage,
    /// Lines scrolled up from the newest; 0 follows the output.
    pub scroll: usize,
}

impl RunbookRun {
    pub fn input_mode(&self) -> InputMode {
        match self.stage {
            RunStage::Running | RunStage::Stopping => InputMode::RunbookRunning,
            RunStage::Confirm(_) => InputMode::RunbookConfirm,
            RunStage::Finished { .. } => InputMode::RunbookDone,
        }
    }

    pub fn is_finished(&self) -> bool {
        matches!(self.stage, RunStage::Finished { .. })
    }

    pub fn push(&mut self, line: PaneLine) {
        if self.lines.len() == PANE_LINES_KEPT {
            self.lines.pop_front();
        }
        self.lines.push_back(line);
        if self.scroll > 0 {
            // Scrolled back: the lines in view stay put.
            self.scroll = (self.scroll + 1).min(self.lines.len().saturating_sub(1));
        }
    }

    /// Up (negative) scrolls back into older lines.
    pub fn scroll_by(&mut self, delta: i64) {
        let max = self.lines.len().saturating_sub(1) as i64;
        self.scroll = (self.scroll as i64).saturating_sub(delta).clamp(0, max) as usize;
    }
}
