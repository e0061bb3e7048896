//! The CPU time a job's process has used, as the host's `ps -o times=` said at each probe
//! (whole seconds), kept for a few minutes so the engine can say how many cores the process
//! kept busy between two probes (the `input_bound` rule). Bounded: at most
//! [`MAX_CPU_SAMPLES`] samples.

use std::collections::VecDeque;

use crate::telemetry::TimestampMs;

/// Samples kept per job (at one probe every 5 s, a little over five minutes).
pub const MAX_CPU_SAMPLES: usize = 64;

/// A job's CPU-time samples, oldest first.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CpuTrail {
    samples: VecDeque<(TimestampMs, u64)>,
}

/// How busy a process kept the CPU between two samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuUse {
    /// CPU seconds per second: 1.0 is one core kept busy.
    pub cores: f64,
    /// The time between the two samples.
    pub span_ms: u64,
}

impl CpuTrail {
    /// The process had used `cpu_s` seconds of CPU at `at_ms`. A count that went back (the
    /// host's answer cannot be trusted to be the same process's) starts the trail over.
    pub fn push(&mut self, at_ms: TimestampMs, cpu_s: u64) {
        if let Some(&(last_ms, last_s)) = self.samples.back() {
            if at_ms <= last_ms {
                return;
            }
            if cpu_s < last_s {
                self.samples.clear();
            }
        }
        if self.samples.len() == MAX_CPU_SAMPLES {
            self.samples.pop_front();
        }
        self.samples.push_back((at_ms, cpu_s));
    }

    /// The CPU use from the oldest sample at or after `since_ms` to the newest at or before
    /// `now_ms`; `None` with fewer than two such samples.
    pub fn use_since(&self, since_ms: TimestampMs, now_ms: TimestampMs) -> Option<CpuUse> {
        let mut inside = self
            .samples
            .iter()
            .filter(|(at, _)| *at >= since_ms && *at <= now_ms);
        let (first_ms, first_s) = *inside.next()?;
        let (last_ms, last_s) = *inside.next_back()?;
        let span_ms = last_ms.saturating_sub(first_ms);
        if span_ms == 0 {
            return None;
        }
        let cores = last_s.saturating_sub(first_s) as f64 * 1_000.0 / span_ms as f64;
        Some(CpuUse { cores, span_ms })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cores_are_cpu_seconds_per_second_between_the_samples_in_the_window() {
        let mut trail = CpuTrail::default();
        for (at_s, cpu_s) in [(0, 100), (10, 100), (20, 109), (30, 119), (40, 129)] {
            trail.push(at_s * 1_000, cpu_s);
        }
        let busy = trail.use_since(20_000, 40_000).expect("two samples");
        assert_eq!(busy.span_ms, 20_000);
        assert!((busy.cores - 1.0).abs() < 1e-9, "{busy:?}");
        let whole = trail.use_since(0, 40_000).expect("two samples");
        assert!((whole.cores - 0.725).abs() < 1e-9, "{whole:?}");
        assert_eq!(trail.use_since(35_000, 40_000), None);
    }

    #[test]
    fn a_count_that_goes_back_starts_over_and_the_trail_is_bounded() {
        let mut trail = CpuTrail::default();
        trail.push(0, 500);
        trail.push(10_000, 3);
        trail.push(20_000, 13);
        let busy = trail.use_since(0, 20_000).expect("two samples");
        assert_eq!(busy.span_ms, 10_000);
        for i in 0..(MAX_CPU_SAMPLES as u64 * 2) {
            trail.push(30_000 + i * 1_000, 20 + i);
        }
        assert_eq!(trail.samples.len(), MAX_CPU_SAMPLES);
    }
}
