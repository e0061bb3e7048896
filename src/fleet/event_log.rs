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
        HostEvent::Disconnected { reason, .. } => {
            tracing::warn!(host = name, reason = %reason, "disconnected")
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
        } => tracing::warn!(host = name, detail = %detail, "flooding"),
        HostEvent::Flooding { detail: None, .. } => {
            tracing::info!(host = name, "no longer flooding")
        }
        HostEvent::Notice { text, .. } => tracing::info!(host = name, notice = %text, "notice"),
        HostEvent::Kernel { line, .. } => tracing::debug!(host = name, line = %line, "kernel"),
        HostEvent::Evidence {
            command, output, ..
        } => tracing::info!(
            host = name,
            command = %command,
            lines = output.lines().count(),
            "evidence taken for the incident report"
        ),
        HostEvent::Jobs { jobs, .. } => tracing::debug!(host = name, jobs = jobs.len(), "jobs"),
        HostEvent::Disk { uses, .. } => tracing::debug!(host = name, paths = uses.len(), "disks"),
        HostEvent::Connecting { .. }
        | HostEvent::Sample { .. }
        | HostEvent::Processes { .. }
        | HostEvent::JobLog { .. } => {}
    }
}
