//! The log line each link change is worth (connected, disconnected and why, GPUs lost,
//! unresponsive, flooding, notices); samples and process lists are not. The watcher logs them
//! on stderr, the console in its log file: the same words from both drivers.

use crate::fleet::HostEvent;

/// Writes `event` of host `name` to the log (`tracing`), if it is worth a line.
pub fn log_host_event(name: &str, event: &HostEvent) {
    match event {
        HostEvent::Connected(info) => tracing::info!(
            host = name,
            driver = info.driver_version.as_deref().unwrap_or("?"),
            "connected"
        ),
        HostEvent::Boot { boot_id, .. } => {
            tracing::debug!(host = name, boot_id = %boot_id, "boot id")
        }
        HostEvent::HostKind { kind, .. } => {
            tracing::debug!(host = name, kind = kind.as_str(), "host kind")
        }
        HostEvent::Disconnected { reason, .. } => {
            tracing::warn!(host = name, reason = ?reason, "disconnected")
        }
        HostEvent::Lost { reason, .. } => {
            tracing::error!(host = name, reason = reason.label(), "GPUs lost")
        }
        HostEvent::Unresponsive { silent_ms, .. } => {
            tracing::warn!(host = name, silent_ms, "unresponsive")
        }
        HostEvent::Responsive { .. } => tracing::info!(host = name, "responsive again"),
        HostEvent::Flooding {
            detail: Some(detail),
            ..
        } => tracing::warn!(host = name, detail = ?detail, "flooding"),
        HostEvent::Flooding { detail: None, .. } => {
            tracing::info!(host = name, "no longer flooding")
        }
        HostEvent::Notice { text, .. } => {
            tracing::info!(host = name, notice = ?text.to_string(), "notice")
        }
        HostEvent::Kernel { line, .. } => tracing::debug!(host = name, line = ?line, "kernel"),
        HostEvent::Evidence {
            command, output, ..
        } => tracing::info!(
            host = name,
            command = ?command,
            lines = output.lines().count(),
            "evidence taken for the incident report"
        ),
        HostEvent::Jobs { jobs, .. } => tracing::debug!(host = name, jobs = jobs.len(), "jobs"),
        HostEvent::Disk { uses, .. } => tracing::debug!(host = name, paths = uses.len(), "disks"),
        HostEvent::DeadMan { state, .. } => tracing::info!(
            host = name,
            armed = state.armed,
            deadline_ms = state.deadline_ms,
            why = state.why_not.as_ref().map(|w| w.english()),
            "dead-man switch"
        ),
        HostEvent::Connecting { .. }
        | HostEvent::Sample { .. }
        | HostEvent::Processes { .. }
        | HostEvent::JobLog { .. } => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// What the log says of `event`, through the same `tracing` formatter the watcher and the
    /// console use (no colour, no target, everything from trace up).
    fn logged(event: &HostEvent) -> String {
        let out = Arc::new(Mutex::new(Vec::<u8>::new()));
        let sink = Arc::clone(&out);
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || Writer(Arc::clone(&sink)))
            .with_ansi(false)
            .with_target(false)
            .with_max_level(tracing::Level::TRACE)
            .finish();
        tracing::subscriber::with_default(subscriber, || log_host_event("h100-a", event));
        let bytes = out.lock().map(|b| b.clone()).unwrap_or_default();
        String::from_utf8_lossy(&bytes).into_owned()
    }

    struct Writer(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Writer {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if let Ok(mut out) = self.0.lock() {
                out.extend_from_slice(buf);
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn host_text_in_a_log_line_is_quoted_and_cannot_forge_fields() {
        // A kernel line a user on the host can write (`logger`, `/dev/kmsg`) that reads like
        // the log's own fields.
        let forged = r#"NVRM: Xid 79 host="other-host" user_id="all" level=ERROR"#;
        let kernel = logged(&HostEvent::Kernel {
            at_ms: 1,
            line: forged.to_string(),
        });
        assert!(
            kernel
                .contains(r#"line="NVRM: Xid 79 host=\"other-host\" user_id=\"all\" level=ERROR""#),
            "{kernel}"
        );
        assert_eq!(
            kernel.matches("host=\"").count(),
            1,
            "one host field: {kernel}"
        );
        let notice = logged(&HostEvent::Notice {
            at_ms: 1,
            text: crate::words::Words::Verbatim(format!("{forged}\nforged=1")),
        });
        assert!(
            notice.contains(r#"notice="NVRM: Xid 79 host=\"other-host\""#)
                && notice.contains(r#"level=ERROR\nforged=1""#),
            "{notice}"
        );
        assert_eq!(notice.lines().count(), 1, "one line: {notice}");
        let down = logged(&HostEvent::Disconnected {
            at_ms: 1,
            reason: "ssh: banner said x=\"1\"".to_string(),
            summary: String::new(),
            retry_at_ms: None,
            words: None,
        });
        assert!(
            down.contains(r#"reason="ssh: banner said x=\"1\"""#),
            "{down}"
        );
    }
}
