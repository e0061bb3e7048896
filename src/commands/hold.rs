//! `gpufleet hold HOST`: cancels HOST's auto-release countdown from any shell. The request is
//! left in the state directory for whichever gpufleet counts the host down (console or
//! watcher), which takes it within a second; it is written to the audit log.

use rust_i18n::t;
use std::io::Write;

use crate::audit::{AuditEntry, AuditKind, AuditLog};
use crate::config::Config;
use crate::cost::HoldStore;
use crate::telemetry::source::now_ms;

pub const EXIT_HELD: u8 = 0;
pub const EXIT_REFUSED: u8 = 2;

/// Records the hold; one line for the user on `out`. Returns an exit status.
pub fn run(config: &Config, host: &str, out: &mut dyn Write) -> u8 {
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
    if !configured.auto_release && !acts_on_plateau {
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
    if let Err(e) = AuditLog::open_default()
        .map_err(|e| e.to_string())
        .and_then(|log| log.append(&entry).map_err(|e| e.to_string()))
    {
        let _ = writeln!(out, "{}", t!("cli.audit_not_written", why = e));
    }
    let _ = writeln!(out, "{}", t!("cli.hold_recorded", host = host));
    EXIT_HELD
}
