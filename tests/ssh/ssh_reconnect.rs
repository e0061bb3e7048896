//! Links that die: sshd killed mid-stream and restarted, and a link that goes silent without
//! closing. Both recover without anyone doing anything.

use crate::common;

use std::time::{Duration, Instant};

use common::sshd::Sshd;
use common::{channel, is_sample, test_options};
use gpufleet::fleet::HostEvent;
use gpufleet::remote::spawn_link;

const WAIT: Duration = Duration::from_secs(10);

#[test]
fn sshd_killed_mid_stream_then_restarted_resumes_by_itself() {
    let Some(mut sshd) = Sshd::start() else {
        return;
    };
    let (sink, mut events) = channel();
    let opts = test_options(&sshd.trusted_known_hosts());
    let link = spawn_link(sshd.remote_host("flaky"), 0, sink, opts).expect("spawn");
    events.expect(WAIT, "Sample", |_, e| is_sample(e));

    sshd.kill();
    let killed = Instant::now();
    let reason = match events.expect(WAIT, "Disconnected", |_, e| {
        matches!(e, HostEvent::Disconnected { .. })
    }) {
        HostEvent::Disconnected { reason, .. } => reason,
        _ => unreachable!(),
    };
    assert!(
        killed.elapsed() < Duration::from_secs(3),
        "noticed in {:?}",
        killed.elapsed()
    );
    assert!(!reason.is_empty());
    // While it is down the link keeps trying (and failing) on its own.
    events.expect(
        WAIT,
        "a failed retry",
        |_, e| matches!(e, HostEvent::Connecting { attempt, .. } if *attempt >= 2),
    );

    sshd.restart();
    let restarted = Instant::now();
    events.expect(WAIT, "Connected again", |_, e| {
        matches!(e, HostEvent::Connected(_))
    });
    events.expect(WAIT, "Sample again", |_, e| is_sample(e));
    assert!(
        restarted.elapsed() < Duration::from_secs(5),
        "{:?}",
        restarted.elapsed()
    );
    link.stop_and_join();
}

#[test]
fn a_silent_link_is_declared_dead_and_replaced() {
    let Some(sshd) = Sshd::start() else { return };
    let (sink, mut events) = channel();
    let opts = test_options(&sshd.trusted_known_hosts());
    let dead_after = Duration::from_millis(opts.dead_after_ms);
    let link = spawn_link(sshd.remote_host("silent"), 0, sink, opts).expect("spawn");
    events.expect(WAIT, "Sample", |_, e| is_sample(e));

    let frozen = sshd.freeze_sessions();
    assert!(!frozen.is_empty());
    let since = Instant::now();
    let reason = match events.expect(WAIT, "Disconnected", |_, e| {
        matches!(e, HostEvent::Disconnected { .. })
    }) {
        HostEvent::Disconnected { reason, .. } => reason,
        _ => unreachable!(),
    };
    let took = since.elapsed();
    assert!(reason.contains("no data from the host"), "{reason}");
    assert!(took >= dead_after - Duration::from_millis(500), "{took:?}");
    assert!(took < dead_after + Duration::from_secs(2), "{took:?}");
    // The listener still answers, so a fresh session takes over.
    events.expect(WAIT, "Sample on a new session", |_, e| is_sample(e));
    link.stop_and_join();
}

#[test]
fn a_quiet_healthy_link_is_kept_alive_by_keepalives() {
    let Some(sshd) = Sshd::start() else { return };
    let (sink, mut events) = channel();
    let mut opts = test_options(&sshd.trusted_known_hosts());
    // Nothing but keepalive replies will arrive after the first sample.
    opts.interval_ms = 60_000;
    opts.processes_interval_ms = 60_000;
    opts.processes_unwatched_interval_ms = 60_000;
    opts.follow_kernel = false;
    let dead_after = Duration::from_millis(opts.dead_after_ms);
    let link = spawn_link(sshd.remote_host("quiet"), 0, sink, opts).expect("spawn");
    events.expect(WAIT, "Sample", |_, e| is_sample(e));
    events.drain_for(dead_after * 2);
    link.stop_and_join();
    assert_eq!(
        events.count(|_, e| matches!(e, HostEvent::Disconnected { .. })),
        0,
        "{:#?}",
        events.kinds()
    );
}

#[test]
fn a_host_that_stops_answering_is_unresponsive_within_two_intervals_and_answers_again() {
    let Some(sshd) = Sshd::start() else { return };
    let (sink, mut events) = channel();
    let mut opts = test_options(&sshd.trusted_known_hosts());
    opts.interval_ms = 1_000;
    opts.dead_after_ms = 8_000;
    let link = spawn_link(sshd.remote_host("frozen"), 0, sink, opts).expect("spawn");
    events.expect(WAIT, "Sample", |_, e| is_sample(e));
    events.expect(WAIT, "another Sample", |_, e| is_sample(e));

    let frozen = sshd.freeze_sessions();
    let since = Instant::now();
    let silent_ms = match events.expect(WAIT, "Unresponsive", |_, e| {
        matches!(e, HostEvent::Unresponsive { .. })
    }) {
        HostEvent::Unresponsive { silent_ms, .. } => silent_ms,
        _ => unreachable!(),
    };
    let took = since.elapsed();
    assert!(took <= Duration::from_millis(2_500), "took {took:?}");
    assert!(silent_ms >= 2_000, "{silent_ms}");

    // It answers again before the link gives up on it: no reconnect, the stream goes on.
    sshd.thaw(&frozen);
    events.expect(WAIT, "Responsive", |_, e| {
        matches!(e, HostEvent::Responsive { .. })
    });
    events.expect(WAIT, "Sample after thawing", |_, e| is_sample(e));
    link.stop_and_join();
    assert_eq!(
        events.count(|_, e| matches!(e, HostEvent::Disconnected { .. })),
        0,
        "{:#?}",
        events.kinds()
    );
}

#[test]
fn a_host_live_lately_is_tried_again_within_15_s_and_is_back_within_that_of_its_sshd() {
    let Some(mut sshd) = Sshd::start() else {
        return;
    };
    let (sink, mut events) = channel();
    let mut opts = test_options(&sshd.trusted_known_hosts());
    // A schedule that would wait 15 to 30 s from the first failure: the cap for a host that
    // was live a moment ago must bring it under 15 s.
    opts.reconnect_base_ms = 30_000;
    opts.reconnect_cap_ms = 30_000;
    let link = spawn_link(sshd.remote_host("back-soon"), 0, sink, opts).expect("spawn");
    events.expect(WAIT, "Sample", |_, e| is_sample(e));

    sshd.kill();
    let (at_ms, retry_at_ms) = match events.expect(WAIT, "Disconnected", |_, e| {
        matches!(e, HostEvent::Disconnected { .. })
    }) {
        HostEvent::Disconnected {
            at_ms, retry_at_ms, ..
        } => (at_ms, retry_at_ms),
        _ => unreachable!(),
    };
    let down = Instant::now();
    let retry_in_ms = retry_at_ms.expect("a retry is scheduled") - at_ms;
    assert!(retry_in_ms <= 15_000, "next try in {retry_in_ms} ms");

    sshd.restart();
    events.expect(Duration::from_secs(25), "Sample again", |_, e| is_sample(e));
    assert!(
        down.elapsed() <= Duration::from_millis(retry_in_ms + 5_000),
        "live again {:?} after the outage, next try was announced in {retry_in_ms} ms",
        down.elapsed()
    );
    link.stop_and_join();
}
