//! A host that floods: its nvidia-smi prints readings back to back (or one line without end)
//! instead of one per GPU per interval. The link must flag it, pass on no more than its budget,
//! keep the session, and clear the flag once the host behaves again.

use crate::common;

use std::time::{Duration, Instant};

use common::sshd::Sshd;
use common::{channel, is_sample, test_options};
use gpufleet::fleet::HostEvent;
use gpufleet::remote::spawn_link;

const WAIT: Duration = Duration::from_secs(10);

fn flooding(e: &HostEvent) -> Option<&Option<String>> {
    match e {
        HostEvent::Flooding { detail, .. } => Some(detail),
        _ => None,
    }
}

#[test]
fn a_flooding_host_is_flagged_its_samples_bounded_and_the_flag_cleared_when_it_calms() {
    let Some(sshd) = Sshd::start() else { return };
    sshd.set_scenario("flood");
    let (sink, mut events) = channel();
    let opts = test_options(&sshd.trusted_known_hosts());
    let link = spawn_link(sshd.remote_host("flood"), 0, sink, opts).expect("spawn");
    let flagged = events.expect(WAIT, "Flooding", |_, e| {
        flooding(e).is_some_and(Option::is_some)
    });
    let detail = flooding(&flagged).cloned().flatten().unwrap_or_default();
    assert!(detail.contains("over budget"), "{detail}");

    // At 200 ms the stream may send 5 readings of (at least) 16 GPUs, 4 times over, in each
    // one-second window: 320 lines. Unchecked, the fake sends hundreds of thousands a second.
    let since = events.seen.len();
    let start = Instant::now();
    events.drain_for(Duration::from_secs(3));
    let windows = start.elapsed().as_secs_f64().ceil() as usize + 1;
    let samples = events.seen[since..]
        .iter()
        .filter(|(_, e, _)| is_sample(e))
        .count();
    assert!(
        samples <= windows * 320,
        "{samples} samples in {windows} windows"
    );
    assert!(
        samples > 0,
        "the newest readings still come through: {:#?}",
        events.kinds()
    );
    assert_eq!(
        events.count(|_, e| matches!(e, HostEvent::Disconnected { .. })),
        0,
        "the session is kept: {:#?}",
        events.kinds()
    );
    // The flooding commands are stopped on the host, not left writing into a closed channel.
    let on_host = sshd.host_processes().len();
    eprintln!("{samples} samples in {windows} windows; {on_host} processes on the host; {detail}");
    assert!(on_host <= 16, "{on_host} processes on the host");

    // The host behaves again: within a few windows the flag goes.
    sshd.set_scenario("healthy");
    events.expect(Duration::from_secs(20), "Flooding cleared", |_, e| {
        flooding(e).is_some_and(Option::is_none)
    });
    events.expect(WAIT, "Sample after calming", |_, e| is_sample(e));
    link.stop_and_join();
}

/// Floods arrive in bursts bigger than libssh2's read buffer: a read can stop with bytes left
/// in the socket, and once the socket's receive buffer is full no new data wakes the link. Each
/// of several flooding hosts served by one links thread must keep its newest readings coming,
/// window after window (a link that waited on such a socket went silent for good).
#[test]
fn several_flooding_hosts_on_one_thread_each_keep_their_readings_coming() {
    const HOSTS: usize = 3;
    let Some(sshd) = Sshd::start() else { return };
    sshd.set_scenario("flood");
    let (sink, mut events) = channel();
    let opts = test_options(&sshd.trusted_known_hosts());
    let links: Vec<_> = (0..HOSTS)
        .map(|i| {
            let host = sshd.remote_host(&format!("flood{i}"));
            spawn_link(host, i, sink.clone(), opts.clone()).expect("spawn")
        })
        .collect();
    for _ in 0..HOSTS {
        events.expect(WAIT, "Flooding", |_, e| {
            flooding(e).is_some_and(Option::is_some)
        });
    }
    // Three spans of two seconds: in each, every host sends readings (at most one budget a
    // window, see the test above).
    for span in 0..3 {
        let since = events.seen.len();
        events.drain_for(Duration::from_secs(2));
        for host in 0..HOSTS {
            let samples = events.seen[since..]
                .iter()
                .filter(|(h, e, _)| *h == host && is_sample(e))
                .count();
            assert!(
                samples > 0,
                "host {host} sent no reading in span {span}: {:#?}",
                events.kinds()
            );
        }
    }
    for link in links {
        link.stop_and_join();
    }
}

#[test]
fn a_line_without_end_is_flagged_not_kept() {
    let Some(sshd) = Sshd::start() else { return };
    sshd.set_scenario("flood-line");
    let (sink, mut events) = channel();
    let opts = test_options(&sshd.trusted_known_hosts());
    let link = spawn_link(sshd.remote_host("endless"), 0, sink, opts).expect("spawn");
    events.expect(WAIT, "Flooding", |_, e| {
        flooding(e).is_some_and(Option::is_some)
    });
    events.drain_for(Duration::from_secs(2));
    link.stop_and_join();
    assert_eq!(
        events.count(|_, e| matches!(e, HostEvent::Disconnected { .. })),
        0,
        "{:#?}",
        events.kinds()
    );
    // The full query (not the stream) still reads the GPUs.
    assert!(events.count(|_, e| matches!(e, HostEvent::Connected(_))) == 1);
}
