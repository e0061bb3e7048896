//! The telemetry stream over real sshd: cadence, several hosts, read_once, hostile output, the
//! split between the streamed fields and the full query, and old drivers that reject a field.

use crate::common;

use std::time::Duration;

use common::sshd::Sshd;
use common::{channel, is_sample, test_options};
use gpufleet::fleet::{HostEvent, HostId};
use gpufleet::remote::{read_once, spawn_link};
use gpufleet::telemetry::smi_csv::{QUERY_FIELDS, STREAM_FIELDS};
use gpufleet::telemetry::source::Backlogs;

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
        assert_eq!(&*gpu.name, "NVIDIA H200");
        assert_eq!(&*gpu.uuid, "GPU-67e6a1fd-a60b-985c-12e3-e9316c8ff001");
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
        matches!(events.seen[0].1, HostEvent::Connecting { attempt: 1, .. }),
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
            HostEvent::Sample { gpu, .. } => assert_eq!(&*gpu.name, "NVIDIA H200"),
            HostEvent::Processes { processes, .. } => assert_eq!(processes[0].name, "python3"),
            HostEvent::Kernel { line, .. } => assert_eq!(
                line,
                "NVRM: Xid (PCI:0000:5a:00): 79, GPU has fallen off the bus."
            ),
            _ => {}
        }
    }
}

/// The `--query-gpu=` list of a recorded nvidia-smi call.
fn queried(call: &str) -> Vec<String> {
    call.split_whitespace()
        .find_map(|a| a.strip_prefix("--query-gpu="))
        .map(|list| list.split(',').map(str::to_string).collect())
        .unwrap_or_default()
}

/// The recorded `--query-gpu` calls: the `-lms` streams and the one-shot full queries.
fn gpu_queries(sshd: &Sshd) -> (Vec<Vec<String>>, Vec<Vec<String>>) {
    let calls: Vec<String> = sshd
        .calls("nvidia-smi")
        .into_iter()
        .filter(|c| c.contains("--query-gpu="))
        .collect();
    let (streams, full): (Vec<_>, Vec<_>) = calls.iter().partition(|c| c.contains("-lms"));
    (
        streams.into_iter().map(|c| queried(c)).collect(),
        full.into_iter().map(|c| queried(c)).collect(),
    )
}

fn notices(events: &common::Events) -> Vec<String> {
    events
        .seen
        .iter()
        .filter_map(|(_, e, _)| match e {
            HostEvent::Notice { text, .. } => Some(text.english()),
            _ => None,
        })
        .collect()
}

#[test]
fn the_stream_carries_only_changing_fields_and_samples_keep_the_full_querys() {
    let Some(sshd) = Sshd::start() else { return };
    let (sink, mut events) = channel();
    let mut opts = test_options(&sshd.trusted_known_hosts());
    opts.detail_interval_ms = 1_000;
    let link = spawn_link(sshd.remote_host("split"), 0, sink, opts).expect("spawn");
    let mut draws = Vec::new();
    for _ in 0..12 {
        let e = events.expect(WAIT, "Sample", |_, e| is_sample(e));
        let HostEvent::Sample { gpu, .. } = e else {
            unreachable!()
        };
        // From the full query only (the captured idle line)...
        assert_eq!(&*gpu.name, "NVIDIA H200", "{gpu:?}");
        assert_eq!(&*gpu.uuid, "GPU-67e6a1fd-a60b-985c-12e3-e9316c8ff001");
        assert_eq!(&*gpu.bus_id, "00000000:00:06.0");
        assert_eq!(gpu.driver_version.as_deref(), Some("580.159.04"));
        assert_eq!(gpu.memory_total_mib, Some(143771));
        assert_eq!(
            (
                gpu.power_min_limit_w,
                gpu.power_max_limit_w,
                gpu.power_default_limit_w
            ),
            (Some(200.0), Some(700.0), Some(700.0))
        );
        assert_eq!(gpu.clock_sm_max_mhz, Some(1980));
        assert_eq!(gpu.persistence_mode, Some(true));
        assert_eq!(gpu.ecc_uncorrected_volatile, Some(0));
        // ...and from the stream (captured under load; the idle line draws 92.60 W).
        assert!(gpu.power_draw_w.is_some_and(|w| w > 600.0), "{gpu:?}");
        assert_eq!(gpu.memory_used_mib, Some(58361));
        assert_eq!(gpu.power_limit_w, Some(700.0));
        draws.push(gpu.power_draw_w);
    }
    draws.dedup();
    assert!(draws.len() > 1, "the streamed values move: {draws:?}");
    link.stop_and_join();
    assert_eq!(events.count(|_, e| matches!(e, HostEvent::Lost { .. })), 0);

    let (streams, full) = gpu_queries(&sshd);
    assert_eq!(
        streams,
        vec![STREAM_FIELDS.to_vec()],
        "one stream, of STREAM_FIELDS"
    );
    assert!(
        full.len() >= 2,
        "a full query at connect and every detail_interval_ms: {full:?}"
    );
    assert!(full.iter().all(|f| f == QUERY_FIELDS), "{full:?}");
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
        assert_eq!(&*gpu.name, "NVIDIA H200", "the full query still answers");
    }
    link.stop_and_join();
    let notices = notices(&events);
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(notices[0].contains("temperature.gpu.tlimit"), "{notices:?}");
    assert_eq!(events.count(|_, e| matches!(e, HostEvent::Lost { .. })), 0);
    let (streams, full) = gpu_queries(&sshd);
    let tlimit = "temperature.gpu.tlimit".to_string();
    // Only the full query asks for it: the stream never needed a probe.
    assert_eq!(streams, vec![STREAM_FIELDS.to_vec()]);
    assert_eq!(full.len(), 2, "one probe, then the reduced list: {full:?}");
    assert!(full[0].contains(&tlimit));
    assert!(!full[1].contains(&tlimit));
    assert_eq!(full[1].len(), QUERY_FIELDS.len() - 1);
}

#[test]
fn a_field_both_lists_ask_for_is_dropped_from_both_and_stays_dropped() {
    let Some(mut sshd) = Sshd::start() else {
        return;
    };
    sshd.set_scenario("pre-535");
    let (sink, mut events) = channel();
    let opts = test_options(&sshd.trusted_known_hosts());
    let link = spawn_link(sshd.remote_host("r530"), 0, sink, opts).expect("spawn");
    for _ in 0..3 {
        let e = events.expect(WAIT, "Sample", |_, e| is_sample(e));
        let HostEvent::Sample { gpu, .. } = e else {
            unreachable!()
        };
        assert_eq!(&*gpu.name, "NVIDIA H200", "{gpu:?}");
        assert!(gpu.power_draw_w.is_some_and(|w| w > 600.0), "{gpu:?}");
        assert_eq!(gpu.clock_event_reasons, None, "not asked for any more");
    }
    let (streams, full) = gpu_queries(&sshd);
    let is_reason = |f: &String| f.starts_with("clocks_event_reasons.");
    let reasons = QUERY_FIELDS
        .iter()
        .filter(|f| f.starts_with("clocks_event_reasons."))
        .count();
    assert_eq!(
        streams.len(),
        2,
        "one probe, then the reduced list: {streams:?}"
    );
    assert!(!streams[1].iter().any(is_reason), "{streams:?}");
    // One field per probe: every reason column, then the list without them.
    assert_eq!(full.len(), reasons + 1, "{full:?}");
    assert!(!full[reasons].iter().any(is_reason), "{full:?}");

    // A new session starts with the lists this host accepted.
    sshd.restart();
    events.expect(WAIT, "Disconnected", |_, e| {
        matches!(e, HostEvent::Disconnected { .. })
    });
    events.expect(WAIT, "Connected again", |_, e| {
        matches!(e, HostEvent::Connected(_))
    });
    events.expect(WAIT, "Sample after reconnect", |_, e| is_sample(e));
    link.stop_and_join();
    let (streams_after, full_after) = gpu_queries(&sshd);
    assert_eq!(streams_after.len(), streams.len() + 1, "{streams_after:?}");
    assert!(full_after.len() > full.len(), "{full_after:?}");
    let later = streams_after[streams.len()..]
        .iter()
        .chain(&full_after[full.len()..]);
    for list in later {
        assert!(!list.iter().any(is_reason), "probed again: {list:?}");
    }
    let notices = notices(&events);
    assert_eq!(notices.len(), reasons, "one per field: {notices:?}");
    assert_eq!(events.count(|_, e| matches!(e, HostEvent::Lost { .. })), 0);
}

#[test]
fn the_process_list_is_fetched_often_only_while_the_host_is_looked_at() {
    let Some(sshd) = Sshd::start() else { return };
    let (sink, mut events) = channel();
    let mut opts = test_options(&sshd.trusted_known_hosts());
    opts.processes_interval_ms = 500;
    opts.processes_unwatched_interval_ms = 60_000;
    let link = spawn_link(sshd.remote_host("h200"), 0, sink, opts).expect("spawn");
    let backlogs = Backlogs::arm(std::slice::from_ref(&link));
    let is_processes = |_: HostId, e: &HostEvent| matches!(e, HostEvent::Processes { .. });
    events.expect(WAIT, "Processes", is_processes);
    events.drain_for(Duration::from_secs(3));
    assert_eq!(
        events.count(is_processes),
        1,
        "nobody looks: once at connect, then not for a minute"
    );
    backlogs.look_at(Some(0));
    events.drain_for(Duration::from_secs(3));
    let looked = events.count(is_processes) - 1;
    assert!(
        looked >= 3,
        "looked at: at once and every 500 ms, got {looked} in 3 s"
    );
    backlogs.look_at(None);
    // A fetch already under way may still report.
    events.drain_for(Duration::from_secs(1));
    let before = events.count(is_processes);
    events.drain_for(Duration::from_secs(3));
    assert_eq!(
        events.count(is_processes),
        before,
        "looked away: no more fetches"
    );
    link.stop_and_join();
}

#[test]
fn a_listener_of_bursts_gets_each_tick_of_every_gpu_as_one_burst() {
    let Some(sshd) = Sshd::start() else { return };
    // Four GPUs: each tick of the stream is four lines, read at once.
    std::fs::write(sshd.dir().join("gpus"), "4").expect("gpus");
    let (tx, rx) = std::sync::mpsc::channel::<(HostId, Vec<HostEvent>)>();
    let single = tx.clone();
    let sink =
        gpufleet::fleet::HostSink::new(move |host, event| single.send((host, vec![event])).is_ok())
            .with_bursts(move |host, events| tx.send((host, events)).is_ok());
    let opts = test_options(&sshd.trusted_known_hosts());
    let link = spawn_link(sshd.remote_host("h200"), 3, sink, opts).expect("spawn");
    let deadline = std::time::Instant::now() + WAIT;
    let mut bursts: Vec<Vec<u32>> = Vec::new();
    while bursts.len() < 5 && std::time::Instant::now() < deadline {
        let Ok((host, events)) = rx.recv_timeout(Duration::from_millis(200)) else {
            continue;
        };
        assert_eq!(host, 3);
        let indices: Vec<u32> = events
            .iter()
            .filter_map(|e| match e {
                HostEvent::Sample { gpu, .. } => Some(gpu.index),
                _ => None,
            })
            .collect();
        if !indices.is_empty() {
            assert_eq!(indices.len(), events.len(), "a burst holds readings only");
            bursts.push(indices);
        }
    }
    link.stop_and_join();
    assert_eq!(bursts.len(), 5, "readings stopped coming: {bursts:?}");
    // After the first (which may have come before the full query completed it), every
    // tick's four readings came together, in GPU order.
    let whole = bursts
        .iter()
        .skip(1)
        .filter(|b| **b == [0, 1, 2, 3])
        .count();
    assert!(whole >= 3, "ticks came apart: {bursts:?}");
}
