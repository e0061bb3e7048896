//! `gpufleet runbook list | show ID | run ID ... | undo ...` (`playbook`, the former name, too):
//! the catalogue listed and shown, as text or as JSON documents (schemas in docs/CLI.md), and a
//! runbook run or undone on a host (or this machine, or a demo host), each step confirmed and
//! written to the audit log. Each function takes what clap resolved and returns text or an exit
//! code, so the commands run under test.

use std::fmt::Write as _;
use std::io::Write;
use std::process::ExitCode;

use rust_i18n::t;
use serde_json::{Value, json};

use crate::audit::AuditLog;
use crate::cli::{GlobalArgs, RunbookAction};
use crate::commands::demo as demo_command;
use crate::commands::setup::no_host_named;
use crate::config::Config;
use crate::demo::Scratch;
use crate::remote::{link_options, resolve_named};
use crate::runbook;
use crate::runbook::catalog::Catalog;
use crate::runbook::confirm::Confirmer;
use crate::runbook::model::{Check, Condition, Danger, OnFail, ParamKind, Runbook, Step, StepIs};
use crate::runbook::params::split_assignment;
use crate::runbook::reboot::RebootOptions;
use crate::runbook::report::{EXIT_FAILED, EXIT_OK, EXIT_USAGE, RunOutcome, TextObserver};
use crate::runbook::runner::{self, RunOptions, Tools};
use crate::runbook::undo::{UndoRecord, UndoStore};
use crate::runbook::{RunbookError, Target};
use crate::telemetry::source::StopFlag;
use crate::words::Words;

/// Runs one `gpufleet runbook` action.
pub fn run(
    action: &RunbookAction,
    args: &GlobalArgs,
    config: &Config,
    interval_ms: u64,
) -> anyhow::Result<ExitCode> {
    let catalog = runbook::Catalog::load_default()?;
    let target = |host: &Option<String>| -> anyhow::Result<runbook::Target> {
        match host {
            Some(name) if !args.local => {
                let remote =
                    resolve_named(&args.ssh_settings(), std::slice::from_ref(name), config)
                        .map_err(|e| anyhow::anyhow!(e.localized()))?
                        .pop()
                        .ok_or_else(|| anyhow::anyhow!(no_host_named(name).localized()))?;
                Ok(runbook::Target::Remote(
                    remote,
                    link_options(&args.ssh_settings(), interval_ms),
                ))
            }
            None if args.local => Ok(runbook::Target::Local),
            _ => Err(anyhow::anyhow!(say_where_to_run().localized())),
        }
    };
    // With --demo, a simulated demo host, with a scratch directory for the audit log.
    let demo_or = |host: &Option<String>| -> anyhow::Result<(runbook::Target, Option<Scratch>)> {
        if args.demo {
            let (target, scratch) = demo_command::runbook_target(
                config,
                args,
                host.as_deref(),
                &mut crate::commands::stdout::Stdout,
            )?;
            Ok((target, Some(scratch)))
        } else {
            Ok((target(host)?, None))
        }
    };
    let audit_log = |scratch: Option<&Scratch>| -> anyhow::Result<AuditLog> {
        Ok(match scratch {
            Some(scratch) => scratch.audit(),
            None => AuditLog::open_default()?,
        })
    };
    let read_only = args.read_only || config.read_only;
    let stop = StopFlag::default();
    let code = match action {
        RunbookAction::List { json: false } => {
            crate::out!("{}", list_command(&catalog));
            0
        }
        RunbookAction::List { json: true } => {
            let text = format!("{:#}\n", list_json(&catalog));
            crate::out!("{text}");
            0
        }
        RunbookAction::Show { id, json: false } => {
            crate::out!("{}", show_command(&catalog, id)?);
            0
        }
        RunbookAction::Show { id, json: true } => {
            let text = format!("{:#}\n", show_json(&catalog, id)?);
            crate::out!("{text}");
            0
        }
        RunbookAction::Run {
            id,
            host,
            param,
            gpu,
            dry_run,
            yes,
        } => {
            let (target, scratch) = demo_or(host)?;
            // Only a runbook that may reboot asks the host what it is.
            let reboots = catalog
                .get(id)
                .is_some_and(|book| book.steps.iter().any(|step| step.reboot));
            let restart = if reboots {
                restart_for(config, &target, &stop)
            } else {
                runbook::Restart::Reboot
            };
            let request = RunRequest {
                runbook: id.clone(),
                target,
                params: param.clone(),
                gpu: *gpu,
                dry_run: *dry_run,
                read_only,
                reboot: Default::default(),
                restart,
            };
            let mut confirmer = runbook::cli_confirmer(*yes);
            run_command(
                &catalog,
                request,
                confirmer.as_mut(),
                &mut crate::commands::stdout::Stdout,
                &audit_log(scratch.as_ref())?,
                &stop,
            )
        }
        RunbookAction::Undo { host, dry_run, yes } => {
            let (target, scratch) = demo_or(host)?;
            let request = UndoRequest {
                target,
                dry_run: *dry_run,
                read_only,
            };
            let mut confirmer = runbook::cli_confirmer(*yes);
            undo_command(
                &catalog,
                request,
                confirmer.as_mut(),
                &mut crate::commands::stdout::Stdout,
                &audit_log(scratch.as_ref())?,
                &stop,
            )
        }
    };
    Ok(ExitCode::from(code))
}

/// `gpufleet runbook run ID (--host NAME | --local) [--param K=V]... [--gpu N] [--dry-run]`.
#[derive(Debug, Clone)]
pub struct RunRequest {
    pub runbook: String,
    pub target: Target,
    /// `--param NAME=VALUE`, as typed.
    pub params: Vec<String>,
    /// `--gpu N`, the same as `--param gpu=N`.
    pub gpu: Option<u32>,
    pub dry_run: bool,
    pub read_only: bool,
    pub reboot: RebootOptions,
    /// How the reboot step restarts the host ([`restart_for`]).
    pub restart: runbook::Restart,
}

/// How a runbook's reboot step restarts the host of `target`: its `[hosts.release]` table and,
/// unless the table says, what the host says it is ([`runbook::restart::for_target`]).
pub fn restart_for(config: &Config, target: &runbook::Target, stop: &StopFlag) -> runbook::Restart {
    let release = match target {
        runbook::Target::Remote(host, _) => {
            config.host(&host.name).and_then(|h| h.release.as_ref())
        }
        _ => None,
    };
    runbook::restart::for_target(target, release, &crate::release::process_env, stop)
}

/// `gpufleet runbook undo (--host NAME | --local) [--dry-run]`.
#[derive(Debug, Clone)]
pub struct UndoRequest {
    pub target: Target,
    pub dry_run: bool,
    pub read_only: bool,
}

/// `gpufleet runbook list`: one line per runbook with the findings it addresses.
pub fn list_command(catalog: &Catalog) -> String {
    let width = catalog
        .entries()
        .iter()
        .map(|e| e.runbook.id.len())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for entry in catalog.entries() {
        let book = &entry.runbook;
        let _ = write!(out, "{:width$}  {}", book.id, book.title);
        if !book.when.is_empty() {
            let _ = write!(out, "  [{}]", book.when.join(", "));
        }
        if !entry.origin.starts_with("embedded:") {
            let _ = write!(out, "  ({})", entry.origin);
        }
        out.push('\n');
    }
    out
}

fn find<'c>(catalog: &'c Catalog, id: &str) -> Result<&'c Runbook, RunbookError> {
    catalog.get(id).ok_or_else(|| RunbookError::UnknownRunbook {
        id: id.to_string(),
        known: catalog
            .entries()
            .iter()
            .map(|e| e.runbook.id.clone())
            .collect::<Vec<_>>()
            .join(", "),
    })
}

/// `gpufleet runbook show ID`: every step with its danger, command template and conditions.
pub fn show_command(catalog: &Catalog, id: &str) -> Result<String, RunbookError> {
    let book = find(catalog, id)?;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {}\n\n{}",
        book.id,
        book.title,
        book.summary.trim()
    );
    if !book.when.is_empty() {
        let labels = book.when.join(", ");
        let _ = writeln!(
            out,
            "\n{}",
            t!("playbook_cli.for_findings", labels = labels)
        );
    }
    if !book.params.is_empty() {
        let _ = writeln!(out, "\n{}", t!("playbook_cli.parameters"));
        for p in &book.params {
            let kind = match p.kind {
                ParamKind::Gpu => t!("playbook_cli.kind_gpu"),
                ParamKind::Watts => t!("playbook_cli.kind_watts"),
                ParamKind::Choice => t!("playbook_cli.kind_choice"),
            };
            let line = t!(
                "playbook_cli.param",
                name = p.name,
                kind = kind,
                help = p.help.trim()
            );
            let _ = writeln!(out, "  {line}");
        }
    }
    let _ = writeln!(out, "\n{}", t!("playbook_cli.steps"));
    for (i, step) in book.steps.iter().enumerate() {
        let root = if step.root {
            t!("playbook_cli.needs_root")
        } else {
            "".into()
        };
        let line = t!(
            "playbook_cli.step",
            n = i + 1,
            title = step.title,
            danger = step.danger,
            root = root,
            id = step.id,
            timeout = step.timeout_s
        );
        let _ = writeln!(out, "  {line}");
        match (&step.advice, &step.say) {
            (Some(name), _) => {
                let _ = writeln!(out, "     {}", t!("playbook_cli.advice", name = name));
            }
            (None, Some(say)) => {
                let _ = writeln!(out, "     {}", t!("playbook_cli.says", text = say.trim()));
            }
            (None, None) => {
                let command = crate::runbook::runner::display(&step.command);
                let _ = writeln!(out, "     $ {command}");
            }
        }
        let _ = writeln!(out, "     {}", t!("playbook.why", why = step.why.trim()));
        let all: Vec<String> = step.only_if.iter().map(describe).collect();
        let any: Vec<String> = step.only_if_any.iter().map(describe).collect();
        if !all.is_empty() {
            let conditions = all.join(&t!("playbook_cli.and"));
            let line = t!("playbook_cli.only_if", conditions = conditions);
            let _ = writeln!(out, "     {line}");
        }
        if !any.is_empty() {
            let conditions = any.join("; ");
            let line = t!("playbook_cli.only_if_any", conditions = conditions);
            let _ = writeln!(out, "     {line}");
        }
        if step.reboot {
            let steps = step.rerun.join(", ");
            let line = t!("playbook_cli.reboot_reruns", steps = steps);
            let _ = writeln!(out, "     {line}");
        }
        if let Some(undo) = &step.undo {
            let command = crate::runbook::runner::display(&undo.command);
            let _ = writeln!(out, "     {}", t!("playbook_cli.undo", command = command));
        }
    }
    Ok(out)
}

fn describe(c: &Condition) -> String {
    match (&c.fact, &c.step, c.is) {
        (Some(fact), _, _) => {
            let test = c
                .equals
                .as_ref()
                .map(|v| format!("= {v}"))
                .or_else(|| c.not_equals.as_ref().map(|v| format!("!= {v}")))
                .or_else(|| c.at_least.map(|v| format!(">= {v}")))
                .unwrap_or_default();
            format!("{fact} {test}")
        }
        (None, Some(step), Some(is)) => match is {
            StepIs::Ok => t!("playbook_cli.step_succeeded", step = step),
            StepIs::Failed => t!("playbook_cli.step_failed", step = step),
            StepIs::Skipped => t!("playbook_cli.step_skipped", step = step),
            StepIs::NotOk => t!("playbook_cli.step_not_ok", step = step),
        }
        .into_owned(),
        _ => String::new(),
    }
}

/// `gpufleet runbook run`: runs the runbook and returns the exit code (see `report::EXIT_*`).
pub fn run_command(
    catalog: &Catalog,
    request: RunRequest,
    confirmer: &mut dyn Confirmer,
    out: &mut dyn Write,
    audit: &AuditLog,
    stop: &StopFlag,
) -> u8 {
    let book = match find(catalog, &request.runbook) {
        Ok(book) => book,
        Err(e) => {
            let _ = writeln!(out, "gpufleet: {e}");
            return EXIT_USAGE;
        }
    };
    let mut given = Vec::new();
    for text in &request.params {
        match split_assignment(text) {
            Ok(pair) => given.push(pair),
            Err(e) => {
                let _ = writeln!(out, "gpufleet: {e}");
                return EXIT_USAGE;
            }
        }
    }
    if let Some(gpu) = request.gpu {
        given.push(("gpu".to_string(), gpu.to_string()));
    }
    let options = RunOptions {
        dry_run: request.dry_run,
        read_only: request.read_only,
        reboot: request.reboot,
        restart: request.restart,
    };
    let mut exec = request.target.executor();
    let mut observer = TextObserver::new(out);
    let undo = UndoStore::beside(audit.path());
    let report = runner::run(
        book,
        &given,
        &options,
        Tools {
            exec: exec.as_mut(),
            confirmer,
            observer: &mut observer,
            audit,
            undo: &undo,
            stop,
        },
    );
    report.outcome.exit_code()
}

/// The two steps of an undo: the recorded command, then the recorded read-back.
fn undo_runbook(record: &UndoRecord, original: Option<&Step>) -> Runbook {
    let step = |id: &str, title: String, why: String, danger, command, check| Step {
        id: id.to_string(),
        title,
        why,
        danger,
        command,
        timeout_s: record.timeout_s,
        root: false,
        check,
        capture: Vec::new(),
        explain: original.map(|s| s.explain.clone()).unwrap_or_default(),
        on_fail: OnFail::Stop,
        only_if: Vec::new(),
        only_if_any: Vec::new(),
        undo: None,
        reboot: false,
        rerun: Vec::new(),
        ask: false,
        advice: None,
        say: None,
        show: Vec::new(),
    };
    let mut steps = vec![step(
        "undo",
        record.title.clone(),
        t!(
            "playbook_cli.undo_why",
            step = record.step,
            runbook = record.runbook
        )
        .into_owned(),
        Danger::Change,
        record.command.clone(),
        original.map(|s| s.check.clone()).unwrap_or_default(),
    )];
    if !record.verify.is_empty() {
        steps.push(step(
            "undo-verify",
            t!("playbook_cli.undo_verify_title").into_owned(),
            t!("playbook_cli.undo_verify_why").into_owned(),
            Danger::Read,
            record.verify.clone(),
            Check {
                equals: record.expect.clone(),
                ..Check::default()
            },
        ));
    }
    Runbook {
        id: record.runbook.clone(),
        title: t!("playbook_cli.undo_title", title = record.title).into_owned(),
        summary: record.title.clone(),
        when: Vec::new(),
        params: Vec::new(),
        steps,
        explain: Vec::new(),
        recurred: None,
    }
}

/// `gpufleet runbook undo`: reverses the newest recorded change on the host, verifies it,
/// and forgets it once verified.
pub fn undo_command(
    catalog: &Catalog,
    request: UndoRequest,
    confirmer: &mut dyn Confirmer,
    out: &mut dyn Write,
    audit: &AuditLog,
    stop: &StopFlag,
) -> u8 {
    let mut exec = request.target.executor();
    let store = UndoStore::beside(audit.path());
    let record = match store.latest(exec.host()) {
        Ok(Some(record)) => record,
        Ok(None) => {
            let _ = writeln!(
                out,
                "{}",
                t!("playbook_cli.nothing_to_undo", host = exec.host())
            );
            return EXIT_OK;
        }
        Err(e) => {
            let _ = writeln!(out, "gpufleet: {e}");
            return EXIT_FAILED;
        }
    };
    let original = catalog
        .get(&record.runbook)
        .and_then(|b| b.steps.iter().find(|s| s.id == record.step));
    let book = undo_runbook(&record, original);
    let options = RunOptions {
        dry_run: request.dry_run,
        read_only: request.read_only,
        reboot: RebootOptions::default(),
        restart: runbook::Restart::Reboot,
    };
    let mut observer = TextObserver::new(out);
    let report = runner::run(
        &book,
        &[],
        &options,
        Tools {
            exec: exec.as_mut(),
            confirmer,
            observer: &mut observer,
            audit,
            undo: &store,
            stop,
        },
    );
    let out = observer.into_inner();
    if report.outcome == RunOutcome::Completed
        && !request.dry_run
        && let Err(e) = store.remove(&record)
    {
        let _ = writeln!(
            out,
            "gpufleet: {}",
            t!("playbook_cli.restored_but", why = e)
        );
        return EXIT_FAILED;
    }
    report.outcome.exit_code()
}

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

/// `runbook run/undo` with neither `--host` nor `--local`.
fn say_where_to_run() -> Words {
    Words::new("cli.say_where")
}
