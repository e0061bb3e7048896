//! Folding a history's older points: the running sums behind the newest folded point, while
//! its bucket may still take points.

use super::{Fixed, Values};

/// The running sums of the folded point being built: the mean of each known reading (in its
/// steps), and the clock-event reasons of any point. The power limit is not folded: the folded
/// point keeps the newest one's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Fold {
    pub(super) bucket: u64,
    sums: [f32; 4],
    known: [u16; 4],
    clock_events: u16,
}

impl Fold {
    pub(super) fn new(bucket: u64) -> Self {
        Self {
            bucket,
            sums: [0.0; 4],
            known: [0; 4],
            clock_events: 0,
        }
    }

    pub(super) fn add(&mut self, values: &Values) {
        let steps = [
            values.utilization_gpu.steps(),
            values.memory_used.steps(),
            values.temperature.steps(),
            values.power_draw.steps(),
        ];
        for (i, v) in steps.into_iter().enumerate() {
            if let Some(v) = v {
                self.sums[i] += f32::from(v);
                self.known[i] = self.known[i].saturating_add(1);
            }
        }
        self.clock_events |= values.clock_events;
    }

    /// The folded readings; the power limit is left unknown (the caller keeps the newest's).
    pub(super) fn values(&self) -> Values {
        let mean = |i: usize| {
            (self.known[i] > 0).then(|| (self.sums[i] / f32::from(self.known[i])).round() as u16)
        };
        Values {
            utilization_gpu: Fixed::from_steps(mean(0)),
            memory_used: Fixed::from_steps(mean(1)),
            temperature: Fixed::from_steps(mean(2)),
            power_draw: Fixed::from_steps(mean(3)),
            power_limit: Fixed::from_steps(None),
            clock_events: self.clock_events,
        }
    }
}
