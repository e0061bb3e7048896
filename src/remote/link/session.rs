//! Serving one connected session: start the telemetry stream, the full, version and process
//! queries, the disk reading (`disk.rs`, at connect and once a minute) and the kernel-log
//! follower, turn their lines into events, restart what ends, and
//! notice when the link goes silent.
//!
//! The stream asks only for the fields that change every tick (`STREAM_FIELDS`), because
//! nvidia-smi's cost per tick grows with the field count; a full query at connect, every
//! `detail_interval_ms` (60 s) and after a stream restart supplies the rest, and each streamed line is
//! laid over its GPU's last full sample before it goes out.
//!
//! Every command has a budget (`flood.rs`): one that floods is stopped and the host reported as
//! flooding until it has behaved for a while. A host that stops sending altogether while the
//! stream runs is reported unresponsive after two intervals, long before the link gives up on
//! it (`dead_after_ms`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::fleet::HostEvent;
use crate::remote::error::RemoteError;
use crate::remote::link::channel_run::RunEvent;
use crate::remote::link::disk;
use crate::remote::link::evidence::{self, EVIDENCE_BUDGET, EvidenceRun};
use crate::remote::link::flood::{OTHER_BUDGET, query_budget, stream_budget};
use crate::remote::link::host_kind;
use crate::remote::link::mux::{Mux, Slot};
use crate::remote::link::queries::exit_status;
use crate::remote::link::session_state::{DetailRun, Held, SessionState, StreamRun, keep};
use crate::remote::link::smi::{self, FieldList};
use crate::remote::link::{Ended, Link, Mode};
use crate::remote::sanitize::sanitize;
use crate::remote::transport::Connection;
use crate::telemetry::boot_id::BootId;
use crate::telemetry::smi_csv::{FieldLayout, overlay_sample, parse_compute_app_line};
use crate::telemetry::smi_table::parse_versions;
use crate::telemetry::source::now_ms;
use crate::telemetry::{GpuSample, HostInfo, TimestampMs};
use crate::words::Words;

/// Failure texts can span lines ("...version mismatch" then "NVML library version: ..."):
/// the `Lost` goes out this long after the first one, or at exit if that comes first.
pub(super) const LOST_GATHER: Duration = Duration::from_millis(300);
/// Longest wait between checks of the timers and the link's silence; a stop wakes the wait at
/// once through the stop waker, and due timers shorten it.
const MAX_WAIT: Duration = Duration::from_secs(5);
pub(super) const MAX_HELD_EVENTS: usize = 4_096;
/// While samples are held back for the loop to catch up, how often to offer them again.
const HELD_RETRY: Duration = Duration::from_millis(50);

impl Link {
    /// Serves one session on the caller's thread until it ends (a one-shot reading).
    pub(crate) fn serve(&mut self, connection: Connection) -> Ended {
        let (mut mux, mut st) = self.begin(connection);
        let ended = self.serve_loop(&mut mux, &mut st);
        mux.close();
        ended
    }

    /// A fresh session over `connection`: its channels and what it has learned so far.
    pub(crate) fn begin(&self, connection: Connection) -> (Mux, SessionState) {
        let mut mux = Mux::new(connection, self.opts.keepalive_interval_s);
        if self.mode == Mode::Follow {
            mux.keep_query_channels();
        }
        let now = Instant::now();
        let st = SessionState {
            connected: false,
            held: Vec::new(),
            version_lines: Vec::new(),
            boot_lines: Vec::new(),
            kind_lines: Vec::new(),
            kind_due: false,
            kind_probing: false,
            versions_done: false,
            detail_pending: false,
            versions_deadline: now + Duration::from_millis(self.opts.versions_wait_ms),
            stream_layout: Arc::new(self.stream_list().layout().clone()),
            detail_run: DetailRun::default(),
            detail_due: None,
            detail_on_sample: false,
            first_driver: None,
            run: StreamRun::default(),
            stream_restart_at: None,
            last_lost: None,
            apps_lines: Vec::new(),
            processes_due: Some(now),
            processes_looked_at: false,
            kernel_stage: 0,
            kernel_lines: Vec::new(),
            deadline: (self.mode == Mode::Once)
                .then(|| now + Duration::from_millis(self.opts.snapshot_timeout_ms)),
            stream_budget: OTHER_BUDGET,
            after_flood: false,
            unresponsive: false,
            evidence: EvidenceRun::default(),
            accel: Default::default(),
            job: Default::default(),
            disk_due: Some(now),
            disk_pending: false,
            disk_run: Default::default(),
            dead_man: Default::default(),
        };
        (mux, st)
    }

    fn serve_loop(&mut self, mux: &mut Mux, st: &mut SessionState) -> Ended {
        if let Err(e) = self.start_session(mux, st) {
            return Ended::Dropped(e);
        }
        let mut events = Vec::new();
        loop {
            if self.stop.is_set() {
                return Ended::Stopped;
            }
            let wait = self.next_wait(mux, st);
            if let Err(e) = mux.pump(wait, &mut events, self.waker.as_ref()) {
                return Ended::Dropped(e);
            }
            if let Some(ended) = self.after_round(mux, st, &mut events) {
                return ended;
            }
        }
    }

    /// Acts on what a round of the channels brought and on the timers due; `Some` when the
    /// session is over.
    pub(crate) fn after_round(
        &mut self,
        mux: &mut Mux,
        st: &mut SessionState,
        events: &mut Vec<(Slot, RunEvent)>,
    ) -> Option<Ended> {
        // The round's readings (a line per GPU, and what the timers bring) go out as one burst.
        self.start_burst();
        let ended = self.act_on_round(mux, st, events);
        self.end_burst();
        ended
    }

    fn act_on_round(
        &mut self,
        mux: &mut Mux,
        st: &mut SessionState,
        events: &mut Vec<(Slot, RunEvent)>,
    ) -> Option<Ended> {
        let dead_after = Duration::from_millis(self.opts.dead_after_ms);
        self.check_silence(mux, st);
        for (slot, event) in events.drain(..) {
            if let Err(e) = self.on_event(slot, event, mux, st) {
                return Some(Ended::Dropped(e));
            }
        }
        self.flush_job_log(st);
        if let Err(e) = self.on_timers(mux, st).and_then(|()| mux.keepalive()) {
            return Some(Ended::Dropped(e));
        }
        self.release_held(false);
        if mux.silent_for() > dead_after {
            return Some(Ended::Dropped(RemoteError::LinkDead {
                silent_s: mux.silent_for().as_secs(),
            }));
        }
        if self.mode == Mode::Once {
            let busy = [Slot::Versions, Slot::Stream, Slot::Processes]
                .iter()
                .any(|s| mux.running(*s));
            let disk_waits = (st.disk_pending && !st.accel.active()) || st.dead_man.running;
            if st.connected
                && !busy
                && !disk_waits
                && !Self::jobs_busy(mux)
                && st.stream_restart_at.is_none()
            {
                return Some(Ended::Finished);
            }
            if st.deadline.is_some_and(|d| Instant::now() >= d) {
                return Some(Ended::Dropped(RemoteError::Incomplete {
                    timeout_ms: self.opts.snapshot_timeout_ms,
                }));
            }
        }
        None
    }

    pub(crate) fn start_session(
        &mut self,
        mux: &mut Mux,
        st: &mut SessionState,
    ) -> Result<(), RemoteError> {
        // Which boot this is, whatever the host's GPUs: a new one ends the faults before it.
        if self.mode == Mode::Follow {
            mux.start(Slot::BootId, &smi::boot_id_command()?, OTHER_BUDGET)?;
        }
        self.dead_man_start(st);
        if self.accel_start(mux, st)? {
            return Ok(());
        }
        st.disk_pending = true;
        mux.start(
            Slot::Versions,
            &smi::versions_command(&self.opts.nvidia_smi)?,
            OTHER_BUDGET,
        )?;
        if self.mode == Mode::Follow {
            self.start_detail(mux, st)?;
            st.detail_pending = true;
        }
        self.start_stream(mux, st)?;
        self.start_kernel(mux)
    }

    /// Follows the kernel log when the link follows the host and may read it (any vendor's
    /// GPUs: the driver's lines are the findings).
    pub(crate) fn start_kernel(&mut self, mux: &mut Mux) -> Result<(), RemoteError> {
        if self.mode == Mode::Follow
            && self.opts.follow_kernel
            && !self.kernel_unavailable
            && let Some(command) = smi::kernel_command(0)
        {
            mux.start(Slot::Kernel, &command, OTHER_BUDGET)?;
        }
        Ok(())
    }

    /// The list the stream slot runs with: a one-shot reading is a single full query.
    fn stream_list(&self) -> &FieldList {
        match self.mode {
            Mode::Follow => &self.stream,
            Mode::Once => &self.detail,
        }
    }

    pub(super) fn start_stream(
        &mut self,
        mux: &mut Mux,
        st: &mut SessionState,
    ) -> Result<(), RemoteError> {
        let interval = (self.mode == Mode::Follow).then_some(self.opts.interval_ms.max(1));
        let list = self.stream_list();
        let command = smi::query_command(&self.opts.nvidia_smi, list.names(), interval)?;
        st.stream_layout = Arc::new(list.layout().clone());
        st.stream_budget = match interval {
            Some(ms) => stream_budget(ms, self.details.len()),
            None => query_budget(self.details.len()),
        };
        mux.start(Slot::Stream, &command, st.stream_budget)?;
        Ok(())
    }

    pub(super) fn start_detail(
        &mut self,
        mux: &mut Mux,
        st: &mut SessionState,
    ) -> Result<(), RemoteError> {
        let command = smi::query_command(&self.opts.nvidia_smi, self.detail.names(), None)?;
        st.detail_run = DetailRun::default();
        st.detail_due =
            Some(Instant::now() + Duration::from_millis(self.opts.detail_interval_ms.max(1_000)));
        mux.start(Slot::Detail, &command, query_budget(self.details.len()))?;
        Ok(())
    }

    pub(crate) fn next_wait(&self, mux: &Mux, st: &SessionState) -> Duration {
        let now = Instant::now();
        // The soonest of the timers set (computed for every wait, so without a list).
        let mut wait = MAX_WAIT.min(mux.until_keepalive());
        let mut due = |at: Option<Instant>| {
            if let Some(at) = at {
                wait = wait.min(at.saturating_duration_since(now));
            }
        };
        due(st.stream_restart_at);
        due(st.processes_due);
        due(st.detail_due);
        if !mux.running(Slot::DeadMan) {
            due(st.dead_man.due);
        }
        // A reading that waits for another command is not a timer: counting it would make
        // every wait zero until that command ends (a frozen host's never does).
        if !Self::disk_waits_for_others(mux) {
            due(st.disk_due);
        }
        if !st.connected {
            due(Some(st.versions_deadline));
        }
        if !st.run.lost_sent {
            due(st.run.failure_since.map(|t| t + LOST_GATHER));
        }
        due(self.flood.calm_at(self.stream_window()));
        if self.holds_samples() {
            due(Some(now + HELD_RETRY));
        }
        if self.watches_silence(mux, st) && !st.unresponsive {
            due(Some(
                now + self.silence_limit().saturating_sub(mux.silent_for()),
            ));
        }
        wait
    }

    fn on_event(
        &mut self,
        slot: Slot,
        event: RunEvent,
        mux: &mut Mux,
        st: &mut SessionState,
    ) -> Result<(), RemoteError> {
        // The boot id, the kernel log and the dead-man switch whatever the host's GPUs.
        if st.accel.active() && !matches!(slot, Slot::BootId | Slot::Kernel | Slot::DeadMan) {
            return self.accel_event(slot, event, mux, st);
        }
        match (slot, event) {
            (Slot::BootId, event) if st.kind_probing => self.on_host_kind(st, event),
            (Slot::BootId, event) => self.on_boot_id(st, event),
            (Slot::DeadMan, event) => self.dead_man_event(st, event),
            (slot @ (Slot::JobProbe | Slot::JobLog), event) => {
                self.on_job_event(slot, event, mux, st)?;
            }
            (slot, RunEvent::Flooded(flood)) => self.on_flood(st, slot, &flood),
            (Slot::Versions, RunEvent::Line(line)) => keep(&mut st.version_lines, line),
            (Slot::Versions, _) => {
                st.versions_done = true;
                if !st.detail_pending {
                    self.announce(st);
                }
            }
            (Slot::Detail, RunEvent::Line(line)) => self.on_detail_line(st, line),
            (Slot::Detail, RunEvent::Exited { status }) => self.on_detail_exit(mux, st, status)?,
            (Slot::Detail, RunEvent::Refused(_)) => self.detail_answered(st),
            (Slot::Stream, RunEvent::Line(line)) => self.on_stream_line(mux, st, line)?,
            (Slot::Stream, RunEvent::Exited { status }) => self.on_stream_exit(mux, st, status)?,
            (Slot::Stream, RunEvent::Refused(why)) => {
                self.notice_once(stream_refused(&why));
                self.schedule_restart(st, self.opts.telemetry_retry_ms);
            }
            (Slot::Processes, RunEvent::Line(line)) => self.on_processes_line(st, line),
            (Slot::Processes, RunEvent::Exited { status }) => {
                let lines = std::mem::take(&mut st.apps_lines);
                if status != Some(0) {
                    st.job.list_ended();
                } else {
                    let processes: Vec<_> = lines
                        .iter()
                        .filter_map(|l| parse_compute_app_line(l).ok())
                        .map(|mut p| {
                            p.name = sanitize(&p.name);
                            p.gpu_uuid = sanitize(&p.gpu_uuid);
                            p
                        })
                        .collect();
                    let pids = processes.iter().map(|p| p.pid).collect();
                    self.emit_or_hold(
                        st,
                        HostEvent::Processes {
                            at_ms: now_ms(),
                            processes,
                        },
                    );
                    self.jobs_listed(mux, st, pids)?;
                }
            }
            (Slot::Processes, RunEvent::Refused(_)) => {
                st.apps_lines.clear();
                st.job.list_ended();
            }
            (Slot::Kernel, RunEvent::Line(line)) => {
                if smi::is_gpu_kernel_line(&line) {
                    if evidence::is_fault_line(&line) {
                        st.evidence.want();
                    }
                    let line = sanitize(&line);
                    self.emit_or_hold(
                        st,
                        HostEvent::Kernel {
                            at_ms: now_ms(),
                            line,
                        },
                    );
                } else if st.kernel_lines.len() < 4 {
                    st.kernel_lines.push(line);
                }
            }
            (Slot::Kernel, RunEvent::Exited { status }) => self.on_kernel_exit(mux, st, status),
            (Slot::Kernel, RunEvent::Refused(why)) => {
                // The reader never ran: the notice says why in the SSH layer's words.
                st.kernel_lines.clear();
                self.kernel_unavailable = true;
                self.notice_once(kernel_refused(&why));
            }
            (Slot::Evidence, RunEvent::Line(line)) => st.evidence.line(&line),
            (Slot::Evidence, RunEvent::Exited { status }) => {
                let event = st.evidence.finish(status, None);
                self.emit_or_hold(st, event);
            }
            (Slot::Evidence, RunEvent::Refused(why)) => {
                let event = st.evidence.finish(None, Some(&why.english()));
                self.emit_or_hold(st, event);
            }
            (Slot::Disk, RunEvent::Line(line)) => st.disk_run.line(&line),
            (Slot::Disk, RunEvent::Exited { .. } | RunEvent::Refused(_)) => self.disk_done(st),
            // Only a job's log is read as bytes (`Mux::start_passing_bytes`).
            (_, RunEvent::Bytes(_)) => {}
        }
        Ok(())
    }

    /// The boot id's reader: its one line, checked, goes out as `Boot` once it exits well.
    /// A host without one (not Linux, a container that hides `/proc`) or that prints anything
    /// else is left without: its faults then end only when its GPUs stream again.
    fn on_boot_id(&mut self, st: &mut SessionState, event: RunEvent) {
        // Then, on the slot the boot id no longer needs, whether the host is a container.
        if matches!(event, RunEvent::Exited { .. } | RunEvent::Refused(_)) {
            st.kind_due = true;
        }
        match event {
            RunEvent::Line(line) => keep(&mut st.boot_lines, line),
            RunEvent::Exited { status: Some(0) } => {
                let lines = std::mem::take(&mut st.boot_lines);
                match BootId::parse(&lines.join("\n")) {
                    Ok(boot_id) => self.emit_or_hold(
                        st,
                        HostEvent::Boot {
                            at_ms: now_ms(),
                            boot_id,
                        },
                    ),
                    Err(e) => tracing::debug!(error = ?e.to_string(), "no boot id"),
                }
            }
            RunEvent::Flooded(flood) => self.on_flood(st, Slot::BootId, &flood),
            RunEvent::Exited { .. } | RunEvent::Refused(_) | RunEvent::Bytes(_) => {
                st.boot_lines.clear();
            }
        }
    }

    /// The host-kind probe's reader: what it printed, read by [`host_kind::parse`], goes out as
    /// `HostKind` when it tells; a host whose answer tells nothing is left without.
    fn on_host_kind(&mut self, st: &mut SessionState, event: RunEvent) {
        if !matches!(event, RunEvent::Line(_) | RunEvent::Bytes(_)) {
            st.kind_probing = false;
        }
        match event {
            RunEvent::Line(line) => keep(&mut st.kind_lines, line),
            RunEvent::Exited { .. } => {
                let lines = std::mem::take(&mut st.kind_lines);
                if let Some(kind) = host_kind::parse(&lines.join("\n")) {
                    let event = HostEvent::HostKind {
                        at_ms: now_ms(),
                        kind,
                    };
                    self.emit_or_hold(st, event);
                }
            }
            RunEvent::Flooded(flood) => self.on_flood(st, Slot::BootId, &flood),
            RunEvent::Refused(_) | RunEvent::Bytes(_) => st.kind_lines.clear(),
        }
    }

    fn on_kernel_exit(&mut self, mux: &mut Mux, st: &mut SessionState, status: Option<i32>) {
        let output = std::mem::take(&mut st.kernel_lines).join(" ");
        if status == Some(0) {
            return;
        }
        if smi::rejected_option(&output) {
            st.kernel_stage += 1;
            if let Some(command) = smi::kernel_command(st.kernel_stage)
                && mux.start(Slot::Kernel, &command, OTHER_BUDGET).is_ok()
            {
                return;
            }
        }
        self.kernel_unavailable = true;
        self.notice_once(kernel_unreadable(output, status));
    }

    fn on_timers(&mut self, mux: &mut Mux, st: &mut SessionState) -> Result<(), RemoteError> {
        self.dead_man_timers(mux, st)?;
        if st.kind_due && st.connected && !mux.running(Slot::BootId) {
            st.kind_due = false;
            st.kind_probing = true;
            mux.start(Slot::BootId, &host_kind::command()?, OTHER_BUDGET)?;
        }
        if st.accel.active() {
            return self.accel_timers(mux, st);
        }
        let now = Instant::now();
        if !st.connected && now >= st.versions_deadline {
            // The full query may still answer and complete later samples; only the wait ends.
            mux.cancel(Slot::Versions);
            self.announce(st);
        }
        if let (Some(reason), Some(since)) = (st.run.failure, st.run.failure_since)
            && !st.run.lost_sent
            && now >= since + LOST_GATHER
        {
            st.run.lost_sent = true;
            let lines = st.run.failure_lines.clone();
            self.emit_lost(st, reason, &lines);
        }
        if st.stream_restart_at.is_some_and(|t| now >= t) && !mux.running(Slot::Stream) {
            st.stream_restart_at = None;
            self.start_stream(mux, st)?;
            // The GPUs may have changed while it was down (reset, driver reload); not so when
            // it was stopped for flooding, and a full query would only flood again.
            st.detail_on_sample = self.mode == Mode::Follow && !st.after_flood;
            st.after_flood = false;
        }
        if self.flood.calmed(now, self.stream_window()) {
            self.emit_or_hold(
                st,
                HostEvent::Flooding {
                    at_ms: now_ms(),
                    detail: None,
                    words: None,
                },
            );
        }
        if self.mode == Mode::Follow && st.evidence.start_now() {
            mux.start(
                Slot::Evidence,
                &evidence::evidence_command(&self.opts.nvidia_smi)?,
                EVIDENCE_BUDGET,
            )?;
        }
        let healthy = st.last_lost.is_none() && st.run.failure.is_none();
        if st.detail_due.is_some_and(|t| now >= t) {
            if healthy && !mux.running(Slot::Detail) {
                self.start_detail(mux, st)?;
            } else {
                st.detail_due =
                    Some(now + Duration::from_millis(self.opts.detail_interval_ms.max(1_000)));
            }
        }
        // Someone just opened this host: its process list now, not up to 30 s later.
        let looked_at = self.backlog.looked_at();
        if looked_at && !st.processes_looked_at {
            st.processes_due = st.processes_due.map(|t| t.min(now));
        }
        st.processes_looked_at = looked_at;
        self.retune_job_log(mux, st)?;
        if st.processes_due.is_some_and(|t| now >= t) {
            if healthy && !mux.running(Slot::Processes) {
                let command = self.processes_command(mux, st)?;
                mux.start(Slot::Processes, &command, OTHER_BUDGET)?;
            }
            let every_ms = if looked_at {
                self.opts.processes_interval_ms
            } else {
                self.opts.processes_unwatched_interval_ms
            };
            st.processes_due =
                (self.mode == Mode::Follow).then(|| now + Duration::from_millis(every_ms.max(100)));
        }
        self.disk_timers(mux, st)
    }

    /// Starts a reading when one is due and the process list (which names the jobs) is not
    /// running; a followed host reads again a minute later.
    pub(super) fn disk_timers(
        &mut self,
        mux: &mut Mux,
        st: &mut SessionState,
    ) -> Result<(), RemoteError> {
        let now = Instant::now();
        if st.disk_due.is_none_or(|t| now < t) || Self::disk_waits_for_others(mux) {
            return Ok(());
        }
        let pids: Vec<u32> = st.job.listed.iter().flatten().copied().collect();
        let command = disk::disk_command(&disk::disk_paths(&pids))?;
        st.disk_run = disk::DiskRun::default();
        mux.start(Slot::Disk, &command, OTHER_BUDGET)?;
        st.disk_due = (self.mode == Mode::Follow).then(|| now + disk::DISK_INTERVAL);
        Ok(())
    }

    /// A reading due waits while one runs, or while the process list that names the jobs (and
    /// so their directories) is being read; that command's end steps the timers again.
    fn disk_waits_for_others(mux: &Mux) -> bool {
        mux.running(Slot::Disk) || mux.running(Slot::Processes) || mux.running(Slot::JobProbe)
    }

    /// The reading's command ended: what it found goes out (nothing when it found nothing).
    pub(super) fn disk_done(&mut self, st: &mut SessionState) {
        st.disk_pending = false;
        let (uses, loader_workers) = std::mem::take(&mut st.disk_run).finish();
        if uses.is_empty() {
            return;
        }
        self.emit_or_hold(
            st,
            HostEvent::Disk {
                at_ms: now_ms(),
                uses,
                loader_workers,
            },
        );
    }

    pub(super) fn schedule_restart(&self, st: &mut SessionState, after_ms: u64) {
        st.stream_restart_at = Some(Instant::now() + Duration::from_millis(after_ms));
    }

    /// Sends `Connected` (once per session) and whatever arrived before it.
    pub(super) fn announce(&mut self, st: &mut SessionState) {
        if st.connected {
            return;
        }
        st.connected = true;
        let (driver, cuda) = parse_versions(st.version_lines.iter().map(String::as_str));
        st.version_lines.clear();
        self.emit(HostEvent::Connected(HostInfo {
            driver_version: driver.or_else(|| st.first_driver.clone()),
            cuda_version: cuda,
            source: sanitize(&format!("ssh {}", self.host.target)),
        }));
        for held in std::mem::take(&mut st.held) {
            let event = match held {
                Held::Event(event) => event,
                Held::Streamed { at_ms, gpu, layout } => HostEvent::Sample {
                    at_ms,
                    gpu: self.complete(&layout, gpu),
                },
            };
            self.emit(event);
        }
    }

    pub(super) fn emit_or_hold(&self, st: &mut SessionState, event: HostEvent) {
        if st.connected {
            self.emit(event);
        } else if st.held.len() < MAX_HELD_EVENTS {
            st.held.push(Held::Event(event));
        }
    }

    pub(super) fn emit_sample(&self, st: &mut SessionState, at_ms: TimestampMs, gpu: GpuSample) {
        if st.connected {
            let gpu = self.complete(&st.stream_layout, gpu);
            self.emit(HostEvent::Sample { at_ms, gpu });
        } else if st.held.len() < MAX_HELD_EVENTS {
            let layout = Arc::clone(&st.stream_layout);
            st.held.push(Held::Streamed { at_ms, gpu, layout });
        }
    }

    /// A streamed sample laid over its GPU's last full one; as it is until one exists.
    fn complete(&self, layout: &FieldLayout, gpu: GpuSample) -> GpuSample {
        match self.details.get(&gpu.index) {
            Some(detail) => overlay_sample(layout, gpu, detail),
            None => gpu,
        }
    }
}

/// The host refused the stream; `why` is the SSH layer's text.
fn stream_refused(why: &Words) -> Words {
    Words::new("link_notice.stream_refused").put_words("why", why.clone())
}

/// The kernel log cannot be read: `output` is what the reader printed (`dmesg: read kernel
/// buffer failed: Operation not permitted`); when it printed nothing, how it ended.
fn kernel_unreadable(output: String, status: Option<i32>) -> Words {
    let notice = Words::new("link_notice.kernel_unreadable");
    if !output.is_empty() {
        return notice.put("why", output);
    }
    notice.put_words(
        "why",
        match status {
            Some(code) => exit_status(Some(code)),
            None => Words::new("link_notice.it_ended"),
        },
    )
}

/// The kernel log's reader could not be started: `why` is the SSH layer's text.
fn kernel_refused(why: &Words) -> Words {
    Words::new("link_notice.kernel_unreadable").put_words("why", why.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::words::Words;

    /// A kernel log reader the host refused: the notice says why in the notice's language,
    /// libssh2's words as they came; the English (the log) as it was.
    #[test]
    fn a_refused_kernel_log_reader_says_why_in_the_notices_language() {
        let why = Words::new("ssh_context.failed")
            .put_words("context", Words::new("ssh_context.open_channel"))
            .put(
                "message",
                "Channel open failure (administratively prohibited)",
            );
        let notice = kernel_refused(&why);
        assert_eq!(
            notice.english(),
            "the kernel log is not readable on this host, so Xid lines will not show (opening a \
             channel: Channel open failure (administratively prohibited))"
        );
        let zh = notice.render("zh-CN");
        assert!(
            zh.contains("打开通道时") && zh.contains("administratively prohibited"),
            "{zh}"
        );
        assert!(!zh.contains("opening a channel"), "{zh}");
    }
}
