//! Tests of the demo scenario, driven through `advance` with no sleeping.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::*;
use crate::telemetry::accel::Vendor;
use crate::telemetry::{ClockEventReasons, GpuSample, LostReason};

/// An arbitrary wall clock for scenario time 0.
const WALL0_MS: u64 = 1_780_000_000_000;

fn run(sim: &mut Simulator, until_ms: u64) -> Vec<(HostId, HostEvent)> {
    sim.advance(until_ms, WALL0_MS + until_ms)
}

fn host(sim: &Simulator, name: &str) -> HostId {
    sim.host_names()
        .iter()
        .position(|n| n == name)
        .unwrap_or_else(|| panic!("no host {name}"))
}

fn samples(events: &[(HostId, HostEvent)], id: HostId) -> Vec<(u64, &GpuSample)> {
    events
        .iter()
        .filter(|(h, _)| *h == id)
        .filter_map(|(_, e)| match e {
            HostEvent::Sample { at_ms, gpu } => Some((*at_ms, gpu)),
            _ => None,
        })
        .collect()
}

fn bits(s: &GpuSample) -> ClockEventReasons {
    s.clock_event_reasons.expect("clock event reasons")
}

#[test]
fn same_seed_same_events_and_batching_does_not_matter() {
    let mut a = Simulator::demo(42);
    let mut b = Simulator::demo(42);
    let batched = run(&mut a, 180_000);
    let mut stepped = Vec::new();
    for t in (0..=180_000).step_by(1_000) {
        stepped.extend(run(&mut b, t));
    }
    assert_eq!(batched, stepped);
    assert!(batched.len() > 1_000);

    let other = run(&mut Simulator::demo(43), 180_000);
    assert_ne!(batched, other);
}

#[test]
fn demo_hosts_in_order() {
    let sim = Simulator::demo(1);
    assert_eq!(
        sim.host_names(),
        [
            "train-h100x8",
            "idle-a100",
            "hot-4090",
            "leaky-t4",
            "flaky-h200",
            "unreachable-box",
            "ascend-910b",
            "xpu-flex170",
            "mthreads-s80",
            "cambricon-mlu",
            "mi300x-amd"
        ]
    );
    assert_eq!(sim.interval_ms(), 1_000);
}

#[test]
fn reachable_hosts_connect_first_then_sample_each_second() {
    let mut sim = Simulator::demo(7);
    let events = run(&mut sim, 9_000);
    for id in 0..5 {
        let mine: Vec<&HostEvent> = events
            .iter()
            .filter(|(h, _)| *h == id)
            .map(|(_, e)| e)
            .collect();
        assert!(matches!(mine[0], &HostEvent::Connecting { attempt: 1, .. }));
        match mine[1] {
            HostEvent::Connected(info) => {
                assert_eq!(info.source, "simulated");
                assert!(info.driver_version.is_some() && info.cuda_version.is_some());
            }
            other => panic!("expected Connected, got {other:?}"),
        }
        let gpus = sim.hosts[id].gpus.len();
        assert_eq!(samples(&events, id).len(), gpus * 10);
        let processes = mine
            .iter()
            .filter(|e| matches!(e, HostEvent::Processes { .. }))
            .count();
        assert_eq!(processes, 2, "at 0 s and 5 s");
    }
    // Ten ticks, one distinct timestamp each, the last one "now".
    let mut stamps: Vec<u64> = samples(&events, 0).iter().map(|(at, _)| *at).collect();
    stamps.dedup();
    assert_eq!(stamps.len(), 10);
    assert_eq!(stamps.last(), Some(&(WALL0_MS + 9_000)));
}

#[test]
fn training_host_sits_at_the_power_cap() {
    let mut sim = Simulator::demo(3);
    let id = host(&sim, "train-h100x8");
    let events = run(&mut sim, 300_000);
    let readings = samples(&events, id);
    assert_eq!(readings.len(), 8 * 301);
    for (_, s) in &readings {
        let power_w = s.power_draw_w.expect("power");
        assert!((686.0..=700.0).contains(&power_w), "power {power_w}");
        assert_eq!(s.power_limit_w, Some(700.0));
        assert!(bits(s).contains(ClockEventReasons::SW_POWER_CAP));
        assert!(s.utilization_gpu_pct.expect("util") >= 97.0);
        let used = s.memory_used_mib.expect("used");
        assert!((68_000..=75_000).contains(&used), "used {used}");
        assert!(s.clock_sm_mhz.expect("clock") < 1980);
        assert_eq!(&*s.name, "NVIDIA H100 80GB HBM3");
    }
    let uuids: std::collections::BTreeSet<&str> =
        readings.iter().map(|(_, s)| s.uuid.as_ref()).collect();
    assert_eq!(uuids.len(), 8);
    let procs = events.iter().find_map(|(h, e)| match e {
        HostEvent::Processes { processes, .. } if *h == id => Some(processes),
        _ => None,
    });
    let procs = procs.expect("processes");
    assert_eq!(procs.len(), 8);
    assert!(procs.iter().all(|p| p.name == "python"));
}

#[test]
fn the_amd_host_lists_its_process_by_gpu_number() {
    let mut sim = Simulator::demo(3);
    let id = host(&sim, "mi300x-amd");
    let events = run(&mut sim, 10_000);
    let procs = events
        .iter()
        .find_map(|(h, e)| match e {
            HostEvent::Processes { processes, .. } if *h == id => Some(processes),
            _ => None,
        })
        .expect("processes");
    assert_eq!(procs.len(), 1);
    let p = &procs[0];
    // As `amd-smi process --csv` lists it: by GPU number, no UUID, its VRAM.
    assert_eq!((p.name.as_str(), p.gpu_index), ("pt_main_thread", Some(0)));
    assert!(p.gpu_uuid.is_empty());
    assert!(p.used_memory_mib.is_some_and(|m| m > 0), "{p:?}");
}

#[test]
fn hosts_whose_tool_lists_no_processes_send_no_list() {
    let mut sim = Simulator::demo(3);
    let events = run(&mut sim, 10_000);
    for name in ["xpu-flex170", "cambricon-mlu"] {
        let id = host(&sim, name);
        assert!(
            !events
                .iter()
                .any(|(h, e)| *h == id && matches!(e, HostEvent::Processes { .. })),
            "{name}"
        );
    }
    let ascend = host(&sim, "ascend-910b");
    assert!(
        events
            .iter()
            .any(|(h, e)| *h == ascend && matches!(e, HostEvent::Processes { .. }))
    );
}

#[test]
fn idle_host_reads_idle() {
    let mut sim = Simulator::demo(5);
    let id = host(&sim, "idle-a100");
    let events = run(&mut sim, 120_000);
    for (_, s) in samples(&events, id) {
        assert_eq!(s.utilization_gpu_pct, Some(0.0));
        assert!(bits(s).contains(ClockEventReasons::GPU_IDLE));
        assert!(s.power_draw_w.expect("power") < 80.0);
        assert!(s.memory_used_mib.expect("used") < 4_000);
    }
}

#[test]
fn hot_4090_is_in_thermal_slowdown() {
    let mut sim = Simulator::demo(11);
    let id = host(&sim, "hot-4090");
    let events = run(&mut sim, 300_000);
    let readings = samples(&events, id);
    let mut hw = 0;
    for (_, s) in &readings {
        let slowdown_c = s.temperature_slowdown_c.expect("slowdown");
        let temp_c = s.temperature_c.expect("temp");
        assert!(temp_c >= slowdown_c, "{temp_c} < {slowdown_c}");
        assert!(temp_c < s.temperature_shutdown_c.expect("shutdown"));
        let reasons = bits(s);
        assert!(reasons.contains(ClockEventReasons::SW_THERMAL_SLOWDOWN));
        assert!(reasons.is_thermal());
        if reasons.contains(ClockEventReasons::HW_THERMAL_SLOWDOWN) {
            hw += 1;
            assert!(reasons.contains(ClockEventReasons::HW_SLOWDOWN));
        }
        assert!(s.clock_sm_mhz.expect("clock") < 1_800);
        assert!(s.power_draw_w.expect("power") < 0.8 * 450.0);
    }
    // The hardware slowdown cycles rather than staying on or off.
    assert!(
        hw > readings.len() / 5 && hw < readings.len() * 4 / 5,
        "hw {hw}"
    );
}

#[test]
fn leaky_t4_memory_grows_for_five_minutes() {
    let mut sim = Simulator::demo(13);
    let id = host(&sim, "leaky-t4");
    let events = run(&mut sim, 300_000);
    let used: Vec<u64> = samples(&events, id)
        .iter()
        .map(|(_, s)| s.memory_used_mib.expect("used"))
        .collect();
    assert_eq!(used.len(), 301);
    assert!(used.windows(2).all(|w| w[1] > w[0]));
    assert!(used[300] > used[0] + 4_000);

    // It keeps filling until the card is almost full, never past it.
    let later = run(&mut sim, 1_200_000);
    let last = samples(&later, id).last().map(|(_, s)| *s).cloned();
    let last = last.expect("sample");
    let used = last.memory_used_mib.expect("used");
    assert!(used <= 15_360 && used > 15_000, "used {used}");
}

#[test]
fn flaky_h200_falls_off_the_bus_after_a_minute() {
    let mut sim = Simulator::demo(17);
    let id = host(&sim, "flaky-h200");
    let events = run(&mut sim, 300_000);
    let mine: Vec<&HostEvent> = events
        .iter()
        .filter(|(h, _)| *h == id)
        .map(|(_, e)| e)
        .collect();
    let first_kernel = mine
        .iter()
        .position(|e| matches!(e, HostEvent::Kernel { .. }))
        .expect("kernel lines");
    let lost = mine
        .iter()
        .position(|e| matches!(e, HostEvent::Lost { .. }))
        .expect("lost");
    assert!(first_kernel < lost);
    assert_eq!(lost, mine.len() - 1, "nothing after Lost");
    assert!(
        mine[first_kernel..]
            .iter()
            .all(|e| !matches!(e, HostEvent::Sample { .. } | HostEvent::Processes { .. }))
    );
    let lines: Vec<&str> = mine
        .iter()
        .filter_map(|e| match e {
            HostEvent::Kernel { line, .. } => Some(line.as_str()),
            _ => None,
        })
        .collect();
    assert!(lines.contains(
        &"NVRM: Xid (PCI:0000:00:06): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
    ));
    assert!(lines.contains(&"NVRM: GPU 0000:00:06.0: GPU has fallen off the bus."));
    match mine[lost] {
        HostEvent::Lost { at_ms, reason, raw } => {
            assert_eq!(*reason, LostReason::GpuLost);
            assert_eq!(
                raw,
                "Unable to determine the device handle for GPU 0000:00:06.0: GPU is lost. \
                 Reboot the system to recover this GPU"
            );
            let after_ms = at_ms - WALL0_MS;
            assert!((60_000..=62_000).contains(&after_ms), "lost at {after_ms}");
        }
        other => panic!("{other:?}"),
    }
    // Healthy under load until then, with the capture's numbers.
    let readings = samples(&events, id);
    assert_eq!(readings.len(), 60);
    for (_, s) in readings {
        assert_eq!(&*s.bus_id, "00000000:00:06.0");
        assert_eq!(s.memory_total_mib, Some(143_771));
        assert!(s.power_draw_w.expect("power") > 686.0);
    }
}

#[test]
fn unreachable_box_never_connects_and_backs_off() {
    let mut sim = Simulator::demo(19);
    let id = host(&sim, "unreachable-box");
    let events = run(&mut sim, 600_000);
    let mine: Vec<&HostEvent> = events
        .iter()
        .filter(|(h, _)| *h == id)
        .map(|(_, e)| e)
        .collect();
    assert!(!mine.iter().any(|e| matches!(e, HostEvent::Connected(_))));
    assert!(mine.iter().all(|e| matches!(
        e,
        HostEvent::Connecting { .. } | HostEvent::Disconnected { .. }
    )));
    // Strictly alternating, attempts counting up from 1.
    let mut disconnects = Vec::new();
    for (i, pair) in mine.chunks(2).enumerate() {
        assert!(
            matches!(pair[0], &HostEvent::Connecting { attempt, at_ms: Some(_) } if attempt == i as u32 + 1),
            "{:?}",
            pair[0]
        );
        if let Some(HostEvent::Disconnected {
            at_ms,
            reason,
            summary,
            retry_at_ms,
            words,
        }) = pair.get(1)
        {
            assert_eq!(
                reason,
                "connect to 203.0.113.7 port 22: Connection timed out"
            );
            // The console says it in the user's language; the OS's words stay as they came.
            let zh = words
                .as_ref()
                .map(|w| w.reason.render("zh-CN"))
                .unwrap_or_default();
            assert!(
                zh.contains("203.0.113.7") && zh.contains("Connection timed out"),
                "{zh}"
            );
            assert!(
                !zh.contains("connect to") && !zh.contains("port 22"),
                "{zh}"
            );
            assert_eq!(summary, "connection timed out");
            assert!(
                retry_at_ms.is_some_and(|r| r > *at_ms),
                "a retry is announced"
            );
            disconnects.push(*at_ms);
        }
    }
    assert!(disconnects.len() >= 10);
    let gaps: Vec<u64> = disconnects.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(
        gaps.windows(2).all(|w| w[1] >= w[0]),
        "backoff grows: {gaps:?}"
    );
    assert!(
        gaps.iter().all(|g| (10_000..=40_000).contains(g)),
        "{gaps:?}"
    );
}

fn check_invariants(events: &[(HostId, HostEvent)]) {
    for (_, event) in events {
        let HostEvent::Sample { gpu: s, .. } = event else {
            continue;
        };
        if s.vendor == Vendor::Intel {
            // As the published Flex 170 dump prints it: power and clock, nothing else.
            let power_w = s.power_draw_w.expect("power");
            assert!((40.0..48.0).contains(&power_w), "{s:?}");
            assert_eq!(s.clock_sm_mhz, Some(2050));
            assert_eq!(
                (s.memory_total_mib, s.utilization_gpu_pct, s.temperature_c),
                (None, None, None),
                "{s:?}"
            );
            assert_eq!((s.name.as_ref(), s.bus_id.as_ref()), ("", ""), "{s:?}");
            continue;
        }
        let total = s.memory_total_mib.expect("total");
        assert!(s.memory_used_mib.expect("used") <= total, "{s:?}");
        if s.vendor != Vendor::Nvidia {
            // Read as its vendor's tool reports it: what that tool lacks is unknown, not 0.
            if s.vendor == Vendor::Amd {
                // `amd-smi monitor` as published: 305 W, 49 C, 2106 MHz, 97 % GFX.
                assert!(
                    (295.0..=310.0).contains(&s.power_draw_w.expect("power")),
                    "{s:?}"
                );
                assert!(s.clock_sm_mhz.is_some() && s.temperature_memory_c.is_some());
                assert_eq!((s.power_limit_w, s.clock_mem_mhz), (None, None), "{s:?}");
                assert_eq!((s.name.as_ref(), s.bus_id.as_ref()), ("", ""), "{s:?}");
                assert_eq!(s.memory_used_mib, Some(3_072));
                continue;
            }
            assert!(s.temperature_c.is_some() && s.utilization_gpu_pct.is_some());
            assert_eq!((s.clock_sm_mhz, s.pstate.as_deref()), (None, None));
            assert_eq!(s.uuid.as_ref(), "", "{s:?}");
            match s.vendor {
                Vendor::Huawei => {
                    assert!(s.power_draw_w.expect("power") > 0.0, "{s:?}");
                    assert_eq!(s.power_limit_w, None);
                    assert_eq!(s.bus_id.len(), 12, "{s:?}");
                }
                // mthreads-gmi prints no power and no health.
                Vendor::Mthreads => {
                    assert_eq!((s.power_draw_w, s.power_limit_w), (None, None), "{s:?}");
                    assert_eq!((s.name.as_ref(), s.health.clone()), ("MTT S80", None));
                    assert_eq!(s.memory_total_mib, Some(16_384));
                }
                // cnmon prints the draw, the cap and the fan, no health word.
                Vendor::Cambricon => {
                    assert!(s.power_draw_w.expect("power") > 0.0, "{s:?}");
                    assert_eq!(s.power_limit_w, Some(250.0), "{s:?}");
                    assert_eq!((s.fan_speed_pct, s.health.clone()), (Some(0.0), None));
                }
                other => panic!("unexpected vendor {other:?}"),
            }
            continue;
        }
        let power_w = s.power_draw_w.expect("power");
        assert!(
            power_w > 0.0 && power_w <= s.power_max_limit_w.expect("max"),
            "{s:?}"
        );
        let util = s.utilization_gpu_pct.expect("util");
        assert!((0.0..=100.0).contains(&util));
        assert!(s.clock_sm_mhz.expect("clock") <= s.clock_sm_max_mhz.expect("max clock"));
        assert!(s.temperature_c.expect("temp") < s.temperature_shutdown_c.expect("shutdown"));
        assert!(
            s.uuid.starts_with("GPU-") && s.uuid.len() == 40,
            "{}",
            s.uuid
        );
        assert_eq!(s.bus_id.len(), 16);
    }
}

#[test]
fn the_demo_intel_host_reads_as_its_published_dump() {
    let mut sim = Simulator::demo(3);
    let id = host(&sim, "xpu-flex170");
    let events = run(&mut sim, 10_000);
    let mine = samples(&events, id);
    assert!(!mine.is_empty());
    assert!(mine.iter().all(|(_, s)| s.vendor == Vendor::Intel));
    check_invariants(&events);
}

#[test]
fn every_sample_is_physically_possible() {
    let mut sim = Simulator::demo(23);
    check_invariants(&run(&mut sim, 900_000));
    let mut big = fleet(23, 64);
    check_invariants(&run(&mut big, 120_000));
}

#[test]
fn benchmark_fleet_has_the_requested_size() {
    let mut sim = fleet(5, 256);
    let names = sim.host_names();
    assert_eq!(names.len(), 256);
    let unique: std::collections::BTreeSet<&String> = names.iter().collect();
    assert_eq!(unique.len(), 256);
    let events = run(&mut sim, 0);
    for id in 0..256 {
        let n = samples(&events, id).len();
        assert!((1..=8).contains(&n), "host {id} has {n} GPUs");
    }
    assert_eq!(fleet(5, 256).advance(10_000, WALL0_MS), {
        let mut again = fleet(5, 256);
        again.advance(10_000, WALL0_MS)
    });
}

#[test]
fn spawned_simulator_streams_samples() {
    let (tx, rx) = mpsc::channel();
    let sink = HostSink::from_sender(tx, |host, event| (host, event));
    let handle = spawn(Simulator::demo(29), sink, 50.0).expect("spawn");
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut got_sample = false;
    while Instant::now() < deadline && !got_sample {
        if let Ok((_, event)) = rx.recv_timeout(Duration::from_millis(200)) {
            got_sample = matches!(event, HostEvent::Sample { .. });
        }
    }
    handle.stop_and_join();
    assert!(got_sample);
}

#[test]
fn spawn_rejects_a_bad_speed() {
    for speed in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let sink = HostSink::new(|_, _| true);
        assert!(spawn(Simulator::demo(1), sink, speed).is_err());
    }
}

/// `--speed` speeds the fleet's clock, not only the readings: at speed 100, samples read in
/// about a quarter of a second of wall time are stamped some 25 simulated seconds apart, so
/// findings and ledgers (which read the stamps) run a hundred times faster too.
#[test]
fn a_fast_simulator_stamps_its_events_on_the_simulated_clock() {
    let (tx, rx) = mpsc::channel();
    let sink = HostSink::from_sender(tx, |host, event| (host, event));
    let wall_before_ms = now_ms();
    let handle = spawn(Simulator::demo(29), sink, 100.0).expect("spawn");
    let mut stamps = Vec::new();
    let deadline = Instant::now() + Duration::from_millis(250);
    while Instant::now() < deadline {
        if let Ok((0, HostEvent::Sample { at_ms, .. })) = rx.recv_timeout(Duration::from_millis(50))
        {
            stamps.push(at_ms);
        }
    }
    handle.stop_and_join();
    let wall_after_ms = now_ms();
    // One stamp per tick for the host's eight GPUs.
    stamps.dedup();
    let (Some(first), Some(last)) = (stamps.first(), stamps.last()) else {
        panic!("no samples");
    };
    let wall_ms = wall_after_ms - wall_before_ms;
    assert!(
        last - first >= 10 * wall_ms,
        "{} ms of stamps in {wall_ms} ms of wall time",
        last - first
    );
    // One reading per simulated second, each a second after the last.
    assert!(
        stamps.windows(2).all(|w| w[1] - w[0] == 1_000),
        "{stamps:?}"
    );
}

/// flaky-h200's Xid 79 fires until the gpu-lost runbook reboots the host (its `reboot` step,
/// run on the simulator as the runbook runs it); then the host reconnects in a new boot, its
/// GPU streams, and the finding is an earlier one: no badge, no alert.
#[test]
fn flaky_h200s_lost_gpu_stops_firing_after_the_runbook_reboots_it() {
    use crate::fleet::fault_end::EndCause;
    use crate::fleet::{Fleet, FleetOptions};

    let sim: SharedSim = Arc::new(Mutex::new(Simulator::demo(17)));
    let names = lock(&sim).host_names();
    let id = host(&lock(&sim), "flaky-h200");
    let mut fleet = Fleet::new(names, FleetOptions::default(), WALL0_MS);
    let labels = |fleet: &Fleet| -> Vec<String> {
        fleet.hosts[id]
            .findings
            .iter()
            .map(|f| f.label.clone())
            .collect()
    };
    crate::demo::run_forward(&sim, &mut fleet, WALL0_MS, 90_000);
    assert!(
        labels(&fleet).contains(&"xid_79".to_string()),
        "{:?}",
        labels(&fleet)
    );
    let reboot = ["sudo", "-n", "reboot"].map(str::to_string);
    lock(&sim)
        .run_command("flaky-h200", &reboot)
        .expect("the reboot runs");
    crate::demo::run_forward(&sim, &mut fleet, WALL0_MS, 100_000);
    assert_eq!(labels(&fleet), Vec::<String>::new());
    let earlier: Vec<(String, EndCause)> = fleet.hosts[id]
        .faults
        .earlier()
        .map(|e| (e.finding.label.clone(), e.cause))
        .collect();
    assert!(
        earlier.contains(&("xid_79".to_string(), EndCause::NewBoot)),
        "{earlier:?}"
    );
    assert_eq!(fleet.hosts[id].faults.losses(), 1);
}
