//! The console's side of `on_plateau = "stop-job"`: when a host's countdown for a job that
//! stopped learning ran out, the job is stopped ([`crate::job::stop`]: SIGINT, then SIGTERM
//! after its grace period) on a worker thread through the console's host runner, each signal an
//! audit line, and the outcome comes back as [`Event::JobStopped`]. Refused in `--read-only`
//! and without a state directory for the audit log.

use std::sync::Arc;
use std::thread::JoinHandle;

use rust_i18n::t;

use crate::app::event::{Event, EventSink};
use crate::audit::AuditLog;
use crate::job::stop::{StopJob, StopRun, Stopped};
use crate::release::HostRunner;
use crate::telemetry::source::now_ms;

/// What the console stops jobs with.
pub struct StopSetup<'a> {
    pub runner: &'a Arc<dyn HostRunner + Send + Sync>,
    pub audit: Option<AuditLog>,
    pub read_only: bool,
    pub sink: EventSink,
}

/// Starts stopping `stop` on `host`; the thread, when one started.
pub fn spawn(setup: StopSetup<'_>, host: String, stop: StopJob) -> Option<JoinHandle<()>> {
    let pid = stop.pid();
    let refused = |why: String| {
        let _ = setup.sink.send(Event::JobStopped {
            host: host.clone(),
            outcome: Err(t!("job_action.stop_failed", pid = pid, why = why).into_owned()),
        });
    };
    if setup.read_only {
        refused(t!("job_action.read_only").into_owned());
        return None;
    }
    let Some(audit) = setup.audit else {
        refused(t!("release.no_state").into_owned());
        return None;
    };
    let runner = Arc::clone(setup.runner);
    let sink = setup.sink.clone();
    let name = host.clone();
    let spawned = std::thread::Builder::new()
        .name(format!("stop-job-{host}"))
        .spawn(move || {
            let outcome = StopRun {
                runner: runner.as_ref(),
                audit: &audit,
                host: &name,
                now_ms: &now_ms,
                sleep: &std::thread::sleep,
            }
            .run(&stop);
            let outcome = match outcome {
                Ok(Stopped::ByInt) => {
                    Ok(t!("job_action.stopped_int", pid = pid, grace = stop.grace_s).into_owned())
                }
                Ok(Stopped::ByTerm) => {
                    Ok(t!("job_action.stopped_term", pid = pid, grace = stop.grace_s).into_owned())
                }
                Err(e) => Err(t!("job_action.stop_failed", pid = pid, why = e).into_owned()),
            };
            let _ = sink.send(Event::JobStopped {
                host: name,
                outcome,
            });
        });
    match spawned {
        Ok(handle) => Some(handle),
        Err(e) => {
            refused(e.to_string());
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Counts what it is asked to run; every command succeeds.
    #[derive(Default)]
    struct Counting(Mutex<Vec<String>>);

    impl HostRunner for Counting {
        fn run(
            &self,
            _host: &str,
            argv: &[String],
            _on_line: &mut dyn FnMut(&str),
        ) -> Result<Option<i32>, String> {
            if let Ok(mut ran) = self.0.lock() {
                ran.push(argv.join(" "));
            }
            // `kill -0`: the job is gone once signalled.
            Ok(Some(if argv.get(1).map(String::as_str) == Some("-0") {
                1
            } else {
                0
            }))
        }
    }

    fn stop(read_only: bool) -> (Result<String, String>, Vec<String>, String) {
        let dir = tempfile::tempdir().expect("temp");
        let audit = AuditLog::at(dir.path().join("audit.jsonl"));
        let counting = Arc::new(Counting::default());
        let runner: Arc<dyn HostRunner + Send + Sync> = counting.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        let setup = StopSetup {
            runner: &runner,
            audit: Some(audit.clone()),
            read_only,
            sink: tx,
        };
        if let Some(worker) = spawn(setup, "h1".into(), StopJob::new(4242, 5).expect("pid")) {
            let _ = worker.join();
        }
        let outcome = match rx.recv() {
            Ok(Event::JobStopped { outcome, .. }) => outcome,
            _ => Err("no answer".into()),
        };
        let ran = counting.0.lock().map(|r| r.clone()).unwrap_or_default();
        let lines = std::fs::read_to_string(audit.path()).unwrap_or_default();
        (outcome, ran, lines)
    }

    #[test]
    fn the_console_refuses_in_read_only_and_otherwise_stops_and_audits() {
        let (outcome, ran, audit) = stop(true);
        assert_eq!(
            outcome,
            Err("job 4242 could not be stopped: --read-only changes nothing on the hosts".into())
        );
        assert!(ran.is_empty() && audit.is_empty(), "{ran:?} {audit}");
        let (outcome, ran, audit) = stop(false);
        assert_eq!(
            outcome,
            Ok("job 4242 stopped: it ended after SIGINT".into())
        );
        assert_eq!(ran, ["kill -s INT 4242", "kill -0 4242"]);
        assert!(audit.contains("\"kind\":\"stop_job\""), "{audit}");
    }
}
