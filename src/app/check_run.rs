//! The check pane's state: where a check stands, what the ops bridge reports, and the finished
//! report as shown. Data only; `check_pane` changes it.

use crate::app::cursor::step;
use crate::app::keymap::InputMode;
use crate::check::{CheckReport, LiveReading, Status, render_text};
use crate::fleet::HostId;

/// Where a check stands.
#[derive(Debug, Clone, PartialEq)]
pub enum CheckStage {
    Running,
    /// Esc was pressed: the check is being stopped.
    Stopping,
    Done {
        status: Status,
        /// The report as `gpufleet check` prints it, line by line, sanitized.
        report: Vec<String>,
        /// The host's previous report, when there is one.
        previous: Option<Vec<String>>,
        /// Where the report was kept, or why it was not.
        note: Option<String>,
    },
    /// The check could not run, or was stopped.
    Failed {
        reason: String,
    },
}

/// What the ops bridge reports about a check.
#[derive(Debug, Clone, PartialEq)]
pub enum CheckEvent {
    Progress {
        id: u64,
        phase: String,
        /// Of the whole check, 0 to 1.
        fraction: f64,
        message: String,
        reading: Option<LiveReading>,
    },
    Done {
        id: u64,
        status: Status,
        report: String,
        previous: Option<String>,
        note: Option<String>,
    },
    Failed {
        id: u64,
        reason: String,
    },
}

impl CheckEvent {
    pub fn id(&self) -> u64 {
        match self {
            Self::Progress { id, .. } | Self::Done { id, .. } | Self::Failed { id, .. } => *id,
        }
    }
}

/// The finished check as the pane shows it: the report rendered with the previous one's figures
/// compared, and the previous report in full beside it.
pub fn done_event(
    id: u64,
    report: &CheckReport,
    previous: Option<&CheckReport>,
    note: Option<String>,
) -> CheckEvent {
    CheckEvent::Done {
        id,
        status: report.status,
        report: render_text(report, previous),
        previous: previous.map(|p| render_text(p, None)),
        note,
    }
}

/// A check running (or run) on a host.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckRun {
    pub id: u64,
    pub host: HostId,
    pub host_name: String,
    pub stage: CheckStage,
    pub phase: String,
    pub fraction: f64,
    pub message: String,
    /// The newest reading of each GPU, by index.
    pub readings: Vec<LiveReading>,
    /// Lines scrolled down from the top of the report.
    pub scroll: usize,
}

impl CheckRun {
    pub fn input_mode(&self) -> InputMode {
        match self.stage {
            CheckStage::Running | CheckStage::Stopping => InputMode::CheckRunning,
            CheckStage::Done { .. } | CheckStage::Failed { .. } => InputMode::CheckDone,
        }
    }

    pub fn is_finished(&self) -> bool {
        matches!(
            self.stage,
            CheckStage::Done { .. } | CheckStage::Failed { .. }
        )
    }

    pub fn scroll_by(&mut self, delta: i64) {
        let len = match &self.stage {
            CheckStage::Done {
                report, previous, ..
            } => report.len().max(previous.as_ref().map_or(0, Vec::len)),
            _ => 0,
        };
        self.scroll = step(self.scroll, delta, len);
    }
}
