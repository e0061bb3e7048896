//! A bounded series of (step, value) points: a run of a million logged losses keeps at most
//! `cap` points. When full, neighbouring points are merged in pairs (the later step, the mean
//! value) and new points are then averaged in groups twice as large, so the series stays evenly
//! spread over the run and each point is a smoothed value. The first and the latest point are
//! also kept exactly.

use serde::Serialize;

/// A value at a training step.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StepValue {
    pub step: u64,
    pub value: f64,
}

#[derive(Debug, Clone)]
pub struct Series {
    points: Vec<StepValue>,
    cap: usize,
    /// Raw points averaged into one kept point.
    stride: u64,
    acc_sum: f64,
    acc_n: u64,
    first: Option<StepValue>,
    last: Option<StepValue>,
    count: u64,
}

impl Series {
    /// A series of at most `cap` points (at least 4).
    pub fn new(cap: usize) -> Self {
        Self {
            points: Vec::new(),
            cap: cap.max(4),
            stride: 1,
            acc_sum: 0.0,
            acc_n: 0,
            first: None,
            last: None,
            count: 0,
        }
    }

    /// Adds a point; values that are not finite (a `nan` loss) are skipped.
    pub fn push(&mut self, step: u64, value: f64) {
        if !value.is_finite() {
            return;
        }
        let point = StepValue { step, value };
        self.first.get_or_insert(point);
        self.last = Some(point);
        self.count += 1;
        self.acc_sum += value;
        self.acc_n += 1;
        if self.acc_n < self.stride {
            return;
        }
        self.points.push(StepValue {
            step,
            value: self.acc_sum / self.acc_n as f64,
        });
        self.acc_sum = 0.0;
        self.acc_n = 0;
        if self.points.len() >= self.cap {
            self.halve();
        }
    }

    fn halve(&mut self) {
        let merged: Vec<StepValue> = self
            .points
            .chunks(2)
            .map(|pair| StepValue {
                step: pair[pair.len() - 1].step,
                value: pair.iter().map(|p| p.value).sum::<f64>() / pair.len() as f64,
            })
            .collect();
        self.points = merged;
        self.stride *= 2;
    }

    /// The kept points, oldest first, with the newest raw point last when it is not yet in a
    /// full group.
    pub fn points(&self) -> Vec<StepValue> {
        let mut out = self.points.clone();
        if self.acc_n > 0
            && let Some(last) = self.last
        {
            out.push(StepValue {
                step: last.step,
                value: self.acc_sum / self.acc_n as f64,
            });
        }
        out
    }

    pub fn first(&self) -> Option<StepValue> {
        self.first
    }

    pub fn last(&self) -> Option<StepValue> {
        self.last
    }

    /// How many points were pushed in all.
    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_series_stays_bounded_and_spread_over_the_run() {
        let mut s = Series::new(64);
        for step in 1..=100_000u64 {
            s.push(step, 1000.0 / step as f64);
        }
        let points = s.points();
        assert!(points.len() <= 65, "{}", points.len());
        assert!(points.len() >= 32);
        assert_eq!(s.count(), 100_000);
        assert_eq!(s.first().map(|p| p.step), Some(1));
        assert_eq!(s.last().map(|p| p.step), Some(100_000));
        // Evenly spread: the middle point sits near the middle of the run.
        let mid = points[points.len() / 2].step;
        assert!((35_000..65_000).contains(&mid), "{mid}");
        // Falling values stay falling after merging.
        assert!(points.windows(2).all(|w| w[1].value <= w[0].value));
    }

    #[test]
    fn nan_is_skipped() {
        let mut s = Series::new(8);
        s.push(1, f64::NAN);
        s.push(2, 1.0);
        assert_eq!(s.count(), 1);
        assert_eq!(
            s.points(),
            vec![StepValue {
                step: 2,
                value: 1.0
            }]
        );
    }
}
