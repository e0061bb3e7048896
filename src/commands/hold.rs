//! `gpufleet hold HOST`: cancels HOST's auto-release countdown from any shell. The request is
//! left in the state directory for whichever gpufleet counts the host down (console or
//! watcher), which takes it within a second; it is written to the audit log. Where the host
//! has a dead-man switch (`[hosts.dead_man]`), its deadline is pushed `--hours` ahead over SSH
//! (arming it if need be); `--disarm` stops the switch and removes its files instead.

use rust_i18n::t;
use std::io::Write;

use crate::audit::{AuditEntry, AuditKind, AuditLog};
use crate::config::{Config, HostConfig};
use crate::cost::HoldStore;
use crate::fleet::dead_man::NotArmed;
use crate::release::HostRunner;
use crate::remote::{DeadManAnswer, DeadManStep, dead_man_command, read_dead_man_answer};
use crate::telemetry::source::now_ms;

pub const EXIT_HELD: u8 = 0;
pub const EXIT_REFUSED: u8 = 2;

/// What `gpufleet hold` was asked beyond the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// How far ahead the dead-man switch is pushed.
    pub hours: u32,
    /// Disarm the switch instead.
    pub disarm: bool,
}

/// Records the hold and pushes (or disarms) the dead-man switch through `runner`; a line for
/// the user on `out` for each, and one in the audit log of the state directory. Returns an exit
/// status.
pub fn run(
    config: &Config,
    host: &str,
    request: Request,
    runner: &dyn HostRunner,
    out: &mut dyn Write,
) -> u8 {
    let audit = AuditLog::open_default().map_err(|e| e.to_string());
    run_logged(config, host, request, runner, &audit, out)
}

/// [`run`], writing to `audit` (or saying why it cannot).
pub fn run_logged(
    config: &Config,
    host: &str,
    request: Request,
    runner: &dyn HostRunner,
    audit: &Result<AuditLog, String>,
    out: &mut dyn Write,
) -> u8 {
    let Some(configured) = config.host(host) else {
        let host = format!("{host:?}");
        let _ = writeln!(
            out,
            "gpufleet hold: {}",
            t!("cli.no_host_named", host = host)
        );
        return EXIT_REFUSED;
    };
    let acts_on_plateau = configured
        .jobs
        .iter()
        .any(|job| job.on_plateau.is_some_and(|a| a.acts()));
    if request.disarm {
        let switch = Switch {
            step: DeadManStep::Disarm,
            shown: format!("gpufleet hold {host} --disarm"),
        };
        return dead_man(configured, &switch, runner, audit, out);
    }
    let pushed = configured.dead_man.is_some().then(|| {
        let switch = Switch {
            step: DeadManStep::Arm {
                after_s: u64::from(request.hours) * 3_600,
            },
            shown: format!("gpufleet hold {host} --hours {}", request.hours),
        };
        dead_man(configured, &switch, runner, audit, out)
    });
    if !configured.auto_release && !acts_on_plateau {
        if let Some(code) = pushed {
            return code;
        }
        let _ = writeln!(
            out,
            "gpufleet hold: {}",
            t!("cli.hold_no_auto_release", host = host)
        );
        return EXIT_REFUSED;
    }
    let at_ms = now_ms();
    let recorded = HoldStore::open_default()
        .map_err(|e| e.to_string())
        .and_then(|store| store.hold(host, at_ms).map_err(|e| e.to_string()));
    if let Err(e) = recorded {
        let _ = writeln!(out, "gpufleet hold: {e}");
        return EXIT_REFUSED;
    }
    let entry = AuditEntry {
        at_ms,
        host: host.to_string(),
        kind: AuditKind::AutoReleaseHold,
        command: format!("gpufleet hold {host}"),
        outcome: "requested".to_string(),
        exit_status: None,
        runbook: None,
        step: None,
        dry_run: false,
        simulated: false,
    };
    append(audit, &entry, out);
    let _ = writeln!(out, "{}", t!("cli.hold_recorded", host = host));
    pushed.unwrap_or(EXIT_HELD)
}

/// Appends `entry`, or says on `out` why it could not be.
fn append(audit: &Result<AuditLog, String>, entry: &AuditEntry, out: &mut dyn Write) {
    let written = match audit {
        Ok(log) => log.append(entry).map_err(|e| e.to_string()),
        Err(why) => Err(why.clone()),
    };
    if let Err(e) = written {
        let _ = writeln!(out, "{}", t!("cli.audit_not_written", why = e));
    }
}

/// A step of the switch and the command line the audit log names it by.
struct Switch {
    step: DeadManStep,
    shown: String,
}

/// Runs the step of the host's switch on it; one line on `out` says how it went, one line of
/// the audit log records it.
fn dead_man(
    host: &HostConfig,
    switch: &Switch,
    runner: &dyn HostRunner,
    audit: &Result<AuditLog, String>,
    out: &mut dyn Write,
) -> u8 {
    let (code, outcome, status) = run_switch(host, switch.step, runner, out);
    let entry = AuditEntry {
        at_ms: now_ms(),
        host: host.name.clone(),
        kind: AuditKind::DeadMan,
        command: switch.shown.clone(),
        outcome: outcome.to_string(),
        exit_status: status,
        runbook: None,
        step: None,
        dry_run: false,
        simulated: false,
    };
    append(audit, &entry, out);
    code
}

/// Runs `step` on the host: the exit code, the audit outcome and the run's exit status.
fn run_switch(
    host: &HostConfig,
    step: DeadManStep,
    runner: &dyn HostRunner,
    out: &mut dyn Write,
) -> (u8, &'static str, Option<i32>) {
    let name = host.name.as_str();
    let plan = host.dead_man_plan();
    let failed = |out: &mut dyn Write, why: String| {
        let _ = writeln!(
            out,
            "gpufleet hold: {}",
            t!("dead_man.hold_failed", host = name, why = why)
        );
        EXIT_REFUSED
    };
    let command = match dead_man_command(step, plan.as_ref()) {
        Ok(command) => command,
        Err(e) => {
            let why = NotArmed::BadCommand(e.words()).words().localized();
            return (failed(out, why), "refused", None);
        }
    };
    let mut lines = Vec::new();
    let status = runner.run(name, &command.argv(), &mut |line| {
        if lines.len() < 8 {
            lines.push(line.to_string());
        }
    });
    let status = match status {
        Ok(status) => status,
        Err(why) => return (failed(out, why), "failed", None),
    };
    match read_dead_man_answer(&lines, status) {
        DeadManAnswer::Armed {
            deadline_s, now_s, ..
        } => {
            let at_ms = now_ms().saturating_add(deadline_s.saturating_sub(now_s) * 1_000);
            let (_, _, _, h, m, _, _) = crate::utc::utc_parts(at_ms);
            let time = format!("{h:02}:{m:02}");
            let _ = writeln!(
                out,
                "{}",
                t!("dead_man.hold_pushed", host = name, time = time)
            );
            (EXIT_HELD, "ok", status)
        }
        DeadManAnswer::Disarmed => {
            let _ = writeln!(out, "{}", t!("dead_man.hold_disarmed", host = name));
            (EXIT_HELD, "ok", status)
        }
        DeadManAnswer::NotArmed(why) => (failed(out, why.words().localized()), "failed", status),
    }
}
