//! The per-host link: what it knows of its host across sessions and how it reports to the
//! fleet. A followed link runs as a task on the links' runtime (`task.rs`): it connects,
//! serves one session until it drops, and reconnects with backoff. `read_once` runs the same
//! machinery on the caller's thread for a single reading.
//!
//! Everything here belongs to the link alone: a session (`session.rs`, its state in
//! `session_state.rs`, what its runs say in `queries.rs`, what it watches in `watchdog.rs`)
//! carries a few commands at once over one SSH session (`mux.rs`), each a [`channel_run`] on a
//! channel of its own that ends with it (`end_with_channel.rs`) or a request to a long-lived
//! shell (`run_shell.rs`). The training jobs on the host's GPUs are found and their logs
//! followed by `job_find.rs`, `job_watch.rs` and `job_follow.rs`; the host's dead-man switch
//! is armed and pushed by `dead_man.rs`.

mod accel_poll;
mod channel_run;
pub mod dead_man;
mod disk;
mod end_with_channel;
mod evidence;
mod flood;
pub(crate) mod host_kind;
mod job_find;
mod job_follow;
mod job_watch;
mod mux;
mod queries;
mod run_shell;
mod sanitize_sample;
mod session;
mod session_state;
mod smi;
mod task;
mod watchdog;

pub use task::spawn_link;

use std::cell::RefCell;
use std::collections::{BTreeMap, HashSet};
use std::os::unix::net::UnixStream;
use std::sync::Arc;

use crate::fleet::{DownWords, HostEvent, HostId, HostSink};
use crate::remote::LinkOptions;
use crate::remote::accel_tools::Probed;
use crate::remote::connect::{Opening, connect};
use crate::remote::credentials::{CredentialCache, PromptContext};
use crate::remote::error::RemoteError;
use crate::remote::host::RemoteHost;
use crate::remote::link::flood::FloodState;
use crate::remote::link::smi::FieldList;
use crate::remote::option_policy::first_time;
use crate::remote::sanitize::sanitize;
use crate::telemetry::smi_csv::{QUERY_FIELDS, STREAM_FIELDS};
use crate::telemetry::source::{Backlog, StopFlag, now_ms};
use crate::telemetry::{GpuSample, TimestampMs};
use crate::words::Words;

/// Events one link may have waiting for the loop before it holds its samples back (the newest
/// per GPU replacing an older one held); fifty seconds of an 8-GPU host, and a few hundred
/// kilobytes.
const MAX_QUEUED_EVENTS: usize = 512;
/// GPUs whose samples may be held back.
const MAX_HELD_GPUS: usize = 256;

/// How one session of a link ended.
pub(crate) enum Ended {
    Stopped,
    /// A one-shot reading completed.
    Finished,
    Dropped(RemoteError),
}

/// Whether the link keeps a stream open or takes one reading and ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Follow,
    Once,
}

pub(crate) struct Link {
    pub(crate) host: RemoteHost,
    pub(crate) id: HostId,
    sink: HostSink,
    pub(crate) opts: LinkOptions,
    pub(crate) stop: StopFlag,
    pub(crate) mode: Mode,
    ctx: PromptContext,
    cache: CredentialCache,
    /// The full query's fields and the stream's; both shrink when this host's driver rejects a
    /// field, and stay shrunk across reconnects.
    pub(crate) detail: FieldList,
    pub(crate) stream: FieldList,
    /// Fields this host's nvidia-smi refused.
    pub(crate) rejected: HashSet<String>,
    /// The last full sample of each GPU index, which streamed lines are laid over; kept across
    /// reconnects so the first lines of a new session are complete too.
    pub(crate) details: BTreeMap<u32, GpuSample>,
    notices: HashSet<String>,
    /// Set once the kernel log proved unreadable here, so reconnects do not try again.
    pub(crate) kernel_unavailable: bool,
    /// Whether the host floods; kept across reconnects, as the console's flag is.
    pub(crate) flood: FloodState,
    /// Readable once `stop` is set, so a session waiting on its socket hears the stop at once;
    /// `None` if the socket pair could not be made (the wait then ends by timeout).
    pub(crate) waker: Option<UnixStream>,
    /// What this link has waiting for the loop.
    pub(crate) backlog: Arc<Backlog>,
    /// Samples held back while the backlog is full: the newest of each GPU.
    held: RefCell<BTreeMap<u32, (TimestampMs, GpuSample)>>,
    /// The samples of the round being served, sent as one burst at its end; `None` outside a
    /// round, or where the listener takes events one at a time.
    burst: RefCell<Option<Vec<HostEvent>>>,
    /// Which tool reads this host's accelerators (`accel_poll.rs`); probed once per host.
    pub(crate) accel: Probed,
}

/// Connects once and reports one reading of every GPU, the processes and the versions as the
/// same events a link sends (`Connecting`, `Connected`, `Sample`s, `Processes`, or `Lost` /
/// `Disconnected`), then disconnects. Blocking; for `gpufleet snapshot`.
pub fn read_once(
    host: &RemoteHost,
    id: HostId,
    sink: &HostSink,
    opts: &LinkOptions,
) -> Result<(), RemoteError> {
    let mut link = Link::new(
        host.clone(),
        id,
        sink.clone(),
        opts.clone(),
        StopFlag::default(),
        Mode::Once,
    );
    link.emit(HostEvent::Connecting {
        attempt: 1,
        at_ms: Some(now_ms()),
    });
    let result = match link.open(None) {
        Ok(connection) => match link.serve(connection) {
            Ended::Finished | Ended::Stopped => Ok(()),
            Ended::Dropped(e) => Err(e),
        },
        Err(e) => Err(e),
    };
    if let Err(e) = &result {
        link.disconnected(e, None);
    }
    result
}

impl Link {
    pub(crate) fn new(
        host: RemoteHost,
        id: HostId,
        sink: HostSink,
        mut opts: LinkOptions,
        stop: StopFlag,
        mode: Mode,
    ) -> Self {
        // `ServerAliveInterval`/`CountMax`: a keepalive every interval, the link dead after
        // that many unanswered.
        if let Some(interval_s) = host.settings.server_alive_interval_s {
            opts.keepalive_interval_s = interval_s;
            opts.dead_after_ms = u64::from(interval_s)
                * u64::from(host.settings.server_alive_count_max.max(1))
                * 1_000;
        }
        let ctx = PromptContext::new(id, &host.name, host.target.to_string(), stop.clone());
        let waker = stop.waker().ok();
        Self {
            host,
            id,
            sink,
            opts,
            stop,
            mode,
            ctx,
            cache: CredentialCache::default(),
            detail: FieldList::new(QUERY_FIELDS),
            stream: FieldList::new(STREAM_FIELDS),
            rejected: HashSet::new(),
            details: BTreeMap::new(),
            notices: HashSet::new(),
            kernel_unavailable: false,
            flood: FloodState::default(),
            waker,
            backlog: Arc::new(Backlog::default()),
            held: RefCell::new(BTreeMap::new()),
            burst: RefCell::new(None),
            accel: Probed::default(),
        }
    }

    /// Warns once per process about each ssh_config setting of this host gpufleet does not
    /// apply.
    pub(crate) fn warn_settings(&self) {
        for warning in &self.host.settings.warnings {
            if first_time(&warning.english()) {
                self.notice(warning.clone());
            }
        }
    }

    /// Connects and logs in, telling the user about a host key it added.
    pub(crate) fn open(
        &mut self,
        opened: Option<Opening>,
    ) -> Result<crate::remote::transport::Connection, RemoteError> {
        let connected = connect(&self.host, &self.opts, &self.ctx, &mut self.cache, opened)?;
        for warning in connected.warnings {
            if first_time(&warning.english()) {
                self.notice(warning);
            }
        }
        if let Some(key) = connected.accepted_key {
            self.notice(key.added_words(false));
        }
        Ok(connected.connection)
    }

    /// Reports the link down; `retry_in` is when it tries again, `None` when it will not.
    pub(crate) fn disconnected(&self, e: &RemoteError, retry_in: Option<std::time::Duration>) {
        let at_ms = now_ms();
        self.emit(HostEvent::Disconnected {
            at_ms,
            reason: sanitize(&e.to_string()),
            summary: sanitize(&e.summary()),
            retry_at_ms: retry_in
                .map(|d| at_ms.saturating_add(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))),
            words: Some(DownWords {
                reason: e.words().map_verbatim(&sanitize),
                summary: e.summary_words(),
            }),
        });
    }

    /// Sends one event; a closed channel means the app is gone, so the link stops. A sample
    /// is held back while the loop has `MAX_QUEUED_EVENTS` of this link's events to take, and
    /// joins the round's burst while one is gathered; any other event first sends the burst
    /// and the samples held, so that events keep their order.
    pub(crate) fn emit(&self, event: HostEvent) {
        if let HostEvent::Sample { at_ms, gpu } = event {
            let mut held = self.held.borrow_mut();
            if held.is_empty() {
                let mut burst = self.burst.borrow_mut();
                match burst.as_mut() {
                    // The burst took its place in the backlog with its first sample.
                    Some(burst) if !burst.is_empty() || self.backlog.try_add(MAX_QUEUED_EVENTS) => {
                        // A round brings a reading of each GPU: room for them all at once,
                        // instead of growing 0, 4, 8.
                        if burst.capacity() == 0 {
                            burst.reserve_exact(self.details.len());
                        }
                        burst.push(HostEvent::Sample { at_ms, gpu });
                        return;
                    }
                    None if self.backlog.try_add(MAX_QUEUED_EVENTS) => {
                        drop(burst);
                        drop(held);
                        self.send(HostEvent::Sample { at_ms, gpu });
                        return;
                    }
                    _ => {}
                }
            }
            if held.len() < MAX_HELD_GPUS || held.contains_key(&gpu.index) {
                held.insert(gpu.index, (at_ms, gpu));
            }
            return;
        }
        self.send_burst_so_far();
        self.release_held(true);
        self.backlog.add();
        self.send(event);
    }

    /// Gathers the samples emitted from now on into one burst, sent by [`Link::end_burst`]
    /// (where the listener takes bursts; else each goes as it comes).
    pub(crate) fn start_burst(&self) {
        if self.sink.takes_bursts() {
            *self.burst.borrow_mut() = Some(Vec::new());
        }
    }

    /// Sends the burst gathered since [`Link::start_burst`] and stops gathering.
    pub(crate) fn end_burst(&self) {
        self.send_burst_so_far();
        *self.burst.borrow_mut() = None;
    }

    /// Sends what the burst holds so far; it goes on gathering.
    fn send_burst_so_far(&self) {
        let events = match self.burst.borrow_mut().as_mut() {
            Some(burst) if !burst.is_empty() => std::mem::take(burst),
            _ => return,
        };
        if !self.sink.send_all(self.id, events) {
            self.stop.set();
        }
    }

    /// Whether samples are held back, waiting for room.
    pub(crate) fn holds_samples(&self) -> bool {
        !self.held.borrow().is_empty()
    }

    /// Sends the samples held back while the backlog has room for them, or all when `force`.
    pub(crate) fn release_held(&self, force: bool) {
        loop {
            if self.held.borrow().is_empty() {
                return;
            }
            if force {
                self.backlog.add();
            } else if !self.backlog.try_add(MAX_QUEUED_EVENTS) {
                return;
            }
            let Some((_, (at_ms, gpu))) = self.held.borrow_mut().pop_first() else {
                return;
            };
            self.send(HostEvent::Sample { at_ms, gpu });
        }
    }

    fn send(&self, event: HostEvent) {
        if !self.sink.send(self.id, event) {
            self.stop.set();
        }
    }

    /// Sends a notice, what came from elsewhere in it sanitized.
    /// Takes the host's newest endpoint where the options know one (see
    /// [`crate::remote::EndpointLookup`]); a move is the host's notice.
    pub(crate) fn follow_endpoint(&mut self) {
        let Some(lookup) = self.opts.endpoints.clone() else {
            return;
        };
        let Some(endpoint) = lookup.endpoint(&self.host.name) else {
            return;
        };
        if endpoint == self.host.target {
            return;
        }
        let shown = |e: &crate::remote::Endpoint| format!("{}@{}:{}", e.user, e.host, e.port);
        let text = Words::new("endpoint_moved.notice")
            .put("from", sanitize(&shown(&self.host.target)))
            .put("to", sanitize(&shown(&endpoint)));
        self.host.target = endpoint;
        self.notice(text);
    }

    pub(crate) fn notice(&self, text: Words) {
        self.emit(HostEvent::Notice {
            at_ms: now_ms(),
            text: text.map_verbatim(&sanitize),
        });
    }

    /// A notice shown once in the link's life, however often its cause recurs.
    pub(crate) fn notice_once(&mut self, text: Words) {
        self.notice_once_per("", text);
    }

    /// A notice shown once in the link's life for each `about` (a field's name).
    pub(crate) fn notice_once_per(&mut self, about: &str, text: Words) {
        let once = format!("{}:{about}", text.key().unwrap_or_default());
        if self.notices.insert(once) {
            self.notice(text);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remote::Endpoint;
    use crate::telemetry::source::{Backlogs, SourceHandle};
    use std::sync::mpsc;

    fn sample(index: u32, at_ms: TimestampMs) -> HostEvent {
        HostEvent::Sample {
            at_ms,
            gpu: GpuSample {
                index,
                ..GpuSample::default()
            },
        }
    }

    /// A link whose loop counts its backlog, sending into `sink`; the handle keeps the count.
    fn counted_link(sink: HostSink) -> (Link, SourceHandle, Backlogs) {
        let (tx, backlog_rx) = mpsc::channel();
        let handle = SourceHandle::spawn_counted("t", 0, move |_, backlog| {
            let _ = tx.send(backlog);
        })
        .expect("spawn");
        let backlog = backlog_rx.recv().expect("backlog");
        let backlogs = Backlogs::arm(std::slice::from_ref(&handle));
        let host = RemoteHost {
            name: "h".into(),
            target: Endpoint {
                user: "u".into(),
                host: "127.0.0.1".into(),
                port: 22,
            },
            identity_files: Vec::new(),
            password_env: None,
            host_keys: Default::default(),
            proxy: Default::default(),
            settings: Default::default(),
            job_log: None,
            dead_man: None,
            disarm_stray_switch: false,
        };
        let mut link = Link::new(
            host,
            0,
            sink,
            LinkOptions::default(),
            StopFlag::default(),
            Mode::Follow,
        );
        link.backlog = backlog;
        (link, handle, backlogs)
    }

    #[test]
    fn a_full_backlog_holds_the_newest_sample_per_gpu_and_keeps_the_order() {
        let (tx, events) = mpsc::channel();
        let sink = HostSink::from_sender(tx, |host, event| (host, event));
        let (link, handle, backlogs) = counted_link(sink);
        for i in 0..MAX_QUEUED_EVENTS {
            link.emit(sample(0, i as TimestampMs));
        }
        // The loop has taken none: these wait, the newest of each GPU only.
        link.emit(sample(0, 10_001));
        link.emit(sample(1, 10_002));
        link.emit(sample(0, 10_003));
        let sent: Vec<(HostId, HostEvent)> = events.try_iter().collect();
        assert_eq!(sent.len(), MAX_QUEUED_EVENTS);
        assert!(link.holds_samples());
        // The loop takes one: one held sample goes.
        backlogs.taken(sent[0].0);
        link.release_held(false);
        let next: Vec<(HostId, HostEvent)> = events.try_iter().collect();
        assert_eq!(next, vec![(0, sample(0, 10_003))]);
        // Any other event first sends what is held, so it is never overtaken.
        link.emit(HostEvent::Connecting {
            attempt: 2,
            at_ms: Some(5),
        });
        let last: Vec<(HostId, HostEvent)> = events.try_iter().collect();
        assert_eq!(
            last,
            vec![
                (0, sample(1, 10_002)),
                (
                    0,
                    HostEvent::Connecting {
                        attempt: 2,
                        at_ms: Some(5),
                    }
                )
            ]
        );
        assert!(!link.holds_samples());
        handle.stop_and_join();
    }

    #[test]
    fn a_rounds_samples_go_out_as_one_burst_that_takes_one_place_in_the_backlog() {
        let (tx, bursts) = mpsc::channel();
        let single = tx.clone();
        let sink = HostSink::new(move |host, event| single.send((host, vec![event])).is_ok())
            .with_bursts(move |host, events| tx.send((host, events)).is_ok());
        let (link, handle, backlogs) = counted_link(sink);
        link.start_burst();
        for gpu in 0..4 {
            link.emit(sample(gpu, 7));
        }
        assert!(
            bursts.try_recv().is_err(),
            "nothing goes before the round ends"
        );
        link.end_burst();
        let got: Vec<(HostId, Vec<HostEvent>)> = bursts.try_iter().collect();
        assert_eq!(got, vec![(0, (0..4).map(|g| sample(g, 7)).collect())]);
        // Four readings, one place: the loop has room for the rest of its backlog.
        for i in 1..MAX_QUEUED_EVENTS {
            link.emit(sample(0, 100 + i as TimestampMs));
        }
        assert!(!link.holds_samples());
        link.emit(sample(0, 999));
        assert!(link.holds_samples(), "the backlog is full now");
        // The loop takes everything: the held reading goes, and there is room again.
        for _ in 0..=MAX_QUEUED_EVENTS {
            backlogs.taken(0);
        }
        let _: Vec<_> = bursts.try_iter().collect();
        link.release_held(false);
        // Within a round, another event sends the burst so far first: the order holds.
        link.start_burst();
        link.emit(sample(1, 1_000));
        link.emit(HostEvent::Connecting {
            attempt: 2,
            at_ms: Some(5),
        });
        link.emit(sample(2, 1_001));
        link.end_burst();
        let got: Vec<Vec<HostEvent>> = bursts.try_iter().map(|(_, e)| e).collect();
        assert_eq!(
            got,
            vec![
                vec![sample(0, 999)],
                vec![sample(1, 1_000)],
                vec![HostEvent::Connecting {
                    attempt: 2,
                    at_ms: Some(5),
                }],
                vec![sample(2, 1_001)],
            ]
        );
        handle.stop_and_join();
    }
}
