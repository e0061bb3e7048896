//! The rules a runbook must follow beyond its TOML shape: names that resolve, placeholders that
//! are whole arguments, danger levels that match what a step does. A runbook that breaks one is
//! refused when it is loaded, never halfway through a run.

use std::collections::BTreeSet;

use crate::playbook::model::{
    Capture, Check, Condition, Danger, Explain, ParamKind, Runbook, Source, Step, Undo,
};

/// Built-in advice a step may ask for instead of running a command.
pub const ADVICE_NAMES: [&str; 1] = ["torch-install"];

/// Longest timeout a step may ask for; anything longer is better split or done by hand.
pub const MAX_TIMEOUT_S: u64 = 3_600;

/// Checks `book`; the error names the place (`steps[2] (apply): ...`) and what is wrong.
pub fn validate(book: &Runbook) -> Result<(), String> {
    if !is_id(&book.id) {
        return Err(format!(
            "id {:?}: use lowercase letters, digits and '-'",
            book.id
        ));
    }
    nonempty("title", &book.title)?;
    nonempty("summary", &book.summary)?;
    for label in &book.when {
        if label.is_empty()
            || !label
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        {
            return Err(format!("when: {label:?} is not a finding label"));
        }
    }
    let params = check_params(book)?;
    if book.steps.is_empty() {
        return Err("steps: a runbook needs at least one step".to_string());
    }
    let mut known: BTreeSet<String> = params.clone();
    let mut earlier: Vec<&Step> = Vec::new();
    for (i, step) in book.steps.iter().enumerate() {
        check_step(step, &known, &earlier).map_err(|e| format!("steps[{i}] ({}): {e}", step.id))?;
        for name in captured_names(step) {
            if params.contains(&name) {
                return Err(format!(
                    "steps[{i}] ({}): fact {name:?} has the name of a parameter",
                    step.id
                ));
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
            return Err(format!(
                "params ({}): suggest names {fact:?}, which no step captures",
                param.name
            ));
        }
        for fact in [&param.min, &param.max].into_iter().flatten() {
            if !known.contains(fact) {
                return Err(format!(
                    "params ({}): {fact:?} is not captured by any step",
                    param.name
                ));
            }
        }
    }
    Ok(())
}

fn nonempty(what: &str, text: &str) -> Result<(), String> {
    if text.trim().is_empty() {
        Err(format!("{what} is empty"))
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
            return Err(at("use lowercase letters, digits and '_'".to_string()));
        }
        if !names.insert(param.name.clone()) {
            return Err(at("declared twice".to_string()));
        }
        nonempty("help", &param.help).map_err(at)?;
        let has_range = param.min.is_some() || param.max.is_some();
        match param.kind {
            ParamKind::Gpu if param.name != "gpu" => {
                return Err(at("a gpu parameter must be named \"gpu\"".to_string()));
            }
            ParamKind::Gpu if has_range || !param.choices.is_empty() => {
                return Err(at(
                    "a gpu index is checked against the GPUs read, not min/max/choices".into(),
                ));
            }
            ParamKind::Watts if param.min.is_none() || param.max.is_none() => {
                return Err(at(
                    "watts needs min and max: the facts holding the card's range".into(),
                ));
            }
            ParamKind::Watts if !param.choices.is_empty() || param.default.is_some() => {
                return Err(at("watts takes no choices or literal default".to_string()));
            }
            ParamKind::Choice if param.choices.is_empty() || has_range => {
                return Err(at("choice needs choices and no min/max".to_string()));
            }
            ParamKind::Choice => {
                if let Some(default) = &param.default
                    && !param.choices.contains(default)
                {
                    return Err(at(format!("default {default:?} is not one of the choices")));
                }
                if let Some(bad) = param.choices.iter().find(|c| !is_plain_word(c)) {
                    return Err(at(format!("choice {bad:?} is not a plain word")));
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
            return Err(format!("{what}[{i}] contains a NUL byte"));
        }
        if !word.contains('{') && !word.contains('}') {
            continue;
        }
        match placeholder(word) {
            Some(name) if is_name(name) && known.contains(name) => {}
            Some(name) if is_name(name) => {
                return Err(format!(
                    "{what}[{i}]: {{{name}}} is neither a parameter nor a fact of an earlier step"
                ));
            }
            _ => {
                return Err(format!(
                    "{what}[{i}] {word:?}: a placeholder must be a whole argument, like \"{{gpu}}\""
                ));
            }
        }
    }
    Ok(())
}

fn check_step(step: &Step, known: &BTreeSet<String>, earlier: &[&Step]) -> Result<(), String> {
    if !is_id(&step.id) {
        return Err("id: use lowercase letters, digits and '-'".to_string());
    }
    if earlier.iter().any(|s| s.id == step.id) {
        return Err("the id is used by an earlier step".to_string());
    }
    nonempty("title", &step.title)?;
    nonempty("why", &step.why)?;
    if step.timeout_s == 0 || step.timeout_s > MAX_TIMEOUT_S {
        return Err(format!("timeout_s must be 1..={MAX_TIMEOUT_S}"));
    }
    if let Some(name) = &step.advice
        && !ADVICE_NAMES.contains(&name.as_str())
    {
        return Err(format!("advice {name:?} is not one of {ADVICE_NAMES:?}"));
    }
    let commandless = step.advice.is_some() || step.say.is_some();
    if step.advice.is_some() && step.say.is_some() {
        return Err("give advice or say, not both".to_string());
    }
    if step.say.as_deref().is_some_and(|t| t.trim().is_empty()) {
        return Err("say is empty".to_string());
    }
    match commandless {
        true => {
            if !step.command.is_empty()
                || step.danger != Danger::Read
                || step.root
                || step.ask
                || !step.capture.is_empty()
            {
                return Err(
                    "an advice or say step runs no command: a read with no command, root, \
                     ask or capture"
                        .to_string(),
                );
            }
        }
        false => {
            let Some(program) = step.command.first() else {
                return Err("command is empty".to_string());
            };
            if program.is_empty() || program.contains(['{', '}']) {
                return Err("the program must be a literal name".to_string());
            }
            check_template(&step.command, known, "command")?;
        }
    }
    if step.reboot && step.danger != Danger::Disruptive {
        return Err("a reboot step must be disruptive".to_string());
    }
    if !step.rerun.is_empty() && !step.reboot {
        return Err("only a reboot step can rerun steps".to_string());
    }
    for id in &step.rerun {
        match earlier.iter().find(|s| &s.id == id) {
            Some(s) if s.danger == Danger::Read && !s.command.is_empty() => {}
            Some(_) => return Err(format!("rerun {id:?} is not a read step")),
            None => return Err(format!("rerun {id:?} is not an earlier step")),
        }
    }
    if step.ask && step.danger != Danger::Read {
        return Err("ask is for read steps; other steps always ask".to_string());
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
        return Err("check: an empty text matches everything".to_string());
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
            return Err("capture: csv takes no fact/from/text/index".to_string());
        }
        let unique: BTreeSet<&String> = columns.iter().collect();
        if columns.is_empty() || unique.len() != columns.len() {
            return Err("capture: csv needs distinct column names".to_string());
        }
        if let Some(bad) = columns.iter().find(|c| !is_name(c)) {
            return Err(format!("capture: column {bad:?} is not a name"));
        }
        return Ok(());
    }
    let (Some(fact), Some(from)) = (&capture.fact, capture.from) else {
        return Err("capture: give csv, or fact and from".to_string());
    };
    if !is_name(fact) {
        return Err(format!("capture: fact {fact:?} is not a name"));
    }
    let text_needed = matches!(
        from,
        Source::LinesStarting | Source::LinesContaining | Source::After
    );
    let text_allowed = text_needed || matches!(from, Source::VersionAfter | Source::Word);
    let has_text = capture.text.as_deref().is_some_and(|t| !t.is_empty());
    if text_needed && !has_text {
        return Err(format!("capture {fact}: this source needs text"));
    }
    if !text_allowed && capture.text.is_some() {
        return Err(format!("capture {fact}: this source takes no text"));
    }
    if (from == Source::Word) != capture.index.is_some() {
        return Err(format!(
            "capture {fact}: index goes with from = \"word\", and only there"
        ));
    }
    Ok(())
}

fn check_explain(explain: &Explain) -> Result<(), String> {
    if explain.output.is_none() && explain.exit.is_none() && !explain.failed {
        return Err("explain needs output, exit or failed to match on".to_string());
    }
    if explain
        .output
        .as_deref()
        .is_some_and(|t| t.trim().is_empty())
    {
        return Err("explain: an empty output text matches everything".to_string());
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
                return Err(format!(
                    "condition: {fact:?} is not a fact of an earlier step"
                ));
            }
            if tests.iter().filter(|t| **t).count() != 1 || condition.is.is_some() {
                return Err(format!(
                    "condition on {fact}: give exactly one of equals, not_equals, at_least"
                ));
            }
            Ok(())
        }
        (None, Some(id)) => {
            if !earlier.iter().any(|s| &s.id == id) {
                return Err(format!("condition: {id:?} is not an earlier step"));
            }
            if condition.is.is_none() || tests.iter().any(|t| *t) {
                return Err(format!("condition on step {id}: give is, and only is"));
            }
            Ok(())
        }
        _ => Err("condition: give fact or step, not both".to_string()),
    }
}

fn check_undo(undo: &Undo, step: &Step, known: &BTreeSet<String>) -> Result<(), String> {
    if step.danger != Danger::Change {
        return Err("only change steps can be undone".to_string());
    }
    nonempty("undo.title", &undo.title)?;
    match undo.command.first() {
        Some(p) if !p.is_empty() && !p.contains(['{', '}']) => {}
        _ => return Err("undo.command needs a literal program".to_string()),
    }
    check_template(&undo.command, known, "undo.command")?;
    check_template(&undo.verify, known, "undo.verify")?;
    if let Some(expect) = &undo.expect {
        if undo.verify.is_empty() {
            return Err("undo.expect needs undo.verify".to_string());
        }
        check_template(std::slice::from_ref(expect), known, "undo.expect")?;
    }
    Ok(())
}
