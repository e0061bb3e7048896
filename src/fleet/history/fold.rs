//! Folding a history's older points: the running sums behind the newest folded point, while
//! its bucket may still take points.

use super::{Fixed, Values};

/// The running sums of the folded point being built: the mean of each known reading.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Fold {
    pub(super) bucket: u64,
    sums: [f32; 5],
    known: [u16; 5],
    clock_events: u16,
}

impl Fold {
    pub(super) fn new(bucket: u64) -> Self {
        Self {
            bucket,
            sums: [0.0; 5],
            known: [0; 5],
            clock_events: 0,
        }
    }

    pub(super) fn add(&mut self, values: &Values) {
        let raw = [
            values.utilization_gpu.0,
            values.memory_used.0,
            values.temperature.0,
            values.power_draw.0,
            values.power_limit.0,
        ];
        for (i, v) in raw.into_iter().enumerate() {
            if v != u16::MAX {
                self.sums[i] += f32::from(v);
                self.known[i] = self.known[i].saturating_add(1);
            }
        }
        self.clock_events |= values.clock_events;
    }

    pub(super) fn values(&self) -> Values {
        let mean = |i: usize| {
            if self.known[i] == 0 {
                u16::MAX
            } else {
                (self.sums[i] / f32::from(self.known[i])).round() as u16
            }
        };
        Values {
            utilization_gpu: Fixed(mean(0)),
            memory_used: Fixed(mean(1)),
            temperature: Fixed(mean(2)),
            power_draw: Fixed(mean(3)),
            power_limit: Fixed(mean(4)),
            clock_events: self.clock_events,
        }
    }
}
