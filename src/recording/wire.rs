//! The recording's line format (NDJSON): a header line, then one line per host event. The
//! types mirror [`HostEvent`] and its parts with serde derives, apart from the engine's own
//! types, so the file format changes only on purpose (and then [`FORMAT_VERSION`] with it).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::fleet::HostEvent;
use crate::fleet::job::JobProcess;
pub use crate::recording::wire_job::Job;
use crate::recording::wire_notice::{self, Arg as WordArg};
use crate::telemetry::accel::{Health, Vendor};
use crate::telemetry::boot_id::BootId;
use crate::telemetry::df::{DiskPath, DiskUse, FsUsage};
use crate::telemetry::{
    ClockEventReasons, GpuProcess, GpuSample, HostInfo, LostReason, SharedText,
};

/// The `format` word of every recording's header.
pub const FORMAT_NAME: &str = "gpufleet-recording";
/// The newest version this build writes and reads; a newer file is refused with a clear error.
pub const FORMAT_VERSION: u32 = 6;
// Version 2 added `evidence` lines, version 3 `jobs` and `job_log`, version 4 the `key` and
// `args` of `notice` lines (`wire_notice.rs`), version 5 `boot` and `disk` lines and the
// `at_ms` of `connecting` lines, version 6 `dead_man` lines; older files read unchanged.

/// The gpufleet version written into headers and reports.
pub const WRITER: &str = env!("CARGO_PKG_VERSION");

/// The first line of a recording (and of each black-box segment).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub format: String,
    pub version: u32,
    /// `gpufleet --version` of the writer.
    pub gpufleet: String,
    pub started_ms: u64,
    /// `started_ms` as RFC 3339 UTC, for people reading the file.
    pub started: String,
    /// The hosts watched when the recording began (more may appear later, by name, in lines).
    pub hosts: Vec<String>,
}

impl Header {
    pub fn new(started_ms: u64, hosts: Vec<String>) -> Self {
        Self {
            format: FORMAT_NAME.to_string(),
            version: FORMAT_VERSION,
            gpufleet: WRITER.to_string(),
            started_ms,
            started: crate::utc::rfc3339(started_ms),
            hosts,
        }
    }
}

/// One recorded event: when it was recorded (`t_ms`, the recorder's wall clock), the host by
/// name, and the event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Line {
    pub t_ms: u64,
    pub host: String,
    pub event: Event,
}

/// [`HostEvent`] as written. `at_ms` is the time the source stamped it with.
// Samples are most lines and are read and written one at a time; boxing them would cost an
// allocation each for nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Event {
    Connecting {
        attempt: u32,
        /// Absent from recordings made before attempts were stamped.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        at_ms: Option<u64>,
    },
    Connected {
        info: Info,
    },
    /// The host's boot id as read on connect (version 5 on), checked again when read back.
    Boot {
        at_ms: u64,
        boot_id: WireBootId,
    },
    Sample {
        at_ms: u64,
        gpu: Sample,
    },
    Processes {
        at_ms: u64,
        processes: Vec<Process>,
    },
    Kernel {
        at_ms: u64,
        line: String,
    },
    Lost {
        at_ms: u64,
        reason: Lost,
        raw: String,
    },
    Disconnected {
        at_ms: u64,
        reason: String,
        /// The few words the fleet row shows ("connection refused").
        #[serde(default)]
        summary: String,
        /// When the link tries again; absent when it will not.
        #[serde(default)]
        retry_at_ms: Option<u64>,
        /// `reason` as catalogue words (version 4 on), as a notice's value is written.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason_words: Option<WordArg>,
        /// `summary` as catalogue words (version 4 on).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        summary_words: Option<WordArg>,
    },
    Unresponsive {
        at_ms: u64,
        silent_ms: u64,
    },
    Responsive {
        at_ms: u64,
    },
    Flooding {
        at_ms: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
        /// `detail` as catalogue words (version 4 on), as a notice's value is written.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        detail_words: Option<WordArg>,
    },
    Notice {
        at_ms: u64,
        /// The notice in English.
        text: String,
        /// The catalogue text (version 4 on); absent for text said as it is.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        key: Option<String>,
        /// The values of `key`'s `%{name}`s.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        args: BTreeMap<String, WordArg>,
    },
    Evidence {
        at_ms: u64,
        command: String,
        output: String,
    },
    Jobs {
        at_ms: u64,
        jobs: Vec<Job>,
    },
    JobLog {
        at_ms: u64,
        pid: u32,
        #[serde(default)]
        restart: bool,
        text: String,
    },
    Disk {
        at_ms: u64,
        uses: Vec<Disk>,
        #[serde(default)]
        loader_workers: u32,
    },
    /// The dead-man switch's state (version 6 on).
    DeadMan {
        at_ms: u64,
        after_minutes: u32,
        armed: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        deadline_ms: Option<u64>,
        /// Why it is not armed, in English.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        why_not: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        why_not_words: Option<WordArg>,
    },
    /// `container` or `machine`, as the host said on connect (version 6 on).
    HostKind {
        at_ms: u64,
        host_kind: crate::remote::HostKind,
    },
}

/// A [`DiskUse`] as written: the path as given to `df` (`/`, `/dev/shm`, `/proc/PID/cwd`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Disk {
    pub path: String,
    pub filesystem: String,
    pub mount: String,
    pub total_kib: u64,
    pub used_kib: u64,
    pub avail_kib: u64,
}

impl From<&DiskUse> for Disk {
    fn from(u: &DiskUse) -> Self {
        Self {
            path: u.path.arg(),
            filesystem: u.fs.filesystem.clone(),
            mount: u.fs.mount.clone(),
            total_kib: u.fs.total_kib,
            used_kib: u.fs.used_kib,
            avail_kib: u.fs.avail_kib,
        }
    }
}

impl Disk {
    /// The use back; `None` for a path gpufleet never asks about.
    fn into_use(self) -> Option<DiskUse> {
        Some(DiskUse {
            path: DiskPath::from_arg(&self.path)?,
            fs: FsUsage {
                filesystem: self.filesystem,
                mount: self.mount,
                total_kib: self.total_kib,
                used_kib: self.used_kib,
                avail_kib: self.avail_kib,
            },
        })
    }
}

/// A boot id as written: the kernel's hyphenated UUID, refused on reading unless it is one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WireBootId(pub BootId);

impl Serialize for WireBootId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for WireBootId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        BootId::parse(&text)
            .map(Self)
            .map_err(serde::de::Error::custom)
    }
}

/// [`HostInfo`] as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Info {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cuda_version: Option<String>,
    pub source: String,
}

/// [`GpuProcess`] as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Process {
    pub pid: u32,
    pub name: String,
    pub gpu_uuid: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_index: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub used_memory_mib: Option<u64>,
}

/// [`LostReason`] as written (its machine word).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Lost {
    GpuLost,
    DriverNotLoaded,
    DriverLibraryMismatch,
    NoDevices,
    TelemetryFailed,
    SmiMissing,
}

/// Writes `Option` fields only when known, which keeps a sample line short.
macro_rules! sample_struct {
    ($($field:ident: $ty:ty),* $(,)?) => {
        /// [`GpuSample`] as written; unknown fields are left out. `clock_event_reasons` is the
        /// NVML bit mask.
        #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct Sample {
            pub index: u32,
            pub uuid: SharedText,
            pub name: SharedText,
            pub bus_id: SharedText,
            /// Left out for NVIDIA, so recordings of NVIDIA hosts read as before.
            #[serde(default, skip_serializing_if = "is_nvidia")]
            pub vendor: Vendor,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub health: Option<Health>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub clock_event_reasons: Option<u64>,
            $(
                #[serde(default, skip_serializing_if = "Option::is_none")]
                pub $field: Option<$ty>,
            )*
        }

        impl From<&GpuSample> for Sample {
            fn from(s: &GpuSample) -> Self {
                Self {
                    index: s.index,
                    uuid: s.uuid.clone(),
                    name: s.name.clone(),
                    bus_id: s.bus_id.clone(),
                    vendor: s.vendor,
                    health: s.health.clone(),
                    clock_event_reasons: s.clock_event_reasons.map(|r| r.0),
                    $($field: s.$field.clone(),)*
                }
            }
        }

        impl From<Sample> for GpuSample {
            fn from(s: Sample) -> Self {
                Self {
                    index: s.index,
                    uuid: s.uuid,
                    name: s.name,
                    bus_id: s.bus_id,
                    vendor: s.vendor,
                    health: s.health,
                    clock_event_reasons: s.clock_event_reasons.map(ClockEventReasons),
                    $($field: s.$field,)*
                }
            }
        }
    };
}

sample_struct! {
    memory_total_mib: u64,
    memory_used_mib: u64,
    utilization_gpu_pct: f64,
    utilization_memory_pct: f64,
    temperature_c: f64,
    temperature_memory_c: f64,
    power_draw_w: f64,
    power_limit_w: f64,
    power_min_limit_w: f64,
    power_max_limit_w: f64,
    power_default_limit_w: f64,
    clock_sm_mhz: u32,
    clock_sm_max_mhz: u32,
    clock_mem_mhz: u32,
    pstate: SharedText,
    fan_speed_pct: f64,
    ecc_uncorrected_volatile: u64,
    retired_pages_pending: bool,
    persistence_mode: bool,
    temperature_slowdown_c: f64,
    temperature_shutdown_c: f64,
    driver_version: SharedText,
}

fn is_nvidia(vendor: &Vendor) -> bool {
    *vendor == Vendor::Nvidia
}

impl From<LostReason> for Lost {
    fn from(reason: LostReason) -> Self {
        match reason {
            LostReason::GpuLost => Lost::GpuLost,
            LostReason::DriverNotLoaded => Lost::DriverNotLoaded,
            LostReason::DriverLibraryMismatch => Lost::DriverLibraryMismatch,
            LostReason::NoDevices => Lost::NoDevices,
            LostReason::SmiMissing => Lost::SmiMissing,
            LostReason::Other => Lost::TelemetryFailed,
        }
    }
}

impl From<Lost> for LostReason {
    fn from(reason: Lost) -> Self {
        match reason {
            Lost::GpuLost => LostReason::GpuLost,
            Lost::DriverNotLoaded => LostReason::DriverNotLoaded,
            Lost::DriverLibraryMismatch => LostReason::DriverLibraryMismatch,
            Lost::NoDevices => LostReason::NoDevices,
            Lost::SmiMissing => LostReason::SmiMissing,
            Lost::TelemetryFailed => LostReason::Other,
        }
    }
}

impl From<&HostInfo> for Info {
    fn from(info: &HostInfo) -> Self {
        Self {
            driver_version: info.driver_version.clone(),
            cuda_version: info.cuda_version.clone(),
            source: info.source.clone(),
        }
    }
}

impl From<Info> for HostInfo {
    fn from(info: Info) -> Self {
        Self {
            driver_version: info.driver_version,
            cuda_version: info.cuda_version,
            source: info.source,
        }
    }
}

impl From<&GpuProcess> for Process {
    fn from(p: &GpuProcess) -> Self {
        Self {
            pid: p.pid,
            name: p.name.clone(),
            gpu_uuid: p.gpu_uuid.clone(),
            gpu_index: p.gpu_index,
            used_memory_mib: p.used_memory_mib,
        }
    }
}

impl From<Process> for GpuProcess {
    fn from(p: Process) -> Self {
        Self {
            pid: p.pid,
            name: p.name,
            gpu_uuid: p.gpu_uuid,
            gpu_index: p.gpu_index,
            used_memory_mib: p.used_memory_mib,
        }
    }
}

impl From<&HostEvent> for Event {
    fn from(event: &HostEvent) -> Self {
        match event {
            HostEvent::Connecting { attempt, at_ms } => Event::Connecting {
                attempt: *attempt,
                at_ms: *at_ms,
            },
            HostEvent::Connected(info) => Event::Connected { info: info.into() },
            HostEvent::Boot { at_ms, boot_id } => Event::Boot {
                at_ms: *at_ms,
                boot_id: WireBootId(*boot_id),
            },
            HostEvent::HostKind { at_ms, kind } => Event::HostKind {
                at_ms: *at_ms,
                host_kind: *kind,
            },
            HostEvent::Sample { at_ms, gpu } => Event::Sample {
                at_ms: *at_ms,
                gpu: gpu.into(),
            },
            HostEvent::Processes { at_ms, processes } => Event::Processes {
                at_ms: *at_ms,
                processes: processes.iter().map(Process::from).collect(),
            },
            HostEvent::Kernel { at_ms, line } => Event::Kernel {
                at_ms: *at_ms,
                line: line.clone(),
            },
            HostEvent::Lost { at_ms, reason, raw } => Event::Lost {
                at_ms: *at_ms,
                reason: (*reason).into(),
                raw: raw.clone(),
            },
            HostEvent::Disconnected {
                at_ms,
                reason,
                summary,
                retry_at_ms,
                words,
            } => Event::Disconnected {
                at_ms: *at_ms,
                reason: reason.clone(),
                summary: summary.clone(),
                retry_at_ms: *retry_at_ms,
                reason_words: words
                    .as_ref()
                    .map(|w| wire_notice::words_to_wire(&w.reason)),
                summary_words: words
                    .as_ref()
                    .map(|w| wire_notice::words_to_wire(&w.summary)),
            },
            HostEvent::Unresponsive { at_ms, silent_ms } => Event::Unresponsive {
                at_ms: *at_ms,
                silent_ms: *silent_ms,
            },
            HostEvent::Responsive { at_ms } => Event::Responsive { at_ms: *at_ms },
            HostEvent::Flooding {
                at_ms,
                detail,
                words,
            } => Event::Flooding {
                at_ms: *at_ms,
                detail: detail.clone(),
                detail_words: words.as_ref().map(wire_notice::words_to_wire),
            },
            HostEvent::Notice { at_ms, text } => {
                let (key, args) = wire_notice::to_wire(text);
                Event::Notice {
                    at_ms: *at_ms,
                    text: text.english(),
                    key,
                    args,
                }
            }
            HostEvent::Evidence {
                at_ms,
                command,
                output,
            } => Event::Evidence {
                at_ms: *at_ms,
                command: command.clone(),
                output: output.clone(),
            },
            HostEvent::Jobs { at_ms, jobs } => Event::Jobs {
                at_ms: *at_ms,
                jobs: jobs.iter().map(Job::from).collect(),
            },
            HostEvent::JobLog {
                at_ms,
                pid,
                restart,
                text,
            } => Event::JobLog {
                at_ms: *at_ms,
                pid: *pid,
                restart: *restart,
                text: text.clone(),
            },
            HostEvent::Disk {
                at_ms,
                uses,
                loader_workers,
            } => Event::Disk {
                at_ms: *at_ms,
                uses: uses.iter().map(Disk::from).collect(),
                loader_workers: *loader_workers,
            },
            HostEvent::DeadMan { at_ms, state } => Event::DeadMan {
                at_ms: *at_ms,
                after_minutes: state.after_minutes,
                armed: state.armed,
                deadline_ms: state.deadline_ms,
                why_not: state.why_not.as_ref().map(crate::words::Words::english),
                why_not_words: state.why_not.as_ref().map(wire_notice::words_to_wire),
            },
        }
    }
}

impl From<Event> for HostEvent {
    fn from(event: Event) -> Self {
        match event {
            Event::Connecting { attempt, at_ms } => HostEvent::Connecting { attempt, at_ms },
            Event::Connected { info } => HostEvent::Connected(info.into()),
            Event::Boot { at_ms, boot_id } => HostEvent::Boot {
                at_ms,
                boot_id: boot_id.0,
            },
            Event::HostKind { at_ms, host_kind } => HostEvent::HostKind {
                at_ms,
                kind: host_kind,
            },
            Event::Sample { at_ms, gpu } => HostEvent::Sample {
                at_ms,
                gpu: gpu.into(),
            },
            Event::Processes { at_ms, processes } => HostEvent::Processes {
                at_ms,
                processes: processes.into_iter().map(GpuProcess::from).collect(),
            },
            Event::Kernel { at_ms, line } => HostEvent::Kernel { at_ms, line },
            Event::Lost { at_ms, reason, raw } => HostEvent::Lost {
                at_ms,
                reason: reason.into(),
                raw,
            },
            Event::Disconnected {
                at_ms,
                reason,
                summary,
                retry_at_ms,
                reason_words,
                summary_words,
            } => HostEvent::Disconnected {
                words: wire_notice::down_words_from_wire(
                    (&reason, reason_words),
                    (&summary, summary_words),
                ),
                at_ms,
                reason,
                summary,
                retry_at_ms,
            },
            Event::Unresponsive { at_ms, silent_ms } => {
                HostEvent::Unresponsive { at_ms, silent_ms }
            }
            Event::Responsive { at_ms } => HostEvent::Responsive { at_ms },
            Event::Flooding {
                at_ms,
                detail,
                detail_words,
            } => HostEvent::Flooding {
                words: detail
                    .as_deref()
                    .and_then(|d| wire_notice::words_from_wire(d, detail_words)),
                at_ms,
                detail,
            },
            Event::Notice {
                at_ms,
                text,
                key,
                args,
            } => HostEvent::Notice {
                at_ms,
                text: wire_notice::from_wire(text, key, args),
            },
            Event::Evidence {
                at_ms,
                command,
                output,
            } => HostEvent::Evidence {
                at_ms,
                command,
                output,
            },
            Event::Jobs { at_ms, jobs } => HostEvent::Jobs {
                at_ms,
                jobs: jobs.into_iter().map(JobProcess::from).collect(),
            },
            Event::JobLog {
                at_ms,
                pid,
                restart,
                text,
            } => HostEvent::JobLog {
                at_ms,
                pid,
                restart,
                text,
            },
            Event::Disk {
                at_ms,
                uses,
                loader_workers,
            } => HostEvent::Disk {
                at_ms,
                uses: uses.into_iter().filter_map(Disk::into_use).collect(),
                loader_workers,
            },
            Event::DeadMan {
                at_ms,
                after_minutes,
                armed,
                deadline_ms,
                why_not,
                why_not_words,
            } => HostEvent::DeadMan {
                at_ms,
                state: crate::fleet::dead_man::DeadManState {
                    after_minutes,
                    armed,
                    deadline_ms,
                    why_not: why_not.map(|w| {
                        wire_notice::words_from_wire(&w, why_not_words)
                            .unwrap_or_else(|| crate::words::Words::verbatim(w))
                    }),
                },
            },
        }
    }
}

impl Event {
    /// The source's own stamp, when the event has one.
    pub fn at_ms(&self) -> Option<u64> {
        match self {
            Event::Connecting { at_ms, .. } => *at_ms,
            Event::Connected { .. } => None,
            Event::Sample { at_ms, .. }
            | Event::Boot { at_ms, .. }
            | Event::HostKind { at_ms, .. }
            | Event::Processes { at_ms, .. }
            | Event::Kernel { at_ms, .. }
            | Event::Lost { at_ms, .. }
            | Event::Disconnected { at_ms, .. }
            | Event::Unresponsive { at_ms, .. }
            | Event::Responsive { at_ms }
            | Event::Flooding { at_ms, .. }
            | Event::Notice { at_ms, .. }
            | Event::Evidence { at_ms, .. }
            | Event::Jobs { at_ms, .. }
            | Event::JobLog { at_ms, .. }
            | Event::Disk { at_ms, .. }
            | Event::DeadMan { at_ms, .. } => Some(*at_ms),
        }
    }

    /// The same event stamped `at_ms` instead (replay moves events to the time they are
    /// played).
    pub fn restamped(mut self, to_ms: u64) -> Self {
        // A retry time moves with its event, so the row still says "retry in 4 s".
        if let Event::Disconnected {
            at_ms,
            retry_at_ms: Some(retry),
            ..
        } = &mut self
        {
            *retry = to_ms.saturating_add(retry.saturating_sub(*at_ms));
        }
        // So does a switch's deadline.
        if let Event::DeadMan {
            at_ms,
            deadline_ms: Some(deadline),
            ..
        } = &mut self
        {
            *deadline = to_ms.saturating_add(deadline.saturating_sub(*at_ms));
        }
        match &mut self {
            Event::Connecting { at_ms, .. } => *at_ms = at_ms.map(|_| to_ms),
            Event::Connected { .. } => {}
            Event::Sample { at_ms, .. }
            | Event::Boot { at_ms, .. }
            | Event::HostKind { at_ms, .. }
            | Event::Processes { at_ms, .. }
            | Event::Kernel { at_ms, .. }
            | Event::Lost { at_ms, .. }
            | Event::Disconnected { at_ms, .. }
            | Event::Unresponsive { at_ms, .. }
            | Event::Responsive { at_ms }
            | Event::Flooding { at_ms, .. }
            | Event::Notice { at_ms, .. }
            | Event::Evidence { at_ms, .. }
            | Event::Jobs { at_ms, .. }
            | Event::JobLog { at_ms, .. }
            | Event::Disk { at_ms, .. }
            | Event::DeadMan { at_ms, .. } => *at_ms = to_ms,
        }
        self
    }
}
