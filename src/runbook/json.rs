//! `gpufleet runbook list --json` and `runbook show ID --json`: the catalog and one runbook as
//! JSON documents (schemas in docs/CLI.md), holding what the text forms show.

use serde_json::{Value, json};

use crate::runbook::RunbookError;
use crate::runbook::catalog::Catalog;
use crate::runbook::cli::{describe, find};
use crate::runbook::model::{ParamKind, Step};

/// `{"runbooks": [{"id", "title", "when", "origin"}]}`, curated runbooks first.
pub fn list_json(catalog: &Catalog) -> Value {
    let runbooks: Vec<Value> = catalog
        .entries()
        .iter()
        .map(|entry| {
            let book = &entry.runbook;
            json!({
                "id": book.id,
                "title": book.title,
                "when": book.when,
                "origin": entry.origin,
            })
        })
        .collect();
    json!({ "runbooks": runbooks })
}

/// One runbook: its summary, parameters and steps with their commands and danger levels.
pub fn show_json(catalog: &Catalog, id: &str) -> Result<Value, RunbookError> {
    let book = find(catalog, id)?;
    let params: Vec<Value> = book
        .params
        .iter()
        .map(|p| {
            json!({
                "name": p.name,
                "kind": match p.kind {
                    ParamKind::Gpu => "gpu",
                    ParamKind::Watts => "watts",
                    ParamKind::Choice => "choice",
                },
                "help": p.help.trim(),
                "choices": p.choices,
                "default": p.default,
            })
        })
        .collect();
    Ok(json!({
        "id": book.id,
        "title": book.title,
        "summary": book.summary.trim(),
        "when": book.when,
        "params": params,
        "steps": book.steps.iter().map(step_json).collect::<Vec<_>>(),
    }))
}

fn step_json(step: &Step) -> Value {
    let command = (step.advice.is_none() && step.say.is_none()).then_some(&step.command);
    json!({
        "id": step.id,
        "title": step.title,
        "danger": step.danger.word(),
        "root": step.root,
        "timeout_s": step.timeout_s,
        "command": command,
        "advice": step.advice,
        "says": step.say.as_deref().map(str::trim),
        "why": step.why.trim(),
        "only_if": step.only_if.iter().map(describe).collect::<Vec<_>>(),
        "only_if_any": step.only_if_any.iter().map(describe).collect::<Vec<_>>(),
        "reboot": step.reboot,
        "rerun": step.rerun,
        "undo": step.undo.as_ref().map(|u| &u.command),
    })
}
