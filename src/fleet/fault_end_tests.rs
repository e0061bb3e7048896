//! A fault's findings through the whole engine (`Fleet::apply`, `refresh_findings`): a GPU that
//! falls off the bus, then streams again or comes back in a new boot.

use crate::diagnose::Severity;
use crate::fleet::fault_end::EndCause;
use crate::fleet::{Fleet, FleetOptions, HostEvent};
use crate::telemetry::boot_id::BootId;
use crate::telemetry::{GpuSample, HostInfo, LostReason};

/// NVIDIA's own Xid catalog example (the kernel line of a GPU that fell off the bus).
const XID_79: &str = "NVRM: Xid (PCI:0000:5a:00): 79, GPU has fallen off the bus.";
/// What nvidia-smi prints for it (the bus id is the Xid's GPU).
const LOST: &str = "Unable to determine the device handle for GPU 0000:5A:00.0: GPU is lost. \
                    Reboot the system to recover this GPU";

/// The clock at the start (a recent Unix time: the idle window reaches back before it).
const T0: u64 = 1_700_000_000_000;

/// `s` seconds after [`T0`], plus `ms`.
fn at(s: u64, ms: u64) -> u64 {
    T0 + s * 1_000 + ms
}

fn boot(n: u8) -> BootId {
    BootId::parse(&format!("6f1c3b0e-2a4d-4c8e-9b7a-1d2e3f4051{n:02x}")).expect("boot id")
}

/// GPU 0 on bus 0000:19:00.0, GPU 1 on 0000:5A:00.0 (the Xid's).
fn sample(index: u32) -> GpuSample {
    let bus = ["00000000:19:00.0", "00000000:5A:00.0"][index as usize];
    GpuSample {
        index,
        bus_id: bus.into(),
        utilization_gpu_pct: Some(90.0),
        ..GpuSample::default()
    }
}

struct Run {
    fleet: Fleet,
}

impl Run {
    fn new() -> Self {
        let mut fleet = Fleet::new(vec!["h".into()], FleetOptions::default(), T0);
        fleet.apply(0, HostEvent::Connected(HostInfo::default()));
        Self { fleet }
    }

    fn event(&mut self, event: HostEvent) {
        self.fleet.apply(0, event);
    }

    /// Both GPUs stream from `from_s` to `to_s`, the findings refreshed each second.
    fn stream(&mut self, from_s: u64, to_s: u64, gpus: &[u32]) {
        for s in from_s..=to_s {
            for &gpu in gpus {
                self.event(HostEvent::Sample {
                    at_ms: at(s, 0),
                    gpu: sample(gpu),
                });
            }
            self.fleet.advance_clock(at(s, 0));
            self.fleet.refresh_findings();
        }
    }

    fn falls_off(&mut self, at_s: u64) {
        self.event(HostEvent::Kernel {
            at_ms: at(at_s, 0),
            line: XID_79.into(),
        });
        self.event(HostEvent::Lost {
            at_ms: at(at_s, 100),
            reason: LostReason::GpuLost,
            raw: LOST.into(),
        });
        self.fleet.advance_clock(at(at_s, 500));
        self.fleet.refresh_findings();
    }

    fn firing(&self) -> Vec<(String, Option<u32>, Severity)> {
        self.fleet.hosts[0]
            .findings
            .iter()
            .map(|f| (f.label.clone(), f.gpu, f.severity))
            .collect()
    }

    fn labels(&self) -> Vec<String> {
        self.firing().into_iter().map(|(l, _, _)| l).collect()
    }

    fn earlier(&self) -> Vec<(String, u64, EndCause)> {
        self.fleet.hosts[0]
            .faults
            .earlier()
            .map(|e| (e.finding.label.clone(), e.at_ms, e.cause))
            .collect()
    }
}

#[test]
fn an_xid_79_stops_firing_once_its_gpu_streams_again_and_is_kept_as_earlier() {
    let mut run = Run::new();
    run.stream(1, 10, &[0, 1]);
    run.falls_off(11);
    assert!(
        run.firing()
            .contains(&("xid_79".into(), Some(1), Severity::Critical)),
        "{:?}",
        run.firing()
    );
    // Lost for 25 s: still firing.
    run.fleet.advance_clock(at(36, 0));
    run.fleet.refresh_findings();
    assert!(run.labels().contains(&"xid_79".to_string()));
    // The instance was restarted: the GPUs stream again (no new boot id read).
    run.stream(37, 40, &[0, 1]);
    assert_eq!(run.firing(), vec![], "nothing fires once the GPUs stream");
    let earlier = run.earlier();
    assert!(
        earlier.contains(&("xid_79".into(), at(11, 0), EndCause::StreamsAgain)),
        "{earlier:?}"
    );
    assert!(
        earlier
            .iter()
            .any(|(l, when, _)| l == "gpu_lost" && *when == at(11, 100)),
        "the link's loss is kept too: {earlier:?}"
    );
    assert!(run.fleet.hosts[0].kernel_lines.is_empty());
    assert_eq!(run.fleet.hosts[0].faults.losses(), 1);
}

#[test]
fn a_gpu_that_does_not_stream_again_keeps_its_finding() {
    let mut run = Run::new();
    run.stream(1, 10, &[0, 1]);
    run.falls_off(11);
    // Only GPU 0 comes back; the Xid was GPU 1's.
    run.stream(40, 42, &[0]);
    assert!(
        run.firing()
            .contains(&("xid_79".into(), Some(1), Severity::Critical)),
        "{:?}",
        run.firing()
    );
    assert!(
        !run.earlier().iter().any(|(l, _, _)| l == "xid_79"),
        "{:?}",
        run.earlier()
    );
}

#[test]
fn a_new_boot_ends_the_findings_of_the_boot_before_and_the_same_boot_does_not() {
    let mut run = Run::new();
    run.event(HostEvent::Boot {
        at_ms: at(0, 500),
        boot_id: boot(1),
    });
    run.stream(1, 5, &[0, 1]);
    // The Xid line while the stream goes on (its loss not seen by the link).
    run.event(HostEvent::Kernel {
        at_ms: at(6, 0),
        line: XID_79.into(),
    });
    run.stream(6, 8, &[0, 1]);
    assert!(run.labels().contains(&"xid_79".to_string()));
    // The link drops and reconnects to the same boot: the fault goes on.
    run.event(HostEvent::Boot {
        at_ms: at(9, 0),
        boot_id: boot(1),
    });
    run.stream(9, 10, &[0, 1]);
    assert!(run.labels().contains(&"xid_79".to_string()));
    // A new boot.
    run.event(HostEvent::Boot {
        at_ms: at(30, 0),
        boot_id: boot(2),
    });
    run.stream(30, 31, &[0, 1]);
    assert_eq!(run.labels(), Vec::<String>::new());
    // The line's findings (the Xid, and the lost GPU its words say), all of the boot before.
    let earlier = run.earlier();
    assert!(
        earlier.contains(&("xid_79".into(), at(6, 0), EndCause::NewBoot)),
        "{earlier:?}"
    );
    assert!(
        earlier
            .iter()
            .all(|(_, when, cause)| *when == at(6, 0) && *cause == EndCause::NewBoot),
        "{earlier:?}"
    );
    assert_eq!(run.fleet.hosts[0].faults.losses(), 1);
}

#[test]
fn a_host_that_lost_a_gpu_twice_is_advised_to_be_released() {
    let mut run = Run::new();
    run.stream(1, 5, &[0, 1]);
    run.falls_off(6);
    assert!(!run.labels().contains(&"gpu_lost_again".to_string()));
    run.stream(20, 22, &[0, 1]);
    assert!(
        run.labels().is_empty(),
        "one loss that ended: {:?}",
        run.labels()
    );
    run.falls_off(40);
    let again = run.fleet.hosts[0]
        .findings
        .iter()
        .find(|f| f.label == "gpu_lost_again")
        .expect("the second loss is counted");
    assert!(
        again.action.contains("gpufleet release"),
        "{}",
        again.action
    );
    assert!(
        again.evidence.iter().any(|e| e.contains("2 times")),
        "{:?}",
        again.evidence
    );
    // It stays after the second loss ends: the host is the fault.
    run.stream(60, 62, &[0, 1]);
    assert_eq!(run.labels(), vec!["gpu_lost_again".to_string()]);
    assert_eq!(run.fleet.hosts[0].faults.losses(), 2);
}
