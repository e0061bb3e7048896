//! A bounded per-GPU history of the four charted series, one point per second at most.

use std::collections::VecDeque;

use crate::telemetry::{GpuSample, TimestampMs};

/// One charted point, packed into 24 bytes (a watcher keeps hundreds of thousands): each value
/// in fixed point in a `u16` with `u16::MAX` for "the sample did not carry it", precise to a
/// hundredth of a percent or degree and a tenth of a watt, and the clock-event mask's defined
/// bits (all below `0x8000`) with a flag for "known".
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HistoryPoint {
    pub at_ms: TimestampMs,
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
            utilization_gpu: Fixed::new(r.utilization_gpu_pct),
            memory_used: Fixed::new(r.memory_used_pct),
            temperature: Fixed::new(r.temperature_c),
            power_draw: Fixed::new(r.power_draw_w),
            power_limit: Fixed::new(r.power_limit_w),
            clock_events: r
                .clock_event_reasons
                .map_or(0, |m| MASK_KNOWN | (m & u64::from(!MASK_KNOWN)) as u16),
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
        self.utilization_gpu.get()
    }

    pub fn memory_used_pct(&self) -> Option<f32> {
        self.memory_used.get()
    }

    pub fn temperature_c(&self) -> Option<f32> {
        self.temperature.get()
    }

    pub fn power_draw_w(&self) -> Option<f32> {
        self.power_draw.get()
    }

    pub fn power_limit_w(&self) -> Option<f32> {
        self.power_limit.get()
    }

    /// The clock-event mask (its bits below `0x8000`, which hold every reason NVML defines).
    pub fn clock_event_reasons(&self) -> Option<u64> {
        (self.clock_events & MASK_KNOWN != 0).then(|| u64::from(self.clock_events & !MASK_KNOWN))
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
/// it, so a fast stream (or a sped-up simulator) cannot push older history out early.
#[derive(Debug, Clone, PartialEq)]
pub struct History {
    points: VecDeque<HistoryPoint>,
    capacity: usize,
}

const BUCKET_MS: TimestampMs = 1000;

impl History {
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            points: VecDeque::with_capacity(capacity.min(1024)),
            capacity: capacity.max(1),
        }
    }

    pub fn push(&mut self, point: HistoryPoint) {
        if let Some(last) = self.points.back_mut()
            && last.at_ms / BUCKET_MS == point.at_ms / BUCKET_MS
        {
            *last = point;
            return;
        }
        if self.points.len() == self.capacity {
            self.points.pop_front();
        }
        self.points.push_back(point);
    }

    pub fn len(&self) -> usize {
        self.points.len()
    }

    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    pub fn points(&self) -> impl DoubleEndedIterator<Item = &HistoryPoint> + ExactSizeIterator {
        self.points.iter()
    }

    /// `(seconds before now, value)` pairs of one series inside the last `window_ms`, oldest
    /// first, ready for a chart whose x axis runs from `-window` to 0.
    pub fn series(&self, metric: Metric, now_ms: TimestampMs, window_ms: u64) -> Vec<(f64, f64)> {
        let start = now_ms.saturating_sub(window_ms);
        self.points
            .iter()
            .filter(|p| p.at_ms >= start)
            .filter_map(|p| {
                let value = metric.read(p)?;
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
        let utils: Vec<_> = h.points().map(HistoryPoint::utilization_gpu_pct).collect();
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
    fn a_point_is_24_bytes_and_keeps_what_the_findings_read() {
        assert_eq!(std::mem::size_of::<HistoryPoint>(), 24);
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
}
