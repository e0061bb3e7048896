//! Duties that one process per state directory does for the whole fleet: releasing hosts
//! automatically and sending alerts. A console and a watcher on the same state directory agree
//! through a lock file per duty: the first to take it does the duty, the others say who does.
//! A process that found the lock held tries again every few seconds, so when the console that
//! held it quits, a watcher running beside it takes the duty over within [`RETRY`]. While it
//! does not hold a duty, a process keeps its books (countdowns disarmed, alerts shown as sent
//! elsewhere).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::cost::HoldStore;
use crate::fleet::Fleet;
use crate::state_file::ProcessLock;

/// The lock whose holder releases hosts automatically.
pub const RELEASER_LOCK: &str = "auto-release.lock";
/// The lock whose holder sends alerts to the `[[alerts]]` sinks.
pub const ALERTER_LOCK: &str = "alerts.lock";

/// How often a process that does not hold a duty tries to take it.
pub const RETRY: Duration = Duration::from_secs(5);

/// One duty as this process sees it: held here, or held by someone it can name.
#[derive(Debug)]
pub struct Duty {
    path: PathBuf,
    who: String,
    lock: Option<ProcessLock>,
    /// Who holds it when this process does not (or why it could not be taken).
    holder: Option<String>,
    next_try: Instant,
}

impl Duty {
    /// Tries to take the duty whose lock is `file` in `dir`, as `who` (e.g. "gpufleet watch").
    pub fn take(dir: &Path, file: &str, who: &str) -> Self {
        let mut duty = Self {
            path: dir.join(file),
            who: who.to_string(),
            lock: None,
            holder: None,
            next_try: Instant::now(),
        };
        duty.try_now(Instant::now());
        duty
    }

    pub fn held(&self) -> bool {
        self.lock.is_some()
    }

    /// Who does the duty when this process does not ("gpufleet watch (pid 1234)").
    pub fn holder(&self) -> Option<&str> {
        self.holder.as_deref()
    }

    /// Tries again when due; `true` when this call took the duty over.
    pub fn poll(&mut self, now: Instant) -> bool {
        if self.lock.is_some() || now < self.next_try {
            return false;
        }
        self.try_now(now)
    }

    fn try_now(&mut self, now: Instant) -> bool {
        match ProcessLock::try_take(&self.path, &self.who) {
            Ok(lock) => {
                self.lock = Some(lock);
                self.holder = None;
                true
            }
            Err(holder) => {
                self.holder = Some(holder);
                self.next_try = now + RETRY;
                false
            }
        }
    }
}

/// What a process holds of the fleet's duties, and the `gpufleet hold` requests it reads while
/// it counts down.
#[derive(Debug)]
pub struct Duties {
    who: &'static str,
    releaser: Option<Duty>,
    alerter: Option<Duty>,
    /// `gpufleet hold HOST` requests: read only by the process that counts down.
    pub holds: Option<HoldStore>,
}

impl Duties {
    /// Takes what it can of the duties this fleet has: auto-release when a host asks for it and
    /// hosts can be released here, alerts when there are sinks.
    /// `who` names this process for the others ("gpufleet watch"); what happened is returned
    /// for the log or the screen.
    pub fn start(
        who: &'static str,
        fleet: &mut Fleet,
        can_release: bool,
        has_sinks: bool,
    ) -> (Self, Vec<DutyNote>) {
        let mut duties = Self {
            who,
            releaser: None,
            alerter: None,
            holds: None,
        };
        let notes = duties.reconsider(fleet, can_release, has_sinks);
        (duties, notes)
    }

    /// After a reload: duties the new config brings are taken (or waited for), and a fleet
    /// that does not release here keeps every countdown disarmed (added hosts come armed).
    pub fn reconsider(
        &mut self,
        fleet: &mut Fleet,
        can_release: bool,
        has_sinks: bool,
    ) -> Vec<DutyNote> {
        let mut notes = Vec::new();
        let dir = crate::paths::state_dir();
        let wants_release = can_release && fleet.options.money.wants_auto_release();
        if wants_release
            && self.releaser.is_none()
            && let Some(dir) = &dir
        {
            let duty = Duty::take(dir, RELEASER_LOCK, self.who);
            notes.push(match duty.holder() {
                None => DutyNote::info(rust_i18n::t!("duty_words.release_here")),
                Some(holder) => DutyNote::warn(rust_i18n::t!(
                    "duty_words.release_elsewhere",
                    holder = holder
                )),
            });
            self.releaser = Some(duty);
        }
        if !wants_release {
            self.releaser = None;
        }
        if self.releases() {
            if self.holds.is_none() {
                self.holds = HoldStore::open_default().ok();
            }
        } else {
            fleet.money.disarm_auto_release();
            self.holds = None;
        }
        if has_sinks
            && self.alerter.is_none()
            && let Some(dir) = &dir
        {
            let duty = Duty::take(dir, ALERTER_LOCK, self.who);
            if let Some(holder) = duty.holder() {
                notes.push(DutyNote::warn(rust_i18n::t!(
                    "duty_words.alerts_elsewhere",
                    holder = holder
                )));
            }
            self.alerter = Some(duty);
        }
        if !has_sinks {
            self.alerter = None;
        }
        notes
    }

    /// Once a tick: a duty whose holder stopped is taken over.
    pub fn poll(&mut self, fleet: &mut Fleet) -> Vec<DutyNote> {
        let mut notes = Vec::new();
        let now = Instant::now();
        if let Some(duty) = self.releaser.as_mut()
            && duty.poll(now)
        {
            fleet.money.arm_auto_release(&fleet.options.money.clone());
            self.holds = HoldStore::open_default().ok();
            notes.push(DutyNote::warn(rust_i18n::t!(
                "duty_words.release_taken_over"
            )));
        }
        if let Some(duty) = self.alerter.as_mut()
            && duty.poll(now)
        {
            notes.push(DutyNote::warn(rust_i18n::t!(
                "duty_words.alerts_taken_over"
            )));
        }
        notes
    }

    /// Whether this watcher releases hosts automatically.
    pub fn releases(&self) -> bool {
        self.releaser.as_ref().is_some_and(Duty::held)
    }

    /// `None` when this watcher sends the alerts; else who does.
    pub fn alerts_sent_by(&self) -> Option<&str> {
        self.alerter.as_ref().and_then(Duty::holder)
    }
}

/// Something about the duties worth telling the user: a log line or a notice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DutyNote {
    pub warning: bool,
    pub text: String,
}

impl DutyNote {
    fn info(text: impl Into<String>) -> Self {
        Self {
            warning: false,
            text: text.into(),
        }
    }

    fn warn(text: impl Into<String>) -> Self {
        Self {
            warning: true,
            text: text.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_second_process_names_the_first_and_takes_over_when_it_lets_go() {
        let dir = tempfile::tempdir().expect("temp");
        let mut first = Some(Duty::take(dir.path(), ALERTER_LOCK, "gpufleet console"));
        assert!(first.as_ref().is_some_and(Duty::held));
        let mut second = Duty::take(dir.path(), ALERTER_LOCK, "gpufleet watch");
        assert!(!second.held());
        let holder = second.holder().unwrap_or_default().to_string();
        assert!(holder.starts_with("gpufleet console (pid "), "{holder}");
        // Not retried before it is due.
        assert!(!second.poll(Instant::now()));
        first.take();
        assert!(!second.poll(Instant::now()), "waits for its next try");
        assert!(second.poll(Instant::now() + RETRY));
        assert!(second.held());
        assert_eq!(second.holder(), None);
        assert!(!second.poll(Instant::now() + RETRY * 2), "taken once");
    }
}
