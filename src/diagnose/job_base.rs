//! What a job's log and life alone say: `training_plateau`, `training_overfit`, a
//! classified traceback, `job_finished`. They change only when more of the log is read or the
//! job ends, so the engine works them out then (`fleet::job`), not every second; the live
//! findings (`live_jobs.rs`) add the time and money since the run stopped paying off, which
//! change every second.

use crate::diagnose::finding::Finding;
use crate::diagnose::labels_job;
use crate::diagnose::text::TextDiagnoser;
use crate::diagnose::training::job_findings;
use crate::job::{JobReport, JobState};

/// The findings of a job whose log says `report` (`None`: not a training log), `alive` or
/// ended, with `last_lines` of its log when it ended.
pub fn job_base_findings(
    report: Option<&JobReport>,
    alive: bool,
    last_lines: &[String],
) -> Vec<Finding> {
    let mut out = Vec::new();
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
    if !alive && !crashed {
        out.push(labels_job::job_exited(report, last_lines));
    }
    out
}
