//! The auto-release countdown of one host, as a pure state machine driven by the clock: a red
//! line starts a visible countdown, any key cancels it, and it never fires while the user has a
//! process on the GPUs unless that was explicitly allowed, nor ever while a job runs and still
//! learns.

use crate::telemetry::TimestampMs;

/// Five minutes: long enough to notice the banner and press a key.
pub const DEFAULT_COUNTDOWN_MS: u64 = 5 * 60_000;

/// Where the countdown stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AutoState {
    /// No reason to release.
    Watching,
    /// Fires at `deadline_ms` unless a key or a change cancels it first.
    CountingDown { deadline_ms: TimestampMs },
    /// The user pressed a key. It stays off until the reason goes away and comes back, so a
    /// cancelled countdown does not start again on the next tick.
    Cancelled,
    /// A reason exists but a user process runs on the GPUs.
    Held,
    /// The release was asked for; the caller runs it once.
    Fired,
}

/// What the clock and the host say at one tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AutoInput {
    pub now_ms: TimestampMs,
    /// A red line that warrants releasing this host is crossed.
    pub triggered: bool,
    /// A compute process of the user runs on the host's GPUs (on a rented host every compute
    /// process is the user's).
    pub user_processes: bool,
    /// A job's process lives and its log says neither that it ended nor that it stopped
    /// learning: the host is working (a job still setting up may not be on the GPUs yet), so
    /// it is never released, even where releasing with user processes is allowed.
    pub job_running: bool,
}

/// What the UI should show or do after a tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AutoDecision {
    Nothing,
    /// Show the countdown; any key cancels it.
    CountingDown {
        remaining_ms: u64,
    },
    /// Would count down, but a user process runs.
    Held,
    /// Release now (returned once).
    Fire,
}

/// One host's countdown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AutoRelease {
    countdown_ms: u64,
    allow_with_user_processes: bool,
    state: AutoState,
}

impl AutoRelease {
    pub fn new(countdown_ms: u64, allow_with_user_processes: bool) -> Self {
        Self {
            countdown_ms,
            allow_with_user_processes,
            state: AutoState::Watching,
        }
    }

    pub fn state(&self) -> AutoState {
        self.state
    }

    /// Advances the machine to `input.now_ms`.
    pub fn tick(&mut self, input: AutoInput) -> AutoDecision {
        if self.state == AutoState::Fired {
            return AutoDecision::Nothing;
        }
        if !input.triggered {
            self.state = AutoState::Watching;
            return AutoDecision::Nothing;
        }
        if self.state == AutoState::Cancelled {
            return AutoDecision::Nothing;
        }
        if input.job_running || (input.user_processes && !self.allow_with_user_processes) {
            self.state = AutoState::Held;
            return AutoDecision::Held;
        }
        match self.state {
            AutoState::CountingDown { deadline_ms } if input.now_ms >= deadline_ms => {
                self.state = AutoState::Fired;
                AutoDecision::Fire
            }
            AutoState::CountingDown { deadline_ms } => AutoDecision::CountingDown {
                remaining_ms: deadline_ms - input.now_ms,
            },
            _ => {
                self.state = AutoState::CountingDown {
                    deadline_ms: input.now_ms.saturating_add(self.countdown_ms),
                };
                AutoDecision::CountingDown {
                    remaining_ms: self.countdown_ms,
                }
            }
        }
    }

    /// Watches afresh after a fired countdown whose act is done (a job stopped, not a host
    /// released): a later reason counts down again.
    pub fn rearm(&mut self) {
        self.state = AutoState::Watching;
    }

    /// Any key: cancels a running countdown. Returns whether it did, so the caller can swallow
    /// the key instead of also acting on it.
    pub fn key_pressed(&mut self) -> bool {
        if matches!(self.state, AutoState::CountingDown { .. }) {
            self.state = AutoState::Cancelled;
            true
        } else {
            false
        }
    }
}

impl Default for AutoRelease {
    fn default() -> Self {
        Self::new(DEFAULT_COUNTDOWN_MS, false)
    }
}
