//! The jobs on the hosts' GPUs as `gpufleet_job_*` series: whether each job's process
//! runs, its step of the total, progress, ETA, last training and eval loss, and the money it has
//! cost, the same figures `snapshot --json` gives (`crate::snapshot_jobs`). Labelled by
//! `instance` (the host) and `pid`; a job's findings are in `gpufleet_finding_firing`.

use crate::fleet::Fleet;
use crate::metrics::text::{Kind, Page};
use crate::snapshot_jobs::{JobSnapshot, job_snapshot};

type Read = fn(&JobSnapshot) -> Option<f64>;

const GAUGES: [(&str, &str, Read); 7] = [
    (
        "gpufleet_job_running",
        "1 while the job's process runs, 0 once it exited.",
        |j| Some(if j.process == "running" { 1.0 } else { 0.0 }),
    ),
    (
        "gpufleet_job_step",
        "The job's step, as its log says.",
        |j| j.step.map(|s| s as f64),
    ),
    (
        "gpufleet_job_total_steps",
        "The steps the job will run, as its log says.",
        |j| j.total.map(|s| s as f64),
    ),
    (
        "gpufleet_job_progress_ratio",
        "The job's step over its total, 0 to 1.",
        |j| j.progress,
    ),
    (
        "gpufleet_job_eta_seconds",
        "Seconds the job needs to finish at its rate.",
        |j| j.eta_s,
    ),
    ("gpufleet_job_loss", "The job's last training loss.", |j| {
        j.loss
    }),
    ("gpufleet_job_eval_loss", "The job's last eval loss.", |j| {
        j.eval_loss
    }),
];

/// The `gpufleet_job_*` families.
pub(super) fn job_series(page: &mut Page, fleet: &Fleet) {
    let mut jobs = Vec::new();
    for (id, host) in fleet.watched() {
        let price = fleet
            .money
            .hosts
            .get(id)
            .and_then(|m| m.config.price.as_ref());
        for job in host.jobs.iter() {
            let view = job_snapshot(job, fleet.now_ms, price);
            let currency = price.map(|p| p.currency.clone()).unwrap_or_default();
            jobs.push((
                host.name.as_str(),
                job.process.pid.to_string(),
                currency,
                view,
            ));
        }
    }
    for (name, help, read) in GAUGES {
        page.family(name, help, Kind::Gauge);
        for (host, pid, _, view) in &jobs {
            if let Some(v) = read(view) {
                page.sample(name, &[("instance", host), ("pid", pid)], v);
            }
        }
    }
    page.family(
        "gpufleet_job_spent",
        "Money the job has cost so far (the host's price times its run time), in its currency.",
        Kind::Gauge,
    );
    for (host, pid, currency, view) in &jobs {
        if let Some(v) = view.spent {
            page.sample(
                "gpufleet_job_spent",
                &[("currency", currency), ("instance", host), ("pid", pid)],
                v,
            );
        }
    }
}
