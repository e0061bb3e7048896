//! What `update` asks the runtime to do; the runtime performs it and reports back as events.

use crate::app::prompt::PromptAnswer;
use crate::app::release_state::Confirmation;
use crate::cost::{HostCost, LedgerBook};
use crate::fleet::HostId;
use crate::release::ReleaseAction;
use crate::runbook::Runbook;

#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Restore the terminal and exit.
    Quit,
    /// Send the user's answer to the link that asked question `id`.
    AnswerPrompt {
        id: u64,
        answer: PromptAnswer,
    },
    /// Have `host`'s link, waiting after a declined host key, connect and ask again.
    AskHostKeyAgain {
        host: HostId,
    },
    /// Store the ledgers (merging a release another gpufleet recorded meanwhile); `last` is the
    /// save on quit, done before the console exits.
    SaveLedgers {
        book: LedgerBook,
        last: bool,
    },
    /// Plan release `id` of `host`: load its token, build the request, answer with
    /// `ReleaseEvent::Planned` or `PlanFailed`. With `fallback`, a provider without `action`
    /// gets its other action (the user sees it and still has to type the name).
    PlanRelease {
        id: u64,
        host: String,
        action: ReleaseAction,
        fallback: bool,
        /// The host's cost as the console knows it, for the plan's figures.
        cost: Option<HostCost>,
    },
    /// Run the backup of release `id` on its host (a worker thread; output streams back).
    RunBackup {
        id: u64,
    },
    /// Confirm and send release `id` (a worker thread).
    SendRelease {
        id: u64,
        confirmation: Confirmation,
        /// The user chose to release although the backup failed.
        override_backup: bool,
    },
    /// Forget release `id`: nothing more of it runs or is sent.
    CancelRelease {
        id: u64,
    },
    /// Run `runbook` on `host` (a worker thread; events come back as `Event::Runbook`).
    StartRunbook {
        id: u64,
        host: HostId,
        runbook: Box<Runbook>,
        /// (name, value) as typed; the rest is proposed by the runbook.
        params: Vec<(String, String)>,
        /// Refuse change and disruptive steps.
        read_only: bool,
    },
    /// The user's answer to the step of run `id` that waits for confirmation.
    AnswerStep {
        id: u64,
        confirmed: bool,
    },
    /// Stop run `id` (its step is cancelled through its stop flag).
    StopRunbook {
        id: u64,
    },
    /// Run `gpufleet check` on `host` (a worker thread; events come back as `Event::Check`).
    StartCheck {
        id: u64,
        host: HostId,
    },
    StopCheck {
        id: u64,
    },
    /// Read the audit log (a worker thread; answered with `Event::AuditLoaded`).
    LoadAudit,
    /// Write `host`'s incident bundle (a worker thread; answered with `Event::ReportWritten`).
    WriteReport {
        host: String,
    },
    /// Render `/metrics` from the fleet for the scrape that waits.
    ServeMetrics,
    /// Join the synced provider inventory to the fleet again: new instances start streaming,
    /// gone ones are marked (answered with `Event::HostsJoined` when hosts changed).
    Rejoin,
    /// Stop a job that stopped learning on `host` (`on_plateau = "stop-job"`; answered with
    /// `Event::JobStopped`).
    StopJob {
        host: String,
        stop: crate::job::stop::StopJob,
    },
    /// Disarm these hosts' dead-man switches before quitting (waited for a few seconds).
    DisarmDeadMen {
        hosts: Vec<String>,
    },
    /// Push `host`'s dead-man switch two hours ahead (a worker thread; answered with
    /// `Event::DeadManHeld`).
    HoldDeadMan {
        host: String,
    },
    /// An attached console's action, asked of the watcher that has `host`; `id` is the
    /// release dialog's (0 for a hold).
    AskWatcher {
        id: u64,
        host: HostId,
        ask: crate::remote_watcher::Ask,
    },
}
