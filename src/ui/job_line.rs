//! The host view's one line about the job on its GPUs, written on the processes
//! pane's lower border so it costs no row on an 80x24 screen: which job, its step of the total,
//! the ETA, what the job has cost so far, and the last training and eval loss (those the
//! sparklines on the pane's top border do not already show, [`crate::ui::job_sparks`]). The
//! processes pane shows each job's command line in place of its process name.

use rust_i18n::t;

use crate::app::model::Model;
use crate::cost::{format_duration_ms, format_money};
use crate::fleet::host::HostState;
use crate::fleet::job::TrackedJob;
use crate::fleet::job_found::JobFound;
use crate::ui::format::clean;

/// The job the host view shows: the first live one whose log reads as a training log, else
/// the first live one, else the newest ended one.
pub fn shown_job(host: &HostState) -> Option<&TrackedJob> {
    host.jobs
        .iter()
        .find(|j| j.alive() && j.report.is_some())
        .or_else(|| host.jobs.iter().find(|j| j.alive()))
        .or_else(|| host.jobs.iter().next())
}

/// Which of the job's last losses are shown elsewhere (by the sparklines), so the line leaves
/// them out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ShownElsewhere {
    pub loss: bool,
    pub eval: bool,
}

/// The shown job's line ([`shown_job`]); `None` without a job.
pub fn job_line(model: &Model, host_id: usize, elsewhere: ShownElsewhere) -> Option<String> {
    let host = model.fleet.hosts.get(host_id)?;
    let job = shown_job(host)?;
    let mut parts = vec![t!("job_line.title", pid = job.process.pid).into_owned()];
    if !job.alive() {
        parts.push(t!("job_line.exited").into_owned());
    }
    if let Some(found) = found_part(host, job) {
        parts.push(found);
    }
    if let Some(report) = &job.report {
        match (report.step, report.total.filter(|t| *t > 0)) {
            (Some(step), Some(total)) => parts.push(
                t!(
                    "job_line.step_of",
                    step = step,
                    total = total,
                    percent = format!("{:.0}", step as f64 * 100.0 / total as f64)
                )
                .into_owned(),
            ),
            (Some(step), None) => parts.push(t!("job_line.step", step = step).into_owned()),
            _ => {}
        }
        if let Some(eta) = report
            .eta_s
            .filter(|s| job.alive() && s.is_finite() && *s >= 0.0)
        {
            parts.push(
                t!(
                    "job_line.eta",
                    eta = format_duration_ms((eta * 1_000.0) as u64)
                )
                .into_owned(),
            );
        }
        if let Some(spent) = spent(model, host_id, job) {
            parts.push(t!("job_line.spent", money = spent).into_owned());
        }
        if let Some(loss) = report.loss.filter(|_| !elsewhere.loss) {
            parts.push(t!("job_line.loss", value = format!("{:.4}", loss.value)).into_owned());
        }
        if let Some(eval) = report.eval_loss.filter(|_| !elsewhere.eval) {
            parts.push(t!("job_line.eval", value = format!("{:.4}", eval.value)).into_owned());
        }
    } else if let Some(spent) = spent(model, host_id, job) {
        parts.push(t!("job_line.spent", money = spent).into_owned());
    }
    Some(clean(&parts.join(" · ")))
}

/// How the job was found, when not through nvidia-smi's process list: starting (its log
/// written, on no GPU yet), or in a container on which GPUs (their indices here), or the
/// host's when its devices could not be told apart.
fn found_part(host: &HostState, job: &TrackedJob) -> Option<String> {
    if job.starting() {
        return Some(t!("job_found.starting").into_owned());
    }
    if job.process.found != JobFound::Device {
        return None;
    }
    let indices: Vec<String> = host
        .gpus
        .iter()
        .filter(|g| job.process.holds_gpu(&g.latest.uuid))
        .map(|g| g.latest.index.to_string())
        .collect();
    Some(if indices.is_empty() {
        t!("job_found.container_host").into_owned()
    } else {
        t!("job_found.container_gpus", gpus = indices.join(",")).into_owned()
    })
}

/// The host's price × the job's run time.
fn spent(model: &Model, host_id: usize, job: &TrackedJob) -> Option<String> {
    let price = model
        .fleet
        .money
        .hosts
        .get(host_id)?
        .config
        .price
        .as_ref()?;
    let run_s = job.run_s(model.fleet.now_ms)?;
    Some(format_money(
        price.price_per_hour * run_s as f64 / 3_600.0,
        &price.currency,
    ))
}

/// What the processes pane shows for GPU process `pid` (named `name`, on the GPU with
/// `gpu_uuid`): its job's command line when one is known.
/// A process nvidia-smi names by a PID outside the container the host is (no job has it) shows
/// the command line of the one job found inside through that GPU's device, when exactly one
/// was.
pub fn process_label<'a>(host: &'a HostState, pid: u32, gpu_uuid: &str, name: &'a str) -> &'a str {
    let live = || {
        host.jobs
            .iter()
            .filter(|j| j.alive() && !j.process.command.is_empty())
    };
    if let Some(job) = live().find(|j| j.process.pid == pid) {
        return job.process.command.as_str();
    }
    let mut inside =
        live().filter(|j| j.process.found == JobFound::Device && j.process.holds_gpu(gpu_uuid));
    match (inside.next(), inside.next()) {
        (Some(job), None) => job.process.command.as_str(),
        _ => name,
    }
}
