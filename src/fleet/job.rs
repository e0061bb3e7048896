//! The jobs on a host: the GPU processes whose command line, user, age and log a
//! link found, each log read as it grows through [`crate::job::JobLog`], and which jobs have
//! ended. Pure: the link sends `HostEvent::Jobs` (the processes it found) and
//! `HostEvent::JobLog` (raw text of a job's log, only ever parsed here, never shown as is).
//!
//! Memory is bounded: at most [`MAX_JOBS`] jobs per host, each with one bounded reader, and at
//! most [`MAX_ENDED`] ended jobs kept (the newest).

use serde::Serialize;

use crate::config::JobConfig;
use crate::cost::Price;
use crate::diagnose::finding::Finding;
use crate::diagnose::job_base::job_base_findings;
use crate::fleet::job_cpu::CpuTrail;
use crate::fleet::job_found::JobFound;
use crate::job::{JobLog, JobOptions, JobReport, JobState, UserPattern};
use crate::telemetry::TimestampMs;

/// Live jobs kept per host.
pub const MAX_JOBS: usize = 16;
/// Ended jobs kept per host (the newest), so their `job_finished` finding stays visible.
pub const MAX_ENDED: usize = 4;
/// How much later than a job's own start a process listed with its PID may seem to have
/// started (the host's `ps` counts whole seconds, and our clock stamps the listing) before it
/// counts as another process that reuses the PID.
const PID_REUSE_SLACK_MS: u64 = 5_000;
/// Lines of an ended job's log kept as the evidence of its end.
const LAST_LINES: usize = 3;
/// Characters kept of a command line.
pub const COMMAND_CHARS: usize = 512;

/// How a host's logs are read and judged, from its `[[hosts.jobs]]` table (checked when the
/// config was read: a pattern that would not compile is left out).
pub fn job_options(config: &JobConfig) -> JobOptions {
    let mut options = JobOptions::default();
    if let Some(patience) = config.patience {
        options.judge.patience = patience;
    }
    if let Some(min_delta) = config.min_delta {
        options.judge.min_delta = min_delta;
    }
    options.pattern = config
        .pattern
        .as_deref()
        .and_then(|p| UserPattern::new(p).ok());
    options
}

/// One process a link found on a host's GPUs: what it runs and where its output goes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct JobProcess {
    pub pid: u32,
    /// The process's owner, when the host said.
    pub user: Option<String>,
    /// Seconds since the process started, when the host said.
    pub elapsed_s: Option<u64>,
    /// CPU seconds the process has used, when the host said.
    pub cpu_s: Option<u64>,
    /// Its command line, arguments joined with spaces, sanitized and cut to
    /// [`COMMAND_CHARS`].
    pub command: String,
    /// Where its log is read from (`stdout: /path/train.log`), sanitized; `None` when neither
    /// stdout nor stderr is a regular file.
    pub log: Option<String>,
    /// How the link found it.
    pub found: JobFound,
    /// The GPU device files it holds open (`/dev/nvidiaN`: N, the GPU's minor number), when
    /// it was found through them.
    pub devices: Vec<u32>,
    /// The GPUs (UUIDs) those devices are, as the host's `nvidia-smi -q` numbers them; empty
    /// when they could not be told: the job is then the host's, not one GPU's.
    pub gpus: Vec<String>,
}

impl JobProcess {
    /// Whether the GPU of `uuid` is one of those the job was found holding.
    pub fn holds_gpu(&self, uuid: &str) -> bool {
        self.gpus.iter().any(|g| g == uuid)
    }
}

/// One job as the engine knows it.
pub struct TrackedJob {
    pub process: JobProcess,
    /// When the link last listed it.
    pub seen_at_ms: TimestampMs,
    /// When it was first listed minus its age then: its start on our clock.
    pub started_at_ms: Option<TimestampMs>,
    /// When a listing no longer had it (the process exited).
    pub ended_at_ms: Option<TimestampMs>,
    /// Bytes of its log read so far.
    pub log_bytes: u64,
    /// What its log says, once it reads as a training log.
    pub report: Option<JobReport>,
    /// Its log's last lines when it ended (the evidence of `job_finished`).
    pub last_lines: Vec<String>,
    /// The CPU time its process used, probe by probe.
    pub cpu: CpuTrail,
    /// When each step of its log was first seen.
    pub steps_seen: crate::job::clock::StepPoints<TimestampMs>,
    reader: Option<Box<JobLog>>,
    /// What its log and life say (`diagnose::job_base`), worked out when they change.
    base_findings: Vec<Finding>,
}

impl std::fmt::Debug for TrackedJob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TrackedJob")
            .field("process", &self.process)
            .field("ended_at_ms", &self.ended_at_ms)
            .field("log_bytes", &self.log_bytes)
            .field("report", &self.report)
            .finish_non_exhaustive()
    }
}

impl Clone for TrackedJob {
    /// A copy carries what is known of the job, not its log reader: a copy is a view.
    fn clone(&self) -> Self {
        Self {
            process: self.process.clone(),
            seen_at_ms: self.seen_at_ms,
            started_at_ms: self.started_at_ms,
            ended_at_ms: self.ended_at_ms,
            log_bytes: self.log_bytes,
            report: self.report.clone(),
            last_lines: self.last_lines.clone(),
            cpu: self.cpu.clone(),
            steps_seen: self.steps_seen.clone(),
            reader: None,
            base_findings: self.base_findings.clone(),
        }
    }
}

impl PartialEq for TrackedJob {
    fn eq(&self, other: &Self) -> bool {
        self.process == other.process
            && self.seen_at_ms == other.seen_at_ms
            && self.started_at_ms == other.started_at_ms
            && self.ended_at_ms == other.ended_at_ms
            && self.log_bytes == other.log_bytes
            && self.report == other.report
            && self.last_lines == other.last_lines
            && self.cpu == other.cpu
            && self.steps_seen == other.steps_seen
    }
}

impl TrackedJob {
    fn new(process: JobProcess, at_ms: TimestampMs) -> Self {
        let started_at_ms = process
            .elapsed_s
            .map(|s| at_ms.saturating_sub(s.saturating_mul(1_000)));
        let mut cpu = CpuTrail::default();
        if let Some(cpu_s) = process.cpu_s {
            cpu.push(at_ms, cpu_s);
        }
        Self {
            process,
            seen_at_ms: at_ms,
            started_at_ms,
            ended_at_ms: None,
            log_bytes: 0,
            report: None,
            last_lines: Vec::new(),
            cpu,
            steps_seen: Default::default(),
            reader: None,
            base_findings: Vec::new(),
        }
    }

    /// Whether `process`, listed with this job's PID, started well after this job did: the
    /// job ended and its PID was given to another process.
    fn restarted_as(&self, process: &JobProcess, at_ms: TimestampMs) -> bool {
        let listed = TrackedJob::new(process.clone(), at_ms).started_at_ms;
        match (self.started_at_ms, listed) {
            (Some(ours), Some(theirs)) => theirs > ours.saturating_add(PID_REUSE_SLACK_MS),
            _ => false,
        }
    }

    /// Whether the process still lives, as far as the last listing said.
    pub fn alive(&self) -> bool {
        self.ended_at_ms.is_none()
    }

    /// Whether it lives and was found only through the log it writes, never yet on a GPU: a
    /// job starting, not an idle host.
    pub fn starting(&self) -> bool {
        self.alive() && self.process.found == JobFound::Log
    }

    /// How long it has run (until it ended), in seconds.
    pub fn run_s(&self, now_ms: TimestampMs) -> Option<u64> {
        let start = self.started_at_ms?;
        let end = self.ended_at_ms.unwrap_or(now_ms);
        Some(end.saturating_sub(start) / 1_000)
    }

    /// Whether the job has stopped paying off as far as its log says: it stopped learning
    /// (plateau, overfitting), or its log says it ended (completed, crashed).
    pub fn stalled(&self) -> bool {
        self.report.as_ref().is_some_and(|r| {
            r.state != JobState::Running
                || r.judgement.plateau.is_some()
                || r.judgement.overfit.is_some()
        })
    }

    fn feed(&mut self, opts: &JobOptions, text: &str) {
        let reader = self
            .reader
            .get_or_insert_with(|| Box::new(JobLog::new(opts.clone())));
        reader.feed(text.as_bytes());
        self.log_bytes = self.log_bytes.saturating_add(text.len() as u64);
        let report = reader.report();
        self.report = report.is_training_log().then_some(report);
        self.judge();
    }

    /// Works out [`TrackedJob::base_findings`] again, after its report or its life changed.
    fn judge(&mut self) {
        self.base_findings =
            job_base_findings(self.report.as_ref(), self.alive(), &self.last_lines);
    }

    /// What its log and life say, without the time and money since (the live findings add
    /// them): worked out when more of the log is read or the job ends, not every second.
    pub fn base_findings(&self) -> &[Finding] {
        &self.base_findings
    }

    fn end(&mut self, at_ms: TimestampMs) {
        self.ended_at_ms = Some(at_ms);
        if let Some(reader) = self.reader.as_mut() {
            reader.finish();
            let tail: Vec<&str> = reader.tail().collect();
            self.last_lines = tail[tail.len().saturating_sub(LAST_LINES)..]
                .iter()
                .map(|l| l.to_string())
                .collect();
            let report = reader.report();
            self.report = report.is_training_log().then_some(report);
        }
        // Nothing more will be read: the reader's memory goes.
        self.reader = None;
        self.judge();
    }
}

/// The jobs of one host.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HostJobs {
    jobs: Vec<TrackedJob>,
    /// How logs are read and judged on this host.
    options: JobOptionsEq,
    /// The host's price, for the money a finding says is wasted.
    price: Option<Price>,
}

/// [`JobOptions`] with an equality that is always true: options are configuration, not
/// state, and two hosts' jobs compare by what they know.
#[derive(Debug, Clone, Default)]
struct JobOptionsEq(JobOptions);

impl PartialEq for JobOptionsEq {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl HostJobs {
    /// How this host's logs are read and judged (its `[[hosts.jobs]]` settings).
    pub fn set_options(&mut self, options: JobOptions) {
        self.options = JobOptionsEq(options);
    }

    /// The host's price, when it has one: set from the fleet's money before the findings are
    /// computed ([`crate::fleet::Fleet::refresh_findings`]).
    pub fn set_price(&mut self, price: Option<Price>) {
        self.price = price;
    }

    pub fn price(&self) -> Option<&Price> {
        self.price.as_ref()
    }

    /// Every job known, live ones first, in the order the host listed them.
    pub fn iter(&self) -> impl Iterator<Item = &TrackedJob> {
        self.jobs.iter()
    }

    pub fn is_empty(&self) -> bool {
        self.jobs.is_empty()
    }

    /// Whether a job's process lives and its log does not say it stopped paying off: the host
    /// is working, not idle, even while its GPUs are not busy yet.
    pub fn holds_host(&self) -> bool {
        self.jobs.iter().any(|j| j.alive() && !j.stalled())
    }

    /// A listing of the host's jobs at `at_ms`: new ones are added, listed ones refreshed, and
    /// live ones not listed have ended.
    pub fn listed(&mut self, at_ms: TimestampMs, processes: Vec<JobProcess>) {
        for job in &mut self.jobs {
            let same = |p: &JobProcess| p.pid == job.process.pid && !job.restarted_as(p, at_ms);
            if job.alive() && !processes.iter().any(same) {
                job.end(at_ms);
            }
        }
        for process in processes {
            match self
                .jobs
                .iter_mut()
                .find(|j| j.alive() && j.process.pid == process.pid)
            {
                Some(job) => {
                    job.seen_at_ms = at_ms;
                    if let Some(cpu_s) = process.cpu_s {
                        job.cpu.push(at_ms, cpu_s);
                    }
                    if job.started_at_ms.is_none() {
                        job.started_at_ms = TrackedJob::new(process.clone(), at_ms).started_at_ms;
                    }
                    // Once on a GPU, a job between phases is not starting again.
                    let found = match (job.process.found, process.found) {
                        (seen, JobFound::Log) => seen,
                        (_, now) => now,
                    };
                    job.process = JobProcess { found, ..process };
                }
                None => {
                    if self.jobs.iter().filter(|j| j.alive()).count() < MAX_JOBS {
                        self.jobs.push(TrackedJob::new(process, at_ms));
                    }
                }
            }
        }
        // Live ones first; of the ended, the newest MAX_ENDED.
        self.jobs.sort_by_key(|j| j.ended_at_ms.is_some());
        let mut ended: Vec<usize> = (0..self.jobs.len())
            .filter(|&i| !self.jobs[i].alive())
            .collect();
        ended.sort_by_key(|&i| std::cmp::Reverse(self.jobs[i].ended_at_ms));
        let dropped: Vec<usize> = ended.into_iter().skip(MAX_ENDED).collect();
        let mut i = 0;
        self.jobs.retain(|_| {
            let keep = !dropped.contains(&i);
            i += 1;
            keep
        });
    }

    /// [`HostJobs::log`] read at `at_ms`: the steps it reaches are stamped with that time.
    pub fn log_at(&mut self, pid: u32, restart: bool, text: &str, at_ms: TimestampMs) {
        self.log(pid, restart, text);
        if let Some(job) = self
            .jobs
            .iter_mut()
            .find(|j| j.alive() && j.process.pid == pid)
            && let Some(step) = job.report.as_ref().and_then(|r| r.step)
        {
            job.steps_seen.push(step, at_ms);
        }
    }

    /// More of the log of job `pid` (raw text, read only by the log reader); `restart` when
    /// the link reads the log anew from its tail (a reconnect): the reader starts over.
    pub fn log(&mut self, pid: u32, restart: bool, text: &str) {
        let options = self.options.0.clone();
        if let Some(job) = self
            .jobs
            .iter_mut()
            .find(|j| j.alive() && j.process.pid == pid)
        {
            if restart {
                job.reader = None;
                job.log_bytes = 0;
            }
            job.feed(&options, text);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn process(pid: u32, elapsed_s: u64) -> JobProcess {
        JobProcess {
            pid,
            user: Some("u".into()),
            elapsed_s: Some(elapsed_s),
            cpu_s: None,
            command: "python3 train.py".into(),
            log: Some("stdout: /tmp/train.log".into()),
            ..JobProcess::default()
        }
    }

    fn fixture(name: &str) -> String {
        let path = format!(
            "{}/tests/fixtures/training-logs/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        String::from_utf8_lossy(&std::fs::read(path).expect("fixture")).into_owned()
    }

    #[test]
    fn a_listed_job_reads_its_log_in_chunks_and_ends_when_no_longer_listed() {
        let mut jobs = HostJobs::default();
        jobs.listed(100_000, vec![process(7, 60)]);
        assert!(jobs.holds_host());
        let text = fixture("hf_full.log");
        let (a, b) = text.split_at(text.len() / 2);
        jobs.log(7, true, a);
        jobs.log(7, false, b);
        let job = jobs.iter().next().expect("job");
        assert_eq!(job.started_at_ms, Some(40_000));
        let report = job.report.as_ref().expect("a training log");
        assert_eq!(report.total, Some(600));
        assert_eq!(job.run_s(160_000), Some(120));
        jobs.listed(200_000, Vec::new());
        let job = jobs.iter().next().expect("kept");
        assert_eq!(job.ended_at_ms, Some(200_000));
        assert!(!jobs.holds_host());
        // Ended: more text for the pid is not read.
        jobs.log(7, false, "step 1 loss 1.0\n");
        assert_eq!(
            jobs.iter().next().map(|j| j.log_bytes),
            Some(text.len() as u64)
        );
    }

    #[test]
    fn a_job_whose_run_stopped_learning_no_longer_holds_the_host() {
        let mut jobs = HostJobs::default();
        jobs.listed(0, vec![process(9, 1)]);
        jobs.log(9, true, &fixture("hf_plateau.log"));
        let job = jobs.iter().next().expect("job");
        assert!(job.stalled(), "{:?}", job.report);
        assert!(!jobs.holds_host());
    }

    #[test]
    fn a_jobs_findings_follow_its_log_and_its_end() {
        let fresh = |job: &TrackedJob| {
            job_base_findings(job.report.as_ref(), job.alive(), &job.last_lines)
                .iter()
                .map(|f| f.label.to_string())
                .collect::<Vec<_>>()
        };
        let labels = |job: &TrackedJob| {
            job.base_findings()
                .iter()
                .map(|f| f.label.to_string())
                .collect::<Vec<_>>()
        };
        let mut jobs = HostJobs::default();
        jobs.listed(0, vec![process(9, 1)]);
        let text = fixture("hf_plateau.log");
        let (a, b) = text.split_at(text.len() / 5);
        jobs.log(9, true, a);
        let job = jobs.iter().next().expect("job");
        assert!(labels(job).is_empty(), "{:?}", labels(job));
        // The rest of the run: it stopped learning.
        jobs.log(9, false, b);
        let job = jobs.iter().next().expect("job");
        assert_eq!(labels(job), fresh(job));
        assert!(
            labels(job).iter().any(|l| l == "training_plateau"),
            "{:?}",
            labels(job)
        );
        // Its process exits: it says so.
        jobs.listed(60_000, Vec::new());
        let job = jobs.iter().next().expect("kept");
        assert_eq!(labels(job), fresh(job));
        assert!(
            labels(job).iter().any(|l| l == "job_finished"),
            "{:?}",
            labels(job)
        );
        assert_eq!(
            job.base_findings(),
            job_base_findings(job.report.as_ref(), false, &job.last_lines)
        );
    }

    #[test]
    fn a_log_followed_in_chunks_or_read_again_after_a_reconnect_gets_the_verdict_of_the_whole() {
        let text = fixture("hf_plateau.log");
        let whole = crate::job::read_log(text.as_bytes(), JobOptions::default());
        let mut jobs = HostJobs::default();
        jobs.listed(0, vec![process(3, 1)]);
        // A first session read part of it, then the link reconnected and read it all again.
        jobs.log(3, true, &text[..20_000]);
        let mut first = true;
        for chunk in text.as_bytes().chunks(777) {
            jobs.log(3, first, &String::from_utf8_lossy(chunk));
            first = false;
        }
        jobs.listed(1, Vec::new());
        let report = jobs.iter().next().and_then(|j| j.report.clone());
        assert_eq!(report.map(|r| r.judgement), Some(whole.judgement));
    }

    #[test]
    fn a_pid_given_to_a_later_process_is_a_new_job_and_the_old_one_ended() {
        let mut jobs = HostJobs::default();
        jobs.listed(100_000, vec![process(5, 60)]);
        // Ten seconds later and a second older: the same process, stamped a little apart.
        jobs.listed(110_000, vec![process(5, 71)]);
        assert_eq!(jobs.iter().filter(|j| j.alive()).count(), 1);
        assert_eq!(jobs.iter().count(), 1);
        // Then a process with that PID that is 3 s old: the job ended, a new one runs.
        jobs.listed(200_000, vec![process(5, 3)]);
        let ended: Vec<_> = jobs.iter().filter(|j| !j.alive()).collect();
        assert_eq!(ended.len(), 1);
        assert_eq!(ended[0].started_at_ms, Some(40_000));
        let live: Vec<_> = jobs.iter().filter(|j| j.alive()).collect();
        assert_eq!(live[0].started_at_ms, Some(197_000));
    }

    #[test]
    fn ended_jobs_are_bounded() {
        let mut jobs = HostJobs::default();
        for pid in 0..(MAX_ENDED as u32 + 3) {
            jobs.listed(u64::from(pid) * 10, vec![process(pid, 1)]);
        }
        jobs.listed(1_000, Vec::new());
        assert_eq!(jobs.iter().count(), MAX_ENDED);
    }

    #[test]
    fn a_job_found_by_its_log_is_starting_until_it_is_on_a_gpu_and_not_again_after() {
        let mut jobs = HostJobs::default();
        let found = |found| JobProcess {
            found,
            ..process(11, 5)
        };
        jobs.listed(0, vec![found(JobFound::Log)]);
        assert!(jobs.iter().all(TrackedJob::starting));
        // Starting, not idle: the host is held.
        assert!(jobs.holds_host());
        jobs.listed(5_000, vec![found(JobFound::ProcessList)]);
        assert!(!jobs.iter().any(TrackedJob::starting));
        // Off the GPU between phases, found again only by its log: still running.
        jobs.listed(10_000, vec![found(JobFound::Log)]);
        assert!(!jobs.iter().any(TrackedJob::starting));
        assert_eq!(jobs.iter().filter(|j| j.alive()).count(), 1);
        // Exited: neither starting nor holding.
        jobs.listed(15_000, Vec::new());
        assert!(!jobs.iter().any(TrackedJob::starting));
        assert!(!jobs.holds_host());
    }
}
