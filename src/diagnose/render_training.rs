//! A training job's progress as the text report shows it, above the findings.

use std::borrow::Cow;
use std::fmt::Write as _;

use rust_i18n::t;

use crate::cost::format_duration_ms;
use crate::job::{JobReport, JobState, StepValue};

fn state_words(state: JobState) -> Cow<'static, str> {
    match state {
        JobState::Running => t!("diagnose_text.job_running"),
        JobState::Completed => t!("diagnose_text.job_completed"),
        JobState::Crashed => t!("diagnose_text.job_crashed"),
    }
}

fn seconds(s: f64) -> String {
    format_duration_ms((s.max(0.0) * 1000.0) as u64)
}

fn point(p: &StepValue) -> String {
    let value = format!("{:.4}", p.value);
    t!("diagnose_text.point", value = value, step = p.step).into_owned()
}

/// The lines about the job: formats, progress, losses, checkpoints, how it ended.
pub fn training_text(r: &JobReport) -> String {
    let mut out = String::new();
    let formats: Vec<String> = r.formats.iter().map(|f| f.words().localized()).collect();
    let _ = writeln!(
        out,
        "{}",
        t!(
            "diagnose_text.training_log",
            formats = formats.join(", "),
            state = state_words(r.state)
        )
    );
    let mut progress: Vec<String> = Vec::new();
    match (r.step, r.total, r.fraction()) {
        (Some(step), Some(total), Some(f)) => {
            let percent = format!("{:.0}", f * 100.0);
            let text = t!(
                "diagnose_text.step_of",
                step = step,
                total = total,
                percent = percent
            );
            progress.push(text.into_owned())
        }
        (Some(step), _, _) => progress.push(t!("diagnose_text.step", step = step).into_owned()),
        _ => {}
    }
    if let Some(rate) = r.rate_per_s {
        let rate = format!("{rate:.2}");
        progress.push(t!("diagnose_text.rate", rate = rate).into_owned());
    }
    if let Some(elapsed) = r.elapsed_s {
        let elapsed = seconds(elapsed);
        progress.push(t!("diagnose_text.elapsed", elapsed = elapsed).into_owned());
    }
    if r.state == JobState::Running
        && let Some(eta) = r.eta_s
    {
        progress.push(t!("diagnose_text.eta", eta = seconds(eta)).into_owned());
    }
    if !progress.is_empty() {
        let progress = progress.join(", ");
        let _ = writeln!(out, "{}", t!("diagnose_text.progress", progress = progress));
    }
    if let (Some(first), Some(last)) = (r.loss_series.first(), r.loss) {
        let (from, to) = (point(first), point(&last));
        let _ = writeln!(out, "{}", t!("diagnose_text.loss", from = from, to = to));
    }
    if let (Some(first), Some(last)) = (r.eval_series.first(), r.eval_loss) {
        let best = r
            .best_eval_loss
            .map(|b| t!("diagnose_text.best", best = point(&b)).into_owned())
            .unwrap_or_default();
        let (from, to) = (point(first), point(&last));
        let line = t!("diagnose_text.eval_loss", from = from, to = to, best = best);
        let _ = writeln!(out, "{line}");
    }
    if !r.checkpoints.is_empty() {
        let steps: Vec<String> = r.checkpoints.iter().map(u64::to_string).collect();
        let steps = steps.join(", ");
        let _ = writeln!(out, "{}", t!("diagnose_text.checkpoints", steps = steps));
    }
    if let Some(crash) = &r.crash {
        let error = crate::remote::sanitize(&crash.exception);
        let _ = writeln!(out, "{}", t!("diagnose_text.last_error", error = error));
    }
    out
}
