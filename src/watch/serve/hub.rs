//! The hub between the watcher's sources and its attached consoles. Put in front of the
//! watcher's `HostSink` ([`Hub::wrap`], as the recorder is), it keeps what a console needs to
//! rebuild every host as it is now (each host's link events since its last connection and
//! before it, bounded; the newest sample of each GPU; the newest processes, jobs and disks; the
//! jobs' logs since their last reading, bounded; kernel lines and notices) and hands each event
//! to every console's queue as one NDJSON line of the recording format.
//!
//! A console subscribes under the same lock the events pass through, so its first lines (the
//! header, then the state) and the live lines after them neither miss nor repeat an event.
//! Handing over never waits: a console whose queue is full is dropped (its stream ends; it may
//! attach again), so a slow console never slows the watcher.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use hyper::body::Bytes;
use tokio::sync::mpsc;

use crate::fleet::{HostEvent, HostId, HostSink};
use crate::recording::wire::{Header, Line};
use crate::telemetry::source::now_ms;

/// Lines that may wait for one console before it is dropped.
pub const CONSOLE_QUEUE_LINES: usize = 8_192;
/// Link events, kernel lines and notices kept per host on each side of its last connection.
const KEPT_EVENTS: usize = 256;
/// Bytes of one job's log kept (newest), as read since its last reading began.
const KEPT_LOG_BYTES: usize = 256 << 10;

/// An event as it came, with the time the hub took it.
#[derive(Debug, Clone)]
struct Kept {
    t_ms: u64,
    event: HostEvent,
}

/// What a console needs to rebuild one host.
#[derive(Debug, Default)]
struct HostState {
    /// Events up to and including the newest `Connected`.
    before: VecDeque<Kept>,
    /// Link events, boot ids, kernel lines and notices since.
    after: VecDeque<Kept>,
    /// The newest sample of each GPU, by index.
    samples: BTreeMap<u32, Kept>,
    processes: Option<Kept>,
    jobs: Option<Kept>,
    disk: Option<Kept>,
    /// Each job's log since its last reading began, by PID, with its size in bytes.
    logs: BTreeMap<u32, (VecDeque<Kept>, usize)>,
}

impl HostState {
    fn take(&mut self, kept: Kept) {
        match &kept.event {
            HostEvent::Sample { gpu, .. } => {
                self.samples.insert(gpu.index, kept);
            }
            HostEvent::Processes { .. } => self.processes = Some(kept),
            HostEvent::Disk { .. } => self.disk = Some(kept),
            HostEvent::Jobs { jobs, .. } => {
                self.logs
                    .retain(|pid, _| jobs.iter().any(|job| job.pid == *pid));
                self.jobs = Some(kept);
            }
            HostEvent::JobLog {
                pid, restart, text, ..
            } => {
                let (log, bytes) = self.logs.entry(*pid).or_default();
                if *restart {
                    log.clear();
                    *bytes = 0;
                }
                *bytes += text.len();
                log.push_back(kept);
                while *bytes > KEPT_LOG_BYTES && log.len() > 1 {
                    if let Some(Kept {
                        event: HostEvent::JobLog { text, .. },
                        ..
                    }) = log.pop_front()
                    {
                        *bytes = bytes.saturating_sub(text.len());
                    }
                    // What is kept now begins a reading of its own.
                    if let Some(Kept {
                        event: HostEvent::JobLog { restart, .. },
                        ..
                    }) = log.front_mut()
                    {
                        *restart = true;
                    }
                }
            }
            // Taken for the incident report, never shown live: passed on, not kept.
            HostEvent::Evidence { .. } => {}
            HostEvent::Connected(_) => {
                self.before.extend(self.after.drain(..));
                self.before.push_back(kept);
                self.samples.clear();
                while self.before.len() > KEPT_EVENTS {
                    self.before.pop_front();
                }
            }
            _ => {
                self.after.push_back(kept);
                while self.after.len() > KEPT_EVENTS {
                    self.after.pop_front();
                }
            }
        }
    }

    /// The events that rebuild the host, in the order to apply them.
    fn events(&self) -> impl Iterator<Item = &Kept> {
        self.before
            .iter()
            .chain(self.disk.iter())
            .chain(self.jobs.iter())
            .chain(self.logs.values().flat_map(|(log, _)| log.iter()))
            .chain(self.processes.iter())
            .chain(self.samples.values())
            .chain(self.after.iter())
    }
}

/// One attached console's queue.
struct Console {
    who: String,
    tx: mpsc::Sender<Bytes>,
}

#[derive(Default)]
struct State {
    names: Vec<String>,
    hosts: Vec<HostState>,
    consoles: Vec<Console>,
}

/// What a console gets when it attaches: the header and the state as one block, the number of
/// state lines in it, then the live lines from its queue.
pub struct Subscription {
    pub first: Bytes,
    pub state_lines: usize,
    pub live: mpsc::Receiver<Bytes>,
}

/// The hub; clones share it.
#[derive(Clone, Default)]
pub struct Hub {
    state: Arc<Mutex<State>>,
}

impl Hub {
    /// A hub for the hosts `names` (host ids 0, 1, ...; more come by [`Self::name_host`]).
    pub fn new(names: Vec<String>) -> Self {
        let hosts = names.iter().map(|_| HostState::default()).collect();
        Self {
            state: Arc::new(Mutex::new(State {
                names,
                hosts,
                consoles: Vec::new(),
            })),
        }
    }

    fn lock(&self) -> Option<MutexGuard<'_, State>> {
        self.state.lock().ok()
    }

    /// Names host `id` (a host added while running), before its source starts; what was kept
    /// of a host that had the id before is forgotten.
    pub fn name_host(&self, id: HostId, name: &str) {
        if let Some(mut state) = self.lock() {
            if state.names.len() <= id {
                state.names.resize(id + 1, String::new());
                state.hosts.resize_with(id + 1, HostState::default);
            }
            state.names[id] = name.to_string();
            state.hosts[id] = HostState::default();
        }
    }

    /// Names host `id` as the fleet does, unless it already is (after a reload).
    pub fn ensure_named(&self, id: HostId, name: &str) {
        let named = self
            .lock()
            .is_some_and(|s| s.names.get(id).is_some_and(|n| n == name));
        if !named {
            self.name_host(id, name);
        }
    }

    /// `sink`, with every event also kept and handed to the consoles first.
    pub fn wrap(&self, sink: HostSink) -> HostSink {
        let one = {
            let hub = self.clone();
            let sink = sink.clone();
            move |host, event: HostEvent| {
                hub.take(host, std::slice::from_ref(&event));
                sink.send(host, event)
            }
        };
        let hub = self.clone();
        HostSink::new(one).with_bursts(move |host, events: Vec<HostEvent>| {
            hub.take(host, &events);
            sink.send_all(host, events)
        })
    }

    /// Whether the watcher watches a host of this name.
    pub fn knows(&self, name: &str) -> bool {
        self.lock()
            .is_some_and(|s| !name.is_empty() && s.names.iter().any(|n| n == name))
    }

    /// Consoles attached now.
    pub fn consoles(&self) -> usize {
        self.lock().map(|s| s.consoles.len()).unwrap_or(0)
    }

    fn take(&self, host: HostId, events: &[HostEvent]) {
        let Some(mut state) = self.lock() else {
            return;
        };
        let State {
            names,
            hosts,
            consoles,
        } = &mut *state;
        let (Some(name), Some(kept)) = (names.get(host), hosts.get_mut(host)) else {
            return;
        };
        if name.is_empty() {
            return;
        }
        let t_ms = now_ms();
        if !consoles.is_empty() {
            let mut lines = Vec::new();
            for event in events {
                push_line(&mut lines, t_ms, name, event);
            }
            let lines = Bytes::from(lines);
            consoles.retain(|console| match console.tx.try_send(lines.clone()) {
                Ok(()) => true,
                Err(mpsc::error::TrySendError::Full(_)) => {
                    tracing::warn!(console = %console.who, "an attached console fell behind: dropped");
                    false
                }
                Err(mpsc::error::TrySendError::Closed(_)) => {
                    tracing::info!(console = %console.who, "an attached console went away");
                    false
                }
            });
        }
        for event in events {
            kept.take(Kept {
                t_ms,
                event: event.clone(),
            });
        }
    }

    /// Ends the streams of the consoles `who` names (their tokens were taken out of the
    /// config); how many ended.
    pub fn drop_consoles(&self, who: &[String]) -> usize {
        let Some(mut state) = self.lock() else {
            return 0;
        };
        let before = state.consoles.len();
        state.consoles.retain(|console| !who.contains(&console.who));
        before - state.consoles.len()
    }

    /// Attaches a console (`who` names it in the log): the header and every host's state now,
    /// then the live lines.
    pub fn subscribe(&self, who: &str) -> Subscription {
        let (tx, live) = mpsc::channel(CONSOLE_QUEUE_LINES);
        let Some(mut state) = self.lock() else {
            return Subscription {
                first: Bytes::new(),
                state_lines: 0,
                live,
            };
        };
        let names: Vec<String> = state
            .names
            .iter()
            .filter(|n| !n.is_empty())
            .cloned()
            .collect();
        let mut first = serde_json::to_vec(&Header::new(now_ms(), names)).unwrap_or_default();
        first.push(b'\n');
        let mut state_lines = 0;
        for (name, host) in state.names.iter().zip(&state.hosts) {
            if name.is_empty() {
                continue;
            }
            for kept in host.events() {
                push_line(&mut first, kept.t_ms, name, &kept.event);
                state_lines += 1;
            }
        }
        state.consoles.push(Console {
            who: who.to_string(),
            tx,
        });
        tracing::info!(
            console = who,
            consoles = state.consoles.len(),
            "a console attached"
        );
        Subscription {
            first: Bytes::from(first),
            state_lines,
            live,
        }
    }
}

/// Appends `event` as one recording line.
fn push_line(out: &mut Vec<u8>, t_ms: u64, host: &str, event: &HostEvent) {
    let line = Line {
        t_ms,
        host: host.to_string(),
        event: event.into(),
    };
    if serde_json::to_writer(&mut *out, &line).is_ok() {
        out.push(b'\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recording::wire::Event;
    use crate::telemetry::{GpuSample, HostInfo};

    fn sample(index: u32, at_ms: u64) -> HostEvent {
        HostEvent::Sample {
            at_ms,
            gpu: GpuSample {
                index,
                ..GpuSample::default()
            },
        }
    }

    fn lines(bytes: &[u8]) -> Vec<Line> {
        String::from_utf8_lossy(bytes)
            .lines()
            .skip(1)
            .map(|l| serde_json::from_str(l).expect("a line"))
            .collect()
    }

    #[test]
    fn a_console_attaching_gets_each_gpus_newest_sample_after_the_connection_then_live_lines() {
        let hub = Hub::new(vec!["a".into()]);
        let sink = hub.wrap(HostSink::new(|_, _| true));
        sink.send(0, HostEvent::Connected(HostInfo::default()));
        for at in 1..=3 {
            sink.send(0, sample(0, at));
            sink.send(0, sample(1, at));
        }
        let mut sub = hub.subscribe("test");
        let got = lines(&sub.first);
        assert_eq!(sub.state_lines, got.len());
        assert!(matches!(got[0].event, Event::Connected { .. }));
        let stamps: Vec<_> = got[1..]
            .iter()
            .map(|l| match &l.event {
                Event::Sample { at_ms, gpu } => (gpu.index, *at_ms),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(stamps, vec![(0, 3), (1, 3)]);
        sink.send(0, sample(0, 4));
        let live = sub.live.try_recv().expect("a live line");
        assert!(matches!(
            lines(&[b"h\n", &live[..]].concat())[0].event,
            Event::Sample { at_ms: 4, .. }
        ));
    }

    #[test]
    fn a_console_that_does_not_read_is_dropped_and_the_sources_never_wait() {
        let hub = Hub::new(vec!["a".into()]);
        let sink = hub.wrap(HostSink::new(|_, _| true));
        let _slow = hub.subscribe("slow");
        let mut quick = hub.subscribe("quick");
        for at in 0..(CONSOLE_QUEUE_LINES as u64 + 10) {
            assert!(sink.send(0, sample(0, at)));
            while quick.live.try_recv().is_ok() {}
        }
        assert_eq!(
            hub.consoles(),
            1,
            "the slow console is dropped, the quick one kept"
        );
    }

    #[test]
    fn a_jobs_log_is_kept_bounded_and_begins_a_reading_where_it_was_cut() {
        let hub = Hub::new(vec!["a".into()]);
        let sink = hub.wrap(HostSink::new(|_, _| true));
        let chunk = "x".repeat(64 << 10);
        for n in 0..8 {
            sink.send(
                0,
                HostEvent::JobLog {
                    at_ms: n,
                    pid: 7,
                    restart: n == 0,
                    text: chunk.clone(),
                },
            );
        }
        let got = lines(&hub.subscribe("t").first);
        let logs: Vec<_> = got
            .iter()
            .filter_map(|l| match &l.event {
                Event::JobLog { at_ms, restart, .. } => Some((*at_ms, *restart)),
                _ => None,
            })
            .collect();
        assert_eq!(logs, vec![(4, true), (5, false), (6, false), (7, false)]);
    }
}
