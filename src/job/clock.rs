//! Times by step, bounded: [`StepPoints`] keeps at most [`POINTS`] steps with a value each,
//! evenly spread over the run however long it is (each kept step is within 1/128 of the run of
//! any step asked for). Two uses: the log's own clock ([`StepClock`]: the elapsed time a
//! progress bar prints next to its step, `1250/3000 [02:10<03:02, 9.6it/s]`), so the time since
//! the step a run stopped improving at is read from the log itself, the same on a replay as
//! live; and when gpufleet first saw each step (`crate::fleet::job::TrackedJob::steps_seen`).

/// Steps kept.
const POINTS: usize = 256;

/// Values by step, the first value of each step kept; steps only go up.
#[derive(Debug, Clone, PartialEq)]
pub struct StepPoints<T> {
    points: Vec<(u64, T)>,
    /// The newest step and its value (kept even when not among `points`).
    newest: Option<(u64, T)>,
    /// Steps between two kept points at least: doubled at each thinning.
    gap: u64,
}

impl<T> Default for StepPoints<T> {
    fn default() -> Self {
        Self {
            points: Vec::new(),
            newest: None,
            gap: 1,
        }
    }
}

impl<T: Copy> StepPoints<T> {
    /// `value` at `step`; a step at or before the newest one is left out (it keeps its first
    /// value).
    pub fn push(&mut self, step: u64, value: T) {
        if self.newest.is_some_and(|(last, _)| step <= last) {
            return;
        }
        self.newest = Some((step, value));
        if self
            .points
            .last()
            .is_some_and(|&(kept, _)| step - kept < self.gap)
        {
            return;
        }
        if self.points.len() == POINTS {
            self.points = self.points.iter().copied().step_by(2).collect();
            self.gap = self.gap.saturating_mul(2);
        }
        self.points.push((step, value));
    }

    /// The newest step and its value.
    pub fn newest(&self) -> Option<(u64, T)> {
        self.newest
    }

    /// The value of the first kept step at or after `step`.
    pub fn first_at_or_after(&self, step: u64) -> Option<T> {
        self.points
            .iter()
            .chain(self.newest.as_ref())
            .find(|(s, _)| *s >= step)
            .map(|&(_, value)| value)
    }

    fn clear(&mut self) {
        *self = Self::default();
    }
}

/// Elapsed seconds by step, as the log's main bar printed them. A bar whose clock or step goes
/// back (a new bar per epoch) no longer spans the run: the clock then says nothing.
#[derive(Debug, Clone, Default)]
pub struct StepClock {
    points: StepPoints<f64>,
    broken: bool,
}

impl StepClock {
    /// The bar showed `step` after `elapsed_s` seconds.
    pub fn push(&mut self, step: u64, elapsed_s: f64) {
        if self.broken || !elapsed_s.is_finite() || elapsed_s < 0.0 {
            return;
        }
        // A second of slack: the bar prints whole seconds.
        if let Some((last_step, last_s)) = self.points.newest()
            && (step < last_step || elapsed_s + 1.0 < last_s)
        {
            self.broken = true;
            self.points.clear();
            return;
        }
        self.points.push(step, elapsed_s);
    }

    /// Seconds from `step` to the newest step, by the log's clock; `None` without a clock that
    /// spans the run.
    pub fn seconds_since(&self, step: u64) -> Option<f64> {
        if self.broken {
            return None;
        }
        let (_, newest_s) = self.points.newest()?;
        let then_s = self.points.first_at_or_after(step)?;
        Some((newest_s - then_s).max(0.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_since_a_step_is_read_from_the_bar_and_bounded() {
        let mut clock = StepClock::default();
        for step in 0..10_000u64 {
            clock.push(step, step as f64 / 10.0);
        }
        assert!(clock.points.points.len() <= POINTS);
        // 750 s, give or take 1/128 of the run's 1,000 s.
        let since = clock.seconds_since(2_500).expect("a clock");
        assert!((742.0..=751.0).contains(&since), "{since}");
        assert_eq!(clock.seconds_since(20_000), None);
    }

    #[test]
    fn a_bar_that_starts_again_leaves_no_clock() {
        let mut clock = StepClock::default();
        clock.push(10, 5.0);
        clock.push(64, 30.0);
        clock.push(70, 2.0);
        assert_eq!(clock.seconds_since(10), None);
    }

    #[test]
    fn a_step_keeps_its_first_value_and_memory_is_bounded() {
        let mut seen = StepPoints::default();
        seen.push(100, 1_000u64);
        seen.push(100, 9_000);
        seen.push(50, 9_000);
        seen.push(200, 2_000);
        assert_eq!(seen.first_at_or_after(100), Some(1_000));
        assert_eq!(seen.first_at_or_after(150), Some(2_000));
        assert_eq!(seen.first_at_or_after(201), None);
        for step in 300..100_000u64 {
            seen.push(step, step * 10);
        }
        assert!(seen.points.len() <= POINTS);
        assert_eq!(seen.first_at_or_after(100), Some(1_000));
        assert_eq!(seen.first_at_or_after(99_999), Some(999_990));
    }
}
