//! A host's dead-man switch as the engine knows it: armed, and when it fires unless someone
//! watches, or not armed and why. The link arms and pushes it (`remote/link/dead_man.rs`); the
//! fleet row, the host view, `snapshot --json` and `/metrics` show what this says.

use crate::telemetry::TimestampMs;
use crate::words::Words;

/// Why a host's switch is not armed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotArmed {
    /// `$HOME` is unset or not a directory.
    NoHome,
    /// `~/.gpufleet/dead_man` cannot be made or written.
    NotWritable,
    /// Neither `setsid` nor `nohup` exists to leave the switch running.
    NoDetach,
    /// The switch was started but did not come up.
    StartFailed,
    /// Its deadline is set but no switch process runs (the host restarted, or it was killed).
    NotRunning,
    /// It fired: the stop command ran (its log is on the host).
    Fired,
    /// Disarmed (by `gpufleet hold --disarm` or on quitting the console).
    DisarmedByHand,
    /// The run printed no answer: no POSIX `sh`, or the shell failed (`status`).
    NoShell { status: Option<i32> },
    /// The host refused the run (the SSH layer's words).
    Refused(Words),
    /// The stop command cannot be sent (a NUL in a word).
    BadCommand(Words),
}

impl NotArmed {
    /// Why, in catalogue words.
    pub fn words(&self) -> Words {
        match self {
            NotArmed::NoHome => Words::new("dead_man.why_no_home"),
            NotArmed::NotWritable => Words::new("dead_man.why_not_writable"),
            NotArmed::NoDetach => Words::new("dead_man.why_no_detach"),
            NotArmed::StartFailed => Words::new("dead_man.why_start_failed"),
            NotArmed::NotRunning => Words::new("dead_man.why_not_running"),
            NotArmed::Fired => Words::new("dead_man.why_fired"),
            NotArmed::DisarmedByHand => Words::new("dead_man.why_disarmed"),
            NotArmed::NoShell { status: Some(code) } => {
                Words::new("dead_man.why_no_shell").put("status", code.to_string())
            }
            NotArmed::NoShell { status: None } => Words::new("dead_man.why_no_shell_ended"),
            NotArmed::Refused(why) => {
                Words::new("dead_man.why_refused").put_words("why", why.clone())
            }
            NotArmed::BadCommand(why) => {
                Words::new("dead_man.why_bad_command").put_words("why", why.clone())
            }
        }
    }
}

/// What the newest run of the switch said.
#[derive(Debug, Clone, PartialEq)]
pub struct DeadManState {
    pub after_minutes: u32,
    pub armed: bool,
    /// When it fires if nobody pushes it again (this machine's Unix ms), while armed.
    pub deadline_ms: Option<TimestampMs>,
    /// Why it is not armed, while not.
    pub why_not: Option<Words>,
}

impl DeadManState {
    pub fn armed(after_minutes: u32, deadline_ms: TimestampMs) -> Self {
        Self {
            after_minutes,
            armed: true,
            deadline_ms: Some(deadline_ms),
            why_not: None,
        }
    }

    pub fn not_armed(after_minutes: u32, why: NotArmed) -> Self {
        Self {
            after_minutes,
            armed: false,
            deadline_ms: None,
            why_not: Some(why.words()),
        }
    }

    /// One short line for the fleet row and the host view: "fires at 14:05 if unwatched" (UTC,
    /// as every time gpufleet shows) or "not armed: why".
    pub fn words(&self) -> Words {
        match (self.armed, self.deadline_ms, &self.why_not) {
            (true, Some(deadline_ms), _) => {
                let (_, _, _, h, m, _, _) = crate::utc::utc_parts(deadline_ms);
                Words::new("dead_man.fires_at").put("time", format!("{h:02}:{m:02}"))
            }
            (_, _, Some(why)) => Words::new("dead_man.not_armed").put_words("why", why.clone()),
            _ => Words::new("dead_man.not_armed_yet"),
        }
    }

    /// The few words of the fleet row while armed: "dead-man 14:05".
    pub fn row_words(&self) -> Option<Words> {
        let deadline_ms = self.deadline_ms.filter(|_| self.armed)?;
        let (_, _, _, h, m, _, _) = crate::utc::utc_parts(deadline_ms);
        Some(Words::new("dead_man.row_armed").put("time", format!("{h:02}:{m:02}")))
    }

    /// Whether the switch ought to be armed and is not (a switch disarmed by hand is not).
    pub fn warns(&self) -> bool {
        !self.armed
            && self
                .why_not
                .as_ref()
                .is_none_or(|w| w.key() != Some("dead_man.why_disarmed"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_says_when_it_fires_or_why_not_in_both_languages() {
        // 2026-12-06T14:05:00Z
        let armed = DeadManState::armed(30, 1_796_565_900_000);
        assert_eq!(
            armed.words().english(),
            "dead-man switch fires at 14:05 UTC if unwatched"
        );
        assert!(armed.words().render("zh-CN").contains("14:05"));
        let not = DeadManState::not_armed(30, NotArmed::NotWritable);
        let english = not.words().english();
        assert!(
            english.starts_with("dead-man switch NOT armed: "),
            "{english}"
        );
        assert!(english.contains("home"), "{english}");
        assert!(!not.words().render("zh-CN").contains("NOT armed"));
    }
}
