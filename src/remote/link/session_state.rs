//! What one connected session knows and keeps: the state `session.rs` serves it with, and
//! what each run of the stream and of the full query said besides samples (`queries.rs`).

use std::sync::Arc;
use std::time::Instant;

use crate::fleet::HostEvent;
use crate::remote::accel_tools::AccelSession;
use crate::remote::link::channel_run::Budget;
use crate::remote::link::evidence::EvidenceRun;
use crate::telemetry::smi_csv::FieldLayout;
use crate::telemetry::{GpuSample, LostReason, TimestampMs};

/// Bounds on what one session keeps of remote output.
const MAX_KEPT_LINES: usize = 64;
/// GPU indices a full query may add to the kept details; a host has a handful, a hostile one
/// must not grow the map without bound.
pub(super) const MAX_GPUS: usize = 256;

/// What one run of the telemetry stream has said besides samples.
#[derive(Default)]
pub(super) struct StreamRun {
    pub(super) failure: Option<LostReason>,
    pub(super) failure_lines: Vec<String>,
    pub(super) failure_since: Option<Instant>,
    pub(super) lost_sent: bool,
    pub(super) rejected: Option<String>,
    pub(super) other_lines: Vec<String>,
    /// The run read at least one sample: the GPUs were readable when it began.
    pub(super) sampled: bool,
}

/// What one run of the full query has said besides samples.
#[derive(Default)]
pub(super) struct DetailRun {
    pub(super) rejected: Option<String>,
    pub(super) other_lines: Vec<String>,
}

/// Answer lines of a dead-man switch's run kept at most.
pub(super) const MAX_DEAD_MAN_LINES: usize = 8;

/// What the session knows of its host's switch.
#[derive(Default)]
pub(super) struct DeadManRun {
    /// When the deadline is pushed next (for a host without a switch: when the link looks for
    /// one left running there); `None` when nothing is due.
    pub(super) due: Option<Instant>,
    /// A run was started and has not ended (a one-shot reading waits for it).
    pub(super) running: bool,
    /// Whether the session armed it (its first run) yet.
    pub(super) armed_once: bool,
    pub(super) lines: Vec<String>,
}

pub(super) fn keep(lines: &mut Vec<String>, line: String) {
    if lines.len() < MAX_KEPT_LINES {
        lines.push(line);
    }
}

/// Something waiting for `Connected`. A streamed sample waits raw and is completed when it goes
/// out, so the full query that answers while it waits still fills its names and limits.
pub(super) enum Held {
    Event(HostEvent),
    Streamed {
        at_ms: TimestampMs,
        gpu: GpuSample,
        layout: Arc<FieldLayout>,
    },
}

pub(crate) struct SessionState {
    pub(super) connected: bool,
    pub(super) held: Vec<Held>,
    pub(super) version_lines: Vec<String>,
    /// What the boot id's reader printed.
    pub(super) boot_lines: Vec<String>,
    /// What the host-kind probe printed.
    pub(super) kind_lines: Vec<String>,
    /// Whether the host is a container is asked next: after the boot id, once the session is
    /// announced (its first channels open), on the boot id's own slot.
    pub(super) kind_due: bool,
    /// The boot id's slot runs the host-kind probe now.
    pub(super) kind_probing: bool,
    pub(super) versions_done: bool,
    /// The session's first full query has not answered yet; `Connected` waits for it (up to
    /// `versions_deadline`) so that the first samples shown are complete.
    pub(super) detail_pending: bool,
    pub(super) versions_deadline: Instant,
    /// The layout of the stream now running.
    pub(super) stream_layout: Arc<FieldLayout>,
    pub(super) detail_run: DetailRun,
    pub(super) detail_due: Option<Instant>,
    /// A restarted stream asks for a full query with its first sample, not before: while the
    /// GPUs are unreadable a full query only fails again.
    pub(super) detail_on_sample: bool,
    pub(super) first_driver: Option<String>,
    pub(super) run: StreamRun,
    pub(super) stream_restart_at: Option<Instant>,
    pub(super) last_lost: Option<(LostReason, String)>,
    pub(super) apps_lines: Vec<String>,
    pub(super) processes_due: Option<Instant>,
    /// Whether someone looked at the host when the process list was last scheduled.
    pub(super) processes_looked_at: bool,
    pub(super) kernel_stage: usize,
    pub(super) kernel_lines: Vec<String>,
    pub(super) deadline: Option<Instant>,
    /// The budget the running stream was started with.
    pub(super) stream_budget: Budget,
    /// The stream was stopped for flooding: its restart asks for no full query.
    pub(super) after_flood: bool,
    /// `Unresponsive` was sent and nothing has come since.
    pub(super) unresponsive: bool,
    /// `nvidia-smi -q` at the session's first fault.
    pub(super) evidence: EvidenceRun,
    /// The probe, or a vendor tool read instead of nvidia-smi (`accel_poll.rs`).
    pub(super) accel: AccelSession,
    /// The host's jobs and the log followed (`job_follow.rs`).
    pub(super) job: crate::remote::link::job_watch::JobWatch,
    /// When the disks are read next (`disk.rs`); `None` once a one-shot reading read them.
    pub(super) disk_due: Option<Instant>,
    /// A one-shot reading waits for its disks until their command ended.
    pub(super) disk_pending: bool,
    pub(super) disk_run: crate::remote::link::disk::DiskRun,
    /// The dead-man switch's runs (`dead_man.rs`).
    pub(super) dead_man: DeadManRun,
}
