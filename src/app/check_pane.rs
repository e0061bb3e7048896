//! The check pane (`c`): `gpufleet check` on a host with a progress bar, the phase and the live
//! readings (temperature, power, SM clock, TFLOP/s) while it runs, then the report with the
//! previous one side by side. Pure: the ops bridge runs the check, keeps the report and reports
//! back.

use crate::app::command::Command;
use crate::app::event::HostId;
use crate::app::keymap::InputMode;
use crate::app::model::Model;
use crate::app::ops::{Panel, notify, refusal, step, target_host};
use crate::check::{CheckReport, LiveReading, Status, render_text};
use crate::ui::format::clean;

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

/// `c`: checks the open or selected host; the demo fleet refuses.
pub fn start(model: &mut Model) -> Vec<Command> {
    let Some(host) = target_host(model) else {
        return Vec::new();
    };
    if let Some(reason) = refusal(model) {
        notify(model, format!("check: {reason}"), true);
        return Vec::new();
    }
    let Some(host_name) = model.hosts.get(host).map(|h| h.name.clone()) else {
        return Vec::new();
    };
    let id = model.next_ops_id();
    model.panel = Some(Panel::Check(CheckRun {
        id,
        host,
        host_name,
        stage: CheckStage::Running,
        phase: "starting".to_string(),
        fraction: 0.0,
        message: String::new(),
        readings: Vec::new(),
        scroll: 0,
    }));
    model.mark_dirty();
    vec![Command::StartCheck { id, host }]
}

/// A report from the ops bridge about check `id`.
pub fn on_event(model: &mut Model, event: CheckEvent) -> Vec<Command> {
    let Some(Panel::Check(check)) = &mut model.panel else {
        return Vec::new();
    };
    if check.id != event.id() {
        return Vec::new();
    }
    match event {
        CheckEvent::Progress {
            phase,
            fraction,
            message,
            reading,
            ..
        } => {
            if check.is_finished() {
                return Vec::new();
            }
            check.phase = clean(&phase);
            check.fraction = fraction.clamp(0.0, 1.0).max(check.fraction);
            check.message = clean(&message);
            if let Some(reading) = reading {
                match check.readings.binary_search_by_key(&reading.gpu, |r| r.gpu) {
                    Ok(pos) => check.readings[pos] = reading,
                    Err(pos) => check.readings.insert(pos, reading),
                }
            }
        }
        CheckEvent::Done {
            status,
            report,
            previous,
            note,
            ..
        } => {
            let lines = |text: &str| text.lines().map(clean).collect::<Vec<_>>();
            check.fraction = 1.0;
            check.scroll = 0;
            check.stage = CheckStage::Done {
                status,
                report: lines(&report),
                previous: previous.as_deref().map(lines),
                note: note.as_deref().map(clean),
            };
        }
        CheckEvent::Failed { reason, .. } => {
            check.stage = CheckStage::Failed {
                reason: clean(&reason),
            };
        }
    }
    model.mark_dirty();
    Vec::new()
}

/// Esc / `x` while the check runs: stop it; a second press closes the pane and leaves it.
pub fn stop(model: &mut Model) -> Vec<Command> {
    let Some(Panel::Check(check)) = &mut model.panel else {
        return Vec::new();
    };
    match check.stage {
        CheckStage::Running => {
            check.stage = CheckStage::Stopping;
            check.message = "stopping…".to_string();
            vec![Command::StopCheck { id: check.id }]
        }
        CheckStage::Stopping => crate::app::ops::close(model),
        _ => Vec::new(),
    }
}
