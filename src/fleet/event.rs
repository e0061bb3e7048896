//! The typed events every telemetry source produces about a host; the engine folds them into
//! the fleet's state, whichever driver (console, watcher, one-shot read) runs it.

use crate::fleet::job::JobProcess;
use crate::fleet::notice::DownWords;
use crate::remote::HostKind;
use crate::telemetry::boot_id::BootId;
use crate::telemetry::df::DiskUse;
use crate::telemetry::{GpuProcess, GpuSample, HostInfo, LostReason, TimestampMs};
use crate::words::Words;

/// Index of a host in the model's host list (the order of the config / command line).
pub type HostId = usize;

/// What a source reports about one host. A simulated host, an SSH host and the local NVML host
/// all produce exactly these, so the UI cannot tell them apart.
// Samples are most of the traffic and are moved, not copied, through the channel; boxing them
// would add an allocation per GPU per tick to save stack space in a handful of events.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum HostEvent {
    /// A connection attempt started (attempt 1 is the first) at `at_ms`; `None` only from a
    /// recording made before attempts were stamped.
    Connecting {
        attempt: u32,
        at_ms: Option<TimestampMs>,
    },
    /// The source is up; driver and CUDA versions when known.
    Connected(HostInfo),
    /// The host's boot id, read on connect: one unlike the last means the host booted in
    /// between, so what its kernel said before belongs to a boot that is over.
    Boot { at_ms: TimestampMs, boot_id: BootId },
    /// Whether the host is a container or a machine, read once per connection
    /// when the host's answer tells.
    HostKind { at_ms: TimestampMs, kind: HostKind },
    /// One reading of one GPU (nvidia-smi prints one line per GPU per interval).
    Sample { at_ms: TimestampMs, gpu: GpuSample },
    /// The full list of compute processes on the host's GPUs at `at_ms`.
    Processes {
        at_ms: TimestampMs,
        processes: Vec<GpuProcess>,
    },
    /// A kernel log line that mentions the GPU driver (Xid and friends), already sanitized.
    Kernel { at_ms: TimestampMs, line: String },
    /// The GPUs can no longer be read; `raw` keeps the failure text for triage.
    Lost {
        at_ms: TimestampMs,
        reason: LostReason,
        raw: String,
    },
    /// The link to the host is down (refused, timed out, dropped): `reason` is the whole
    /// message, `summary` a few words of it (`connection refused`, `auth failed (tried key)`).
    /// The source retries by itself at `retry_at_ms`; `None` when it will not retry.
    Disconnected {
        at_ms: TimestampMs,
        reason: String,
        summary: String,
        retry_at_ms: Option<TimestampMs>,
        /// `reason` and `summary` in catalogue words, for the console to say in the user's
        /// language; `None` where the source has only the English.
        words: Option<DownWords>,
    },
    /// Nothing has come from the host for `silent_ms` although the stream should have spoken:
    /// the host is unreachable for now (the link waits, and reconnects if it stays so).
    Unresponsive { at_ms: TimestampMs, silent_ms: u64 },
    /// The host answers again after `Unresponsive`.
    Responsive { at_ms: TimestampMs },
    /// The host sends far more than its interval allows (`detail` says what), so its output is
    /// dropped past a budget; `None` once it has behaved for a while.
    Flooding {
        at_ms: TimestampMs,
        detail: Option<String>,
        /// `detail` in catalogue words, for the console to say in the user's language.
        words: Option<Words>,
    },
    /// A one-time informational message (e.g. "kernel log not readable here"), as catalogue
    /// words: the console says it in the user's language, the log and recordings in English.
    Notice { at_ms: TimestampMs, text: Words },
    /// What a command printed when the session saw the host's first fault
    /// ([`SMI_QUERY_ALL`]), sanitized and capped: kept by recordings and the black box for the
    /// incident report, not shown live.
    Evidence {
        at_ms: TimestampMs,
        command: String,
        output: String,
    },
    /// The host's GPU processes as jobs (command line, owner, age, where the log goes), found
    /// at `at_ms`; a job listed before and missing now has ended.
    Jobs {
        at_ms: TimestampMs,
        jobs: Vec<JobProcess>,
    },
    /// More of the log of job `pid`: raw remote text (`\r` updates and escapes included), read
    /// only by the job's log reader (`crate::job::JobLog`), never shown as it is.
    JobLog {
        at_ms: TimestampMs,
        pid: u32,
        /// The first text of a new reading of the log (its tail at connect): what was read
        /// of it before is read again from here.
        restart: bool,
        text: String,
    },
    /// The file systems holding `/`, `/dev/shm` and the jobs' working directories, as
    /// `df -P -k` gave them at `at_ms` (a path it could not read is left out).
    Disk {
        at_ms: TimestampMs,
        uses: Vec<DiskUse>,
        /// PyTorch DataLoader worker processes (`pt_data_worker`) of the jobs asked about.
        loader_workers: u32,
    },
    /// What the host's dead-man switch (`[hosts.dead_man]`) answered when it was armed,
    /// pushed or disarmed.
    DeadMan {
        at_ms: TimestampMs,
        state: crate::fleet::dead_man::DeadManState,
    },
}

/// The evidence command a link runs on a host's first fault.
pub const SMI_QUERY_ALL: &str = "nvidia-smi -q";

impl HostEvent {
    /// The time the event was stamped with, for events that carry one.
    pub fn at_ms(&self) -> Option<TimestampMs> {
        match self {
            HostEvent::Connecting { at_ms, .. } => *at_ms,
            HostEvent::Connected(_) => None,
            HostEvent::Sample { at_ms, .. }
            | HostEvent::Boot { at_ms, .. }
            | HostEvent::HostKind { at_ms, .. }
            | HostEvent::Processes { at_ms, .. }
            | HostEvent::Kernel { at_ms, .. }
            | HostEvent::Lost { at_ms, .. }
            | HostEvent::Disconnected { at_ms, .. }
            | HostEvent::Unresponsive { at_ms, .. }
            | HostEvent::Responsive { at_ms }
            | HostEvent::Flooding { at_ms, .. }
            | HostEvent::Notice { at_ms, .. }
            | HostEvent::Evidence { at_ms, .. }
            | HostEvent::Jobs { at_ms, .. }
            | HostEvent::JobLog { at_ms, .. }
            | HostEvent::Disk { at_ms, .. }
            | HostEvent::DeadMan { at_ms, .. } => Some(*at_ms),
        }
    }
}
