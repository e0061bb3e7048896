//! `gpufleet audit [--json] [--limit N]`: read the audit log (every action taken on a host:
//! runbook steps, backups, releases, holds, host keys accepted), oldest first.

use std::io::Write;

use rust_i18n::t;
use serde_json::json;

use crate::audit::{AuditEntry, AuditLog};

/// The log was read (an empty or missing log included).
pub const EXIT_OK: u8 = 0;
/// No state directory, or the log cannot be read or has a damaged line.
pub const EXIT_UNREADABLE: u8 = 2;

/// Prints the newest `limit` entries (all without one) as text or JSON.
pub fn run(
    log: &AuditLog,
    json: bool,
    limit: Option<usize>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    let entries = match log.read_all() {
        Ok(entries) => entries,
        Err(e) => {
            let _ = writeln!(err, "{}", t!("oneshot.audit_unreadable", why = e));
            return EXIT_UNREADABLE;
        }
    };
    let skip = limit.map_or(0, |n| entries.len().saturating_sub(n));
    let shown = &entries[skip..];
    if json {
        let doc = json!({
            "path": log.path().display().to_string(),
            "total": entries.len(),
            "entries": shown,
        });
        let _ = writeln!(out, "{doc:#}");
    } else if entries.is_empty() {
        let _ = writeln!(
            out,
            "{}",
            t!("oneshot.audit_empty", path = log.path().display())
        );
    } else {
        for entry in shown {
            let _ = writeln!(out, "{}", line(entry));
        }
    }
    EXIT_OK
}

/// One entry as a line: time, host, kind, outcome, where it came from, the command.
fn line(entry: &AuditEntry) -> String {
    let clean = crate::remote::sanitize;
    let kind = serde_json::to_value(entry.kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let mut text = format!(
        "{}  {}  {kind}  {}",
        crate::utc::rfc3339(entry.at_ms),
        clean(&entry.host),
        clean(&entry.outcome)
    );
    if let Some(status) = entry.exit_status {
        text.push_str(&format!(" ({})", t!("oneshot.exit", status = status)));
    }
    if entry.dry_run && entry.outcome != "dry_run" {
        text.push_str(&format!(" ({})", t!("oneshot.dry_run")));
    }
    match (&entry.runbook, &entry.step) {
        (Some(runbook), Some(step)) => {
            text.push_str(&format!("  {}/{}", clean(runbook), clean(step)));
        }
        (Some(runbook), None) => text.push_str(&format!("  {}", clean(runbook))),
        _ => {}
    }
    text.push_str(&format!("  {}", clean(&entry.command)));
    text
}
