//! The telemetry stream over real sshd: cadence, several hosts, read_once, hostile output and an
//! old driver that rejects a field.

mod common;

use std::time::Duration;

use common::sshd::Sshd;
use common::{channel, is_sample, test_options};
use gpufleet::app::event::HostEvent;
use gpufleet::remote::{read_once, spawn_link};

const WAIT: Duration = Duration::from_secs(10);

#[test]
fn samples_arrive_at_the_stream_cadence_with_versions_and_processes() {
    let Some(sshd) = Sshd::start() else { return };
    let (sink, mut events) = channel();
    let opts = test_options(&sshd.trusted_known_hosts());
    let link = spawn_link(sshd.remote_host("h200"), 0, sink, opts).expect("spawn");

    let connected = events.expect(WAIT, "Connected", |_, e| {
        matches!(e, HostEvent::Connected(_))
    });
    let HostEvent::Connected(info) = connected else {
        unreachable!()
    };
    assert_eq!(
        info.source,
        format!("ssh {}@127.0.0.1:{}", sshd.user, sshd.port)
    );
    assert_eq!(info.driver_version.as_deref(), Some("580.159.04"));
    assert_eq!(info.cuda_version.as_deref(), Some("13.0"));

    let mut arrivals = Vec::new();
    while arrivals.len() < 10 {
        let e = events.expect(WAIT, "Sample", |_, e| is_sample(e));
        let HostEvent::Sample { at_ms, gpu } = e else {
            unreachable!()
        };
        assert_eq!(gpu.name, "NVIDIA H200");
        assert_eq!(gpu.uuid, "GPU-67e6a1fd-a60b-985c-12e3-e9316c8ff001");
        assert!(gpu.power_draw_w.is_some_and(|w| w > 600.0), "{gpu:?}");
        arrivals.push(at_ms);
    }
    let mut gaps: Vec<u64> = arrivals.windows(2).map(|w| w[1] - w[0]).collect();
    gaps.sort_unstable();
    let median = gaps[gaps.len() / 2];
    assert!(
        (150..=320).contains(&median),
        "median gap {median} ms, gaps {gaps:?}"
    );

    let processes = events.expect(WAIT, "Processes", |_, e| {
        matches!(e, HostEvent::Processes { .. })
    });
    let HostEvent::Processes { processes, .. } = processes else {
        unreachable!()
    };
    assert_eq!(processes.len(), 1);
    assert_eq!(
        (processes[0].pid, processes[0].name.as_str()),
        (549, "python3")
    );
    assert_eq!(processes[0].used_memory_mib, Some(58352));
    link.stop_and_join();
    assert_eq!(sshd.calls("dmesg"), vec!["--follow-new"]);
}

#[test]
fn several_hosts_stream_at_once() {
    let servers: Vec<Sshd> = (0..3).filter_map(|_| Sshd::start()).collect();
    if servers.len() < 3 {
        return;
    }
    let (sink, mut events) = channel();
    let links: Vec<_> = servers
        .iter()
        .enumerate()
        .map(|(id, s)| {
            let opts = test_options(&s.trusted_known_hosts());
            spawn_link(s.remote_host(&format!("h{id}")), id, sink.clone(), opts).expect("spawn")
        })
        .collect();
    let mut streaming = [0usize; 3];
    while streaming.iter().any(|n| *n < 3) {
        let e = events.wait_for(WAIT, |_, e| is_sample(e));
        assert!(
            e.is_some(),
            "hosts stalled at {streaming:?}: {:#?}",
            events.kinds()
        );
        let (host, _, _) = events.seen.last().cloned().expect("seen");
        streaming[host] += 1;
    }
    for link in links {
        link.stop_and_join();
    }
}

#[test]
fn read_once_reports_one_reading_and_ends() {
    let Some(sshd) = Sshd::start() else { return };
    let (sink, mut events) = channel();
    let opts = test_options(&sshd.trusted_known_hosts());
    let started = std::time::Instant::now();
    read_once(&sshd.remote_host("h200"), 4, &sink, &opts).expect("one reading");
    assert!(started.elapsed() < Duration::from_secs(8));
    events.drain_for(Duration::from_millis(100));
    let kinds = events.kinds();
    assert!(
        matches!(events.seen[0].1, HostEvent::Connecting { attempt: 1 }),
        "{kinds:#?}"
    );
    assert!(
        matches!(events.seen[1].1, HostEvent::Connected(_)),
        "{kinds:#?}"
    );
    assert_eq!(events.count(|_, e| is_sample(e)), 1, "{kinds:#?}");
    assert_eq!(
        events.count(|_, e| matches!(e, HostEvent::Processes { .. })),
        1
    );
    assert!(events.seen.iter().all(|(h, _, _)| *h == 4));
    assert!(sshd.calls("nvidia-smi").iter().all(|c| !c.contains("-lms")));
}

#[test]
fn escape_sequences_never_reach_events() {
    let Some(sshd) = Sshd::start() else { return };
    sshd.set_scenario("escapes");
    let (sink, mut events) = channel();
    let opts = test_options(&sshd.trusted_known_hosts());
    let link = spawn_link(sshd.remote_host("evil"), 0, sink, opts).expect("spawn");
    events.expect(WAIT, "Kernel", |_, e| matches!(e, HostEvent::Kernel { .. }));
    events.expect(WAIT, "Processes", |_, e| {
        matches!(e, HostEvent::Processes { .. })
    });
    events.expect(WAIT, "Sample", |_, e| is_sample(e));
    link.stop_and_join();
    for (_, event, _) in &events.seen {
        let text = format!("{event:?}");
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{7}'),
            "{text}"
        );
        match event {
            HostEvent::Sample { gpu, .. } => assert_eq!(gpu.name, "NVIDIA H200"),
            HostEvent::Processes { processes, .. } => assert_eq!(processes[0].name, "python3"),
            HostEvent::Kernel { line, .. } => assert_eq!(
                line,
                "NVRM: Xid (PCI:0000:5a:00): 79, GPU has fallen off the bus."
            ),
            _ => {}
        }
    }
}

#[test]
fn a_field_an_old_driver_rejects_is_dropped_and_the_rest_stream() {
    let Some(sshd) = Sshd::start() else { return };
    sshd.set_scenario("old-driver");
    let (sink, mut events) = channel();
    let opts = test_options(&sshd.trusted_known_hosts());
    let link = spawn_link(sshd.remote_host("old"), 0, sink, opts).expect("spawn");
    for _ in 0..3 {
        let e = events.expect(WAIT, "Sample", |_, e| is_sample(e));
        let HostEvent::Sample { gpu, .. } = e else {
            unreachable!()
        };
        assert!(
            gpu.power_draw_w.is_some() && gpu.temperature_c.is_some(),
            "{gpu:?}"
        );
    }
    link.stop_and_join();
    let notices: Vec<_> = events
        .seen
        .iter()
        .filter_map(|(_, e, _)| match e {
            HostEvent::Notice { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(notices[0].contains("temperature.gpu.tlimit"), "{notices:?}");
    assert_eq!(events.count(|_, e| matches!(e, HostEvent::Lost { .. })), 0);
    let streams: Vec<String> = sshd
        .calls("nvidia-smi")
        .into_iter()
        .filter(|c| c.contains("-lms"))
        .collect();
    assert_eq!(
        streams.len(),
        2,
        "one probe, then the reduced list: {streams:?}"
    );
    assert!(!streams[1].contains("temperature.gpu.tlimit"));
}
