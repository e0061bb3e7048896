//! Failure states a host's GPUs and kernel log can be in, over real sshd: each becomes the
//! host's state once, with the raw text kept, and never an error loop.

use crate::common;

use std::time::Duration;

use common::sshd::Sshd;
use common::{channel, is_sample, test_options};
use gpufleet::fleet::HostEvent;
use gpufleet::remote::spawn_link;
use gpufleet::telemetry::LostReason;

const WAIT: Duration = Duration::from_secs(10);

fn lost_count(events: &common::Events) -> usize {
    events.count(|_, e| matches!(e, HostEvent::Lost { .. }))
}

#[test]
fn gpu_lost_mid_stream_becomes_the_state_once() {
    let Some(sshd) = Sshd::start() else { return };
    sshd.set_scenario("gpu-lost");
    let (sink, mut events) = channel();
    let opts = test_options(&sshd.trusted_known_hosts());
    let link = spawn_link(sshd.remote_host("lost"), 0, sink, opts).expect("spawn");
    let lost = events.expect(WAIT, "Lost", |_, e| matches!(e, HostEvent::Lost { .. }));
    let HostEvent::Lost { reason, raw, .. } = lost else {
        unreachable!()
    };
    assert_eq!(reason, LostReason::GpuLost);
    assert_eq!(
        raw,
        "Unable to determine the device handle for GPU 0000:00:06.0: GPU is lost. Reboot the system to recover this GPU"
    );
    assert_eq!(
        events.count(|_, e| is_sample(e)),
        3,
        "{:#?}",
        events.kinds()
    );
    // Retries (every 700 ms here) meet the same failure and stay quiet.
    events.drain_for(Duration::from_millis(2_000));
    link.stop_and_join();
    assert_eq!(lost_count(&events), 1, "{:#?}", events.kinds());
    let streams = sshd
        .calls("nvidia-smi")
        .iter()
        .filter(|c| c.contains("-lms"))
        .count();
    assert!(streams >= 2, "the stream was retried: {streams}");
    assert_eq!(
        events.count(|_, e| matches!(e, HostEvent::Disconnected { .. })),
        0
    );
}

#[test]
fn driver_not_loaded_is_reported_with_its_text() {
    let Some(sshd) = Sshd::start() else { return };
    sshd.set_scenario("driver-not-loaded");
    let (sink, mut events) = channel();
    let opts = test_options(&sshd.trusted_known_hosts());
    let link = spawn_link(sshd.remote_host("nodriver"), 0, sink, opts).expect("spawn");
    let connected = events.expect(WAIT, "Connected", |_, e| {
        matches!(e, HostEvent::Connected(_))
    });
    let HostEvent::Connected(info) = connected else {
        unreachable!()
    };
    assert_eq!((info.driver_version, info.cuda_version), (None, None));
    let lost = events.expect(WAIT, "Lost", |_, e| matches!(e, HostEvent::Lost { .. }));
    let HostEvent::Lost { reason, raw, .. } = lost else {
        unreachable!()
    };
    assert_eq!(reason, LostReason::DriverNotLoaded);
    assert!(
        raw.starts_with("NVIDIA-SMI has failed because it couldn't communicate"),
        "{raw}"
    );
    events.drain_for(Duration::from_millis(1_500));
    link.stop_and_join();
    assert_eq!(lost_count(&events), 1, "{:#?}", events.kinds());
    assert_eq!(events.count(|_, e| is_sample(e)), 0);
}

#[test]
fn dmesg_not_permitted_gives_one_notice_and_no_loop() {
    let Some(sshd) = Sshd::start() else { return };
    sshd.set_scenario("dmesg-denied");
    let (sink, mut events) = channel();
    let mut opts = test_options(&sshd.trusted_known_hosts());
    opts.reconnect_base_ms = 50;
    let link = spawn_link(sshd.remote_host("container"), 0, sink, opts).expect("spawn");
    let notice = events.expect(WAIT, "Notice", |_, e| matches!(e, HostEvent::Notice { .. }));
    let HostEvent::Notice { text, .. } = notice else {
        unreachable!()
    };
    let text = text.english();
    assert!(
        text.contains("dmesg: read kernel buffer failed: Operation not permitted"),
        "{text}"
    );
    events.expect(WAIT, "Sample", |_, e| is_sample(e));
    // A reconnect must not try (or complain) again.
    let mut sshd = sshd;
    sshd.restart();
    events.expect(WAIT, "Disconnected", |_, e| {
        matches!(e, HostEvent::Disconnected { .. })
    });
    events.expect(WAIT, "Sample after reconnect", |_, e| is_sample(e));
    events.drain_for(Duration::from_millis(500));
    link.stop_and_join();
    assert_eq!(
        events.count(|_, e| matches!(e, HostEvent::Notice { .. })),
        1
    );
    assert_eq!(sshd.calls("dmesg").len(), 1, "{:?}", sshd.calls("dmesg"));
}

#[test]
fn kernel_xid_lines_are_forwarded() {
    let Some(sshd) = Sshd::start() else { return };
    sshd.set_scenario("xid");
    let (sink, mut events) = channel();
    let opts = test_options(&sshd.trusted_known_hosts());
    let link = spawn_link(sshd.remote_host("xid"), 0, sink, opts).expect("spawn");
    let kernel = events.expect(WAIT, "Kernel", |_, e| matches!(e, HostEvent::Kernel { .. }));
    link.stop_and_join();
    let HostEvent::Kernel { line, .. } = kernel else {
        unreachable!()
    };
    assert_eq!(
        line,
        "NVRM: Xid (PCI:0000:5a:00): 79, GPU has fallen off the bus."
    );
}

/// The host's running stream replays (the awk behind the fake `nvidia-smi -lms`), by pid.
fn stream_replays(sshd: &Sshd) -> Vec<u32> {
    sshd.host_processes()
        .into_iter()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains("pause="))
        })
        .collect()
}

#[test]
fn a_stream_killed_on_the_host_is_restarted_without_a_fault() {
    let Some(sshd) = Sshd::start() else { return };
    let (sink, mut events) = channel();
    let opts = test_options(&sshd.trusted_known_hosts());
    let link = spawn_link(sshd.remote_host("killed"), 0, sink, opts).expect("spawn");
    events.expect(WAIT, "a sample", |_, e| is_sample(e));
    // Killing the replay makes the fake nvidia-smi exit 143 with no text: a stream that was
    // reading the GPUs and ended without saying why.
    let replays = stream_replays(&sshd);
    assert!(!replays.is_empty(), "a stream runs on the host");
    for pid in replays {
        let _ = std::process::Command::new("kill")
            .arg(pid.to_string())
            .status();
    }
    let before = events.count(|_, e| is_sample(e));
    events.drain_for(Duration::from_millis(2_500));
    link.stop_and_join();
    assert_eq!(lost_count(&events), 0, "{:#?}", events.kinds());
    assert!(
        events.count(|_, e| is_sample(e)) > before,
        "samples resume from a new stream: {:#?}",
        events.kinds()
    );
    let streams = sshd
        .calls("nvidia-smi")
        .iter()
        .filter(|c| c.contains("-lms"))
        .count();
    assert!(streams >= 2, "the stream was started again: {streams}");
}

#[test]
fn a_stream_that_fails_before_any_sample_without_text_is_a_telemetry_fault() {
    let Some(sshd) = Sshd::start() else { return };
    sshd.set_scenario("silent-exit");
    let (sink, mut events) = channel();
    let opts = test_options(&sshd.trusted_known_hosts());
    let link = spawn_link(sshd.remote_host("silent"), 0, sink, opts).expect("spawn");
    let lost = events.expect(WAIT, "Lost", |_, e| matches!(e, HostEvent::Lost { .. }));
    link.stop_and_join();
    let HostEvent::Lost { reason, raw, .. } = lost else {
        unreachable!()
    };
    assert_eq!(reason, LostReason::Other);
    assert!(raw.contains("nvidia-smi exited with status 3"), "{raw}");
}
