//! The release dialog's state: the plan as the bridge made it, where the release stands, how it
//! was confirmed, and what the release bridge reports. Data only; `release_dialog` changes it.

use std::collections::VecDeque;

use crate::app::keymap::InputMode;
use crate::fleet::HostId;
use crate::release::ReleaseAction;

/// How many lines of backup output the dialog keeps.
pub const BACKUP_LINES_KEPT: usize = 200;

/// What the release will do, as the bridge planned it; every text is already sanitized and the
/// token shows as `<redacted>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanView {
    pub provider: String,
    pub instance_id: Option<String>,
    pub action: ReleaseAction,
    /// What the action does to the instance and its disk.
    pub effect: String,
    /// The backup command (quoted argv) run on the host first, if any.
    pub backup: Option<String>,
    /// The exact request, line by line.
    pub request: Vec<String>,
    pub warnings: Vec<String>,
    /// Why the token could not be loaded; the release cannot go on while this is set.
    pub token_problem: Option<String>,
    /// The other action, when the provider supports it (Tab switches to it).
    pub other_action: Option<ReleaseAction>,
}

/// Where a release stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReleaseStage {
    /// The bridge is building the plan (reading the token).
    Planning,
    /// The plan is shown; Enter runs the backup.
    Review,
    BackingUp,
    /// The backup failed: the release is blocked unless the user overrides it.
    BackupFailed {
        reason: String,
    },
    /// The user types the host name; Enter with anything else cancels.
    Typing,
    Sending,
    Sent {
        answers: Vec<String>,
        problems: Vec<String>,
    },
    Failed {
        reason: String,
        answers: Vec<String>,
    },
    /// Nothing was run or sent (no release config, no token, read-only, ...).
    Refused {
        reason: String,
    },
}

/// How the backup went, as the bridge reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BackupResult {
    Succeeded,
    NotConfigured,
    Failed(String),
}

/// What the release bridge reports back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReleaseEvent {
    Planned {
        id: u64,
        plan: PlanView,
    },
    PlanFailed {
        id: u64,
        reason: String,
    },
    BackupLine {
        id: u64,
        line: String,
    },
    BackupDone {
        id: u64,
        result: BackupResult,
    },
    Sent {
        id: u64,
        answers: Vec<String>,
        problems: Vec<String>,
    },
    SendFailed {
        id: u64,
        reason: String,
        answers: Vec<String>,
    },
}

impl ReleaseEvent {
    pub fn id(&self) -> u64 {
        match self {
            Self::Planned { id, .. }
            | Self::PlanFailed { id, .. }
            | Self::BackupLine { id, .. }
            | Self::BackupDone { id, .. }
            | Self::Sent { id, .. }
            | Self::SendFailed { id, .. } => *id,
        }
    }
}

/// How a release was confirmed.
#[derive(Clone, PartialEq, Eq)]
pub enum Confirmation {
    /// What the user typed (the host name, checked again by the flow).
    Typed(String),
    /// The auto-release countdown ran out.
    Unattended,
}

impl std::fmt::Debug for Confirmation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Typed(typed) => write!(f, "Typed({typed:?})"),
            Self::Unattended => f.write_str("Unattended"),
        }
    }
}

/// One release in the dialog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReleaseDialog {
    pub id: u64,
    pub host: HostId,
    pub host_name: String,
    pub action: ReleaseAction,
    /// Started by the auto-release countdown.
    pub unattended: bool,
    pub stage: ReleaseStage,
    pub plan: Option<PlanView>,
    /// The newest lines of the backup's output.
    pub backup_output: VecDeque<String>,
    pub backup_ran: bool,
    pub backup_overridden: bool,
    pub typed: String,
}

impl ReleaseDialog {
    /// What keys mean while this dialog is open.
    pub fn input_mode(&self) -> InputMode {
        match self.stage {
            ReleaseStage::Planning | ReleaseStage::BackingUp | ReleaseStage::Sending => {
                InputMode::ReleaseBusy
            }
            ReleaseStage::Review => InputMode::ReleaseReview,
            ReleaseStage::Typing => InputMode::ReleaseTyping,
            ReleaseStage::BackupFailed { .. } => InputMode::ReleaseBackupFailed,
            ReleaseStage::Sent { .. }
            | ReleaseStage::Failed { .. }
            | ReleaseStage::Refused { .. } => InputMode::ReleaseDone,
        }
    }

    /// Whether the action can still change: not once the backup ran for this action.
    pub fn can_switch(&self) -> bool {
        !self.backup_ran
            && matches!(self.stage, ReleaseStage::Review | ReleaseStage::Typing)
            && self.plan.as_ref().is_some_and(|p| p.other_action.is_some())
    }
}
