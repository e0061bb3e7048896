//! Live findings from a host's jobs: what each job's log says (a run that stopped
//! learning or overfits, a traceback), judged as `gpufleet diagnose` judges a pasted log
//! ([`crate::diagnose::training::job_findings`]), and a job whose process exited
//! (`job_finished`). A traceback is classified by the same line catalogue as the rest of triage.
//! A run that stopped paying off also says since when and the money spent since: the host's
//! price × the time since that step, by the log's own progress bar where it keeps a clock that
//! spans the run, else since gpufleet first saw the log reach that step.

use crate::cost::Price;
use crate::diagnose::finding::{Finding, Findings, label};
use crate::diagnose::labels_job;
use crate::fleet::host::HostState;
use crate::fleet::job::TrackedJob;
use crate::telemetry::TimestampMs;

/// Adds the findings of `host`'s jobs at `now_ms` to `out`.
pub(crate) fn jobs(host: &HostState, now_ms: TimestampMs, out: &mut Findings) {
    for job in host.jobs.iter() {
        for f in job_findings_of(job, host.jobs.price(), now_ms) {
            out.push(f);
        }
    }
}

/// Seconds since the step `step` of `job`'s run: by the log's own clock where it keeps one
/// (`stalled_for_s`), else since gpufleet first saw the log reach it (until the job ended).
fn seconds_since(job: &TrackedJob, step: u64, now_ms: TimestampMs) -> Option<f64> {
    let report = job.report.as_ref()?;
    if let Some(s) = report.stalled_for_s {
        return Some(s);
    }
    let seen_ms = job.steps_seen.first_at_or_after(step)?;
    let end_ms = job.ended_at_ms.unwrap_or(now_ms);
    Some(end_ms.saturating_sub(seen_ms) as f64 / 1_000.0)
}

/// What one job's log and life say at `now_ms`: `loss_nan`, `training_plateau`,
/// `training_overfit` (with the time and money since the run stopped paying off, at `price`),
/// `job_finished`.
pub fn job_findings_of(
    job: &TrackedJob,
    price: Option<&Price>,
    now_ms: TimestampMs,
) -> Vec<Finding> {
    const STOPPED_PAYING: &[&str] = &[
        label::TRAINING_PLATEAU,
        label::TRAINING_OVERFIT,
        label::LOSS_NAN,
    ];
    let mut out = job.base_findings().to_vec();
    if let Some(report) = job.report.as_ref()
        && let Some(step) = report.judgement.since_step()
        && let Some(seconds) = seconds_since(job, step, now_ms)
    {
        let since = labels_job::spent_since(step, seconds, price);
        for f in out
            .iter_mut()
            .filter(|f| STOPPED_PAYING.contains(&f.label.as_str()))
        {
            f.summary.push_str(&since);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::job::{HostJobs, JobProcess};

    const NOW_MS: TimestampMs = 1_795_939_200_000;

    fn process(pid: u32) -> JobProcess {
        JobProcess {
            pid,
            user: Some("u".into()),
            elapsed_s: Some(60),
            cpu_s: None,
            command: "python3 train.py".into(),
            log: Some("stdout: /root/run/train.log".into()),
            found: Default::default(),
            devices: Vec::new(),
            gpus: Vec::new(),
        }
    }

    fn usd(price_per_hour: f64) -> Price {
        Price {
            price_per_hour,
            currency: "USD".into(),
        }
    }

    fn summary_of(findings: &[Finding], label: &str) -> String {
        findings
            .iter()
            .find(|f| f.label == label)
            .map(|f| f.summary.clone())
            .unwrap_or_default()
    }

    /// The `Trainer`'s bar prints the run's elapsed time at each step: the time since the
    /// plateau began is the log's own, and the money is the price over that time.
    #[test]
    fn a_plateau_says_the_time_and_money_since_it_began_by_the_logs_clock() {
        let path = format!(
            "{}/tests/fixtures/training-logs/hf_plateau.log",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = String::from_utf8_lossy(&std::fs::read(path).expect("fixture")).into_owned();
        let running = text.split("{'train_runtime'").next().unwrap_or_default();
        let mut jobs = HostJobs::default();
        jobs.listed(NOW_MS, vec![process(7)]);
        jobs.log_at(7, true, running, NOW_MS);
        let job = jobs.iter().next().expect("job");
        let report = job.report.as_ref().expect("a training log");
        let since = report
            .judgement
            .plateau
            .as_ref()
            .expect("a plateau")
            .since_step;
        let seconds = report.stalled_for_s.expect("the bar's clock");
        // The whole run took 39 s by its bar; the plateau began part-way.
        assert!(seconds > 1.0 && seconds < 40.0, "{seconds}");
        // At 3,600 USD/h a second costs 1 USD.
        let findings = job_findings_of(job, Some(&usd(3_600.0)), NOW_MS);
        let summary = summary_of(&findings, label::TRAINING_PLATEAU);
        let expected = format!(
            " Since step {} ({}s ago) this host has cost {}.",
            labels_job_group(since),
            seconds as u64,
            crate::cost::format_money(seconds, "USD")
        );
        assert!(summary.ends_with(&expected), "{summary}\n{expected}");
        // No price: the money cannot be said.
        let findings = job_findings_of(job, None, NOW_MS);
        let summary = summary_of(&findings, label::TRAINING_PLATEAU);
        assert!(
            summary.ends_with("no price is set for this host, so the money cannot be said."),
            "{summary}"
        );
    }

    /// A live job whose loss turned NaN (MahmudulAlam/Automatic-Identification-and-Counting-of-
    /// Blood-Cells#15): `loss_nan`, and the time and money since the step it went bad at, from
    /// when gpufleet first saw the log reach it (the prints keep no clock).
    #[test]
    fn a_loss_that_turned_nan_says_the_money_since() {
        let path = format!(
            "{}/tests/fixtures/diagnose/container/loss_nan_steps.txt",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(path).expect("fixture");
        let mut jobs = HostJobs::default();
        jobs.listed(NOW_MS, vec![process(5)]);
        jobs.log_at(5, true, &text, NOW_MS);
        let job = jobs.iter().next().expect("job");
        let report = job.report.as_ref().expect("a training log");
        let diverged = report.judgement.diverged.expect("diverged");
        assert_eq!(diverged.since_step, 1655);
        assert_eq!(report.judgement.since_step(), Some(1655));
        // Two hours later at 2 USD/h: 4 USD since the loss went bad.
        let now = NOW_MS + 2 * 3_600_000;
        let findings = job_findings_of(job, Some(&usd(2.0)), now);
        let summary = summary_of(&findings, label::LOSS_NAN);
        let money = crate::cost::format_money(4.0, "USD");
        assert!(
            summary.ends_with(&format!("this host has cost {money}.")),
            "{summary}"
        );
        assert!(summary.contains("Since step 1,655"), "{summary}");
        // A finite loss logged again: the run is no longer diverged.
        jobs.log_at(5, false, "step 1659 - loss 0.5\n", now);
        let job = jobs.iter().next().expect("job");
        let report = job.report.as_ref().expect("a training log");
        assert_eq!(report.judgement.diverged, None);
    }

    fn labels_job_group(n: u64) -> String {
        let digits = n.to_string();
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        out
    }

    /// `step N loss X` prints keep no clock: the time is from when gpufleet first saw the log
    /// reach the step the loss went flat at, and it runs on while the job does.
    #[test]
    fn without_a_clock_in_the_log_the_time_is_from_when_the_step_was_seen() {
        let mut jobs = HostJobs::default();
        jobs.listed(NOW_MS, vec![process(9)]);
        let mut at_ms = NOW_MS;
        let mut first_flat_seen = None;
        for step in (10..=400u64).step_by(10) {
            let loss = if step <= 200 {
                5.0 - step as f64 / 50.0
            } else {
                1.0
            };
            jobs.log_at(
                9,
                step == 10,
                &format!("step {step} loss {loss:.4}\n"),
                at_ms,
            );
            let job = jobs.iter().next().expect("job");
            if let Some(p) = job
                .report
                .as_ref()
                .and_then(|r| r.judgement.plateau.as_ref())
                && first_flat_seen.is_none()
            {
                first_flat_seen = Some(p.since_step);
            }
            at_ms += 60_000;
        }
        let job = jobs.iter().next().expect("job");
        let report = job.report.as_ref().expect("a training log");
        assert_eq!(report.stalled_for_s, None, "plain prints keep no clock");
        let since = report
            .judgement
            .plateau
            .as_ref()
            .expect("a plateau")
            .since_step;
        let seen_ms = job.steps_seen.first_at_or_after(since).expect("seen");
        let now = at_ms + 30 * 60_000;
        let hours = (now - seen_ms) as f64 / 3_600_000.0;
        let findings = job_findings_of(job, Some(&usd(2.0)), now);
        let summary = summary_of(&findings, label::TRAINING_PLATEAU);
        let money = crate::cost::format_money(2.0 * hours, "USD");
        assert!(
            summary.contains(&format!("this host has cost {money}.")),
            "{summary} ({hours} h)"
        );
    }
}
