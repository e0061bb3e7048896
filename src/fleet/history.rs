//! A bounded per-GPU history of the four charted series, one point per second at most.

use std::collections::VecDeque;

use crate::telemetry::{GpuSample, TimestampMs};

/// One charted point; `None` where the sample did not carry the value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HistoryPoint {
    pub at_ms: TimestampMs,
    pub utilization_gpu_pct: Option<f32>,
    pub memory_used_pct: Option<f32>,
    pub temperature_c: Option<f32>,
    pub power_draw_w: Option<f32>,
    /// The enforced limit at that moment (a playbook may change it mid-history).
    pub power_limit_w: Option<f32>,
    /// The raw NVML clock-event mask, so findings can ask "how long has it been throttling".
    pub clock_event_reasons: Option<u64>,
}

impl HistoryPoint {
    pub fn from_sample(at_ms: TimestampMs, gpu: &GpuSample) -> Self {
        let memory_used_pct = match (gpu.memory_used_mib, gpu.memory_total_mib) {
            (Some(used), Some(total)) if total > 0 => Some(used as f32 * 100.0 / total as f32),
            _ => None,
        };
        Self {
            at_ms,
            utilization_gpu_pct: gpu.utilization_gpu_pct.map(|v| v as f32),
            memory_used_pct,
            temperature_c: gpu.temperature_c.map(|v| v as f32),
            power_draw_w: gpu.power_draw_w.map(|v| v as f32),
            power_limit_w: gpu.power_limit_w.map(|v| v as f32),
            clock_event_reasons: gpu.clock_event_reasons.map(|r| r.0),
        }
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
            Metric::Utilization => point.utilization_gpu_pct,
            Metric::Memory => point.memory_used_pct,
            Metric::Temperature => point.temperature_c,
            Metric::Power => point.power_draw_w,
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
        HistoryPoint {
            at_ms,
            utilization_gpu_pct: Some(util),
            memory_used_pct: None,
            temperature_c: None,
            power_draw_w: None,
            power_limit_w: None,
            clock_event_reasons: None,
        }
    }

    #[test]
    fn samples_in_one_second_share_a_point() {
        let mut h = History::with_capacity(10);
        h.push(point(10_000, 1.0));
        h.push(point(10_500, 2.0));
        h.push(point(11_000, 3.0));
        let utils: Vec<_> = h.points().map(|p| p.utilization_gpu_pct).collect();
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
}
