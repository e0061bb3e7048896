//! `[[hosts.jobs]]`: how a host's training jobs are found and judged. A job's log is
//! found by itself when its process's stdout or stderr is a file; `log` names it otherwise (a
//! path on the host, `*`, `?` and `[...]` matching as in the shell, the newest match read).
//! `pattern` reads a log none of the built-in readers knows (named groups `step`, `total`,
//! `loss`, `eval_loss`); `patience` and `min_delta` tune when a run counts as no longer
//! improving. `on_plateau` says what happens when it is no longer improving (an alert, or,
//! opted in, the job stopped or the host released through the auto-release countdown);
//! `max_run_hours` is a red line on how long the job's process may run.

use rust_i18n::t;
use serde::Deserialize;

use super::locate::KeyPath;
use super::problem::{Problem, problem};

/// The named groups a log pattern may have; it needs at least one.
pub const PATTERN_GROUPS: [&str; 4] = ["step", "total", "loss", "eval_loss"];

/// Why a log pattern was refused; said in the reader's language ([`PatternError::words`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatternError {
    /// The regex crate's own message, as it wrote it.
    #[error("{}", self.words())]
    Invalid(String),
    #[error("{}", self.words())]
    NoGroups,
}

impl PatternError {
    /// The sentence in the reader's language, from the catalogue under `config_error`.
    pub fn words(&self) -> String {
        match self {
            Self::Invalid(why) => t!("config_error.pattern_invalid", why = why),
            Self::NoGroups => t!("config_error.pattern_no_groups"),
        }
        .into_owned()
    }
}

/// Compiles a log pattern (size-limited, as the regex crate's defaults allow) that names at
/// least one of [`PATTERN_GROUPS`]; the config's check and the log reader both use it.
pub fn compile_pattern(pattern: &str) -> Result<regex::Regex, PatternError> {
    let regex = regex::RegexBuilder::new(pattern)
        .size_limit(1 << 20)
        .build()
        .map_err(|e| PatternError::Invalid(e.to_string()))?;
    if !regex
        .capture_names()
        .flatten()
        .any(|name| PATTERN_GROUPS.contains(&name))
    {
        return Err(PatternError::NoGroups);
    }
    Ok(regex)
}

/// Characters a configured log path may have.
const MAX_LOG_CHARS: usize = 1_024;

/// One `[[hosts.jobs]]` table.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobConfig {
    /// The log of the host's GPU job when its stdout and stderr are not files: an absolute
    /// path on the host; globs allowed.
    pub log: Option<String>,
    /// A regular expression with named groups for a log in a format of its own.
    pub pattern: Option<String>,
    /// Evaluations without a real improvement before a plateau is called (default 3).
    pub patience: Option<u32>,
    /// The share of the best eval loss an evaluation must beat it by to count (default 0.002).
    pub min_delta: Option<f64>,
    /// What to do when the run stopped learning (plateau or overfitting): `alert` (default),
    /// `stop-job` or `release`, the last two through the auto-release countdown.
    pub on_plateau: Option<OnPlateau>,
    /// Seconds `stop-job` waits after SIGINT before it sends SIGTERM (default 60).
    pub stop_grace_s: Option<u64>,
    /// Red line: the job's process has run longer than this many hours.
    pub max_run_hours: Option<f64>,
}

/// What a run that stopped learning leads to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub enum OnPlateau {
    /// A finding and an alert, nothing more.
    #[default]
    #[serde(rename = "alert")]
    Alert,
    /// SIGINT to the job's process, then SIGTERM after `stop_grace_s` if it still runs.
    #[serde(rename = "stop-job")]
    StopJob,
    /// The host released, as auto-release does.
    #[serde(rename = "release")]
    Release,
}

impl OnPlateau {
    /// The spelling used in the config file.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Alert => "alert",
            Self::StopJob => "stop-job",
            Self::Release => "release",
        }
    }

    /// Whether it does more than alert.
    pub fn acts(self) -> bool {
        self != Self::Alert
    }
}

/// `stop_grace_s` when the table gives none.
pub const DEFAULT_STOP_GRACE_S: u64 = 60;
/// The longest `stop_grace_s` taken: an hour.
const MAX_STOP_GRACE_S: u64 = 3_600;

pub(super) fn check_jobs(jobs: &[JobConfig], path: &KeyPath) -> Result<(), Problem> {
    if jobs.len() > 1 {
        problem(path.index(1), t!("config_error.one_jobs_table"))?;
    }
    for (index, job) in jobs.iter().enumerate() {
        check_job(job, &path.index(index))?;
    }
    Ok(())
}

fn check_job(job: &JobConfig, path: &KeyPath) -> Result<(), Problem> {
    if let Some(log) = &job.log {
        if !log.starts_with('/') {
            problem(
                path.key("log"),
                t!("config_error.job_log_absolute", found = log : {:?}),
            )?;
        }
        if log.chars().any(char::is_control) {
            problem(path.key("log"), t!("config_error.no_control"))?;
        }
        if log.chars().count() > MAX_LOG_CHARS {
            problem(
                path.key("log"),
                t!("config_error.at_most_chars", max = MAX_LOG_CHARS),
            )?;
        }
    }
    if let Some(pattern) = &job.pattern
        && let Err(e) = compile_pattern(pattern)
    {
        problem(path.key("pattern"), e.words())?;
    }
    if job.patience == Some(0) {
        problem(path.key("patience"), t!("config_error.at_least_1"))?;
    }
    if let Some(delta) = job.min_delta
        && !(delta.is_finite() && (0.0..1.0).contains(&delta))
    {
        problem(
            path.key("min_delta"),
            t!("config_error.min_delta", found = delta),
        )?;
    }
    if let Some(grace) = job.stop_grace_s
        && !(1..=MAX_STOP_GRACE_S).contains(&grace)
    {
        problem(
            path.key("stop_grace_s"),
            t!(
                "config_error.seconds_range",
                min = 1,
                max = MAX_STOP_GRACE_S,
                found = grace
            ),
        )?;
    }
    if let Some(hours) = job.max_run_hours
        && !(hours.is_finite() && hours > 0.0)
    {
        problem(
            path.key("max_run_hours"),
            t!("config_error.more_than_zero", found = hours),
        )?;
    }
    Ok(())
}
