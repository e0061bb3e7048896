//! Judging a step: did its outcome pass its check, which explanations apply to its output, and
//! may a conditional step run given the facts and the earlier steps' outcomes.

use std::collections::BTreeMap;

use rust_i18n::t;

use crate::runbook::exec::ExecResult;
use crate::runbook::facts::{Facts, contains_loose, number, same_value};
use crate::runbook::model::{Check, Condition, Explain, StepIs};
use crate::runbook::params::Params;

/// What became of a step in this run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepState {
    Ok,
    Failed,
    Skipped,
}

/// Why a check failed, in words for the user; `None` when it passed.
pub fn judge(
    check: &Check,
    result: &ExecResult,
    lines: &[String],
    params: &Params,
    facts: &Facts,
) -> Option<String> {
    if result.timed_out {
        return Some(t!("step_check.timed_out").into_owned());
    }
    let allowed: &[i32] = if check.exit.is_empty() {
        &[0]
    } else {
        &check.exit
    };
    match result.exit_status {
        None => return Some(t!("step_check.no_status").into_owned()),
        Some(code) if !allowed.contains(&code) => {
            let wanted: Vec<String> = allowed.iter().map(i32::to_string).collect();
            let or = t!("step_check.or");
            let wanted = wanted.join(&or);
            return Some(t!("step_check.exit_status", wanted = wanted).into_owned());
        }
        Some(_) => {}
    }
    let output = lines.join("\n");
    if let Some(missing) = check.contains.iter().find(|t| !contains_loose(&output, t)) {
        return Some(t!("step_check.lacks", text = format!("{missing:?}")).into_owned());
    }
    if let Some(found) = check
        .not_contains
        .iter()
        .find(|t| contains_loose(&output, t))
    {
        return Some(t!("step_check.says", text = format!("{found:?}")).into_owned());
    }
    if let Some(template) = &check.equals {
        let expected = match params.fill(template, facts) {
            Ok(value) => value,
            Err(e) => return Some(e.to_string()),
        };
        let first = lines
            .iter()
            .map(|l| l.trim())
            .find(|l| !l.is_empty())
            .unwrap_or("");
        if !same_value(first, &expected) {
            return Some(
                t!(
                    "step_check.read_back",
                    found = format!("{first:?}"),
                    expected = format!("{expected:?}")
                )
                .into_owned(),
            );
        }
    }
    None
}

/// The explanations among `explains` that match this outcome, in order.
pub fn matching<'a>(
    explains: impl IntoIterator<Item = &'a Explain>,
    result: &ExecResult,
    lines: &[String],
    state: StepState,
) -> Vec<&'a Explain> {
    let output = lines.join("\n");
    explains
        .into_iter()
        .filter(|e| {
            let text_ok = e
                .output
                .as_deref()
                .is_none_or(|t| contains_loose(&output, t));
            let exit_ok = e.exit.is_none_or(|code| result.exit_status == Some(code));
            let state_ok = !e.failed || state == StepState::Failed;
            text_ok && exit_ok && state_ok
        })
        .collect()
}

/// Whether one condition holds. A fact that is not known never satisfies a condition: a step
/// guarded by "nothing uses the GPU" must not run because the GPU list could not be read.
pub fn holds(
    condition: &Condition,
    params: &Params,
    facts: &Facts,
    states: &BTreeMap<String, StepState>,
) -> bool {
    if let (Some(step), Some(is)) = (&condition.step, condition.is) {
        let state = states.get(step).copied().unwrap_or(StepState::Skipped);
        return match is {
            StepIs::Ok => state == StepState::Ok,
            StepIs::Failed => state == StepState::Failed,
            StepIs::Skipped => state == StepState::Skipped,
            StepIs::NotOk => state != StepState::Ok,
        };
    }
    let Some(name) = &condition.fact else {
        return false;
    };
    let Some(value) = params.lookup(name, facts) else {
        return false;
    };
    if let Some(expected) = &condition.equals {
        return same_value(&value, expected);
    }
    if let Some(other) = &condition.not_equals {
        return !same_value(&value, other);
    }
    if let Some(least) = condition.at_least {
        return number(&value).is_some_and(|v| v >= least);
    }
    false
}

/// `None` when the step may run, else the first reason it may not, in words.
pub fn blocked(
    all: &[Condition],
    any: &[Condition],
    params: &Params,
    facts: &Facts,
    states: &BTreeMap<String, StepState>,
) -> Option<String> {
    if let Some(c) = all.iter().find(|c| !holds(c, params, facts, states)) {
        return Some(describe(c, params, facts));
    }
    if !any.is_empty() && !any.iter().any(|c| holds(c, params, facts, states)) {
        let each: Vec<String> = any.iter().map(|c| describe(c, params, facts)).collect();
        return Some(each.join("; "));
    }
    None
}

fn describe(condition: &Condition, params: &Params, facts: &Facts) -> String {
    if let (Some(step), Some(is)) = (&condition.step, condition.is) {
        let wanted = match is {
            StepIs::Ok => t!("step_check.step_ok"),
            StepIs::Failed => t!("step_check.step_failed"),
            StepIs::Skipped => t!("step_check.step_skipped"),
            StepIs::NotOk => t!("step_check.step_not_ok"),
        };
        return t!("step_check.needs_step", step = step, wanted = wanted).into_owned();
    }
    let name = condition.fact.as_deref().unwrap_or("?");
    let now = match params.lookup(name, facts) {
        Some(value) => value,
        None if facts.is_per_gpu(name) && params.gpu(facts).is_err() => {
            t!("step_check.unknown_per_gpu").into_owned()
        }
        None => t!("step_check.unknown").into_owned(),
    };
    let wanted = if let Some(v) = &condition.equals {
        format!("= {v}")
    } else if let Some(v) = &condition.not_equals {
        format!("!= {v}")
    } else if let Some(v) = condition.at_least {
        format!(">= {v}")
    } else {
        String::new()
    };
    t!(
        "step_check.needs_fact",
        name = name,
        wanted = wanted,
        now = now
    )
    .into_owned()
}
