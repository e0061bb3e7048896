//! The dead-man switch on the host (`[hosts.dead_man]`): a small detached `sh` loop that stops
//! the instance once its deadline file has not been pushed for `after_minutes`, armed at
//! connect and pushed by the link every third of that time over the session it already has.
//!
//! Everything lives in `~/.gpufleet/dead_man/` on the host: `deadline` (Unix seconds, written
//! to a temporary file and moved into place), `pid` (the loop's, written by the loop itself),
//! `owner` (who armed it last: `user@machine` of that gpufleet, [`local_owner`]; a switch left
//! on a host whose config has none is disarmed only by its owner, so a teammate's stays),
//! `lock` (a directory held while a switch is started, so two gpufleets arming the same host
//! at once keep one loop) and, once it fired, `log` (what it ran and how that ended). The loop
//! reads the deadline every ten seconds; when it has passed it removes `deadline` and `pid`,
//! runs the stop command once and exits. It exits as well when `pid` no longer names it (a
//! newer loop took over) or `deadline` is gone (disarmed). Disarming stops the loop and removes
//! the files. Nothing is installed: the loop is a `sh -c` script started with `setsid` and
//! `nohup` (either suffices), its argv the stop command, every word quoted by
//! [`RemoteCommand`].
//!
//! A run prints one line the link reads: `gpufleet-dead-man armed PID DEADLINE NOW` (the
//! host's clock, so the local deadline is right whatever the clocks say), `gpufleet-dead-man
//! disarmed`, `gpufleet-dead-man not-armed WHY`, or, for a stray switch another gpufleet
//! armed, `gpufleet-dead-man kept OWNER`.

use std::time::{Duration, Instant};

use crate::config::DeadManPlan;
use crate::fleet::HostEvent;
use crate::fleet::dead_man::{DeadManState, NotArmed};
use crate::remote::error::RemoteError;
use crate::remote::link::channel_run::RunEvent;
use crate::remote::link::flood::OTHER_BUDGET;
use crate::remote::link::mux::{Mux, Slot};
use crate::remote::link::session_state::{MAX_DEAD_MAN_LINES, SessionState};
use crate::remote::link::{Link, Mode};
use crate::remote::quote::{CommandError, RemoteCommand};
use crate::telemetry::source::now_ms;

/// The first word of every answer line.
const MARK: &str = "gpufleet-dead-man";

/// What a run asks of the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Sets the deadline `after_s` from now (a later one is kept) and starts the loop unless
    /// one runs.
    Arm { after_s: u64 },
    /// As `Arm`, but only where the switch is armed: a switch disarmed by hand or fired stays so.
    Push { after_s: u64 },
    /// Stops the loop and removes the files.
    Disarm,
    /// Changes nothing: says whether a switch runs and when it fires (`gpufleet snapshot`).
    Status,
    /// Disarms a switch only where one runs (a host whose config no longer has one) and this
    /// gpufleet's owner armed it (or no owner is named: an older gpufleet's); changes nothing
    /// elsewhere.
    DisarmStray,
}

/// The loop left running on the host: `$1` the directory, the rest the stop command.
const LOOP: &str = r#"d=$1; shift
echo $$ > "$d/pid.$$" && mv -f "$d/pid.$$" "$d/pid" || exit 1
while :; do
  [ "$(cat "$d/pid" 2>/dev/null)" = "$$" ] || exit 0
  t=$(cat "$d/deadline" 2>/dev/null)
  case $t in ''|*[!0-9]*) exit 0;; esac
  if [ "$(date +%s)" -ge "$t" ]; then
    rm -f "$d/deadline" "$d/pid"
    { printf '%s fired: the deadline %s passed; running:' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$t"; printf ' %s' "$@"; echo; } >> "$d/log"
    "$@" >> "$d/log" 2>&1
    echo "exit status $?" >> "$d/log"
    exit 0
  fi
  sleep 10
done"#;

/// Arms, pushes or disarms: `$1` the step, `$2` seconds to the deadline, `$3` who asks (the
/// owner), `$4` the loop's script, the rest the stop command.
const SCRIPT: &str = r#"m=$1; a=$2; u=$3; l=$4; shift 4
say() { echo "gpufleet-dead-man $*"; }
if [ -z "$HOME" ] || [ ! -d "$HOME" ]; then say not-armed no-home; exit 0; fi
d="$HOME/.gpufleet/dead_man"
alive() {
  p=$(cat "$d/pid" 2>/dev/null)
  case $p in ''|*[!0-9]*) return 1;; esac
  kill -0 "$p" 2>/dev/null || return 1
  if [ -r "/proc/$p/cmdline" ]; then tr '\000' ' ' < "/proc/$p/cmdline" | grep -q gpufleet-dead-man-switch || return 1; fi
  return 0
}
if [ "$m" = stray ]; then
  alive || { say not-armed not-running; exit 0; }
  w=$(head -c 200 "$d/owner" 2>/dev/null | head -n 1)
  if [ -n "$w" ] && [ "$w" != "$u" ]; then say kept "$w"; exit 0; fi
  m=disarm
fi
if [ "$m" = disarm ]; then
  alive && kill "$p" 2>/dev/null
  rm -f "$d/deadline" "$d/pid" "$d/log" "$d/owner" "$d"/deadline.* "$d"/pid.* "$d"/owner.*
  rmdir "$d/lock" "$d" "$HOME/.gpufleet" 2>/dev/null
  say disarmed; exit 0
fi
if [ "$m" != arm ] && [ ! -f "$d/deadline" ]; then
  if [ -f "$d/log" ]; then say not-armed fired; else say not-armed disarmed; fi
  exit 0
fi
if [ "$m" = status ]; then
  if alive; then say armed "$p" "$(cat "$d/deadline")" "$(date +%s)"; else say not-armed not-running; fi
  exit 0
fi
if ! mkdir -p "$d" 2>/dev/null || [ ! -w "$d" ]; then say not-armed not-writable; exit 0; fi
now=$(date +%s); n=$((now + a))
o=$(cat "$d/deadline" 2>/dev/null); case $o in ''|*[!0-9]*) o=0;; esac
if [ "$o" -gt "$n" ]; then n=$o; fi
if ! { echo "$n" > "$d/deadline.$$" && mv -f "$d/deadline.$$" "$d/deadline"; } 2>/dev/null; then say not-armed not-writable; exit 0; fi
if [ "$m" = arm ]; then { printf '%s\n' "$u" > "$d/owner.$$" && mv -f "$d/owner.$$" "$d/owner"; } 2>/dev/null; fi
i=0
while ! mkdir "$d/lock" 2>/dev/null; do
  i=$((i + 1)); if [ "$i" -ge 5 ]; then rmdir "$d/lock" 2>/dev/null; fi; sleep 1
done
if ! alive; then
  s=; command -v setsid >/dev/null 2>&1 && s=setsid
  h=; command -v nohup >/dev/null 2>&1 && h=nohup
  if [ -z "$s$h" ]; then rmdir "$d/lock"; say not-armed no-detach; exit 0; fi
  rm -f "$d/pid"
  $s $h sh -c "$l" gpufleet-dead-man-switch "$d" "$@" </dev/null >/dev/null 2>&1 &
  i=0
  while [ "$i" -lt 30 ] && ! alive; do i=$((i + 1)); sleep 0.1 2>/dev/null || sleep 1; done
fi
if alive; then say armed "$p" "$n" "$now"; else say not-armed start-failed; fi
rmdir "$d/lock" 2>/dev/null; exit 0"#;

/// The command line for `step`; the stop command comes from `plan` (a disarm needs none).
pub fn switch_command(
    step: Step,
    plan: Option<&DeadManPlan>,
) -> Result<RemoteCommand, CommandError> {
    let (word, after_s) = match step {
        Step::Arm { after_s } => ("arm", after_s),
        Step::Push { after_s } => ("push", after_s),
        Step::Disarm => ("disarm", 0),
        Step::Status => ("status", 0),
        Step::DisarmStray => ("stray", 0),
    };
    let mut command = RemoteCommand::new("sh")
        .args(["-c", SCRIPT, "sh", word])
        .arg(after_s.to_string())
        .arg(local_owner())
        .arg(LOOP);
    if matches!(step, Step::Arm { .. } | Step::Push { .. }) {
        let Some(plan) = plan else {
            return Err(CommandError::EmptyProgram);
        };
        command = command.args(plan.command.iter().cloned());
    }
    // Checked here, so a stop command that cannot be sent is said before anything runs.
    command.to_shell()?;
    Ok(command)
}

/// Who this gpufleet arms switches as: `user@machine` (the local user, the kernel's host
/// name), as one safe word ([`crate::paths::lossy_host_name`]), at most 100 bytes.
pub fn local_owner() -> String {
    static OWNER: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    OWNER
        .get_or_init(|| {
            let owner = format!(
                "{}@{}",
                crate::remote::target::local_user(),
                crate::remote::target::local_machine_name()
            );
            crate::paths::lossy_host_name(&owner)
                .chars()
                .take(100)
                .collect()
        })
        .clone()
}

/// The owner a stray switch was left to, when the run kept it (`kept OWNER`), sanitized.
pub fn kept_by(lines: &[String]) -> Option<String> {
    lines.iter().rev().find_map(|line| {
        let owner = line.strip_prefix(MARK)?.strip_prefix(" kept ")?;
        Some(crate::remote::sanitize(owner.trim()))
    })
}

/// What a run answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// The loop `pid` runs; it fires at `deadline_s` of the host's clock, which read `now_s`.
    Armed {
        pid: u32,
        deadline_s: u64,
        now_s: u64,
    },
    Disarmed,
    NotArmed(NotArmed),
}

/// Reads a run's output: the last answer line wins; `status` is how the run ended.
pub fn read_answer(lines: &[String], status: Option<i32>) -> Answer {
    let answer = lines.iter().rev().find_map(|line| {
        let mut words = line.strip_prefix(MARK)?.strip_prefix(' ')?.split(' ');
        match words.next()? {
            "armed" => {
                let mut number = || words.next().and_then(|w| w.trim().parse::<u64>().ok());
                let pid = u32::try_from(number()?).ok()?;
                Some(Answer::Armed {
                    pid,
                    deadline_s: number()?,
                    now_s: number()?,
                })
            }
            "disarmed" => Some(Answer::Disarmed),
            "not-armed" => Some(Answer::NotArmed(match words.next()?.trim() {
                "no-home" => NotArmed::NoHome,
                "not-writable" => NotArmed::NotWritable,
                "no-detach" => NotArmed::NoDetach,
                "fired" => NotArmed::Fired,
                "disarmed" => NotArmed::DisarmedByHand,
                "not-running" => NotArmed::NotRunning,
                _ => NotArmed::StartFailed,
            })),
            _ => None,
        }
    });
    answer.unwrap_or(Answer::NotArmed(NotArmed::NoShell { status }))
}

impl Link {
    /// Arms the switch at connect where the host has one (a one-shot reading only asks how
    /// it stands).
    pub(super) fn dead_man_start(&mut self, st: &mut SessionState) {
        let stray = self.host.disarm_stray_switch && self.mode == Mode::Follow;
        if self.host.dead_man.is_some() || stray {
            st.dead_man.due = Some(Instant::now());
        }
    }

    /// A host of the config without a switch: one left running there by an earlier config is
    /// disarmed, once a session.
    fn dead_man_stray(&mut self, mux: &mut Mux, st: &mut SessionState) -> Result<(), RemoteError> {
        let now = Instant::now();
        if st.dead_man.due.is_none_or(|t| now < t) || mux.running(Slot::DeadMan) {
            return Ok(());
        }
        st.dead_man.due = None;
        if let Ok(command) = switch_command(Step::DisarmStray, None) {
            st.dead_man.lines.clear();
            st.dead_man.running = true;
            mux.start(Slot::DeadMan, &command.to_shell()?, OTHER_BUDGET)?;
        }
        Ok(())
    }

    /// Arms or pushes when due; the next push a third of `after_minutes` later.
    pub(super) fn dead_man_timers(
        &mut self,
        mux: &mut Mux,
        st: &mut SessionState,
    ) -> Result<(), RemoteError> {
        let Some(plan) = self.host.dead_man.clone() else {
            return self.dead_man_stray(mux, st);
        };
        let now = Instant::now();
        if st.dead_man.due.is_none_or(|t| now < t) || mux.running(Slot::DeadMan) {
            return Ok(());
        }
        let step = if self.mode == Mode::Once {
            Step::Status
        } else if st.dead_man.armed_once {
            Step::Push {
                after_s: plan.after_s(),
            }
        } else {
            Step::Arm {
                after_s: plan.after_s(),
            }
        };
        st.dead_man.due =
            (self.mode == Mode::Follow).then(|| now + Duration::from_secs(plan.push_every_s()));
        match switch_command(step, Some(&plan)) {
            Ok(command) => {
                st.dead_man.lines.clear();
                st.dead_man.running = true;
                mux.start(Slot::DeadMan, &command.to_shell()?, OTHER_BUDGET)?;
            }
            Err(e) => {
                self.dead_man_report(st, &plan, Answer::NotArmed(NotArmed::BadCommand(e.words())))
            }
        }
        Ok(())
    }

    /// A line or the end of a run.
    pub(super) fn dead_man_event(&mut self, st: &mut SessionState, event: RunEvent) {
        let Some(plan) = self.host.dead_man.clone() else {
            return self.dead_man_stray_event(st, event);
        };
        match event {
            RunEvent::Line(line) => {
                if st.dead_man.lines.len() < MAX_DEAD_MAN_LINES {
                    st.dead_man.lines.push(line);
                }
            }
            RunEvent::Exited { status } => {
                st.dead_man.running = false;
                let lines = std::mem::take(&mut st.dead_man.lines);
                let answer = read_answer(&lines, status);
                if matches!(answer, Answer::Armed { .. }) {
                    st.dead_man.armed_once = true;
                }
                self.dead_man_report(st, &plan, answer);
            }
            RunEvent::Refused(why) => {
                st.dead_man.running = false;
                st.dead_man.lines.clear();
                self.dead_man_report(st, &plan, Answer::NotArmed(NotArmed::Refused(why)));
            }
            RunEvent::Flooded(flood) => {
                st.dead_man.running = false;
                st.dead_man.lines.clear();
                self.on_flood(st, Slot::DeadMan, &flood);
            }
            RunEvent::Bytes(_) => {}
        }
    }

    /// The stray switch's run: one disarmed, or one left to its owner, is news.
    fn dead_man_stray_event(&mut self, st: &mut SessionState, event: RunEvent) {
        match event {
            RunEvent::Line(line) => {
                if st.dead_man.lines.len() < MAX_DEAD_MAN_LINES {
                    st.dead_man.lines.push(line);
                }
            }
            RunEvent::Exited { status } => {
                st.dead_man.running = false;
                let lines = std::mem::take(&mut st.dead_man.lines);
                let text = match (kept_by(&lines), read_answer(&lines, status)) {
                    (Some(owner), _) => {
                        crate::words::Words::new("dead_man_stray.kept").put("owner", owner)
                    }
                    (None, Answer::Disarmed) => crate::words::Words::new("dead_man_stray.disarmed"),
                    (None, _) => return,
                };
                self.emit_or_hold(
                    st,
                    HostEvent::Notice {
                        at_ms: now_ms(),
                        text,
                    },
                );
            }
            RunEvent::Refused(_) => {
                st.dead_man.running = false;
                st.dead_man.lines.clear();
            }
            RunEvent::Flooded(flood) => {
                st.dead_man.running = false;
                st.dead_man.lines.clear();
                self.on_flood(st, Slot::DeadMan, &flood);
            }
            RunEvent::Bytes(_) => {}
        }
    }

    fn dead_man_report(&mut self, st: &mut SessionState, plan: &DeadManPlan, answer: Answer) {
        let at_ms = now_ms();
        let state = match answer {
            Answer::Armed {
                deadline_s, now_s, ..
            } => DeadManState::armed(
                plan.after_minutes,
                at_ms.saturating_add(deadline_s.saturating_sub(now_s).saturating_mul(1_000)),
            ),
            Answer::Disarmed => {
                DeadManState::not_armed(plan.after_minutes, NotArmed::DisarmedByHand)
            }
            Answer::NotArmed(why) => DeadManState::not_armed(plan.after_minutes, why),
        };
        self.emit_or_hold(st, HostEvent::DeadMan { at_ms, state });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(argv: &[&str]) -> DeadManPlan {
        DeadManPlan {
            after_minutes: 1,
            command: argv.iter().map(|s| (*s).to_string()).collect(),
        }
    }

    /// Runs a step with this machine's own `sh`, with `home` as `$HOME`.
    fn run(step: Step, plan: Option<&DeadManPlan>, home: &std::path::Path) -> Answer {
        let command = switch_command(step, plan)
            .expect("command")
            .to_shell()
            .expect("shell");
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(command)
            .env("HOME", home)
            .output()
            .expect("sh");
        let text = String::from_utf8_lossy(&out.stdout);
        read_answer(
            &text.lines().map(str::to_string).collect::<Vec<_>>(),
            out.status.code(),
        )
    }

    fn pid_alive(pid: u32) -> bool {
        std::path::Path::new(&format!("/proc/{pid}")).exists()
    }

    #[test]
    fn answers_are_read_from_their_line_and_anything_else_says_no_shell() {
        let lines = |l: &[&str]| l.iter().map(|s| (*s).to_string()).collect::<Vec<_>>();
        assert_eq!(
            read_answer(
                &lines(&["motd", "gpufleet-dead-man armed 42 1000 940"]),
                Some(0)
            ),
            Answer::Armed {
                pid: 42,
                deadline_s: 1000,
                now_s: 940
            }
        );
        assert_eq!(
            read_answer(&lines(&["gpufleet-dead-man not-armed no-detach"]), Some(0)),
            Answer::NotArmed(NotArmed::NoDetach)
        );
        assert_eq!(
            read_answer(&lines(&["sh: not found"]), Some(127)),
            Answer::NotArmed(NotArmed::NoShell { status: Some(127) })
        );
        assert_eq!(
            read_answer(&lines(&["gpufleet-dead-man armed x 1 2"]), Some(0)),
            Answer::NotArmed(NotArmed::NoShell { status: Some(0) })
        );
    }

    #[test]
    fn the_stop_command_travels_as_quoted_words() {
        let command = switch_command(
            Step::Arm { after_s: 60 },
            Some(&plan(&["touch", "/tmp/a b; rm -rf /"])),
        )
        .expect("command")
        .to_shell()
        .expect("shell");
        assert!(
            command.ends_with(" touch '/tmp/a b; rm -rf /'"),
            "{command}"
        );
        let nul = switch_command(Step::Arm { after_s: 60 }, Some(&plan(&["a\0b"])));
        assert!(nul.is_err());
    }

    /// Arm, arm again (one loop), push, disarm: with this machine's `sh`, in a home of its own.
    #[test]
    fn arming_twice_keeps_one_switch_and_disarming_leaves_nothing() {
        let home = tempfile::tempdir().expect("home");
        let marker = home.path().join("stopped");
        let marker_arg = marker.to_string_lossy().into_owned();
        let plan = plan(&["touch", &marker_arg]);
        let first = run(Step::Arm { after_s: 600 }, Some(&plan), home.path());
        let Answer::Armed {
            pid,
            deadline_s,
            now_s,
        } = first
        else {
            panic!("not armed: {first:?}");
        };
        assert!((599..=601).contains(&(deadline_s - now_s)), "{first:?}");
        assert!(pid_alive(pid));
        let again = run(Step::Arm { after_s: 600 }, Some(&plan), home.path());
        assert!(
            matches!(again, Answer::Armed { pid: p, .. } if p == pid),
            "a second loop: {again:?}"
        );
        // A shorter push keeps the later deadline.
        let pushed = run(Step::Push { after_s: 60 }, Some(&plan), home.path());
        assert!(
            matches!(pushed, Answer::Armed { deadline_s: d, .. } if d >= deadline_s),
            "{pushed:?}"
        );
        assert_eq!(run(Step::Disarm, None, home.path()), Answer::Disarmed);
        for _ in 0..50 {
            if !pid_alive(pid) {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        assert!(!pid_alive(pid), "the loop still runs");
        assert!(!home.path().join(".gpufleet").exists(), "files left behind");
        assert!(!marker.exists(), "the stop command ran");
        // Pushed after a disarm: stays disarmed.
        assert_eq!(
            run(Step::Push { after_s: 60 }, Some(&plan), home.path()),
            Answer::NotArmed(NotArmed::DisarmedByHand)
        );
    }

    /// A deadline that passed: the loop runs the stop command once, logs it and exits.
    #[test]
    fn a_passed_deadline_runs_the_stop_command_once() {
        let home = tempfile::tempdir().expect("home");
        let marker = home.path().join("stopped");
        let marker_arg = marker.to_string_lossy().into_owned();
        let plan = plan(&["sh", "-c", "echo stopped >> \"$0\"", &marker_arg]);
        let armed = run(Step::Arm { after_s: 600 }, Some(&plan), home.path());
        assert!(matches!(armed, Answer::Armed { .. }), "{armed:?}");
        assert!(!marker.exists(), "fired before its deadline");
        // Ten minutes pass: the deadline file says a time long gone.
        let dir = home.path().join(".gpufleet/dead_man");
        std::fs::write(dir.join("deadline.t"), "1\n").expect("write");
        std::fs::rename(dir.join("deadline.t"), dir.join("deadline")).expect("mv");
        let mut fired = false;
        // The loop reads the deadline every ten seconds.
        for _ in 0..150 {
            if marker.exists() {
                fired = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        assert!(fired, "the stop command did not run");
        std::thread::sleep(Duration::from_millis(300));
        let log = std::fs::read_to_string(home.path().join(".gpufleet/dead_man/log")).expect("log");
        assert!(
            log.contains("fired") && log.contains("exit status 0"),
            "{log}"
        );
        assert_eq!(
            std::fs::read_to_string(&marker).expect("marker"),
            "stopped\n"
        );
        assert_eq!(
            run(Step::Push { after_s: 60 }, Some(&plan), home.path()),
            Answer::NotArmed(NotArmed::Fired)
        );
        assert_eq!(run(Step::Disarm, None, home.path()), Answer::Disarmed);
    }

    #[test]
    fn a_home_that_cannot_be_written_or_is_missing_is_said() {
        // Nobody, root included, makes a directory in /proc.
        let answer = run(
            Step::Arm { after_s: 60 },
            Some(&plan(&["true"])),
            std::path::Path::new("/proc"),
        );
        assert_eq!(answer, Answer::NotArmed(NotArmed::NotWritable));
        let home = tempfile::tempdir().expect("home");
        let missing = run(
            Step::Arm { after_s: 60 },
            Some(&plan(&["true"])),
            &home.path().join("gone"),
        );
        assert_eq!(missing, Answer::NotArmed(NotArmed::NoHome));
    }
}
