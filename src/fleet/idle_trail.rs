//! What the idle rule reads, kept for the whole idle window at a fraction of the history's
//! cost: per GPU, 10-second buckets of "how long was it busy" and "how busy at most". The
//! history proper (one point a second, every series) then only needs to reach back as far as
//! the charts and the duration rules look (minutes), not over `idle_minutes`: for the watcher,
//! which draws no charts, that is a quarter of its memory at 50 hosts.
//!
//! A point is accounted once it is final (the next second's point has arrived: a point can be
//! replaced within its second), with the weight the rule gives it: the time since the point
//! before it, capped at two intervals so a stall in the stream is not read as a long state.

use std::collections::VecDeque;

use crate::telemetry::TimestampMs;

/// The width of one bucket.
pub const IDLE_BUCKET_MS: u64 = 10_000;

/// How an idle trail is kept: for how long, and what counts as busy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IdleTrailShape {
    pub buckets: usize,
    /// Utilization at or above this (or unknown) is work.
    pub busy_at_pct: f64,
    pub interval_ms: u64,
}

impl Default for IdleTrailShape {
    fn default() -> Self {
        Self {
            buckets: 66,
            busy_at_pct: 5.0,
            interval_ms: 1000,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Bucket {
    /// The time of the first point accounted in it.
    first_ms: TimestampMs,
    busy_ms: u32,
    /// The highest utilization seen, in hundredths of a percent (unknown counts as 0 here and
    /// as work in `busy_ms`).
    peak_centi_pct: u16,
}

/// The busy time and peak of a window, as [`IdleTrail::window`] sums them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IdleWindow {
    pub busy_ms: u64,
    pub peak_pct: f32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct IdleTrail {
    buckets: VecDeque<Bucket>,
    shape: IdleTrailShape,
}

impl IdleTrail {
    pub fn new(shape: IdleTrailShape) -> Self {
        Self {
            buckets: VecDeque::new(),
            shape: IdleTrailShape {
                buckets: shape.buckets.max(1),
                ..shape
            },
        }
    }

    /// The weight a point at `at_ms` gets after one at `previous_ms` (or the first point).
    pub fn weight_ms(&self, at_ms: TimestampMs, previous_ms: Option<TimestampMs>) -> u64 {
        let interval = self.shape.interval_ms.max(1000);
        previous_ms.map_or(interval, |prev| {
            at_ms.saturating_sub(prev).min(2 * interval)
        })
    }

    /// Whether `utilization` counts as work.
    pub fn is_busy(&self, utilization_pct: Option<f32>) -> bool {
        utilization_pct.is_none_or(|u| f64::from(u) >= self.shape.busy_at_pct)
    }

    /// Accounts a final point.
    pub fn account(&mut self, at_ms: TimestampMs, weight_ms: u64, utilization_pct: Option<f32>) {
        let busy = if self.is_busy(utilization_pct) {
            u32::try_from(weight_ms).unwrap_or(u32::MAX)
        } else {
            0
        };
        let peak = utilization_pct.map_or(0, |u| (u.clamp(0.0, 655.0) * 100.0).round() as u16);
        if let Some(last) = self.buckets.back_mut()
            && last.first_ms / IDLE_BUCKET_MS == at_ms / IDLE_BUCKET_MS
        {
            last.busy_ms = last.busy_ms.saturating_add(busy);
            last.peak_centi_pct = last.peak_centi_pct.max(peak);
            return;
        }
        if self.buckets.len() == self.shape.buckets {
            self.buckets.pop_front();
        }
        self.buckets.push_back(Bucket {
            first_ms: at_ms,
            busy_ms: busy,
            peak_centi_pct: peak,
        });
    }

    /// The oldest point still accounted.
    pub fn first_ms(&self) -> Option<TimestampMs> {
        self.buckets.front().map(|b| b.first_ms)
    }

    /// Busy time and peak of the buckets that reach into `since_ms..`, newest first, stopping
    /// once busy time passes `stop_after_ms` (most GPUs prove busy at once). A bucket that
    /// starts before `since_ms` counts whole: at most one bucket's work from before the window
    /// is counted, which errs towards "not idle".
    pub fn window(&self, since_ms: TimestampMs, stop_after_ms: u64) -> IdleWindow {
        let mut out = IdleWindow {
            busy_ms: 0,
            peak_pct: 0.0,
        };
        for bucket in self.buckets.iter().rev() {
            let bucket_end = (bucket.first_ms / IDLE_BUCKET_MS + 1) * IDLE_BUCKET_MS;
            if bucket_end <= since_ms {
                break;
            }
            out.busy_ms += u64::from(bucket.busy_ms);
            out.peak_pct = out.peak_pct.max(f32::from(bucket.peak_centi_pct) / 100.0);
            if out.busy_ms > stop_after_ms {
                break;
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trail(buckets: usize) -> IdleTrail {
        IdleTrail::new(IdleTrailShape {
            buckets,
            busy_at_pct: 5.0,
            interval_ms: 1000,
        })
    }

    #[test]
    fn busy_time_and_peak_of_a_window() {
        let mut t = trail(100);
        let mut previous = None;
        for s in 0..120u64 {
            let at = 1_000_000 + s * 1000;
            let util = if (50..55).contains(&s) { 80.0 } else { 1.0 };
            let w = t.weight_ms(at, previous);
            t.account(at, w, Some(util));
            previous = Some(at);
        }
        let all = t.window(0, u64::MAX);
        assert_eq!(all.busy_ms, 5_000);
        assert_eq!(all.peak_pct, 80.0);
        // The last minute saw no work.
        let last = t.window(1_000_000 + 60_000, u64::MAX);
        assert_eq!(last.busy_ms, 0);
        assert_eq!(last.peak_pct, 1.0);
        assert_eq!(t.first_ms(), Some(1_000_000));
    }

    #[test]
    fn unknown_utilization_is_work_and_a_stall_weighs_two_intervals() {
        let mut t = trail(10);
        t.account(10_000, 1000, None);
        let w = t.weight_ms(70_000, Some(10_000));
        assert_eq!(w, 2000, "capped");
        t.account(70_000, w, Some(90.0));
        assert_eq!(t.window(0, u64::MAX).busy_ms, 3_000);
    }

    #[test]
    fn old_buckets_fall_off() {
        let mut t = trail(3);
        for s in 0..60u64 {
            t.account(s * 1000, 1000, Some(0.0));
        }
        assert_eq!(t.first_ms(), Some(30_000));
    }
}
