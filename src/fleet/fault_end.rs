//! When a host's fault ends. A finding raised by a kernel line belongs to the boot and the GPU
//! it happened on: it ends when the link reconnects to a new boot (the boot id read on connect
//! differs from the last one) or when the GPUs stream again after they could not be read. An
//! ended fault's findings are kept as *earlier* ones, with their time: shown dimmed, no longer
//! firing, and counted (a host that lost a GPU twice should be released).
//!
//! The events only note that something ended ([`PendingEnd`]); which kernel lines and findings
//! it ends is told apart by the findings' refresh (`diagnose::live_earlier`), which reads the
//! lines as the live findings do.

use std::collections::VecDeque;

use crate::diagnose::Finding;
use crate::telemetry::boot_id::BootId;
use crate::telemetry::{LostReason, TimestampMs};

/// Earlier findings a host keeps (the oldest go first); the losses stay counted.
pub const EARLIER_KEPT: usize = 32;

/// Why a fault is over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndCause {
    /// The link reconnected to a new boot of the host.
    NewBoot,
    /// The GPUs stream again after they could not be read.
    StreamsAgain,
}

/// The GPUs could not be read: what the link said when they stopped.
#[derive(Debug, Clone, PartialEq)]
pub struct LostSpell {
    pub since_ms: TimestampMs,
    pub reason: LostReason,
    pub raw: String,
}

/// An end noticed by an event, not yet told apart by the refresh.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingEnd {
    pub at_ms: TimestampMs,
    pub cause: EndCause,
    /// The GPUs that streamed again (for [`EndCause::StreamsAgain`]; a new boot ends every
    /// GPU's faults).
    pub gpus: Vec<u32>,
    /// The link's loss that ended with it, if the GPUs had been lost.
    pub lost: Option<LostSpell>,
}

/// A finding whose fault ended.
#[derive(Debug, Clone, PartialEq)]
pub struct EarlierFinding {
    pub finding: Finding,
    /// When it first showed: its first kernel line, or when the GPUs were lost.
    pub at_ms: TimestampMs,
    /// When its fault ended.
    pub ended_ms: TimestampMs,
    pub cause: EndCause,
}

/// A host's boots, losses and the findings of its faults that ended.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FaultEnds {
    /// The boot id last read.
    boot_id: Option<BootId>,
    /// Set while the GPUs cannot be read, until one streams again.
    lost: Option<LostSpell>,
    pending: Vec<PendingEnd>,
    earlier: VecDeque<EarlierFinding>,
    /// Faults that ended in which a GPU was lost (fell off the bus, or the link said so).
    losses: u32,
    /// Earlier findings ever kept, those dropped for room included.
    kept_total: u64,
}

impl FaultEnds {
    /// The link read `boot_id` at `at_ms`: one unlike the last ends every fault before it.
    /// True when it did.
    pub fn booted(&mut self, at_ms: TimestampMs, boot_id: BootId) -> bool {
        let before = self.boot_id.replace(boot_id);
        if before.is_none_or(|b| b == boot_id) {
            return false;
        }
        self.pending.push(PendingEnd {
            at_ms,
            cause: EndCause::NewBoot,
            gpus: Vec::new(),
            lost: self.lost.take(),
        });
        true
    }

    /// The link says the GPUs cannot be read (the first time of a spell counts).
    pub fn lost(&mut self, since_ms: TimestampMs, reason: LostReason, raw: &str) {
        if self.lost.is_none() {
            self.lost = Some(LostSpell {
                since_ms,
                reason,
                raw: raw.to_string(),
            });
        }
    }

    /// GPU `gpu` streamed a reading at `at_ms`. After a loss that ends it (the other GPUs that
    /// stream in the same burst join the end, until the refresh takes it).
    pub fn streamed(&mut self, at_ms: TimestampMs, gpu: u32) {
        if let Some(lost) = self.lost.take() {
            self.pending.push(PendingEnd {
                at_ms,
                cause: EndCause::StreamsAgain,
                gpus: vec![gpu],
                lost: Some(lost),
            });
            return;
        }
        if let Some(end) = self.pending.last_mut()
            && end.cause == EndCause::StreamsAgain
            && !end.gpus.contains(&gpu)
        {
            end.gpus.push(gpu);
        }
    }

    /// The ends noticed since the last call, oldest first.
    pub fn take_pending(&mut self) -> Vec<PendingEnd> {
        std::mem::take(&mut self.pending)
    }

    /// Whether some end waits for the refresh.
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Keeps the findings of one ended fault; `lost_gpu` when a GPU was lost in it.
    pub fn ended(&mut self, findings: Vec<EarlierFinding>, lost_gpu: bool) {
        if lost_gpu {
            self.losses = self.losses.saturating_add(1);
        }
        for f in findings {
            self.kept_total += 1;
            if self.earlier.len() == EARLIER_KEPT {
                self.earlier.pop_front();
            }
            self.earlier.push_back(f);
        }
    }

    /// The findings of faults that ended, oldest first.
    pub fn earlier(&self) -> impl DoubleEndedIterator<Item = &EarlierFinding> + ExactSizeIterator {
        self.earlier.iter()
    }

    /// Earlier findings kept so far, those dropped for room included: a reader that saw `n`
    /// has the newest `kept_total() - n` of [`FaultEnds::earlier`] still to see.
    pub fn kept_total(&self) -> u64 {
        self.kept_total
    }

    /// How many faults that ended lost a GPU.
    pub fn losses(&self) -> u32 {
        self.losses
    }

    /// The boot id last read.
    pub fn boot_id(&self) -> Option<BootId> {
        self.boot_id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u8) -> BootId {
        BootId::parse(&format!("6f1c3b0e-2a4d-4c8e-9b7a-1d2e3f4051{n:02x}")).expect("boot id")
    }

    #[test]
    fn only_a_boot_unlike_the_last_ends_anything() {
        let mut ends = FaultEnds::default();
        assert!(
            !ends.booted(1_000, id(1)),
            "the first boot id read ends nothing"
        );
        assert!(
            !ends.booted(2_000, id(1)),
            "a reconnect to the same boot neither"
        );
        assert!(!ends.has_pending());
        assert!(ends.booted(3_000, id(2)));
        let pending = ends.take_pending();
        assert_eq!(pending.len(), 1);
        assert_eq!(
            (pending[0].at_ms, pending[0].cause),
            (3_000, EndCause::NewBoot)
        );
        assert_eq!(ends.boot_id(), Some(id(2)));
    }

    #[test]
    fn gpus_that_stream_after_a_loss_end_it_together() {
        let mut ends = FaultEnds::default();
        ends.streamed(500, 0);
        assert!(!ends.has_pending(), "streaming without a loss ends nothing");
        ends.lost(1_000, LostReason::GpuLost, "GPU is lost");
        ends.lost(1_500, LostReason::Other, "again");
        ends.streamed(9_000, 0);
        ends.streamed(9_001, 1);
        ends.streamed(9_002, 1);
        let pending = ends.take_pending();
        assert_eq!(pending.len(), 1);
        assert_eq!(pending[0].cause, EndCause::StreamsAgain);
        assert_eq!(pending[0].gpus, vec![0, 1]);
        let lost = pending[0].lost.as_ref().expect("the loss it ended");
        assert_eq!((lost.since_ms, lost.reason), (1_000, LostReason::GpuLost));
        ends.streamed(10_000, 0);
        assert!(!ends.has_pending(), "later readings end nothing more");
    }
}

#[cfg(test)]
mod fleet_tests {
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
}
