//! Shared by the SSH tests: the throwaway sshd harness, link options sized for tests, and an
//! event collector.
#![allow(dead_code)]

pub mod sshd;

use std::path::Path;
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use gpufleet::fleet::{HostEvent, HostId, HostSink};
use gpufleet::remote::LinkOptions;

/// Options that make every timer short enough for a test, without an ssh-agent.
pub fn test_options(known_hosts: &Path) -> LinkOptions {
    LinkOptions {
        interval_ms: 200,
        known_hosts: Some(known_hosts.to_path_buf()),
        use_agent: false,
        connect_timeout_ms: 3_000,
        handshake_timeout_ms: 5_000,
        keepalive_interval_s: 1,
        dead_after_ms: 4_000,
        processes_interval_ms: 1_000,
        processes_unwatched_interval_ms: 1_000,
        versions_wait_ms: 3_000,
        telemetry_retry_ms: 700,
        reconnect_base_ms: 200,
        reconnect_cap_ms: 1_000,
        snapshot_timeout_ms: 10_000,
        ..LinkOptions::default()
    }
}

/// Receives the events of every link in a test and keeps them for assertions.
pub struct Events {
    rx: Receiver<(HostId, HostEvent)>,
    pub seen: Vec<(HostId, HostEvent, Instant)>,
}

pub fn channel() -> (HostSink, Events) {
    let (tx, rx) = mpsc::channel();
    (
        HostSink::from_sender(tx, |host, event| (host, event)),
        Events {
            rx,
            seen: Vec::new(),
        },
    )
}

impl Events {
    /// Waits for the first new event matching `pred`; every event received is kept.
    pub fn wait_for(
        &mut self,
        timeout: Duration,
        mut pred: impl FnMut(HostId, &HostEvent) -> bool,
    ) -> Option<HostEvent> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.checked_duration_since(Instant::now())?;
            match self.rx.recv_timeout(left) {
                Ok((host, event)) => {
                    self.seen.push((host, event.clone(), Instant::now()));
                    if pred(host, &event) {
                        return Some(event);
                    }
                }
                Err(_) => return None,
            }
        }
    }

    /// Keeps receiving for `duration`.
    pub fn drain_for(&mut self, duration: Duration) {
        let _ = self.wait_for(duration, |_, _| false);
    }

    /// `wait_for` that fails the test with everything seen so far.
    pub fn expect(
        &mut self,
        timeout: Duration,
        what: &str,
        pred: impl FnMut(HostId, &HostEvent) -> bool,
    ) -> HostEvent {
        match self.wait_for(timeout, pred) {
            Some(event) => event,
            None => panic!("no {what} within {timeout:?}; saw {:#?}", self.kinds()),
        }
    }

    /// A short description of each event seen, for failure messages.
    pub fn kinds(&self) -> Vec<String> {
        self.seen
            .iter()
            .map(|(h, e, _)| match e {
                HostEvent::Sample { .. } => format!("{h}: Sample"),
                other => format!("{h}: {other:?}"),
            })
            .collect()
    }

    pub fn count(&self, pred: impl Fn(HostId, &HostEvent) -> bool) -> usize {
        self.seen.iter().filter(|(h, e, _)| pred(*h, e)).count()
    }
}

pub fn is_sample(e: &HostEvent) -> bool {
    matches!(e, HostEvent::Sample { .. })
}
