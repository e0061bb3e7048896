//! `gpufleet diagnose` on a training log: the job's own log read next to the triage of its
//! lines ([`crate::job::JobLog`]), its progress kept in the diagnosis, and its findings
//! (`loss_nan`, `training_plateau`, `training_overfit`, `job_finished`) added to the others. A crash is
//! classified by what triage already found on the traceback's lines, so the line catalogue
//! stays the one place that knows CUDA, NCCL and driver errors.

use crate::diagnose::finding::Finding;
use crate::diagnose::labels_job;
use crate::diagnose::order;
use crate::diagnose::verdict::{Diagnosis, Verdict};
use crate::job::{JobLog, JobOptions, JobReport};

/// Reads the lines of a text as a training log.
pub struct TrainingReader {
    log: JobLog,
}

impl Default for TrainingReader {
    fn default() -> Self {
        Self::new(JobOptions::default())
    }
}

impl TrainingReader {
    pub fn new(opts: JobOptions) -> Self {
        Self {
            log: JobLog::new(opts),
        }
    }

    /// One line, without its line ending (`\r` updates inside it are the log's own).
    pub fn line(&mut self, line: &str) {
        self.log.feed_text_line(line);
    }

    /// The job's report, when the text was a training log.
    pub fn finish(mut self) -> Option<JobReport> {
        self.log.finish();
        let report = self.log.report();
        report.is_training_log().then_some(report)
    }
}

/// Labels of the findings whose evidence is a line of `lines` (the traceback).
fn causes(findings: &[Finding], lines: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for f in findings {
        let on_traceback = f.evidence.iter().any(|e| {
            let e = e.trim_end_matches('…');
            lines.iter().any(|l| l.trim().starts_with(e))
        });
        if on_traceback && !out.contains(&f.label) {
            out.push(f.label.clone());
        }
    }
    out
}

/// The findings a training log's report raises, given what triage found in the same text.
pub fn job_findings(report: &JobReport, triage: &[Finding]) -> Vec<Finding> {
    let mut out = Vec::new();
    if let Some(d) = &report.judgement.diverged {
        out.push(labels_job::loss_nan_in_log(d));
    }
    if let Some(o) = &report.judgement.overfit {
        out.push(labels_job::training_overfit(o, report));
    }
    if let Some(p) = &report.judgement.plateau {
        out.push(labels_job::training_plateau(p, report));
    }
    if let Some(crash) = &report.crash {
        out.push(labels_job::job_finished(
            crash,
            &causes(triage, &crash.lines),
            report,
        ));
    }
    out
}

/// `diagnosis` with the training log's report and findings; unchanged without one.
pub fn merge(diagnosis: Diagnosis, training: Option<JobReport>) -> Diagnosis {
    let Some(report) = training else {
        return diagnosis;
    };
    let mut all = crate::diagnose::finding::Findings::default();
    let added = job_findings(&report, &diagnosis.findings);
    all.extend(diagnosis.findings);
    all.extend(added);
    let findings = order::root_cause_first(all);
    let verdict = if findings.is_empty() {
        Verdict::Healthy
    } else {
        Verdict::Findings
    };
    Diagnosis {
        verdict,
        findings,
        training: Some(report),
    }
}
