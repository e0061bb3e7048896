//! The wording of what a training job's own log shows: a run that stopped improving, one that
//! overfits, one that ended in a traceback. Kept with the other labels' wording so triage is one
//! catalogue; the judgement itself is [`crate::job::judge`], on steps.

use crate::diagnose::finding::{Finding, Severity, label};
use crate::job::{Crash, JobReport, Overfit, Plateau, StepValue};

/// `1,250 of 3,000 steps (42 %)` run after `since`, or `1,250 steps` without a total.
fn steps_after(since: u64, report: &JobReport) -> String {
    let now = report.step.unwrap_or(since).max(since);
    let after = now - since;
    match report.total.filter(|t| *t > 0) {
        Some(total) => format!(
            "{} of {} steps ({:.0} %)",
            group(after),
            group(total),
            after as f64 * 100.0 / total as f64
        ),
        None => format!("{} steps", group(after)),
    }
}

/// `12,345`.
fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `keep the checkpoint of step 2,000 (the Trainer's checkpoint-2000)`, when one was written at
/// or before `step`.
fn keep_checkpoint(report: &JobReport, step: u64) -> String {
    match report.checkpoint_at_or_before(step) {
        Some(c) if report.formats.contains(&crate::job::Format::HfTrainer) => format!(
            " Keep the checkpoint written at step {} (the Trainer's checkpoint-{c}).",
            group(c)
        ),
        Some(c) => format!(" Keep the checkpoint written at step {}.", group(c)),
        None => String::new(),
    }
}

fn evidence_line(what: &str, p: &StepValue) -> String {
    format!("{what} {:.4} at step {}", p.value, group(p.step))
}

/// The first point and the newest ones, as many as a finding keeps.
fn add_points(f: &mut Finding, what: &str, points: &[StepValue]) {
    let keep = crate::diagnose::finding::MAX_EVIDENCE;
    let newest = points.len().saturating_sub(keep - 1).max(1);
    for point in points.iter().take(1).chain(points.iter().skip(newest)) {
        f.add_evidence(&evidence_line(what, point));
    }
}

pub fn training_plateau(p: &Plateau, report: &JobReport) -> Finding {
    let (summary, evidence_name) = if p.by_eval {
        let best = report
            .best_eval_loss
            .map(|b| format!(" (best {:.4} at step {})", b.value, group(b.step)))
            .unwrap_or_default();
        (
            format!(
                "Eval loss has stopped improving: no evaluation after step {} beat the best by \
                 {:.1} % or more{best}; {} have run since.",
                group(p.since_step),
                p.threshold * 100.0,
                steps_after(p.since_step, report)
            ),
            "eval loss",
        )
    } else {
        (
            format!(
                "Training loss has flattened: over the last quarter of the steps logged it fell \
                 by {:.2} % (smoothed), less than {:.2} %; {} have run since step {}.",
                p.improvement * 100.0,
                p.threshold * 100.0,
                steps_after(p.since_step, report),
                group(p.since_step)
            ),
            "training loss",
        )
    };
    let best_step = report.best_eval_loss.map_or(p.at_step, |b| b.step);
    let action = format!(
        "More steps are unlikely to pay for themselves: stop the run (or change the learning \
         rate, data or model if it should still learn) and release the GPU.{}",
        keep_checkpoint(report, best_step)
    );
    let mut f = Finding::new(label::TRAINING_PLATEAU, Severity::Warning, summary, action);
    add_points(&mut f, evidence_name, &p.evidence);
    f
}

pub fn training_overfit(o: &Overfit, report: &JobReport) -> Finding {
    let summary = format!(
        "The run is overfitting: eval loss was best at step {} ({:.4}) and has risen to {:.4} \
         at step {}, while training loss kept falling ({:.4} to {:.4}); {} have run since the \
         best evaluation.",
        group(o.best.step),
        o.best.value,
        o.latest.value,
        group(o.latest.step),
        o.train_at_best,
        o.train_latest,
        steps_after(o.best.step, report)
    );
    let action = format!(
        "Stop the run and release the GPU: further steps make the model worse on held-out data. \
         Use the model as it was at step {}.{} Next time: early stopping, more data or more \
         regularisation.",
        group(o.best.step),
        keep_checkpoint(report, o.best.step)
    );
    let mut f = Finding::new(label::TRAINING_OVERFIT, Severity::Warning, summary, action);
    add_points(&mut f, "eval loss", &o.evidence);
    f
}

/// A job whose log ends in a traceback; `causes` are the labels triage gave its lines.
pub fn job_finished(crash: &Crash, causes: &[String], report: &JobReport) -> Finding {
    let at = report
        .step
        .map(|s| format!(" at step {}", group(s)))
        .unwrap_or_default();
    let classified = if causes.is_empty() {
        String::new()
    } else {
        format!(" (triage: {})", causes.join(", "))
    };
    let summary = format!(
        "The training job ended with an error{at}{classified}; its GPU is now idle and still \
         billed."
    );
    let restart = match report.checkpoints.last() {
        Some(c) => format!(
            " then restart from the checkpoint written at step {}",
            group(*c)
        ),
        None => " then restart it".to_string(),
    };
    let action = if causes.is_empty() {
        format!(
            "Read the traceback (evidence) and fix its cause,{restart}; if nothing is to run \
             now, release the host."
        )
    } else {
        format!(
            "Act on the {} finding listed with this one,{restart}; if nothing is to run now, \
             release the host.",
            causes.join(" / ")
        )
    };
    let mut f = Finding::new(label::JOB_FINISHED, Severity::Warning, summary, action);
    f.add_evidence(&crash.exception);
    f
}
