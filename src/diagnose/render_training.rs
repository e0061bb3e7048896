//! A training job's progress as the text report shows it, above the findings.

use std::fmt::Write as _;

use crate::cost::format_duration_ms;
use crate::job::{JobReport, JobState, StepValue};

fn state_words(state: JobState) -> &'static str {
    match state {
        JobState::Running => "no end in the log yet",
        JobState::Completed => "completed",
        JobState::Crashed => "ended with a traceback",
    }
}

fn seconds(s: f64) -> String {
    format_duration_ms((s.max(0.0) * 1000.0) as u64)
}

fn point(p: &StepValue) -> String {
    format!("{:.4} at step {}", p.value, p.step)
}

/// The lines about the job: formats, progress, losses, checkpoints, how it ended.
pub fn training_text(r: &JobReport) -> String {
    let mut out = String::new();
    let formats: Vec<&str> = r.formats.iter().map(|f| f.words()).collect();
    let _ = writeln!(
        out,
        "training log ({}): {}",
        formats.join(", "),
        state_words(r.state)
    );
    let mut progress: Vec<String> = Vec::new();
    match (r.step, r.total, r.fraction()) {
        (Some(step), Some(total), Some(f)) => {
            progress.push(format!("step {step} of {total} ({:.0} %)", f * 100.0))
        }
        (Some(step), _, _) => progress.push(format!("step {step}")),
        _ => {}
    }
    if let Some(rate) = r.rate_per_s {
        progress.push(format!("{rate:.2} steps/s"));
    }
    if let Some(elapsed) = r.elapsed_s {
        progress.push(format!("bar elapsed {}", seconds(elapsed)));
    }
    if r.state == JobState::Running
        && let Some(eta) = r.eta_s
    {
        progress.push(format!("ETA {}", seconds(eta)));
    }
    if !progress.is_empty() {
        let _ = writeln!(out, "  progress: {}", progress.join(", "));
    }
    if let (Some(first), Some(last)) = (r.loss_series.first(), r.loss) {
        let _ = writeln!(out, "  loss: {} → {}", point(first), point(&last));
    }
    if let (Some(first), Some(last)) = (r.eval_series.first(), r.eval_loss) {
        let best = r
            .best_eval_loss
            .map(|b| format!("; best {}", point(&b)))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "  eval loss: {} → {}{best}",
            point(first),
            point(&last)
        );
    }
    if !r.checkpoints.is_empty() {
        let steps: Vec<String> = r.checkpoints.iter().map(u64::to_string).collect();
        let _ = writeln!(out, "  checkpoints written at steps {}", steps.join(", "));
    }
    if let Some(crash) = &r.crash {
        let _ = writeln!(
            out,
            "  last error: {}",
            crate::remote::sanitize(&crash.exception)
        );
    }
    out
}
