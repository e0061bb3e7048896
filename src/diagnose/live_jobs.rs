//! Live findings from a host's jobs (issue 19): what each job's log says (a run that stopped
//! learning or overfits, a traceback), judged as `gpufleet diagnose` judges a pasted log
//! ([`crate::diagnose::training::job_findings`]), and a job whose process exited
//! (`job_finished`). A traceback is classified by the same line catalogue as the rest of triage.

use crate::diagnose::finding::{Finding, Findings};
use crate::diagnose::labels_job;
use crate::diagnose::text::TextDiagnoser;
use crate::diagnose::training::job_findings;
use crate::fleet::host::HostState;
use crate::fleet::job::TrackedJob;
use crate::job::JobState;

/// Adds the findings of `host`'s jobs to `out`.
pub(crate) fn jobs(host: &HostState, out: &mut Findings) {
    for job in host.jobs.iter() {
        for f in job_findings_of(job) {
            out.push(f);
        }
    }
}

/// What one job's log and life say: `training_plateau`, `training_overfit`, `job_finished`.
pub fn job_findings_of(job: &TrackedJob) -> Vec<Finding> {
    let mut out = Vec::new();
    let report = job.report.as_ref();
    let mut crashed = false;
    if let Some(report) = report {
        let triage = match &report.crash {
            Some(crash) => {
                let mut text = TextDiagnoser::default();
                for line in &crash.lines {
                    text.line(line);
                }
                text.finish()
            }
            None => Vec::new(),
        };
        crashed = report.state == JobState::Crashed;
        out.extend(job_findings(report, &triage));
    }
    if !job.alive() && !crashed {
        out.push(labels_job::job_exited(report, &job.last_lines));
    }
    out
}
