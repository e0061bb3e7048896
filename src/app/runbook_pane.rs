//! The runbook picker (`p`: the runbooks for the host's most severe finding first, then the
//! rest), the parameters typed before a run, and the runbook pane: each step's exact command
//! before it runs, its output as it streams in, a confirmation for anything but a read (only `y`
//! runs it), and how the run ended. Pure: the ops bridge runs the runbook and reports back.

use rust_i18n::t;

use std::collections::VecDeque;

use crate::app::command::Command;
use crate::app::model::{Model, View};
use crate::app::pane_common::{close, refusal, target_host};
use crate::app::panel::Panel;
use crate::app::runbook_run::{
    LineKind, PaneLine, ParamField, ParamForm, Picker, PickerItem, RunStage, RunbookEvent,
    RunbookRun,
};
use crate::fleet::HostId;
use crate::runbook::model::{Danger, Param, ParamKind, Runbook};
use crate::runbook::params::Params;

/// `p`: the picker for the open or selected host.
pub fn open_picker(model: &mut Model) -> Vec<Command> {
    let Some(host) = target_host(model) else {
        return Vec::new();
    };
    let Some(state) = model.fleet.hosts.get(host) else {
        return Vec::new();
    };
    let catalog = model.runbooks.catalog();
    let mut items: Vec<PickerItem> = Vec::new();
    // Findings are kept most severe first: the first one a runbook addresses leads.
    for finding in &state.findings {
        let books = catalog.for_label(&finding.label);
        if books.is_empty() {
            continue;
        }
        items.extend(books.into_iter().map(|book| PickerItem {
            id: book.id.clone(),
            title: book.title.clone(),
            for_label: Some(finding.label.clone()),
        }));
        break;
    }
    for entry in catalog.entries() {
        if !items.iter().any(|item| item.id == entry.runbook.id) {
            items.push(PickerItem {
                id: entry.runbook.id.clone(),
                title: entry.runbook.title.clone(),
                for_label: None,
            });
        }
    }
    model.panel = Some(Panel::Picker(Picker {
        host,
        host_name: state.name.clone(),
        items,
        cursor: 0,
        form: None,
        note: None,
    }));
    model.mark_dirty();
    Vec::new()
}

/// Enter in the picker: the runbook's parameters when it takes any, else the run; Enter in the
/// parameters: the run with what was typed.
pub fn choose(model: &mut Model) -> Vec<Command> {
    let Some(Panel::Picker(picker)) = &model.panel else {
        return Vec::new();
    };
    let id = match &picker.form {
        Some(form) => form.runbook.clone(),
        None => match picker.selected() {
            Some(item) => item.id.clone(),
            None => return Vec::new(),
        },
    };
    let Some(book) = model.runbooks.catalog().get(&id).cloned() else {
        return Vec::new();
    };
    // An attached console's steps run on the watcher.
    if let Some(reason) = refusal(model).filter(|_| !model.through_watcher) {
        if let Some(Panel::Picker(picker)) = &mut model.panel {
            picker.note = Some(reason.clone());
        }
        model.notify(reason, true);
        return Vec::new();
    }
    let label = picker.selected().and_then(|item| item.for_label.clone());
    let gpu = preferred_gpu(model, picker.host, label.as_deref());
    let Some(Panel::Picker(picker)) = &mut model.panel else {
        return Vec::new();
    };
    let Some(form) = &mut picker.form else {
        if book.params.is_empty() {
            return start(model, &book, Vec::new());
        }
        picker.form = Some(ParamForm {
            runbook: book.id.clone(),
            fields: book.params.iter().map(|p| field(p, gpu)).collect(),
            cursor: 0,
            error: None,
        });
        return Vec::new();
    };
    let given: Vec<(String, String)> = form
        .fields
        .iter()
        .filter(|f| !f.value.trim().is_empty())
        .map(|f| (f.name.clone(), f.value.trim().to_string()))
        .collect();
    // Names and types are checked here; ranges need what the host reports, so the runner
    // checks those before any command is built.
    if let Err(e) = Params::parse(&book, &given) {
        form.error = Some(e.to_string());
        return Vec::new();
    }
    start(model, &book, given)
}

/// The GPU a run is most likely about: the one the finding it was chosen for names, else the
/// one selected in the host view.
fn preferred_gpu(model: &Model, host: HostId, label: Option<&str>) -> Option<u32> {
    let state = model.fleet.hosts.get(host)?;
    let from_finding = label
        .and_then(|label| state.findings.iter().find(|f| f.label == label))
        .and_then(|f| f.gpu);
    let from_view = match model.view {
        View::Host(open) if open == host => {
            state.gpus.get(model.gpu_cursor).map(|g| g.latest.index)
        }
        _ => None,
    };
    from_finding.or(from_view)
}

fn field(param: &Param, gpu: Option<u32>) -> ParamField {
    let value = match (param.kind, gpu) {
        (ParamKind::Gpu, Some(gpu)) => gpu.to_string(),
        _ => String::new(),
    };
    let hint = if let Some(reason) = &param.suggest_reason {
        // The reason may name facts read during the run ({enforced_w}); show the words only.
        let words = reason.split(['(', '{']).next().unwrap_or("").trim();
        t!("param.proposed", words = words).into_owned()
    } else if let Some(default) = &param.default {
        t!("param.default", value = default).into_owned()
    } else if !param.choices.is_empty() {
        t!("param.one_of", choices = param.choices.join(", ")).into_owned()
    } else {
        param.help.trim().to_string()
    };
    ParamField {
        name: param.name.clone(),
        hint,
        value,
    }
}

/// Typing into the selected parameter (`None`: Backspace). Only plain characters are kept.
pub fn type_char(model: &mut Model, c: Option<char>) {
    if let Some(Panel::Picker(picker)) = &mut model.panel
        && let Some(form) = &mut picker.form
        && let Some(field) = form.fields.get_mut(form.cursor)
    {
        match c {
            Some(c) if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') => {
                if field.value.len() < 32 {
                    field.value.push(c);
                }
            }
            Some(_) => {}
            None => {
                field.value.pop();
            }
        }
        form.error = None;
    }
}

/// Esc in the parameters: back to the list.
pub fn back(model: &mut Model) -> Vec<Command> {
    if let Some(Panel::Picker(picker)) = &mut model.panel {
        picker.form = None;
    }
    Vec::new()
}

fn start(model: &mut Model, book: &Runbook, params: Vec<(String, String)>) -> Vec<Command> {
    let Some(Panel::Picker(picker)) = &model.panel else {
        return Vec::new();
    };
    let (host, host_name) = (picker.host, picker.host_name.clone());
    let id = model.next_ops_id();
    // An attached console changes nothing itself: the watcher runs the steps, under its own
    // config's `read_only`.
    let read_only = model.fleet.options.read_only && !model.through_watcher;
    let mut run = RunbookRun {
        id,
        host,
        host_name,
        runbook: book.id.clone(),
        title: book.title.clone(),
        read_only,
        lines: VecDeque::new(),
        stage: RunStage::Running,
        scroll: 0,
    };
    if !params.is_empty() {
        let given: Vec<String> = params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        run.push(PaneLine::new(
            LineKind::Note,
            t!("run.given", params = given.join(" ")).into_owned(),
        ));
    }
    model.panel = Some(Panel::Runbook(run));
    model.mark_dirty();
    vec![Command::StartRunbook {
        id,
        host,
        runbook: Box::new(book.clone()),
        params,
        read_only,
    }]
}

/// A report from the ops bridge about run `id`.
pub fn on_event(model: &mut Model, event: RunbookEvent) -> Vec<Command> {
    let Some(Panel::Runbook(run)) = &mut model.panel else {
        return Vec::new();
    };
    if run.id != event.id() {
        // A run left behind: whatever it reports changes nothing.
        return Vec::new();
    }
    model.mark_dirty();
    let Some(Panel::Runbook(run)) = &mut model.panel else {
        return Vec::new();
    };
    match event {
        RunbookEvent::Line { line, .. } => run.push(line),
        RunbookEvent::Confirm { id, ask } => {
            let refuse = match run.stage {
                RunStage::Stopping | RunStage::Finished { .. } => Some(t!("run.why_stopping")),
                _ if run.read_only && ask.danger != Danger::Read => Some(t!("run.why_read_only")),
                _ => None,
            };
            if let Some(why) = refuse {
                run.push(PaneLine::new(
                    LineKind::Warning,
                    t!("run.not_run", why = why, title = ask.title.as_str()).into_owned(),
                ));
                return vec![Command::AnswerStep {
                    id,
                    confirmed: false,
                }];
            }
            run.scroll = 0;
            run.stage = RunStage::Confirm(ask);
        }
        RunbookEvent::Finished { text, good, .. } => {
            run.stage = RunStage::Finished { text, good };
        }
    }
    Vec::new()
}

/// `y` (true) or any other key (false) on a step that waits for confirmation.
pub fn answer(model: &mut Model, confirmed: bool) -> Vec<Command> {
    let Some(Panel::Runbook(run)) = &mut model.panel else {
        return Vec::new();
    };
    let RunStage::Confirm(ask) = &run.stage else {
        return Vec::new();
    };
    let line = if confirmed {
        PaneLine::new(
            LineKind::Note,
            t!("run.confirmed", title = ask.title.as_str()).into_owned(),
        )
    } else {
        PaneLine::new(
            LineKind::Warning,
            t!("run.not_confirmed", title = ask.title.as_str()).into_owned(),
        )
    };
    run.push(line);
    run.stage = RunStage::Running;
    vec![Command::AnswerStep {
        id: run.id,
        confirmed,
    }]
}

/// Esc / `x` while a run goes on: stop it; a second press closes the pane and leaves it.
pub fn stop(model: &mut Model) -> Vec<Command> {
    let Some(Panel::Runbook(run)) = &mut model.panel else {
        return Vec::new();
    };
    match run.stage {
        RunStage::Running | RunStage::Confirm(_) => {
            run.stage = RunStage::Stopping;
            run.push(PaneLine::new(LineKind::Warning, t!("run.stopping_run")));
            vec![Command::StopRunbook { id: run.id }]
        }
        RunStage::Stopping => close(model),
        RunStage::Finished { .. } => Vec::new(),
    }
}
