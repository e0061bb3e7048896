//! `gpufleet alert test [SINK]`: one test message to each sink (or the one named), waiting for
//! each answer, so a user knows before the night that matters whether alerts get through.

use std::io::Write;
use std::time::Duration;

use rust_i18n::t;

use crate::config::Config;
use crate::diagnose::Severity;
use crate::telemetry::TimestampMs;

use super::deliver::{Clock, DeliveryOptions, Dispatcher, Reporter};
use super::message::{Alert, AlertState, Money};
use super::sink::Sink;

/// Every sink delivered.
pub const EXIT_DELIVERED: u8 = 0;
/// A sink refused or could not be reached.
pub const EXIT_UNDELIVERED: u8 = 1;
/// No such sink, no sinks, or a sink's secret is missing.
pub const EXIT_BAD_SETUP: u8 = 2;

/// How long the test waits for all answers (two tries each, a 10 s timeout per try).
const WAIT: Duration = Duration::from_secs(25);

/// Sends the test alert; writes one line per sink to `out`. Returns an `EXIT_` code.
pub fn test_sinks(
    config: &Config,
    only: Option<&str>,
    env: &dyn Fn(&str) -> Option<String>,
    clock: Clock,
    out: &mut dyn Write,
) -> u8 {
    let chosen: Vec<_> = config
        .alerts
        .iter()
        .filter(|sink| only.is_none_or(|name| sink.display_name() == name))
        .collect();
    if chosen.is_empty() {
        let _ = match only {
            Some(name) => writeln!(
                out,
                "{}",
                t!("alert_text.test_no_sink_named", name = format!("{name:?}"))
            ),
            None => writeln!(out, "{}", t!("alert_text.test_no_sinks")),
        };
        return EXIT_BAD_SETUP;
    }
    let mut sinks = Vec::new();
    for config in chosen {
        match Sink::load(config, env) {
            Ok(sink) => {
                for warning in &sink.warnings {
                    let _ = writeln!(out, "{}", t!("alert_text.test_warning", warning = warning));
                }
                sinks.push(sink);
            }
            Err(e) => {
                let _ = writeln!(out, "{}", t!("alert_text.test_failed", why = e));
                return EXIT_BAD_SETUP;
            }
        }
    }
    let names: Vec<String> = sinks.iter().map(|s| s.name.clone()).collect();
    let options = DeliveryOptions {
        max_attempts: 2,
        ..DeliveryOptions::default()
    };
    let reporter: Reporter = std::sync::Arc::new(|_| {});
    let dispatcher = Dispatcher::start(sinks, options, clock, reporter);
    let alert = test_alert(clock());
    for name in &names {
        dispatcher.send_to(name, &alert);
    }
    let (statuses, _) = dispatcher.finish(WAIT);
    let mut code = EXIT_DELIVERED;
    for (name, status) in statuses {
        if status.delivered > 0 {
            let _ = writeln!(out, "{}", t!("alert_text.test_delivered", name = name));
        } else {
            code = EXIT_UNDELIVERED;
            let why = status.last_error.unwrap_or_else(|| {
                t!("alert_text.test_no_answer", s = WAIT.as_secs()).into_owned()
            });
            let _ = writeln!(
                out,
                "{}",
                t!("alert_text.test_not_delivered", name = name, why = why)
            );
        }
    }
    code
}

fn test_alert(at_ms: TimestampMs) -> Alert {
    Alert {
        host: "gpufleet".to_string(),
        gpu: None,
        label: "test".to_string(),
        severity: Severity::Info,
        summary: t!("alert_text.test_summary").into_owned(),
        runbook: None,
        money: Money::default(),
        state: AlertState::Firing,
        at_ms,
    }
}
