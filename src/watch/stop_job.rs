//! `on_plateau = "stop-job"` from the watcher: the job that stopped learning is sent SIGINT, then
//! SIGTERM after its grace period if it still runs ([`crate::job::stop`]), on a thread of its
//! own so monitoring never waits for it; each signal is an audit line. The outcome comes back
//! to the loop as an [`Input::JobStopped`](super::Input), logged in English and alerted in the
//! reader's language (`job_stopped`, or `job_stop_failed`). [`act`] starts what a countdown
//! that ran out asks for, this or a release.

use std::sync::mpsc::Sender;

use crate::alerts::Dispatcher;
use crate::diagnose::Severity;
use crate::fleet::{Fleet, FleetCommand};
use crate::host_runner::SshRunner;
use crate::job::stop::{StopJob, StopRun, StopSignal, Stopped};
use crate::telemetry::source::now_ms;
use crate::words::Words;

use super::Input;
use super::release::ReleaseSetup;

/// The alert's label once the job was stopped.
pub const STOPPED: &str = "job_stopped";
/// The alert's label when it could not be.
pub const FAILED: &str = "job_stop_failed";

/// What a countdown that ran out asks for: `host` released, or its job stopped, on a worker
/// thread whose outcome goes to `done`.
pub fn act(fleet: &Fleet, due: FleetCommand, setup: ReleaseSetup, done: &Sender<Input>) {
    let (FleetCommand::AutoRelease { host } | FleetCommand::StopJob { host, .. }) = due else {
        return;
    };
    let name = fleet
        .hosts
        .get(host)
        .map_or_else(String::new, |h| h.name.clone());
    if let FleetCommand::StopJob { stop, .. } = due {
        tracing::warn!(
            host = %name,
            pid = stop.pid(),
            int = %stop.signal(StopSignal::Int).join(" "),
            grace_s = stop.grace_s,
            term = %stop.signal(StopSignal::Term).join(" "),
            "stop-job: stopping the job now"
        );
        spawn(setup, name, stop, done.clone());
        return;
    }
    let cost = fleet.money.cost(host).cloned();
    tracing::warn!(host = %name, "auto-release: releasing now");
    super::release::spawn(setup, name, cost, done.clone());
}

/// Starts stopping `stop` on `host` on a worker thread; its outcome goes to `done`.
pub fn spawn(setup: ReleaseSetup, host: String, stop: StopJob, done: Sender<Input>) {
    let reported = done.clone();
    let failed_host = host.clone();
    let spawned = std::thread::Builder::new()
        .name(format!("stop-job-{host}"))
        .spawn(move || {
            let outcome = run(&setup, &host, &stop);
            let _ = done.send(Input::JobStopped { host, outcome });
        });
    if let Err(e) = spawned {
        let why = e.to_string();
        let _ = reported.send(Input::JobStopped {
            host: failed_host,
            outcome: Err(Words::new("watch_release.no_thread").put("why", why)),
        });
    }
}

/// The stop itself; `Ok` says how the job ended. Either is one message: logged in English,
/// alerted in the reader's language.
fn run(setup: &ReleaseSetup, host: &str, stop: &StopJob) -> Result<Words, Words> {
    let runner = SshRunner {
        ssh: &setup.ssh,
        config: &setup.config,
        interval_ms: setup.interval_ms,
    };
    let pid = stop.pid();
    let outcome = StopRun {
        runner: &runner,
        audit: &setup.audit,
        host,
        now_ms: &now_ms,
        sleep: &std::thread::sleep,
    }
    .run(stop);
    match outcome {
        Ok(how) => Ok(Words::new(match how {
            Stopped::ByInt => "job_action.stopped_int",
            Stopped::ByTerm => "job_action.stopped_term",
        })
        .put("pid", pid.to_string())
        .put("grace", stop.grace_s.to_string())),
        Err(e) => Err(Words::new("job_action.stop_failed")
            .put("pid", pid.to_string())
            .put_words("why", e.words())),
    }
}

/// A stop ended: logged and alerted.
pub fn stopped(fleet: &Fleet, alerts: &Dispatcher, host: &str, outcome: Result<Words, Words>) {
    let (label, severity, summary) = match outcome {
        Ok(said) => {
            tracing::warn!(host, outcome = ?said.english(), "stop-job done");
            (STOPPED, Severity::Warning, said.localized())
        }
        Err(said) => {
            tracing::error!(host, why = ?said.english(), "stop-job failed");
            (FAILED, Severity::Critical, said.localized())
        }
    };
    super::alert_once(fleet, alerts, host, label, severity, summary);
}
