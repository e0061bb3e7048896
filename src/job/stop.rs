//! `on_plateau = "stop-job"`: a training job that stopped learning is asked to stop
//! with SIGINT (the `Trainer` and Lightning end a run cleanly on Ctrl-C), and, when it still runs
//! after a grace period, told to with SIGTERM. The commands are built from the typed PID alone
//! (`kill -s INT 1234`): no text from the host or the config reaches the host's shell. What runs
//! is shown before it runs ([`StopJob::shown`]), every command that ran is written to the audit
//! log, and the outcome comes back in English for the log and in words for the alert.

use std::time::Duration;

use rust_i18n::t;

use crate::audit::{AuditEntry, AuditKind, AuditLog};
use crate::release::HostRunner;
use crate::telemetry::TimestampMs;
use crate::words::Words;

/// The highest PID Linux hands out (`PID_MAX_LIMIT` on 64-bit systems).
const PID_MAX: u32 = 4_194_304;

/// Why a stop was not built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopJobError {
    /// 0 and 1 (and anything past `PID_MAX`) are never a job: `kill 0` signals the whole
    /// process group and 1 is init.
    BadPid(u32),
}

impl std::fmt::Display for StopJobError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::BadPid(pid) => f.write_str(&t!("job_stop.bad_pid", pid = pid)),
        }
    }
}

impl std::error::Error for StopJobError {}

/// A signal `stop-job` sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopSignal {
    Int,
    Term,
}

impl StopSignal {
    pub fn name(self) -> &'static str {
        match self {
            Self::Int => "INT",
            Self::Term => "TERM",
        }
    }
}

/// Stopping one job's process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StopJob {
    pid: u32,
    /// How long SIGINT gets before SIGTERM follows.
    pub grace_s: u64,
}

impl StopJob {
    /// A stop of the process `pid`, validated: 2 to `PID_MAX`.
    pub fn new(pid: u32, grace_s: u64) -> Result<Self, StopJobError> {
        if !(2..=PID_MAX).contains(&pid) {
            return Err(StopJobError::BadPid(pid));
        }
        Ok(Self { pid, grace_s })
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// `kill -s INT 1234`.
    pub fn signal(&self, signal: StopSignal) -> Vec<String> {
        vec![
            "kill".to_string(),
            "-s".to_string(),
            signal.name().to_string(),
            self.pid.to_string(),
        ]
    }

    /// `kill -0 1234`: exits 0 while the process lives.
    pub fn alive_check(&self) -> Vec<String> {
        vec!["kill".to_string(), "-0".to_string(), self.pid.to_string()]
    }

    /// What runs, as shown before it runs: `kill -s INT 1234; after 60 s, if it still runs:
    /// kill -s TERM 1234` (the words between the commands in the reader's language).
    pub fn shown(&self) -> String {
        rust_i18n::t!(
            "job_action.stop_shown",
            int = self.signal(StopSignal::Int).join(" "),
            grace = self.grace_s,
            term = self.signal(StopSignal::Term).join(" ")
        )
        .into_owned()
    }
}

/// How a stop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// The process ended within the grace period after SIGINT.
    ByInt,
    /// It still ran after the grace period and was sent SIGTERM.
    ByTerm,
}

/// Why a stop failed. Its `Display` is English (the watcher's log); [`StopFailed::said`] words
/// it in a language (the alert).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopFailed {
    Run {
        command: String,
        why: String,
    },
    /// `kill` refused: the process is gone, or belongs to another user.
    Refused {
        command: String,
        status: Option<i32>,
    },
}

impl StopFailed {
    /// The failure in words; the command stays as it ran.
    pub fn words(&self) -> Words {
        match self {
            Self::Run { command, why } => Words::new("job_stop.run_failed")
                .put("command", command.to_string())
                .put("why", why.to_string()),
            Self::Refused { command, status } => Words::new("job_stop.refused")
                .put("command", command.to_string())
                .put("status", format!("{status:?}")),
        }
    }
}

impl std::fmt::Display for StopFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.words().fmt(f)
    }
}

impl std::error::Error for StopFailed {}

/// Where a stop runs and is recorded.
pub struct StopRun<'a> {
    pub runner: &'a dyn HostRunner,
    pub audit: &'a AuditLog,
    pub host: &'a str,
    /// The clock, for the audit lines.
    pub now_ms: &'a dyn Fn() -> TimestampMs,
    /// Waits between SIGINT and the check (the real clock sleeps; tests may not).
    pub sleep: &'a dyn Fn(Duration),
}

impl StopRun<'_> {
    /// SIGINT, the grace period (checked once a second, so a job that ends at once is not
    /// waited for), then SIGTERM if it still runs. Each signal sent is an audit line.
    pub fn run(&self, stop: &StopJob) -> Result<Stopped, StopFailed> {
        self.send(stop, StopSignal::Int)?;
        for _ in 0..stop.grace_s {
            (self.sleep)(Duration::from_secs(1));
            if !self.alive(stop)? {
                return Ok(Stopped::ByInt);
            }
        }
        if !self.alive(stop)? {
            return Ok(Stopped::ByInt);
        }
        self.send(stop, StopSignal::Term)?;
        Ok(Stopped::ByTerm)
    }

    fn alive(&self, stop: &StopJob) -> Result<bool, StopFailed> {
        let argv = stop.alive_check();
        let status = self
            .runner
            .run(self.host, &argv, &mut |_| {})
            .map_err(|why| StopFailed::Run {
                command: argv.join(" "),
                why,
            })?;
        Ok(status == Some(0))
    }

    fn send(&self, stop: &StopJob, signal: StopSignal) -> Result<(), StopFailed> {
        let argv = stop.signal(signal);
        let command = argv.join(" ");
        let ran = self.runner.run(self.host, &argv, &mut |_| {});
        let (outcome, status) = match &ran {
            Ok(Some(0)) => ("ok", Some(0)),
            Ok(status) => ("failed", *status),
            Err(_) => ("failed", None),
        };
        let entry = AuditEntry {
            at_ms: (self.now_ms)(),
            host: self.host.to_string(),
            kind: AuditKind::StopJob,
            command: command.clone(),
            outcome: outcome.to_string(),
            exit_status: status,
            runbook: None,
            step: Some(format!("SIG{}", signal.name())),
            dry_run: false,
            simulated: false,
        };
        if let Err(e) = self.audit.append(&entry) {
            tracing::error!(host = self.host, error = %e, "audit line not written");
        }
        match ran {
            Ok(Some(0)) => Ok(()),
            Ok(status) => Err(StopFailed::Refused { command, status }),
            Err(why) => Err(StopFailed::Run { command, why }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// The watcher's log keeps the English; the alert says it in the user's language, the
    /// command as it ran.
    #[test]
    fn a_failed_stop_is_english_for_the_log_and_in_words_for_the_alert() {
        let failed = StopFailed::Refused {
            command: "kill -s INT 4242".into(),
            status: Some(1),
        };
        assert_eq!(
            failed.to_string(),
            "`kill -s INT 4242` failed with exit status Some(1) (the process is gone or not ours)"
        );
        let zh = failed.words().render("zh-CN");
        assert!(zh.starts_with("`kill -s INT 4242` 失败"), "{zh}");
        assert!(zh.contains("进程已不在"), "{zh}");
    }

    /// A host whose process lives until it has had `dies_after` signals.
    struct Host {
        ran: Mutex<Vec<String>>,
        dies_after: usize,
    }

    impl HostRunner for Host {
        fn run(
            &self,
            _host: &str,
            argv: &[String],
            _on_line: &mut dyn FnMut(&str),
        ) -> Result<Option<i32>, String> {
            let mut ran = self.ran.lock().map_err(|e| e.to_string())?;
            ran.push(argv.join(" "));
            let signals = ran.iter().filter(|c| c.starts_with("kill -s")).count();
            let alive = signals < self.dies_after;
            Ok(Some(if argv[1] == "-0" && !alive { 1 } else { 0 }))
        }
    }

    fn run(dies_after: usize) -> (Result<Stopped, StopFailed>, Vec<String>, String) {
        let dir = tempfile::tempdir().expect("temp");
        let audit = AuditLog::at(dir.path().join("audit.jsonl"));
        let host = Host {
            ran: Mutex::new(Vec::new()),
            dies_after,
        };
        let stop = StopJob::new(4242, 3).expect("a PID");
        let outcome = StopRun {
            runner: &host,
            audit: &audit,
            host: "h1",
            now_ms: &|| 1_000,
            sleep: &|_| {},
        }
        .run(&stop);
        let text = std::fs::read_to_string(audit.path()).unwrap_or_default();
        let ran = host.ran.into_inner().expect("lock");
        (outcome, ran, text)
    }

    #[test]
    fn only_a_real_pid_is_signalled() {
        assert_eq!(StopJob::new(0, 60), Err(StopJobError::BadPid(0)));
        assert_eq!(StopJob::new(1, 60), Err(StopJobError::BadPid(1)));
        assert_eq!(
            StopJob::new(PID_MAX + 1, 60).err(),
            Some(StopJobError::BadPid(PID_MAX + 1))
        );
        let stop = StopJob::new(4242, 60).expect("a PID");
        assert_eq!(stop.signal(StopSignal::Int), ["kill", "-s", "INT", "4242"]);
        assert_eq!(stop.alive_check(), ["kill", "-0", "4242"]);
    }

    #[test]
    fn a_job_that_ends_on_sigint_gets_no_sigterm() {
        let (outcome, ran, audit) = run(1);
        assert_eq!(outcome, Ok(Stopped::ByInt));
        assert_eq!(ran, ["kill -s INT 4242", "kill -0 4242"]);
        assert_eq!(audit.lines().count(), 1, "{audit}");
        assert!(audit.contains("\"kind\":\"stop_job\""), "{audit}");
    }

    #[test]
    fn a_job_still_running_after_the_grace_period_gets_sigterm() {
        let (outcome, ran, audit) = run(2);
        assert_eq!(outcome, Ok(Stopped::ByTerm));
        assert_eq!(ran.first().map(String::as_str), Some("kill -s INT 4242"));
        assert_eq!(ran.last().map(String::as_str), Some("kill -s TERM 4242"));
        assert_eq!(ran.iter().filter(|c| *c == "kill -0 4242").count(), 4);
        assert_eq!(audit.lines().count(), 2, "{audit}");
        assert!(audit.contains("kill -s TERM 4242"), "{audit}");
    }
}
