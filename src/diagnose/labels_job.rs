//! The wording of what a training job's own log shows: a run that stopped improving, one that
//! overfits, one that ended in a traceback. Kept with the other labels' wording so triage is one
//! catalogue; the judgement itself is [`crate::job::judge`], on steps.

use rust_i18n::t;

use crate::diagnose::finding::{Finding, Severity, label};
use crate::job::{Crash, Diverged, JobReport, Overfit, Plateau, StepValue};

/// `1,250 of 3,000 steps (42 %)` run after `since`, or `1,250 steps` without a total.
fn steps_after(since: u64, report: &JobReport) -> String {
    let now = report.step.unwrap_or(since).max(since);
    let after = now - since;
    match report.total.filter(|t| *t > 0) {
        Some(total) => t!(
            "finding_text.job.steps_of",
            steps = group(after),
            total = group(total),
            percent = format!("{:.0}", after as f64 * 100.0 / total as f64)
        )
        .into_owned(),
        None => t!("finding_text.job.steps", steps = group(after)).into_owned(),
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
        Some(c) if report.formats.contains(&crate::job::Format::HfTrainer) => t!(
            "finding_text.job.keep_trainer_checkpoint",
            step = group(c),
            checkpoint = c
        )
        .into_owned(),
        Some(c) => t!("finding_text.job.keep_checkpoint", step = group(c)).into_owned(),
        None => String::new(),
    }
}

/// Which model to keep when the run got worse after `best`: its checkpoint when one was written
/// at that step; else the checkpoint whose nearest evaluation is lowest, with that loss and how
/// far it is above the best; else that no checkpoint was seen.
fn keep_best(report: &JobReport, best: StepValue) -> String {
    if report.checkpoints.contains(&best.step) {
        return keep_checkpoint(report, best.step);
    }
    let nearest_eval = |step: u64| {
        report
            .eval_series
            .iter()
            .min_by_key(|e| e.step.abs_diff(step))
            .copied()
    };
    let kept = report
        .checkpoints
        .iter()
        .filter_map(|c| nearest_eval(*c).map(|e| (*c, e.value)))
        .min_by(|a, b| a.1.total_cmp(&b.1));
    match kept {
        Some((step, value)) => {
            let above = if best.value.abs() > f64::EPSILON {
                (value - best.value) * 100.0 / best.value.abs()
            } else {
                0.0
            };
            t!(
                "finding_text.job.best_checkpoint",
                best_step = group(best.step),
                best = format!("{:.4}", best.value),
                step = group(step),
                value = format!("{value:.4}"),
                percent = format!("{:.1}", above.max(0.0))
            )
            .into_owned()
        }
        None => t!("finding_text.job.no_checkpoint", step = group(best.step)).into_owned(),
    }
}

fn evidence_line(what: &str, p: &StepValue) -> String {
    t!(
        "finding_text.job.point",
        what = what,
        value = format!("{:.4}", p.value),
        step = group(p.step)
    )
    .into_owned()
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
            .map(|b| {
                t!(
                    "finding_text.job.best",
                    value = format!("{:.4}", b.value),
                    step = group(b.step)
                )
                .into_owned()
            })
            .unwrap_or_default();
        (
            t!(
                "finding_text.training_plateau.summary_eval",
                step = group(p.since_step),
                threshold = format!("{:.1}", p.threshold * 100.0),
                best = best,
                run = steps_after(p.since_step, report)
            )
            .into_owned(),
            t!("finding_text.job.eval_loss").into_owned(),
        )
    } else {
        (
            t!(
                "finding_text.training_plateau.summary_loss",
                improvement = format!("{:.2}", p.improvement * 100.0),
                threshold = format!("{:.2}", p.threshold * 100.0),
                run = steps_after(p.since_step, report),
                step = group(p.since_step)
            )
            .into_owned(),
            t!("finding_text.job.training_loss").into_owned(),
        )
    };
    let best_step = report.best_eval_loss.map_or(p.at_step, |b| b.step);
    let action = t!(
        "finding_text.training_plateau.action",
        keep = keep_checkpoint(report, best_step)
    );
    let mut f = Finding::new(label::TRAINING_PLATEAU, Severity::Warning, summary, action);
    add_points(&mut f, &evidence_name, &p.evidence);
    f
}

/// ` Since step 2,500 (1h40m ago) this host has cost 6.00 USD.`, or that the money cannot be
/// said without a price: appended to a live plateau's or overfit's summary.
pub fn spent_since(step: u64, seconds: f64, price: Option<&crate::cost::Price>) -> String {
    let ms = (seconds.max(0.0) * 1_000.0) as u64;
    let ago = crate::cost::format_duration_ms(ms);
    match price {
        Some(p) => t!(
            "job_action.since_money",
            step = group(step),
            ago = ago,
            money = crate::cost::format_money(p.price_per_hour * seconds / 3_600.0, &p.currency)
        ),
        None => t!("job_action.since_no_price", step = group(step), ago = ago),
    }
    .into_owned()
}

pub fn training_overfit(o: &Overfit, report: &JobReport) -> Finding {
    let summary = t!(
        "finding_text.training_overfit.summary",
        best_step = group(o.best.step),
        best = format!("{:.4}", o.best.value),
        latest = format!("{:.4}", o.latest.value),
        latest_step = group(o.latest.step),
        train_best = format!("{:.4}", o.train_at_best),
        train_latest = format!("{:.4}", o.train_latest),
        run = steps_after(o.best.step, report)
    );
    let action = t!(
        "finding_text.training_overfit.action",
        keep = keep_best(report, o.best)
    );
    let mut f = Finding::new(label::TRAINING_OVERFIT, Severity::Warning, summary, action);
    add_points(&mut f, &t!("finding_text.job.eval_loss"), &o.evidence);
    f
}

/// A training run that diverged: its loss or gradient norm became NaN or inf, or mixed
/// precision kept skipping steps until its loss scale was at its floor. Every step since is
/// wasted.
pub fn loss_nan() -> Finding {
    Finding::new(
        label::LOSS_NAN,
        Severity::Warning,
        t!("finding_text.loss_nan.summary"),
        t!("finding_text.loss_nan.action"),
    )
}

/// [`loss_nan`] read from a training log's own loss: the step it went bad at is the evidence.
pub fn loss_nan_in_log(d: &Diverged) -> Finding {
    let mut f = loss_nan();
    f.add_evidence(&t!(
        "finding_text.job.diverged_at",
        step = group(d.since_step)
    ));
    f
}

/// A job whose log ends in a traceback; `causes` are the labels triage gave its lines.
pub fn job_finished(crash: &Crash, causes: &[String], report: &JobReport) -> Finding {
    let at = report
        .step
        .map(|s| t!("finding_text.job.at_step", step = group(s)).into_owned())
        .unwrap_or_default();
    let classified = if causes.is_empty() {
        String::new()
    } else {
        t!("finding_text.job.triage", labels = causes.join(", ")).into_owned()
    };
    let summary = t!(
        "finding_text.job_finished.summary",
        at = at,
        triage = classified
    );
    let restart = match report.checkpoints.last() {
        Some(c) => t!("finding_text.job.restart_from", step = group(*c)).into_owned(),
        None => t!("finding_text.job.restart").into_owned(),
    };
    let action = if causes.is_empty() {
        t!("finding_text.job_finished.action", restart = restart)
    } else {
        t!(
            "finding_text.job_finished.action_triaged",
            labels = causes.join(" / "),
            restart = restart
        )
    };
    let mut f = Finding::new(label::JOB_FINISHED, Severity::Warning, summary, action);
    f.add_evidence(&crash.exception);
    f
}

/// A job whose process exited without a traceback at its log's end (a clean finish, a kill):
/// its GPU is idle and billed. `last_lines` are its log's last lines, the evidence.
pub fn job_exited(report: Option<&JobReport>, last_lines: &[String]) -> Finding {
    let at = report
        .and_then(|r| r.step)
        .map(|s| t!("finding_text.job.at_step", step = group(s)).into_owned())
        .unwrap_or_default();
    let summary = t!("finding_text.job_exited.summary", at = at);
    let action = t!("finding_text.job_exited.action");
    let mut f = Finding::new(label::JOB_FINISHED, Severity::Warning, summary, action);
    for line in last_lines {
        f.add_evidence(line);
    }
    f
}
