//! What a host's jobs ask of the money tick: the live job whose log says it stopped
//! learning, which `[[hosts.jobs]] on_plateau = "stop-job" | "release"` acts on through the
//! host's auto-release countdown (the same countdown, hold and audit log), and the per-job run
//! limit (`[[hosts.jobs]] max_run_hours`) as a red line, judged on the process's own age.

use crate::config::{JobConfig, OnPlateau};
use crate::cost::RedLine;
use crate::fleet::host::HostState;
use crate::job::JobState;
use crate::job::stop::StopJob;
use crate::telemetry::TimestampMs;

/// What a host's countdown is for while one of its jobs stopped learning and `on_plateau`
/// asks for more than an alert.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlateauAct {
    /// `StopJob` or `Release`.
    pub action: OnPlateau,
    /// The job's process, stopped by `stop-job`.
    pub stop: StopJob,
}

impl PlateauAct {
    /// The act on `host`'s job that stopped learning, when `on_plateau` asks for one.
    pub fn of(host: &HostState, action: OnPlateau, grace_s: u64) -> Option<Self> {
        if !action.acts() {
            return None;
        }
        let pid = stopped_learning(host)?;
        let stop = StopJob::new(pid, grace_s).ok()?;
        Some(Self { action, stop })
    }

    /// What the countdown announces: the job, and for `stop-job` the exact commands.
    pub fn message(&self) -> String {
        match self.action {
            OnPlateau::StopJob => rust_i18n::t!(
                "job_action.why_stop",
                pid = self.stop.pid(),
                commands = self.stop.shown()
            ),
            _ => rust_i18n::t!("job_action.why_release", pid = self.stop.pid()),
        }
        .into_owned()
    }
}

/// The PID of the first live job whose log says it stopped learning (a plateau or overfitting)
/// while the run goes on: a run that completed or crashed is `job_finished`, not acted on.
pub fn stopped_learning(host: &HostState) -> Option<u32> {
    host.jobs
        .iter()
        .filter(|job| job.alive())
        .find(|job| {
            job.report.as_ref().is_some_and(|r| {
                r.state == JobState::Running
                    && (r.judgement.plateau.is_some() || r.judgement.overfit.is_some())
            })
        })
        .map(|job| job.process.pid)
}

/// The live jobs of every host that have run longer than their host's `[[hosts.jobs]]
/// max_run_hours` (the process's age, as the host's `ps` gave it).
pub fn job_red_lines(
    hosts: &[HostState],
    configs: &[(String, JobConfig)],
    now_ms: TimestampMs,
) -> Vec<RedLine> {
    let mut lines = Vec::new();
    for host in hosts.iter().filter(|h| !h.retired) {
        let Some(max_run_hours) = configs
            .iter()
            .find(|(name, _)| *name == host.name)
            .and_then(|(_, config)| config.max_run_hours)
        else {
            continue;
        };
        for job in host.jobs.iter().filter(|j| j.alive()) {
            let Some(run_s) = job.run_s(now_ms) else {
                continue;
            };
            if run_s as f64 / 3_600.0 >= max_run_hours {
                lines.push(RedLine::JobOverRunTime {
                    host: host.name.clone(),
                    pid: job.process.pid,
                    run_ms: run_s.saturating_mul(1_000),
                    max_run_hours,
                });
            }
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::job::JobProcess;

    const NOW_MS: TimestampMs = 1_795_939_200_000;

    fn host_with_job(elapsed_s: u64, log: &str) -> HostState {
        let shape = crate::fleet::FleetOptions::default().history_shape();
        let mut host = HostState::new("h1", shape);
        let process = JobProcess {
            pid: 4242,
            user: Some("u".into()),
            elapsed_s: Some(elapsed_s),
            cpu_s: None,
            command: "python3 train.py".into(),
            log: Some("stdout: /tmp/train.log".into()),
            found: Default::default(),
            devices: Vec::new(),
            gpus: Vec::new(),
        };
        host.jobs.listed(NOW_MS, vec![process]);
        if !log.is_empty() {
            let path = format!(
                "{}/tests/fixtures/training-logs/{log}",
                env!("CARGO_MANIFEST_DIR")
            );
            let text = String::from_utf8_lossy(&std::fs::read(path).expect("fixture")).into_owned();
            // The run as it goes on: its log before the `Trainer`'s closing summary.
            let running = text.split("{'train_runtime'").next().unwrap_or_default();
            host.jobs.log(4242, true, running);
        }
        host
    }

    fn job_limit(hours: f64) -> Vec<(String, JobConfig)> {
        let config: JobConfig =
            toml::from_str(&format!("max_run_hours = {hours}")).expect("a job table");
        vec![("h1".to_string(), config)]
    }

    #[test]
    fn a_job_running_past_its_max_run_hours_is_a_red_line() {
        let host = host_with_job(3 * 3_600 - 60, "");
        let limits = job_limit(3.0);
        let hosts = std::slice::from_ref(&host);
        assert!(job_red_lines(hosts, &limits, NOW_MS).is_empty());
        let lines = job_red_lines(hosts, &limits, NOW_MS + 120_000);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert_eq!(lines[0].kind(), "job_run_time");
        assert_eq!(lines[0].host(), Some("h1"));
        assert_eq!(
            lines[0].message(),
            "h1: job 4242 has run for 3h01m, over its run limit of 3 h"
        );
        // No limit for the host: no red line, however old the job.
        assert!(job_red_lines(hosts, &[], NOW_MS + 9 * 3_600_000).is_empty());
    }

    #[test]
    fn only_a_live_run_that_stopped_learning_is_acted_on() {
        let learning = host_with_job(60, "hf_lora.log");
        assert_eq!(stopped_learning(&learning), None);
        let plateau = host_with_job(60, "hf_plateau.log");
        assert_eq!(stopped_learning(&plateau), Some(4242));
        assert_eq!(PlateauAct::of(&plateau, OnPlateau::Alert, 60), None);
        let act = PlateauAct::of(&plateau, OnPlateau::StopJob, 30).expect("an act");
        assert_eq!(act.stop.pid(), 4242);
        assert!(
            act.message().contains("kill -s INT 4242"),
            "{}",
            act.message()
        );
        assert!(
            act.message().contains("kill -s TERM 4242"),
            "{}",
            act.message()
        );
    }
}
