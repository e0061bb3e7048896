//! A bounded per-GPU history of the four charted series, one point per second at most.

use std::collections::VecDeque;

use crate::telemetry::{GpuSample, TimestampMs};

use super::idle_trail::{IdleTrail, IdleTrailShape};

/// One charted point as readers see it. Stored packed in 16 bytes (see [`History`]): each value
/// in fixed point in a `u16` with `u16::MAX` for "the sample did not carry it", precise to a
/// hundredth of a percent or degree and a tenth of a watt, and the clock-event mask's defined
/// bits (all below `0x8000`) with a flag for "known".
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HistoryPoint {
    pub at_ms: TimestampMs,
    values: Values,
}

/// The packed readings of one point.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Values {
    utilization_gpu: Fixed<100>,
    memory_used: Fixed<100>,
    temperature: Fixed<100>,
    power_draw: Fixed<10>,
    /// The enforced limit at that moment (a playbook may change it mid-history).
    power_limit: Fixed<10>,
    /// The NVML clock-event mask, so findings can ask "how long has it been throttling".
    clock_events: u16,
}

/// A value in `1 / PER_UNIT` steps, `u16::MAX` when unknown; out-of-range values clamp.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Fixed<const PER_UNIT: u32>(u16);

impl<const PER_UNIT: u32> Fixed<PER_UNIT> {
    const UNKNOWN: u16 = u16::MAX;

    fn new(value: Option<f64>) -> Self {
        match value.filter(|v| v.is_finite()) {
            Some(v) => {
                let steps = (v * f64::from(PER_UNIT)).round();
                Self(steps.clamp(0.0, f64::from(Self::UNKNOWN - 1)) as u16)
            }
            None => Self(Self::UNKNOWN),
        }
    }

    fn get(self) -> Option<f32> {
        (self.0 != Self::UNKNOWN).then(|| f32::from(self.0) / PER_UNIT as f32)
    }
}

const MASK_KNOWN: u16 = 0x8000;

/// The readings of one point, unpacked: what [`HistoryPoint::new`] takes.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Readings {
    pub utilization_gpu_pct: Option<f64>,
    pub memory_used_pct: Option<f64>,
    pub temperature_c: Option<f64>,
    pub power_draw_w: Option<f64>,
    pub power_limit_w: Option<f64>,
    pub clock_event_reasons: Option<u64>,
}

impl HistoryPoint {
    pub fn new(at_ms: TimestampMs, r: &Readings) -> Self {
        Self {
            at_ms,
            values: Values {
                utilization_gpu: Fixed::new(r.utilization_gpu_pct),
                memory_used: Fixed::new(r.memory_used_pct),
                temperature: Fixed::new(r.temperature_c),
                power_draw: Fixed::new(r.power_draw_w),
                power_limit: Fixed::new(r.power_limit_w),
                clock_events: r
                    .clock_event_reasons
                    .map_or(0, |m| MASK_KNOWN | (m & u64::from(!MASK_KNOWN)) as u16),
            },
        }
    }

    pub fn from_sample(at_ms: TimestampMs, gpu: &GpuSample) -> Self {
        let memory_used_pct = match (gpu.memory_used_mib, gpu.memory_total_mib) {
            (Some(used), Some(total)) if total > 0 => Some(used as f64 * 100.0 / total as f64),
            _ => None,
        };
        Self::new(
            at_ms,
            &Readings {
                utilization_gpu_pct: gpu.utilization_gpu_pct,
                memory_used_pct,
                temperature_c: gpu.temperature_c,
                power_draw_w: gpu.power_draw_w,
                power_limit_w: gpu.power_limit_w,
                clock_event_reasons: gpu.clock_event_reasons.map(|r| r.0),
            },
        )
    }

    pub fn utilization_gpu_pct(&self) -> Option<f32> {
        self.values.utilization_gpu.get()
    }

    pub fn memory_used_pct(&self) -> Option<f32> {
        self.values.memory_used.get()
    }

    pub fn temperature_c(&self) -> Option<f32> {
        self.values.temperature.get()
    }

    pub fn power_draw_w(&self) -> Option<f32> {
        self.values.power_draw.get()
    }

    pub fn power_limit_w(&self) -> Option<f32> {
        self.values.power_limit.get()
    }

    /// The clock-event mask (its bits below `0x8000`, which hold every reason NVML defines).
    pub fn clock_event_reasons(&self) -> Option<u64> {
        let mask = self.values.clock_events;
        (mask & MASK_KNOWN != 0).then(|| u64::from(mask & !MASK_KNOWN))
    }
}

/// Which series of a point to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    Utilization,
    Memory,
    Temperature,
    Power,
}

impl Metric {
    pub const ALL: [Metric; 4] = [
        Metric::Utilization,
        Metric::Memory,
        Metric::Temperature,
        Metric::Power,
    ];

    pub fn read(self, point: &HistoryPoint) -> Option<f32> {
        match self {
            Metric::Utilization => point.utilization_gpu_pct(),
            Metric::Memory => point.memory_used_pct(),
            Metric::Temperature => point.temperature_c(),
            Metric::Power => point.power_draw_w(),
        }
    }
}

/// Points at one-second resolution: a sample inside the same second as the last point replaces
/// it, so a fast stream (or a sped-up simulator) cannot push older history out early. Stored in
/// 16 bytes a point: the time as milliseconds after the history's `base_ms` in a `u32` (49 days;
/// the base moves forward long before that) and the packed values.
#[derive(Debug, Clone, PartialEq)]
pub struct History {
    points: VecDeque<Stored>,
    base_ms: TimestampMs,
    capacity: usize,
    /// What the idle rule reads, reaching back further than the points may.
    idle: IdleTrail,
}

/// How long a history is: points (one a second) and the idle trail.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HistoryShape {
    pub points: usize,
    pub idle: IdleTrailShape,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Stored {
    after_base_ms: u32,
    values: Values,
}

const BUCKET_MS: TimestampMs = 1000;
/// The base moves to the oldest point once a point is this far past it.
const REBASE_AFTER_MS: u64 = u32::MAX as u64 / 2;

impl History {
    pub fn new(shape: HistoryShape) -> Self {
        // Two points at least: the idle trail accounts the one before the newest.
        let capacity = shape.points.max(2);
        Self {
            points: VecDeque::with_capacity(capacity.min(1024)),
            base_ms: 0,
            capacity,
            idle: IdleTrail::new(shape.idle),
        }
    }

    /// A history of `points` with the default idle trail (tests, tools).
    pub fn with_capacity(points: usize) -> Self {
        Self::new(HistoryShape {
            points,
            idle: IdleTrailShape::default(),
        })
    }

    pub fn push(&mut self, point: HistoryPoint) {
        if let Some(last) = self.points.back()
            && (self.base_ms + u64::from(last.after_base_ms)) / BUCKET_MS == point.at_ms / BUCKET_MS
        {
            self.points.pop_back();
        } else {
            // The newest point is final now: the idle trail takes it.
            self.account_newest();
        }
        if self.points.len() == self.capacity {
            self.points.pop_front();
        }
        if self.points.is_empty() {
            self.base_ms = point.at_ms;
        } else if point.at_ms < self.base_ms || point.at_ms - self.base_ms > REBASE_AFTER_MS {
            self.rebase(point.at_ms);
        }
        self.points.push_back(Stored {
            after_base_ms: (point.at_ms - self.base_ms) as u32,
            values: point.values,
        });
    }

    /// Moves the base to the oldest point that `at_ms` can share it with: a clock that jumped
    /// back, or a history older than the offsets reach, keeps what it can and drops the rest.
    fn rebase(&mut self, at_ms: TimestampMs) {
        let base = self.base_ms;
        let oldest = self
            .points
            .iter()
            .map(|p| base + u64::from(p.after_base_ms))
            .find(|&t| t <= at_ms && at_ms - t <= REBASE_AFTER_MS)
            .unwrap_or(at_ms);
        self.points.retain(|p| {
            let t = base + u64::from(p.after_base_ms);
            t >= oldest && t <= oldest + REBASE_AFTER_MS
        });
        for p in &mut self.points {
            p.after_base_ms = (base + u64::from(p.after_base_ms) - oldest) as u32;
        }
        self.base_ms = oldest;
    }

    fn account_newest(&mut self) {
        let (last, previous) = {
            let mut newest = self.points().rev();
            let Some(last) = newest.next() else {
                return;
            };
            (last, newest.next().map(|p| p.at_ms))
        };
        let weight = self.idle.weight_ms(last.at_ms, previous);
        self.idle
            .account(last.at_ms, weight, last.utilization_gpu_pct());
    }

    /// The idle trail, and the newest point with its weight (not in the trail until the next
    /// second's point arrives).
    pub fn idle(&self) -> (&IdleTrail, Option<(HistoryPoint, u64)>) {
        let mut newest = self.points().rev();
        let last = newest.next().map(|last| {
            let previous = newest.next().map(|p| p.at_ms);
            (last, self.idle.weight_ms(last.at_ms, previous))
        });
        (&self.idle, last)
    }

    pub fn len(&self) -> usize {
        self.points.len()
    }

    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// The points, oldest first, decoded.
    pub fn points(&self) -> impl DoubleEndedIterator<Item = HistoryPoint> + ExactSizeIterator + '_ {
        let base = self.base_ms;
        self.points.iter().map(move |p| HistoryPoint {
            at_ms: base + u64::from(p.after_base_ms),
            values: p.values,
        })
    }

    /// `(seconds before now, value)` pairs of one series inside the last `window_ms`, oldest
    /// first, ready for a chart whose x axis runs from `-window` to 0.
    pub fn series(&self, metric: Metric, now_ms: TimestampMs, window_ms: u64) -> Vec<(f64, f64)> {
        let start = now_ms.saturating_sub(window_ms);
        self.points()
            .filter(|p| p.at_ms >= start)
            .filter_map(|p| {
                let value = metric.read(&p)?;
                let age_s = now_ms.saturating_sub(p.at_ms) as f64 / 1000.0;
                Some((-age_s, f64::from(value)))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(at_ms: TimestampMs, util: f32) -> HistoryPoint {
        HistoryPoint::new(
            at_ms,
            &Readings {
                utilization_gpu_pct: Some(f64::from(util)),
                ..Readings::default()
            },
        )
    }

    #[test]
    fn samples_in_one_second_share_a_point() {
        let mut h = History::with_capacity(10);
        h.push(point(10_000, 1.0));
        h.push(point(10_500, 2.0));
        h.push(point(11_000, 3.0));
        let utils: Vec<_> = h.points().map(|p| p.utilization_gpu_pct()).collect();
        assert_eq!(utils, vec![Some(2.0), Some(3.0)]);
    }

    #[test]
    fn capacity_drops_the_oldest() {
        let mut h = History::with_capacity(3);
        for s in 0..5 {
            h.push(point(s * 1000, s as f32));
        }
        assert_eq!(h.len(), 3);
        assert_eq!(h.points().next().map(|p| p.at_ms), Some(2000));
    }

    #[test]
    fn series_is_relative_to_now_and_windowed() {
        let mut h = History::with_capacity(100);
        for s in 0..10 {
            h.push(point(s * 1000, s as f32));
        }
        let series = h.series(Metric::Utilization, 9000, 3000);
        assert_eq!(
            series,
            vec![(-3.0, 6.0), (-2.0, 7.0), (-1.0, 8.0), (-0.0, 9.0)]
        );
    }

    #[test]
    fn a_point_is_16_bytes_and_keeps_what_the_findings_read() {
        assert_eq!(std::mem::size_of::<Stored>(), 16);
        let p = HistoryPoint::new(
            5,
            &Readings {
                utilization_gpu_pct: Some(97.0),
                memory_used_pct: Some(33.333),
                temperature_c: Some(83.0),
                power_draw_w: Some(699.96),
                power_limit_w: Some(700.0),
                clock_event_reasons: Some(0x20 | 0x4),
            },
        );
        assert_eq!(p.utilization_gpu_pct(), Some(97.0));
        assert!((p.memory_used_pct().unwrap() - 33.33).abs() < 0.001);
        assert_eq!(p.temperature_c(), Some(83.0));
        assert_eq!(p.power_draw_w(), Some(700.0));
        assert_eq!(p.power_limit_w(), Some(700.0));
        assert_eq!(p.clock_event_reasons(), Some(0x24));
        let unknown = HistoryPoint::new(5, &Readings::default());
        assert_eq!(unknown.utilization_gpu_pct(), None);
        assert_eq!(unknown.clock_event_reasons(), None);
        let zero = HistoryPoint::new(
            5,
            &Readings {
                clock_event_reasons: Some(0),
                power_draw_w: Some(0.0),
                ..Readings::default()
            },
        );
        assert_eq!(
            zero.clock_event_reasons(),
            Some(0),
            "no reason is not unknown"
        );
        assert_eq!(zero.power_draw_w(), Some(0.0));
    }

    #[test]
    fn values_out_of_range_clamp_instead_of_wrapping() {
        let p = HistoryPoint::new(
            0,
            &Readings {
                power_draw_w: Some(1.0e6),
                temperature_c: Some(-5.0),
                utilization_gpu_pct: Some(f64::NAN),
                ..Readings::default()
            },
        );
        assert_eq!(p.power_draw_w(), Some(6553.4));
        assert_eq!(p.temperature_c(), Some(0.0));
        assert_eq!(p.utilization_gpu_pct(), None);
    }

    #[test]
    fn times_survive_a_rebase_and_a_clock_that_jumps_back() {
        let mut h = History::with_capacity(10);
        let t0 = 1_800_000_000_000;
        h.push(point(t0, 1.0));
        // Past what a u32 of milliseconds after the first point holds.
        let late = t0 + 3 * REBASE_AFTER_MS;
        h.push(point(late - 1000, 2.0));
        h.push(point(late, 3.0));
        let times: Vec<_> = h.points().map(|p| p.at_ms).collect();
        assert_eq!(
            times,
            vec![late - 1000, late],
            "the unreachable old point is dropped"
        );
        h.push(point(late - 5000, 4.0));
        let times: Vec<_> = h.points().map(|p| p.at_ms).collect();
        assert_eq!(
            times,
            vec![late - 1000, late, late - 5000],
            "kept in arrival order"
        );
    }
}
