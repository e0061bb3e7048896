//! Waiting out a reboot: the host must first go away (or come back with a new boot id), then
//! answer again; reconnect attempts back off up to a limit, and a cancel ends the wait.

use std::time::{Duration, Instant};

use rust_i18n::t;
use thiserror::Error;

use crate::runbook::exec::Executor;
use crate::telemetry::source::StopFlag;

/// How a reboot is waited for.
#[derive(Debug, Clone, PartialEq)]
pub struct RebootOptions {
    /// A read that prints something unique to this boot; a changed answer means the host has
    /// rebooted even if no failed attempt was seen in between.
    pub probe: Vec<String>,
    pub probe_timeout: Duration,
    /// How long the host may keep answering after the reboot command before the reboot is
    /// declared not to have happened.
    pub down_within: Duration,
    /// How long a rebooting host may stay unreachable; cloud instances can take minutes.
    pub up_within: Duration,
    pub backoff_first: Duration,
    pub backoff_max: Duration,
}

impl Default for RebootOptions {
    fn default() -> Self {
        Self {
            probe: vec![
                "cat".to_string(),
                "/proc/sys/kernel/random/boot_id".to_string(),
            ],
            probe_timeout: Duration::from_secs(15),
            down_within: Duration::from_secs(180),
            up_within: Duration::from_secs(900),
            backoff_first: Duration::from_secs(2),
            backoff_max: Duration::from_secs(30),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Error)]
pub enum WaitError {
    #[error("{}", t!("reboot_wait.cancelled"))]
    Cancelled,
    #[error("{}", t!("reboot_wait.never_went_down", waited_s = .waited_s))]
    NeverWentDown { waited_s: u64 },
    #[error("{}", t!("reboot_wait.never_came_back", waited_s = .waited_s, last = .last))]
    NeverCameBack { waited_s: u64, last: String },
}

/// What one probe found.
enum Probe {
    Up(String),
    Down(String),
}

fn probe(exec: &mut dyn Executor, options: &RebootOptions, stop: &StopFlag) -> Probe {
    let mut first = None;
    let result = exec.run(&options.probe, options.probe_timeout, stop, &mut |line| {
        if first.is_none() && !line.trim().is_empty() {
            first = Some(line.trim().to_string());
        }
    });
    match result {
        Ok(r) if r.exit_status == Some(0) && !r.timed_out => Probe::Up(first.unwrap_or_default()),
        Ok(r) if r.timed_out => Probe::Down(t!("reboot_wait.no_answer").into_owned()),
        Ok(r) => Probe::Down(
            match r.exit_status {
                Some(code) => t!("reboot_wait.exit_status", code = code),
                None => t!("reboot_wait.dropped"),
            }
            .into_owned(),
        ),
        Err(e) => Probe::Down(e.to_string()),
    }
}

/// The host's boot id now, when it can be read.
pub fn boot_id(
    exec: &mut dyn Executor,
    options: &RebootOptions,
    stop: &StopFlag,
) -> Option<String> {
    match probe(exec, options, stop) {
        Probe::Up(id) if !id.is_empty() => Some(id),
        _ => None,
    }
}

/// Waits for the host to go down and come back; `before` is its boot id before the reboot.
/// Returns how long the host was away.
pub fn wait_for_return(
    exec: &mut dyn Executor,
    before: Option<&str>,
    options: &RebootOptions,
    stop: &StopFlag,
    note: &mut dyn FnMut(&str),
) -> Result<Duration, WaitError> {
    let started = Instant::now();
    let mut delay = options.backoff_first;
    note(&t!("reboot_wait.going_down", host = exec.host()));
    loop {
        match probe(exec, options, stop) {
            Probe::Down(why) => {
                note(&t!("reboot_wait.down", host = exec.host(), why = why));
                break;
            }
            Probe::Up(id) if before.is_some_and(|b| b != id) => {
                note(&t!("reboot_wait.back", host = exec.host()));
                return Ok(started.elapsed());
            }
            Probe::Up(_) => {}
        }
        if started.elapsed() >= options.down_within {
            return Err(WaitError::NeverWentDown {
                waited_s: started.elapsed().as_secs(),
            });
        }
        if stop.sleep(delay) {
            return Err(WaitError::Cancelled);
        }
        delay = (delay * 2).min(options.backoff_max);
    }
    let down_at = Instant::now();
    let mut delay = options.backoff_first;
    let mut attempt = 0u32;
    loop {
        if stop.sleep(delay) {
            return Err(WaitError::Cancelled);
        }
        attempt += 1;
        match probe(exec, options, stop) {
            Probe::Up(_) => {
                note(&t!(
                    "reboot_wait.answered",
                    host = exec.host(),
                    after_s = started.elapsed().as_secs(),
                    attempt = attempt
                ));
                return Ok(started.elapsed());
            }
            Probe::Down(why) => {
                if down_at.elapsed() >= options.up_within {
                    return Err(WaitError::NeverCameBack {
                        waited_s: started.elapsed().as_secs(),
                        last: why,
                    });
                }
                delay = (delay * 2).min(options.backoff_max);
                note(&t!(
                    "reboot_wait.retry",
                    attempt = attempt,
                    why = why,
                    next_ms = delay.as_millis()
                ));
            }
        }
    }
}
