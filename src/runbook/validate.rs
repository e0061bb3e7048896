//! The rules a runbook must follow beyond its TOML shape: names that resolve, placeholders that
//! are whole arguments, danger levels that match what a step does. A runbook that breaks one is
//! refused when it is loaded, never halfway through a run.

use std::collections::BTreeSet;

use rust_i18n::t;

use crate::runbook::model::{
    Capture, Check, Condition, Danger, Explain, ParamKind, Runbook, Source, Step, Undo,
};

/// Built-in advice a step may ask for instead of running a command.
pub const ADVICE_NAMES: [&str; 1] = ["torch-install"];

/// Longest timeout a step may ask for; anything longer is better split or done by hand.
pub const MAX_TIMEOUT_S: u64 = 3_600;

/// Checks `book`; the error names the place (`steps[2] (apply): ...`) and what is wrong.
pub fn validate(book: &Runbook) -> Result<(), String> {
    if !is_id(&book.id) {
        return Err(t!("runbook_error.bad_id", id = book.id : {:?}).into_owned());
    }
    nonempty("title", &book.title)?;
    nonempty("summary", &book.summary)?;
    for label in &book.when {
        if label.is_empty()
            || !label
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        {
            return Err(t!("runbook_error.not_a_label", label = label : {:?}).into_owned());
        }
    }
    let params = check_params(book)?;
    if book.steps.is_empty() {
        return Err(t!("runbook_error.no_steps").into_owned());
    }
    let mut known: BTreeSet<String> = params.clone();
    let mut earlier: Vec<&Step> = Vec::new();
    for (i, step) in book.steps.iter().enumerate() {
        check_step(step, &known, &earlier).map_err(|e| format!("steps[{i}] ({}): {e}", step.id))?;
        for name in captured_names(step) {
            if params.contains(&name) {
                let e = t!("runbook_error.fact_is_param", name = name : {:?});
                return Err(format!("steps[{i}] ({}): {e}", step.id));
            }
            known.insert(name);
        }
        earlier.push(step);
    }
    for (i, explain) in book.explain.iter().enumerate() {
        check_explain(explain).map_err(|e| format!("explain[{i}]: {e}"))?;
    }
    for param in &book.params {
        if let Some(fact) = &param.suggest
            && !known.contains(fact)
        {
            let e = t!("runbook_error.suggest_uncaptured", fact = fact : {:?});
            return Err(format!("params ({}): {e}", param.name));
        }
        for fact in [&param.min, &param.max].into_iter().flatten() {
            if !known.contains(fact) {
                let e = t!("runbook_error.not_captured", fact = fact : {:?});
                return Err(format!("params ({}): {e}", param.name));
            }
        }
    }
    Ok(())
}

fn nonempty(what: &str, text: &str) -> Result<(), String> {
    if text.trim().is_empty() {
        Err(t!("runbook_error.empty", what = what).into_owned())
    } else {
        Ok(())
    }
}

fn is_id(text: &str) -> bool {
    let mut chars = text.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase() || c.is_ascii_digit())
        && text.len() <= 48
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

fn is_name(text: &str) -> bool {
    let mut chars = text.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

fn check_params(book: &Runbook) -> Result<BTreeSet<String>, String> {
    let mut names = BTreeSet::new();
    for param in &book.params {
        let at = |e: String| format!("params ({}): {e}", param.name);
        if !is_name(&param.name) {
            return Err(at(t!("runbook_error.param_name").into_owned()));
        }
        if !names.insert(param.name.clone()) {
            return Err(at(t!("runbook_error.declared_twice").into_owned()));
        }
        nonempty("help", &param.help).map_err(at)?;
        let has_range = param.min.is_some() || param.max.is_some();
        match param.kind {
            ParamKind::Gpu if param.name != "gpu" => {
                return Err(at(t!("runbook_error.gpu_param_name").into_owned()));
            }
            ParamKind::Gpu if has_range || !param.choices.is_empty() => {
                return Err(at(t!("runbook_error.gpu_no_range").into_owned()));
            }
            ParamKind::Watts if param.min.is_none() || param.max.is_none() => {
                return Err(at(t!("runbook_error.watts_needs_range").into_owned()));
            }
            ParamKind::Watts if !param.choices.is_empty() || param.default.is_some() => {
                return Err(at(t!("runbook_error.watts_no_choices").into_owned()));
            }
            ParamKind::Choice if param.choices.is_empty() || has_range => {
                return Err(at(t!("runbook_error.choice_needs_choices").into_owned()));
            }
            ParamKind::Choice => {
                if let Some(default) = &param.default
                    && !param.choices.contains(default)
                {
                    let e = t!("runbook_error.default_not_a_choice", default = default : {:?});
                    return Err(at(e.into_owned()));
                }
                if let Some(bad) = param.choices.iter().find(|c| !is_plain_word(c)) {
                    let e = t!("runbook_error.choice_not_plain", choice = bad : {:?});
                    return Err(at(e.into_owned()));
                }
            }
            _ => {}
        }
    }
    Ok(names)
}

/// A word that is safe anywhere on a command line: no spaces, quotes or shell syntax, and not
/// an option.
pub fn is_plain_word(text: &str) -> bool {
    !text.is_empty()
        && !text.starts_with('-')
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._:+-".contains(c))
}

/// The fact names `step` captures.
pub fn captured_names(step: &Step) -> Vec<String> {
    let mut out = Vec::new();
    for capture in &step.capture {
        match (&capture.csv, &capture.fact) {
            (Some(columns), _) => out.extend(columns.iter().filter(|c| *c != "gpu").cloned()),
            (None, Some(fact)) => out.push(fact.clone()),
            (None, None) => {}
        }
    }
    out
}

/// `Some(name)` when `arg` is exactly one placeholder `{name}`.
pub fn placeholder(arg: &str) -> Option<&str> {
    arg.strip_prefix('{')?.strip_suffix('}')
}

fn check_template(words: &[String], known: &BTreeSet<String>, what: &str) -> Result<(), String> {
    for (i, word) in words.iter().enumerate() {
        if word.contains('\0') {
            return Err(t!("runbook_error.nul", what = what, i = i).into_owned());
        }
        if !word.contains('{') && !word.contains('}') {
            continue;
        }
        match placeholder(word) {
            Some(name) if is_name(name) && known.contains(name) => {}
            Some(name) if is_name(name) => {
                let e = t!(
                    "runbook_error.unknown_placeholder",
                    what = what,
                    i = i,
                    name = name
                );
                return Err(e.into_owned());
            }
            _ => {
                let e = t!(
                    "runbook_error.placeholder_whole",
                    what = what,
                    i = i,
                    word = word : {:?}
                );
                return Err(e.into_owned());
            }
        }
    }
    Ok(())
}

fn check_step(step: &Step, known: &BTreeSet<String>, earlier: &[&Step]) -> Result<(), String> {
    if !is_id(&step.id) {
        return Err(t!("runbook_error.step_id").into_owned());
    }
    if earlier.iter().any(|s| s.id == step.id) {
        return Err(t!("runbook_error.id_used").into_owned());
    }
    nonempty("title", &step.title)?;
    nonempty("why", &step.why)?;
    if step.timeout_s == 0 || step.timeout_s > MAX_TIMEOUT_S {
        return Err(t!("runbook_error.timeout", max = MAX_TIMEOUT_S).into_owned());
    }
    if let Some(name) = &step.advice
        && !ADVICE_NAMES.contains(&name.as_str())
    {
        let e = t!(
            "runbook_error.advice_unknown",
            name = name : {:?},
            names = ADVICE_NAMES : {:?}
        );
        return Err(e.into_owned());
    }
    let commandless = step.advice.is_some() || step.say.is_some();
    if step.advice.is_some() && step.say.is_some() {
        return Err(t!("runbook_error.advice_or_say").into_owned());
    }
    if step.say.as_deref().is_some_and(|t| t.trim().is_empty()) {
        return Err(t!("runbook_error.say_empty").into_owned());
    }
    match commandless {
        true => {
            if !step.command.is_empty()
                || step.danger != Danger::Read
                || step.root
                || step.ask
                || !step.capture.is_empty()
            {
                return Err(t!("runbook_error.commandless").into_owned());
            }
        }
        false => {
            let Some(program) = step.command.first() else {
                return Err(t!("runbook_error.command_empty").into_owned());
            };
            if program.is_empty() || program.contains(['{', '}']) {
                return Err(t!("runbook_error.literal_program").into_owned());
            }
            check_template(&step.command, known, "command")?;
        }
    }
    if step.reboot && step.danger != Danger::Disruptive {
        return Err(t!("runbook_error.reboot_disruptive").into_owned());
    }
    if !step.rerun.is_empty() && !step.reboot {
        return Err(t!("runbook_error.rerun_reboot_only").into_owned());
    }
    for id in &step.rerun {
        match earlier.iter().find(|s| &s.id == id) {
            Some(s) if s.danger == Danger::Read && !s.command.is_empty() => {}
            Some(_) => return Err(t!("runbook_error.rerun_not_read", id = id : {:?}).into_owned()),
            None => return Err(t!("runbook_error.rerun_not_earlier", id = id : {:?}).into_owned()),
        }
    }
    if step.ask && step.danger != Danger::Read {
        return Err(t!("runbook_error.ask_read_only").into_owned());
    }
    check_check(&step.check, known)?;
    for capture in &step.capture {
        check_capture(capture)?;
    }
    for explain in &step.explain {
        check_explain(explain)?;
    }
    for condition in step.only_if.iter().chain(&step.only_if_any) {
        check_condition(condition, known, earlier)?;
    }
    if let Some(undo) = &step.undo {
        check_undo(undo, step, known)?;
    }
    Ok(())
}

fn check_check(check: &Check, known: &BTreeSet<String>) -> Result<(), String> {
    if let Some(expected) = &check.equals {
        check_template(std::slice::from_ref(expected), known, "check.equals")?;
    }
    if check
        .contains
        .iter()
        .chain(&check.not_contains)
        .any(|t| t.trim().is_empty())
    {
        return Err(t!("runbook_error.check_empty_text").into_owned());
    }
    Ok(())
}

fn check_capture(capture: &Capture) -> Result<(), String> {
    if let Some(columns) = &capture.csv {
        if capture.fact.is_some()
            || capture.from.is_some()
            || capture.text.is_some()
            || capture.index.is_some()
        {
            return Err(t!("runbook_error.csv_alone").into_owned());
        }
        let unique: BTreeSet<&String> = columns.iter().collect();
        if columns.is_empty() || unique.len() != columns.len() {
            return Err(t!("runbook_error.csv_distinct").into_owned());
        }
        if let Some(bad) = columns.iter().find(|c| !is_name(c)) {
            return Err(t!("runbook_error.column_not_a_name", column = bad : {:?}).into_owned());
        }
        return Ok(());
    }
    let (Some(fact), Some(from)) = (&capture.fact, capture.from) else {
        return Err(t!("runbook_error.csv_or_fact").into_owned());
    };
    if !is_name(fact) {
        return Err(t!("runbook_error.fact_not_a_name", fact = fact : {:?}).into_owned());
    }
    let text_needed = matches!(
        from,
        Source::LinesStarting | Source::LinesContaining | Source::After
    );
    let text_allowed = text_needed || matches!(from, Source::VersionAfter | Source::Word);
    let has_text = capture.text.as_deref().is_some_and(|t| !t.is_empty());
    if text_needed && !has_text {
        return Err(t!("runbook_error.needs_text", fact = fact).into_owned());
    }
    if !text_allowed && capture.text.is_some() {
        return Err(t!("runbook_error.takes_no_text", fact = fact).into_owned());
    }
    if (from == Source::Word) != capture.index.is_some() {
        return Err(t!("runbook_error.index_with_word", fact = fact).into_owned());
    }
    Ok(())
}

fn check_explain(explain: &Explain) -> Result<(), String> {
    if explain.output.is_none() && explain.exit.is_none() && !explain.failed {
        return Err(t!("runbook_error.explain_needs").into_owned());
    }
    if explain
        .output
        .as_deref()
        .is_some_and(|t| t.trim().is_empty())
    {
        return Err(t!("runbook_error.explain_empty").into_owned());
    }
    nonempty("explain.say", &explain.say)
}

fn check_condition(
    condition: &Condition,
    known: &BTreeSet<String>,
    earlier: &[&Step],
) -> Result<(), String> {
    let tests = [
        condition.equals.is_some(),
        condition.not_equals.is_some(),
        condition.at_least.is_some(),
    ];
    match (&condition.fact, &condition.step) {
        (Some(fact), None) => {
            if !known.contains(fact) {
                let e = t!("runbook_error.condition_unknown_fact", fact = fact : {:?});
                return Err(e.into_owned());
            }
            if tests.iter().filter(|t| **t).count() != 1 || condition.is.is_some() {
                return Err(t!("runbook_error.condition_one_test", fact = fact).into_owned());
            }
            Ok(())
        }
        (None, Some(id)) => {
            if !earlier.iter().any(|s| &s.id == id) {
                let e = t!("runbook_error.condition_unknown_step", id = id : {:?});
                return Err(e.into_owned());
            }
            if condition.is.is_none() || tests.iter().any(|t| *t) {
                return Err(t!("runbook_error.condition_is", id = id).into_owned());
            }
            Ok(())
        }
        _ => Err(t!("runbook_error.condition_fact_or_step").into_owned()),
    }
}

fn check_undo(undo: &Undo, step: &Step, known: &BTreeSet<String>) -> Result<(), String> {
    if step.danger != Danger::Change {
        return Err(t!("runbook_error.undo_change_only").into_owned());
    }
    nonempty("undo.title", &undo.title)?;
    match undo.command.first() {
        Some(p) if !p.is_empty() && !p.contains(['{', '}']) => {}
        _ => return Err(t!("runbook_error.undo_literal_program").into_owned()),
    }
    check_template(&undo.command, known, "undo.command")?;
    check_template(&undo.verify, known, "undo.verify")?;
    if let Some(expect) = &undo.expect {
        if undo.verify.is_empty() {
            return Err(t!("runbook_error.undo_expect_needs_verify").into_owned());
        }
        check_template(std::slice::from_ref(expect), known, "undo.expect")?;
    }
    Ok(())
}
