//! Everything a link starts on a host ends with its session: after the user quits, and after
//! the link drops while the host stays up. Counted on the host's side, from `/proc`: the
//! processes that carry the test sshd's environment marker (the commands and their children).
//! The fake `dmesg --follow-new`, like the real one, never writes and so never notices on its
//! own that its session is gone.

use crate::common;

use std::time::{Duration, Instant};

use common::sshd::Sshd;
use common::{channel, is_sample, test_options};
use gpufleet::fleet::HostEvent;
use gpufleet::remote::spawn_link;

const WAIT: Duration = Duration::from_secs(10);
/// How long the host may take to end what the session started.
const GONE_WITHIN: Duration = Duration::from_secs(5);

fn cmdline(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
        .unwrap_or_default()
}

/// Waits until the link's commands run on the host, kernel follower included; returns them.
fn running_with_follower(sshd: &Sshd) -> Vec<u32> {
    let start = Instant::now();
    loop {
        let pids = sshd.host_processes();
        if pids.iter().any(|p| cmdline(*p).contains("dmesg")) {
            return pids;
        }
        assert!(
            start.elapsed() < WAIT,
            "the kernel follower never ran: {:?}",
            pids.iter().map(|p| cmdline(*p)).collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Waits up to `GONE_WITHIN` until none of `pids` is alive; returns those still alive.
fn survivors(pids: &[u32]) -> Vec<String> {
    let start = Instant::now();
    loop {
        let alive: Vec<String> = pids
            .iter()
            .filter(|p| {
                std::fs::read_to_string(format!("/proc/{p}/stat"))
                    .is_ok_and(|s| !s.contains(") Z "))
            })
            .map(|p| format!("{p}: {}", cmdline(*p)))
            .collect();
        if alive.is_empty() || start.elapsed() >= GONE_WITHIN {
            return alive;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn quitting_ends_everything_the_link_started_on_the_host() {
    let Some(sshd) = Sshd::start() else { return };
    assert!(sshd.host_processes().is_empty(), "nothing runs before");
    let (sink, mut events) = channel();
    let opts = test_options(&sshd.trusted_known_hosts());
    let link = spawn_link(sshd.remote_host("quit"), 0, sink, opts).expect("spawn");
    events.expect(WAIT, "Sample", |_, e| is_sample(e));
    let running = running_with_follower(&sshd);

    link.stop_and_join();
    let left = survivors(&running);
    assert!(left.is_empty(), "still running after the quit: {left:#?}");
    assert!(
        survivors(&sshd.host_processes()).is_empty(),
        "{:?}",
        sshd.host_processes()
    );
}

#[test]
fn a_dropped_link_ends_what_it_started_on_the_host() {
    let Some(sshd) = Sshd::start() else { return };
    let (sink, mut events) = channel();
    let opts = test_options(&sshd.trusted_known_hosts());
    let link = spawn_link(sshd.remote_host("drop"), 0, sink, opts).expect("spawn");
    events.expect(WAIT, "Sample", |_, e| is_sample(e));
    let running = running_with_follower(&sshd);

    // The connection's sshd dies; the listener stays, so the link reconnects meanwhile.
    assert!(!sshd.kill_connections().is_empty());
    events.expect(WAIT, "Disconnected", |_, e| {
        matches!(e, HostEvent::Disconnected { .. })
    });
    let left = survivors(&running);
    assert!(left.is_empty(), "outlived the dropped session: {left:#?}");
    events.expect(WAIT, "Sample on the new session", |_, e| is_sample(e));
    link.stop_and_join();
}
