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
#[path = "fault_end_tests.rs"]
mod fleet_tests;
