//! One-shot subcommands on the demo fleet (`cost`, `check`, `release`, `runbook` with
//! `--demo`): the simulator run forward to a moment of the scenario, then the same commands as
//! for real hosts, against simulated hosts and a simulated provider. Nothing touches the
//! network, DNS or the user's state directory; everything printed says it is simulated.

use rust_i18n::t;
use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex};

use crate::check::sim_runner::SimCheckRunner;
use crate::check::{self, CheckProgress, CheckTarget, ExpectFlags};
use crate::cli::{AlertAction, Cli, CliCommand, GlobalArgs};
use crate::commands::money::{self, MoneyEnv, MoneyError, ReleaseArgs};
use crate::config::Config;
use crate::demo::{self, PREVIEW_MS, Scratch, SimHostRunner};
use crate::fleet::Fleet;
use crate::launch;
use crate::release::SendOptions;
use crate::telemetry::TimestampMs;
use crate::telemetry::sim::{self, SharedSim, Simulator};
use crate::telemetry::source::{StopFlag, now_ms};

#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    #[error("--speed {0}")]
    BadSpeed(String),
    #[error("{}", unknown_host(.0, .1))]
    UnknownHost(String, String),
    #[error("{}", t!("demo.scratch", why = .0))]
    Scratch(#[from] std::io::Error),
    #[error(transparent)]
    Money(#[from] MoneyError),
}

fn unknown_host(host: &str, hosts: &str) -> String {
    let host = format!("{host:?}");
    t!("demo.unknown_host", host = host, hosts = hosts).into_owned()
}

/// The demo fleet run forward: the simulator, and the fleet as the console would show it.
pub struct Preview {
    pub sim: SharedSim,
    pub fleet: Fleet,
    /// Where the scenario is now (ms since its start).
    pub scenario_ms: u64,
    /// The simulated clock now; the demo started `scenario_ms` before it.
    pub now_ms: TimestampMs,
}

/// The demo fleet `scenario_ms` into its scenario, the scenario having started that long ago,
/// so the simulated clock reads the wall clock's time now.
pub fn preview(config: &Config, args: &GlobalArgs, scenario_ms: u64) -> Result<Preview, DemoError> {
    sim::check_speed(args.speed).map_err(DemoError::BadSpeed)?;
    let sim: SharedSim = Arc::new(Mutex::new(Simulator::demo(args.seed)));
    let now = now_ms();
    let started_ms = now.saturating_sub(scenario_ms);
    let mut options = launch::fleet_options(config, args);
    options.money = demo::money_options(config, started_ms);
    let names = sim::lock(&sim).host_names();
    let mut fleet = Fleet::new(names, options, started_ms);
    demo::run_forward(&sim, &mut fleet, started_ms, scenario_ms);
    Ok(Preview {
        sim,
        fleet,
        scenario_ms,
        now_ms: now,
    })
}

/// The demo host called `name`, or why there is none.
fn demo_host(sim: &SharedSim, name: &str) -> Result<String, DemoError> {
    let names = sim::lock(sim).host_names();
    if names.iter().any(|n| n == name) {
        Ok(name.to_string())
    } else {
        Err(DemoError::UnknownHost(name.to_string(), names.join(", ")))
    }
}

/// `gpufleet cost --demo [--json]`: the simulated fleet's ledgers, costs and red lines
/// [`PREVIEW_MS`] into the demo.
pub fn cost(config: &Config, args: &GlobalArgs, json: bool) -> Result<(String, u8), DemoError> {
    let preview = preview(config, args, PREVIEW_MS)?;
    let money = &preview.fleet.money;
    Ok(money::cost_output(
        &money.fleet,
        &money.red_lines,
        json,
        preview.now_ms,
        Some(preview.scenario_ms),
    )?)
}

/// `gpufleet cost --advice --demo [--json]`: the billing-mode advice on the demo fleet's own
/// ledgers and prices [`PREVIEW_MS`] into the demo (never the user's ledger or hosts). The
/// demo's history is that short, so the text says so: hourly billing wins, and the break-even
/// hours show when a day, a week or a month would pay.
pub fn cost_advice(
    config: &Config,
    args: &GlobalArgs,
    json: bool,
) -> Result<(String, u8), DemoError> {
    let preview = preview(config, args, PREVIEW_MS)?;
    let book = preview.fleet.money.book();
    let hosts = demo::demo_config(config);
    let (text, code) =
        crate::commands::cost_advice::advice_report(&hosts, &book, json, preview.now_ms)?;
    if json {
        return Ok((text, code));
    }
    let note = t!(
        "demo_advice.note",
        time = crate::cost::format_duration_ms(preview.scenario_ms)
    );
    Ok((format!("{note}\n{text}"), code))
}

/// `gpufleet release NAME --demo ...`: the release flow against the simulated provider, with
/// the demo host's simulated ledger; the ledger and audit records go to a scratch directory
/// that is removed on exit.
pub fn release(
    config: &Config,
    global: &GlobalArgs,
    args: &ReleaseArgs,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> Result<u8, DemoError> {
    let preview = preview(config, global, PREVIEW_MS)?;
    demo_host(&preview.sim, &args.host)?;
    let scratch = Scratch::new()?;
    let store = scratch.store();
    store
        .save(&preview.fleet.money.book())
        .map_err(MoneyError::from)?;
    let runner = SimHostRunner {
        sim: Arc::clone(&preview.sim),
    };
    let env = MoneyEnv {
        store,
        audit: scratch.audit(),
        runner: &runner,
        send: SendOptions::default(),
        env: &demo::demo_env,
        clock: &now_ms,
        simulated: true,
    };
    let code = money::release_command(&demo::demo_config(config), args, &env, input, out);
    // `--dry-run --json` prints one JSON document (its `simulated` says it); text says it here.
    if !args.json {
        let _ = writeln!(out, "{}", t!("demo.nothing_sent"));
    }
    Ok(code)
}

/// Where `runbook run/undo --demo --host NAME` runs: the demo host [`PREVIEW_MS`] into the
/// scenario (flaky-h200's GPU has fallen off the bus by then), with a scratch directory for the
/// audit log and undo records.
pub fn runbook_target(
    config: &Config,
    args: &GlobalArgs,
    host: Option<&str>,
    out: &mut dyn Write,
) -> anyhow::Result<(crate::runbook::Target, Scratch)> {
    let Some(host) = host else {
        anyhow::bail!("{}", t!("demo.name_a_host"));
    };
    let preview = preview(config, args, PREVIEW_MS)?;
    let host = demo_host(&preview.sim, host)?;
    let into = crate::cost::format_duration_ms(preview.scenario_ms);
    writeln!(
        out,
        "{}",
        t!("demo.playbook_host", host = host, into = into)
    )?;
    Ok((
        crate::runbook::Target::Simulated {
            sim: preview.sim,
            host,
        },
        Scratch::new()?,
    ))
}

/// `gpufleet check --demo [NAME]`: the acceptance check on a simulated host as it is when
/// rented (the scenario's start), with the facts the simulator gives; the report is not kept.
pub fn check(
    args: &GlobalArgs,
    name: Option<&str>,
    flags: &ExpectFlags,
    sustain_s: f64,
    json: bool,
) -> u8 {
    let could_not_run = |message: String| {
        eprintln!("gpufleet check: {message}");
        check::EXIT_COULD_NOT_RUN
    };
    if let Err(e) = sim::check_speed(args.speed) {
        return could_not_run(format!("--speed {e}"));
    }
    let sim: SharedSim = Arc::new(Mutex::new(Simulator::demo(args.seed)));
    let host = name.unwrap_or(demo::CHECK_HOST);
    let host = match demo_host(&sim, host) {
        Ok(host) => host,
        Err(e) => return could_not_run(e.to_string()),
    };
    let runner = match SimCheckRunner::new(Arc::clone(&sim), &host, args.speed) {
        Ok(runner) => runner,
        Err(why) => return could_not_run(why),
    };
    let expect = match check::expect_from_flags(flags, None) {
        Ok(expect) => expect,
        Err(e) => return could_not_run(e.to_string()),
    };
    let opts = check::CheckOptions {
        sustain_s,
        ..check::CheckOptions::default()
    };
    eprintln!("{}", t!("demo.checking", host = host));
    let mut progress = |p: CheckProgress| {
        eprintln!("{}", p.line());
    };
    let target = CheckTarget::Simulated(runner);
    let report = match check::run_check(target, &expect, &opts, &mut progress, &StopFlag::default())
    {
        Ok(report) => report,
        Err(e) => return could_not_run(e.words().localized()),
    };
    if json {
        crate::outln!("{}", check::render_json(&report));
    } else {
        crate::outln!("{}", t!("demo.check_head", host = host));
        crate::out!("{}", check::render_text(&report, None));
    }
    check::exit_code(&report)
}

/// The console's runbook and check targets for the demo fleet, in host order, on the running
/// simulator `sim` (whose clock runs `speed` times the wall clock).
pub fn ops_fleet(sim: &SharedSim, speed: f64) -> crate::app::ops_bridge::OpsFleet {
    let names = sim::lock(sim).host_names();
    crate::app::ops_bridge::OpsFleet::Simulated {
        runbooks: names
            .iter()
            .map(|host| crate::runbook::Target::Simulated {
                sim: Arc::clone(sim),
                host: host.clone(),
            })
            .collect(),
        checks: names
            .iter()
            .map(|host| {
                SimCheckRunner::new(Arc::clone(sim), host, speed).map(CheckTarget::Simulated)
            })
            .collect(),
    }
}

/// Why a subcommand has no demo: each acts on the real fleet's outside world or state (alert
/// sinks on the network, auto-release holds, the real audit log), which `--demo` never touches.
pub fn refusal(cli: &Cli) -> Option<String> {
    if !cli.global.demo {
        return None;
    }
    match &cli.command {
        Some(CliCommand::Alert {
            action: AlertAction::Test { .. },
        }) => Some(t!("demo.refuse_alert_test")),
        Some(CliCommand::Hold { .. }) => Some(t!("demo.refuse_hold")),
        Some(CliCommand::Audit { .. }) => Some(t!("demo.refuse_audit")),
        _ => None,
    }
    .map(|text| text.into_owned())
}
