//! Whether a run still learns, judged on steps (never on wall time, so a replayed or old log gets
//! the same verdict as the live one):
//!
//! - with evaluations: a **plateau** when the last `patience` evaluations each improved on the
//!   best eval loss by less than `min_delta` (relative); **overfitting** when, in addition, eval
//!   loss has risen above its best while the training loss kept falling;
//! - without: a **plateau** when the smoothed training loss of the last quarter of the steps
//!   logged improved on the quarter before by less than `train_min_improvement` (relative).

use serde::Serialize;

use crate::job::series::{Series, StepValue};

/// Evaluations kept for the evidence of a finding.
const RECENT_EVALS: usize = 8;

/// Training-loss points needed before the run is judged without evaluations.
pub const MIN_TRAIN_POINTS: u64 = 8;

/// Thresholds of the judgement.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JudgeOptions {
    /// Evaluations without a real improvement before a plateau is called (default 3).
    pub patience: u32,
    /// An evaluation improves on the best only by at least this share of it (default 0.002,
    /// 0.2 %).
    pub min_delta: f64,
    /// Without evaluations: the smallest relative improvement of the smoothed training loss
    /// from the second-to-last to the last quarter of the steps logged (default 0.0025).
    pub train_min_improvement: f64,
}

impl Default for JudgeOptions {
    fn default() -> Self {
        Self {
            patience: 3,
            min_delta: 0.002,
            train_min_improvement: 0.0025,
        }
    }
}

/// The evaluations seen so far, folded one at a time (bounded memory).
#[derive(Debug, Clone, Default)]
pub struct EvalTrack {
    best: Option<StepValue>,
    /// The evaluation of the last real improvement (by at least `min_delta`).
    last_gain: Option<StepValue>,
    /// Evaluations since then.
    without_gain: u32,
    /// Evaluations since the best (lowest) one.
    since_best: u32,
    recent: std::collections::VecDeque<StepValue>,
    count: u32,
}

impl EvalTrack {
    pub fn push(&mut self, point: StepValue, min_delta: f64) {
        if !point.value.is_finite() {
            return;
        }
        self.count += 1;
        match self.best {
            Some(best) if best.value - point.value >= min_delta * best.value.abs() => {
                self.last_gain = Some(point);
                self.without_gain = 0;
            }
            Some(_) => self.without_gain += 1,
            None => {
                self.last_gain = Some(point);
                self.without_gain = 0;
            }
        }
        if self.best.is_none_or(|b| point.value < b.value) {
            self.best = Some(point);
            self.since_best = 0;
        } else {
            self.since_best += 1;
        }
        if self.recent.len() == RECENT_EVALS {
            self.recent.pop_front();
        }
        self.recent.push_back(point);
    }

    pub fn best(&self) -> Option<StepValue> {
        self.best
    }

    pub fn count(&self) -> u32 {
        self.count
    }
}

/// A run that stopped improving.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plateau {
    /// The step from which it stopped improving (the last real improvement, or the start of the
    /// flat stretch of training loss).
    pub since_step: u64,
    /// The step it was judged at (the newest evaluation or loss).
    pub at_step: u64,
    /// Whether eval loss (true) or training loss (false) decided.
    pub by_eval: bool,
    /// The relative improvement seen over the judged stretch (0.001 = 0.1 %).
    pub improvement: f64,
    /// The relative improvement it fell short of (`min_delta` per evaluation, or
    /// `train_min_improvement`).
    pub threshold: f64,
    /// The points that show it, oldest first.
    pub evidence: Vec<StepValue>,
}

/// Eval loss rising while training loss falls.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Overfit {
    /// The best evaluation: since its step the run got worse on held-out data.
    pub best: StepValue,
    /// The newest evaluation.
    pub latest: StepValue,
    /// Training loss near the best step and at the end (smoothed).
    pub train_at_best: f64,
    pub train_latest: f64,
    pub evidence: Vec<StepValue>,
}

/// A run whose training loss became NaN or inf: every step since is wasted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Diverged {
    /// The first step whose loss was not a finite number.
    pub since_step: u64,
}

/// What the judgement found; at most one of the three (a diverged run is neither on a plateau
/// nor overfitting: its loss is no longer a number).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Judgement {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plateau: Option<Plateau>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overfit: Option<Overfit>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diverged: Option<Diverged>,
}

impl Judgement {
    /// The step since which the run stopped paying off: where it diverged, its best
    /// evaluation before overfitting, or where the plateau began.
    pub fn since_step(&self) -> Option<u64> {
        self.diverged
            .map(|d| d.since_step)
            .or(self.overfit.as_ref().map(|o| o.best.step))
            .or(self.plateau.as_ref().map(|p| p.since_step))
    }
}

/// The mean of the points of `points` whose step lies in `from..=to`.
fn mean_between(points: &[StepValue], from: u64, to: u64) -> Option<f64> {
    let inside: Vec<f64> = points
        .iter()
        .filter(|p| p.step >= from && p.step <= to)
        .map(|p| p.value)
        .collect();
    (!inside.is_empty()).then(|| inside.iter().sum::<f64>() / inside.len() as f64)
}

/// Judges the run from its training-loss series and its evaluations.
pub fn judge(train: &Series, evals: &EvalTrack, opts: &JudgeOptions) -> Judgement {
    if evals.count > 0 {
        return judge_evals(train, evals, opts);
    }
    Judgement {
        plateau: judge_train(train, opts),
        ..Judgement::default()
    }
}

fn judge_evals(train: &Series, evals: &EvalTrack, opts: &JudgeOptions) -> Judgement {
    let mut out = Judgement::default();
    let (Some(best), Some(latest)) = (evals.best, evals.recent.back().copied()) else {
        return out;
    };
    if evals.without_gain < opts.patience.max(1) {
        return out;
    }
    let evidence: Vec<StepValue> = evals.recent.iter().copied().collect();
    let points = train.points();
    let rising = evals.since_best >= opts.patience.max(1)
        && latest.value - best.value >= opts.min_delta * best.value.abs();
    if rising {
        // Training loss around the best evaluation (the points up to it since the one before)
        // and over the evaluations after it.
        let before = points
            .iter()
            .rev()
            .find(|p| p.step <= best.step)
            .map(|p| p.value);
        let after = mean_between(&points, best.step.saturating_add(1), latest.step);
        if let (Some(at_best), Some(now)) = (before, after)
            && at_best - now >= opts.min_delta * at_best.abs()
        {
            out.overfit = Some(Overfit {
                best,
                latest,
                train_at_best: at_best,
                train_latest: now,
                evidence: evidence
                    .into_iter()
                    .filter(|p| p.step >= best.step)
                    .collect(),
            });
            return out;
        }
    }
    let gain = evals.last_gain.unwrap_or(best);
    let evidence = evidence
        .into_iter()
        .filter(|p| p.step >= gain.step)
        .collect();
    out.plateau = Some(Plateau {
        since_step: gain.step,
        at_step: latest.step,
        by_eval: true,
        improvement: if gain.value != 0.0 {
            (gain.value - best.value) / gain.value.abs()
        } else {
            0.0
        },
        threshold: opts.min_delta,
        evidence,
    });
    out
}

fn judge_train(train: &Series, opts: &JudgeOptions) -> Option<Plateau> {
    if train.count() < MIN_TRAIN_POINTS {
        return None;
    }
    let points = train.points();
    let first = points.first()?.step;
    let last = points.last()?.step;
    let quarter = (last - first) / 4;
    if quarter == 0 {
        return None;
    }
    let prev = mean_between(&points, last - 2 * quarter, last - quarter - 1)?;
    let now = mean_between(&points, last - quarter, last)?;
    let improvement = if prev != 0.0 {
        (prev - now) / prev.abs()
    } else {
        0.0
    };
    if improvement >= opts.train_min_improvement {
        return None;
    }
    let since_step = last - 2 * quarter;
    Some(Plateau {
        since_step,
        at_step: last,
        by_eval: false,
        improvement,
        threshold: opts.train_min_improvement,
        evidence: points
            .into_iter()
            .filter(|p| p.step >= since_step)
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn evals(values: &[(u64, f64)]) -> EvalTrack {
        let mut t = EvalTrack::default();
        for &(step, value) in values {
            t.push(StepValue { step, value }, JudgeOptions::default().min_delta);
        }
        t
    }

    fn falling_train(to: u64) -> Series {
        let mut s = Series::new(256);
        for step in (10..=to).step_by(10) {
            s.push(step, 10.0 / step as f64);
        }
        s
    }

    #[test]
    fn steady_improvement_is_no_plateau() {
        let t = evals(&[(100, 4.0), (200, 3.5), (300, 3.2), (400, 3.0)]);
        assert_eq!(
            judge(&falling_train(400), &t, &JudgeOptions::default()),
            Judgement::default()
        );
    }

    #[test]
    fn eval_rising_while_train_falls_is_overfitting_since_the_best() {
        let t = evals(&[(100, 4.0), (200, 3.0), (300, 3.1), (400, 3.3), (500, 3.6)]);
        let j = judge(&falling_train(500), &t, &JudgeOptions::default());
        let o = j.overfit.expect("overfit");
        assert_eq!(o.best.step, 200);
        assert_eq!(o.latest.step, 500);
        assert!(o.train_latest < o.train_at_best);
        assert_eq!(j.plateau, None);
    }

    #[test]
    fn eval_rising_with_train_rising_too_is_a_plateau_not_overfitting() {
        let t = evals(&[(100, 4.0), (200, 3.0), (300, 3.1), (400, 3.3), (500, 3.6)]);
        let mut flat = Series::new(64);
        for step in (10..=500).step_by(10) {
            flat.push(step, 1.0 + step as f64 / 1000.0);
        }
        let j = judge(&flat, &t, &JudgeOptions::default());
        assert_eq!(j.overfit, None);
        assert_eq!(j.plateau.expect("plateau").since_step, 200);
    }

    #[test]
    fn patience_counts_evaluations_without_a_real_gain() {
        // Three evaluations of less than 0.2 % each after the gain at 200.
        let mut values = vec![(100, 4.0), (200, 3.0), (300, 2.999), (400, 2.998)];
        assert_eq!(
            judge(
                &falling_train(400),
                &evals(&values),
                &JudgeOptions::default()
            )
            .plateau,
            None
        );
        values.push((500, 2.997));
        let p = judge(
            &falling_train(500),
            &evals(&values),
            &JudgeOptions::default(),
        )
        .plateau
        .expect("plateau");
        assert_eq!((p.since_step, p.at_step, p.by_eval), (200, 500, true));
    }

    #[test]
    fn flat_training_loss_without_evaluations_is_a_plateau() {
        let mut flat = Series::new(64);
        for step in 0..100 {
            flat.push(step, 2.3);
        }
        let p = judge(&flat, &EvalTrack::default(), &JudgeOptions::default()).plateau;
        assert_eq!(p.map(|p| p.by_eval), Some(false));
        assert_eq!(
            judge(
                &falling_train(1000),
                &EvalTrack::default(),
                &JudgeOptions::default()
            ),
            Judgement::default()
        );
    }
}
