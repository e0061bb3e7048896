//! `gpufleet cost` and `gpufleet release` as library functions: the binary parses the flags and
//! passes them in, so both run under test with a temporary state directory and a fake SSH runner.

use std::io::{BufRead, Write};

use rust_i18n::t;
use serde_json::json;

use crate::audit::{AuditError, AuditLog};
use crate::cells;
use crate::config::Config;
use crate::cost::{
    FleetCost, HostCost, LedgerBook, LedgerStore, RedLine, StoreError, fleet_cost,
    format_duration_ms, format_money, host_ledger, red_lines,
};
use crate::release::{
    BackupOutcome, FlowError, HostRunner, ReleaseAction, ReleaseFlow, SendOptions, StepAnswer,
    Unattended, action_words, process_env,
};
use crate::telemetry::TimestampMs;

/// The release was sent and accepted, or the dry run was shown; for `cost`, no red line.
pub const EXIT_OK: u8 = 0;
/// The provider refused or could not be reached, or a failed backup blocked the release; for
/// `cost`, a red line is crossed.
pub const EXIT_FAILED: u8 = 1;
/// Refused before anything ran: read-only mode, an unknown host, an impossible action, no token.
pub const EXIT_REFUSED: u8 = 2;
/// The user did not confirm (empty input, a wrong name, end of input): the code every cancelled
/// action exits with.
pub const EXIT_CANCELLED: u8 = crate::exit_codes::CANCELLED;

#[derive(Debug, thiserror::Error)]
pub enum MoneyError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Audit(#[from] AuditError),
    #[error("{}", t!("cli_cost.writing_json", why = .0))]
    Json(#[from] serde_json::Error),
}

/// Where `release` keeps and sends things; tests point it at temporary files and fakes.
pub struct MoneyEnv<'a> {
    pub store: LedgerStore,
    pub audit: AuditLog,
    /// Runs the backup (and the `ssh` provider's shutdown) on the host.
    pub runner: &'a dyn HostRunner,
    pub send: SendOptions,
    /// Looks up the token's environment variable.
    pub env: &'a dyn Fn(&str) -> Option<String>,
    /// The wall clock; read again after the backup, which may take minutes.
    pub clock: &'a dyn Fn() -> TimestampMs,
    /// A demo host: the release is marked simulated and the simulated provider answers.
    pub simulated: bool,
}

impl<'a> MoneyEnv<'a> {
    /// The ledger and audit log of the state directory, the process environment, real timeouts.
    pub fn from_state_dir(
        runner: &'a dyn HostRunner,
        clock: &'a dyn Fn() -> TimestampMs,
    ) -> Result<Self, MoneyError> {
        Ok(Self {
            store: LedgerStore::open_default()?,
            audit: AuditLog::open_default()?,
            runner,
            send: SendOptions::default(),
            env: &process_env,
            clock,
            simulated: false,
        })
    }
}

/// `gpufleet release NAME [--stop | --terminate] [--dry-run] [--yes]` and the global
/// `--read-only`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReleaseArgs {
    pub host: String,
    /// `None` is stop, the action that keeps the disk.
    pub action: Option<ReleaseAction>,
    pub dry_run: bool,
    pub yes: bool,
    pub read_only: bool,
    pub override_failed_backup: bool,
    /// Release even when the ledger cannot record it.
    pub force: bool,
    /// With `dry_run`: the plan as JSON (docs/CLI.md) instead of text.
    pub json: bool,
}

/// `gpufleet cost [--json]` from the stored ledger and the config's prices. The exit code is
/// [`EXIT_FAILED`] when a red line is crossed, so a cron job can act on it.
pub fn cost_command(
    config: &Config,
    json: bool,
    now_ms: TimestampMs,
) -> Result<(String, u8), MoneyError> {
    let book = LedgerStore::open_default()?.load()?;
    cost_report(config, &book, json, now_ms)
}

/// [`cost_command`] on a given ledger book.
pub fn cost_report(
    config: &Config,
    book: &LedgerBook,
    json: bool,
    now_ms: TimestampMs,
) -> Result<(String, u8), MoneyError> {
    let fleet = fleet_cost(config, book, now_ms);
    let lines = red_lines(config, &fleet);
    cost_output(&fleet, &lines, json, now_ms, None)
}

/// The `cost` report of `fleet` and its red lines, with the exit code. `simulated` is how far
/// into the demo's scenario the figures are (ms): the report then says it is simulated.
pub fn cost_output(
    fleet: &FleetCost,
    lines: &[RedLine],
    json: bool,
    now_ms: TimestampMs,
    simulated: Option<u64>,
) -> Result<(String, u8), MoneyError> {
    let code = if lines.is_empty() {
        EXIT_OK
    } else {
        EXIT_FAILED
    };
    let text = if json {
        let mut value = cost_json(fleet, lines, now_ms);
        if let Some(scenario_ms) = simulated {
            value["simulated"] = json!({ "scenario_ms": scenario_ms });
        }
        let mut text = serde_json::to_string_pretty(&value)?;
        text.push('\n');
        text
    } else {
        let mut text = String::new();
        if let Some(scenario_ms) = simulated {
            let after = format_duration_ms(scenario_ms);
            text.push_str(&t!("cli_cost.simulated", after = after));
            text.push('\n');
        }
        text.push_str(&cost_table(fleet, lines));
        text
    };
    Ok((text, code))
}

fn cents(amount: f64) -> f64 {
    (amount * 100.0).round() / 100.0
}

fn cost_json(fleet: &FleetCost, lines: &[RedLine], now_ms: TimestampMs) -> serde_json::Value {
    let hosts: Vec<_> = fleet
        .hosts
        .iter()
        .map(|host| {
            let t = &host.totals;
            json!({
                "name": host.host,
                "price_per_hour": host.price.as_ref().map(|p| p.price_per_hour),
                "currency": host.currency(),
                "billed_ms": t.billed_ms,
                "busy_ms": t.busy_ms,
                "idle_ms": t.idle_ms,
                "parked_ms": t.parked_ms,
                "unobserved_ms": t.unobserved_ms,
                "current_idle_ms": t.current_idle_ms,
                "spent": host.spent().map(cents),
                "spent_idle": host.spent_idle().map(cents),
                "effective_utilization": t.effective_utilization(),
                "released": t.released.as_ref().map(|r| json!({
                    "at_ms": r.at_ms, "action": r.action, "provider": r.provider,
                })),
            })
        })
        .collect();
    let by_currency: Vec<_> = fleet
        .by_currency
        .iter()
        .map(|total| {
            json!({
                "currency": total.currency,
                "spent": cents(total.spent),
                "spent_idle": cents(total.spent_idle),
                "hosts": total.hosts,
            })
        })
        .collect();
    let red: Vec<_> = lines
        .iter()
        .map(|line| json!({"kind": line.kind(), "host": line.host(), "message": line.message()}))
        .collect();
    json!({
        "at_ms": now_ms,
        "hosts": hosts,
        "fleet": {
            "billed_ms": fleet.billed_ms,
            "busy_ms": fleet.busy_ms,
            "idle_ms": fleet.idle_ms,
            "parked_ms": fleet.parked_ms,
            "unobserved_ms": fleet.unobserved_ms,
            "effective_utilization": fleet.effective_utilization(),
            "by_currency": by_currency,
        },
        "red_lines": red,
    })
}

/// Billed, busy, idle and parked time as the console shows it: `12m`, `3h05m`, `2d04h`.
fn hours_cell(ms: u64) -> String {
    format_duration_ms(ms)
}

fn pct_cell(fraction: Option<f64>) -> String {
    fraction.map_or_else(|| "-".to_string(), |f| format!("{:.0}%", f * 100.0))
}

fn money_cell(amount: Option<f64>, host: &HostCost) -> String {
    match (amount, host.currency()) {
        (Some(amount), Some(currency)) => format_money(amount, currency),
        _ => "-".to_string(),
    }
}

fn cost_table(fleet: &FleetCost, lines: &[RedLine]) -> String {
    let mut header: Vec<String> = t!("cli_cost.header").split('|').map(String::from).collect();
    header.resize(10, String::new());
    let mut rows: Vec<Vec<String>> = vec![header];
    for host in &fleet.hosts {
        let t = &host.totals;
        let now = match (&t.released, t.current_idle_ms) {
            (Some(released), _) => t!("cost.released", action = released.action).into_owned(),
            (None, 0) => "-".to_string(),
            (None, idle_ms) => {
                let time = format_duration_ms(idle_ms);
                t!("cost.idle", time = time).into_owned()
            }
        };
        rows.push(vec![
            host.host.clone(),
            host.price.as_ref().map_or_else(
                || "-".to_string(),
                |p| format_money(p.price_per_hour, &p.currency),
            ),
            hours_cell(t.billed_ms),
            hours_cell(t.busy_ms),
            hours_cell(t.idle_ms),
            hours_cell(t.parked_ms),
            pct_cell(t.effective_utilization()),
            money_cell(host.spent(), host),
            money_cell(host.spent_idle(), host),
            now,
        ]);
    }
    let mut fleet_row = vec![
        t!("cost.fleet").into_owned(),
        String::new(),
        hours_cell(fleet.billed_ms),
        hours_cell(fleet.busy_ms),
        hours_cell(fleet.idle_ms),
        hours_cell(fleet.parked_ms),
        pct_cell(fleet.effective_utilization()),
        "-".to_string(),
        "-".to_string(),
        String::new(),
    ];
    for (i, total) in fleet.by_currency.iter().enumerate() {
        if i > 0 {
            rows.push(fleet_row);
            fleet_row = vec![String::new(); 10];
        }
        fleet_row[7] = format_money(total.spent, &total.currency);
        fleet_row[8] = format_money(total.spent_idle, &total.currency);
    }
    rows.push(fleet_row);
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|col| {
            rows.iter()
                .map(|r| cells::width(&r[col]))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in &rows {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(col, (cell, width))| match col {
                0 | 9 => cells::pad(cell, *width),
                _ => cells::pad_left(cell, *width),
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    for line in lines {
        out.push_str(&format!("! {}\n", line.message()));
    }
    out
}

/// `gpufleet release`: plan, backup, typed confirmation (read from `input`), send. Everything
/// the user should see goes to `out`. Returns one of the `EXIT_` codes.
pub fn release_command(
    config: &Config,
    args: &ReleaseArgs,
    env: &MoneyEnv<'_>,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> u8 {
    // A broken output stream must not stop a release half-way; the audit log still records it.
    macro_rules! say {
        ($($arg:tt)*) => {{ let _ = writeln!(out, $($arg)*); }};
    }
    let action = args.action.unwrap_or(ReleaseAction::Stop);
    // `gpufleet restart` and `start` speak of themselves, not of a release.
    let error = |why: String| -> String {
        if action.releases() {
            t!("cli_release.error", why = why).into_owned()
        } else {
            t!("restart.error", command = action.as_str(), why = why).into_owned()
        }
    };
    let cost = match env.store.load() {
        Ok(book) => config.host(&args.host).map(|host| {
            HostCost::new(host, host_ledger(config, host, &book).totals((env.clock)()))
        }),
        Err(e) => {
            say!("{}", t!("cli_release.warning", why = e));
            None
        }
    };
    let started = ReleaseFlow::start(
        config,
        &args.host,
        args.action,
        args.read_only,
        cost.as_ref(),
        env.env,
    );
    let mut flow = match started {
        Ok(mut flow) => {
            if env.simulated {
                flow.simulate();
            }
            flow
        }
        Err(FlowError::ReadOnly) if !action.releases() => {
            say!("{}", error(t!("restart.read_only").into_owned()));
            return EXIT_REFUSED;
        }
        Err(e) => {
            say!("{}", error(e.words().localized()));
            return EXIT_REFUSED;
        }
    };
    if args.dry_run {
        return match flow.dry_run(&env.audit, (env.clock)()) {
            Ok(_) if args.json => {
                say!("{:#}", flow.plan().to_json());
                EXIT_OK
            }
            Ok(lines) => {
                lines.iter().for_each(|line| say!("{line}"));
                EXIT_OK
            }
            Err(e) => {
                say!("{}", error(e.words().localized()));
                EXIT_FAILED
            }
        };
    }
    for line in flow.plan().lines() {
        say!("{line}");
    }
    if let Some(problem) = &flow.plan().token_problem {
        if action.releases() {
            say!("{}", t!("cli_release.no_token", problem = problem));
        } else {
            let why = t!(
                "restart.no_token",
                action = action_word(action),
                problem = problem
            );
            say!("{}", error(why.into_owned()));
        }
        return EXIT_REFUSED;
    }
    let host = flow.plan().host.clone();
    // Before the backup and the confirmation: a release the ledger cannot record is refused
    // unless forced, and `send` checks again right before asking the provider.
    if args.force {
        flow.allow_unrecorded();
    } else if let Some(e) = flow
        .plan()
        .action
        .releases()
        .then(|| env.store.check_recordable().err())
        .flatten()
    {
        say!("{}", t!("cli_release.unrecordable", why = e));
        say!("{}", t!("cli_release.unrecordable_hint"));
        return EXIT_REFUSED;
    }
    if flow.plan().backup.is_some() {
        say!("{}", t!("cli_release.backup_runs", host = host));
        let ran = flow.run_backup(env.runner, &env.audit, (env.clock)(), &mut |line| {
            let _ = writeln!(out, "  | {line}");
        });
        match ran {
            Ok(BackupOutcome::Failed(why)) if args.override_failed_backup => {
                say!("{}", t!("cli_release.backup_overridden", why = why));
                flow.override_failed_backup();
            }
            Ok(BackupOutcome::Failed(why)) => {
                say!(
                    "{}",
                    t!("cli_release.backup_failed", why = why, host = host)
                );
                return EXIT_FAILED;
            }
            Ok(_) => say!("{}", t!("cli_release.backup_done")),
            Err(e) => {
                say!("{}", error(e.words().localized()));
                return EXIT_FAILED;
            }
        }
    }
    if args.yes {
        flow.confirm_unattended(Unattended::YesFlag);
    } else {
        let action = action_word(flow.plan().action);
        let _ = write!(
            out,
            "{}",
            t!("cli_release.type_name", host = host, action = action)
        );
        let _ = out.flush();
        let mut typed = String::new();
        if input.read_line(&mut typed).is_err() {
            typed.clear();
        }
        if let Err(e) = flow.confirm(&typed) {
            say!(
                "{}",
                t!("release.nothing_sent", error = e.words().localized())
            );
            return EXIT_CANCELLED;
        }
    }
    match flow.send(env.runner, &env.send, &env.store, &env.audit, (env.clock)()) {
        Ok(report) => {
            for answer in &report.answers {
                say!("{}", answer_line(answer));
            }
            for problem in &report.problems {
                say!("{}", t!("cli_release.warning", why = problem));
            }
            let action = action_word(flow.plan().action);
            say!(
                "{}",
                t!("release.sent_notice", host = host, action = action)
            );
            match &report.unrecorded {
                Some(unrecorded) => {
                    unrecorded
                        .lines(&host)
                        .iter()
                        .for_each(|line| say!("{line}"));
                    EXIT_FAILED
                }
                None => EXIT_OK,
            }
        }
        Err(FlowError::Send { failure, audit }) => {
            for answer in &failure.done {
                say!("{}", answer_line(answer));
            }
            let why = t!(
                "cli_release.host_error",
                host = host,
                why = failure.error.words().localized()
            );
            say!("{}", error(why.into_owned()));
            if let Some(why) = audit {
                say!("{}", t!("cli.audit_not_written", why = why));
            }
            EXIT_FAILED
        }
        Err(e) => {
            say!("{}", error(e.words().localized()));
            EXIT_FAILED
        }
    }
}

/// What the provider answered to one step: `  PUT https://...: 200 {"success": true}`.
fn answer_line(answer: &StepAnswer) -> String {
    match answer.status {
        Some(status) => t!(
            "cli_release.answer_status",
            step = answer.step,
            status = status,
            text = answer.text
        ),
        None => t!("cli_release.answer", step = answer.step, text = answer.text),
    }
    .into_owned()
}

/// The action in the reader's language: `stop` is 关机, `terminate` 释放.
fn action_word(action: ReleaseAction) -> String {
    action_words(action)
}
