//! The jobs of a host as `snapshot --json` shows them: the process (command line,
//! user, log), what its log says (progress, step / total, rate, ETA and finish time, losses),
//! the money it has cost so far and what finishing would cost at the host's price, and its
//! findings. Text from the host was sanitized by the link; the log reader keeps no control
//! character.

use serde::Serialize;

use crate::cost::Price;
use crate::diagnose::finding::Finding;
use crate::diagnose::live_jobs::job_findings_of;
use crate::fleet::job::TrackedJob;
use crate::fleet::job_found::JobFound;
use crate::job::{Format, JobState};
use crate::telemetry::TimestampMs;

/// One job in `hosts[].jobs`.
#[derive(Debug, Serialize)]
pub struct JobSnapshot {
    pub pid: u32,
    pub user: Option<String>,
    pub command: String,
    /// Where its log is read from (`stdout: /path`); `null` when neither stdout nor stderr is a
    /// regular file.
    pub log: Option<String>,
    /// `starting` while the process lives but was found only through the log it writes (on no
    /// GPU yet), `running` while it lives, `exited` once it is gone.
    pub process: &'static str,
    /// How it was found: `process_list` (nvidia-smi names its PID), `device` (it holds
    /// `/dev/nvidiaN` open while nvidia-smi's PIDs are not in the host's `/proc`: a container),
    /// `log` (it writes the configured log).
    pub found: JobFound,
    /// The GPU device files it holds (`/dev/nvidiaN`: N), when found through them.
    pub devices: Vec<u32>,
    /// The GPUs (UUIDs) those devices are; empty when they could not be told (the job is the
    /// host's, not one GPU's) or when it was not found through its devices.
    pub gpus: Vec<String>,
    pub started_ms: Option<TimestampMs>,
    pub ended_ms: Option<TimestampMs>,
    /// Seconds the process has run (until it exited).
    pub run_s: Option<u64>,
    /// The log's formats; empty until it reads as a training log.
    pub formats: Vec<Format>,
    /// `running`, `completed` or `crashed`, as the log says; `null` without a training log.
    pub state: Option<JobState>,
    pub step: Option<u64>,
    pub total: Option<u64>,
    /// `step / total`, 0 to 1.
    pub progress: Option<f64>,
    pub rate_per_s: Option<f64>,
    pub eta_s: Option<f64>,
    /// When it would finish at its rate (`now + eta_s`).
    pub finish_ms: Option<TimestampMs>,
    pub loss: Option<f64>,
    pub eval_loss: Option<f64>,
    pub best_eval_loss: Option<f64>,
    pub best_eval_step: Option<u64>,
    /// The host's price × the job's run time, in the host's currency.
    pub spent: Option<f64>,
    /// The host's price × the ETA.
    pub cost_to_finish: Option<f64>,
    pub findings: Vec<Finding>,
}

/// `job` at `now_ms`, priced at the host's price when it has one.
pub fn job_snapshot(job: &TrackedJob, now_ms: TimestampMs, price: Option<&Price>) -> JobSnapshot {
    let price_per_hour = price.map(|p| p.price_per_hour);
    let report = job.report.as_ref();
    let run_s = job.run_s(now_ms);
    let eta_s = report
        .and_then(|r| r.eta_s)
        .filter(|_| job.alive())
        .filter(|s| s.is_finite() && *s >= 0.0);
    let per_s = price_per_hour.map(|p| p / 3_600.0);
    JobSnapshot {
        pid: job.process.pid,
        user: job.process.user.clone(),
        command: job.process.command.clone(),
        log: job.process.log.clone(),
        process: if job.starting() {
            "starting"
        } else if job.alive() {
            "running"
        } else {
            "exited"
        },
        found: job.process.found,
        devices: job.process.devices.clone(),
        gpus: job.process.gpus.clone(),
        started_ms: job.started_at_ms,
        ended_ms: job.ended_at_ms,
        run_s,
        formats: report.map(|r| r.formats.clone()).unwrap_or_default(),
        state: report.map(|r| r.state),
        step: report.and_then(|r| r.step),
        total: report.and_then(|r| r.total),
        progress: report.and_then(|r| r.fraction()),
        rate_per_s: report.and_then(|r| r.rate_per_s),
        eta_s,
        finish_ms: eta_s.map(|s| now_ms.saturating_add((s * 1_000.0) as u64)),
        loss: report.and_then(|r| r.loss).map(|p| p.value),
        eval_loss: report.and_then(|r| r.eval_loss).map(|p| p.value),
        best_eval_loss: report.and_then(|r| r.best_eval_loss).map(|p| p.value),
        best_eval_step: report.and_then(|r| r.best_eval_loss).map(|p| p.step),
        spent: per_s.zip(run_s).map(|(p, s)| round2(p * s as f64)),
        cost_to_finish: per_s.zip(eta_s).map(|(p, s)| round2(p * s)),
        findings: job_findings_of(job, price, now_ms),
    }
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}
