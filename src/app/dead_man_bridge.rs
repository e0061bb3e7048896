//! The console's side of the hosts' dead-man switches, over SSH through the console's host
//! runner: `H` pushes a host's switch two hours ahead on a worker thread (answered with
//! [`Event::DeadManHeld`]); quitting with switches armed, when the user chose to disarm them,
//! disarms each at once on worker threads, waited for at most a few seconds so that an
//! unreachable host cannot hold the console open (its switch then stays armed).

use std::sync::Arc;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rust_i18n::t;

use crate::app::event::{Event, EventSink};
use crate::config::DeadManPlan;
use crate::fleet::dead_man::NotArmed;
use crate::release::HostRunner;
use crate::remote::{DeadManAnswer, DeadManStep, dead_man_command, read_dead_man_answer};
use crate::telemetry::source::now_ms;

/// How long quitting waits for the hosts to answer.
const WAIT: Duration = Duration::from_secs(15);
/// How far `H` pushes a switch, as `gpufleet hold`'s default.
const HOLD_S: u64 = 2 * 3_600;

/// Pushes `host`'s switch (`plan`) two hours ahead on a worker thread; the outcome comes back
/// as [`Event::DeadManHeld`]. The thread, when one started.
pub fn hold(
    runner: &Arc<dyn HostRunner + Send + Sync>,
    host: String,
    plan: Option<DeadManPlan>,
    sink: EventSink,
) -> Option<JoinHandle<()>> {
    let command = match dead_man_command(DeadManStep::Arm { after_s: HOLD_S }, plan.as_ref()) {
        Ok(command) => command,
        Err(e) => {
            let why = NotArmed::BadCommand(e.words()).words().localized();
            let _ = sink.send(Event::DeadManHeld {
                outcome: Err(failed(&host, &why)),
            });
            return None;
        }
    };
    let runner = Arc::clone(runner);
    let name = host.clone();
    let spawned = std::thread::Builder::new()
        .name(format!("dead-man-{host}"))
        .spawn(move || {
            let host = name;
            let mut lines = Vec::new();
            let status = runner.run(&host, &command.argv(), &mut |line| {
                if lines.len() < 8 {
                    lines.push(line.to_string());
                }
            });
            let outcome = match status.map(|status| read_dead_man_answer(&lines, status)) {
                Ok(DeadManAnswer::Armed {
                    deadline_s, now_s, ..
                }) => {
                    let at_ms = now_ms().saturating_add(deadline_s.saturating_sub(now_s) * 1_000);
                    let (_, _, _, h, m, _, _) = crate::utc::utc_parts(at_ms);
                    let time = format!("{h:02}:{m:02}");
                    Ok(t!("dead_man.hold_pushed", host = host.as_str(), time = time).into_owned())
                }
                Ok(DeadManAnswer::NotArmed(why)) => Err(failed(&host, &why.words().localized())),
                Ok(DeadManAnswer::Disarmed) => {
                    Err(failed(&host, &NotArmed::DisarmedByHand.words().localized()))
                }
                Err(why) => Err(failed(&host, &why)),
            };
            let _ = sink.send(Event::DeadManHeld { outcome });
        });
    spawned.ok()
}

fn failed(host: &str, why: &str) -> String {
    t!("dead_man.hold_failed", host = host, why = why).into_owned()
}

/// Disarms the switches of `hosts`; the hosts that said they were disarmed.
pub fn disarm(runner: &Arc<dyn HostRunner + Send + Sync>, hosts: &[String]) -> Vec<String> {
    let Ok(command) = dead_man_command(DeadManStep::Disarm, None) else {
        return Vec::new();
    };
    let argv = command.argv();
    let (tx, rx) = mpsc::channel();
    for host in hosts {
        let (runner, argv, tx, name) = (Arc::clone(runner), argv.clone(), tx.clone(), host.clone());
        let spawned = std::thread::Builder::new()
            .name(format!("disarm-{host}"))
            .spawn(move || {
                let host = name;
                let mut lines = Vec::new();
                let status = runner.run(&host, &argv, &mut |line| {
                    if lines.len() < 8 {
                        lines.push(line.to_string());
                    }
                });
                let done = status.is_ok_and(|status| {
                    read_dead_man_answer(&lines, status) == DeadManAnswer::Disarmed
                });
                let _ = tx.send((host, done));
            });
        if let Err(e) = spawned {
            tracing::warn!(host = host.as_str(), error = %e, "dead-man switch not disarmed");
        }
    }
    drop(tx);
    let until = Instant::now() + WAIT;
    let mut disarmed = Vec::new();
    while let Ok((host, done)) = rx.recv_timeout(until.saturating_duration_since(Instant::now())) {
        if done {
            tracing::info!(host = host.as_str(), "dead-man switch disarmed on quitting");
            disarmed.push(host);
        } else {
            tracing::warn!(host = host.as_str(), "dead-man switch not disarmed");
        }
    }
    disarmed
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs each argv with this machine's own `sh`, every host's `$HOME` a directory of its own.
    struct LocalRunner {
        homes: std::path::PathBuf,
    }

    impl HostRunner for LocalRunner {
        fn run(
            &self,
            host: &str,
            argv: &[String],
            on_line: &mut dyn FnMut(&str),
        ) -> Result<Option<i32>, String> {
            let out = std::process::Command::new(&argv[0])
                .args(&argv[1..])
                .env("HOME", self.homes.join(host))
                .output()
                .map_err(|e| e.to_string())?;
            for line in String::from_utf8_lossy(&out.stdout).lines() {
                on_line(line);
            }
            Ok(out.status.code())
        }
    }

    #[test]
    fn each_hosts_switch_is_disarmed_and_a_host_that_cannot_be_reached_is_left_out() {
        let homes = tempfile::tempdir().expect("homes");
        let dir = homes.path().join("a/.gpufleet/dead_man");
        std::fs::create_dir_all(&dir).expect("dir");
        std::fs::write(dir.join("deadline"), "4000000000\n").expect("deadline");
        let runner: Arc<dyn HostRunner + Send + Sync> = Arc::new(LocalRunner {
            homes: homes.path().to_path_buf(),
        });
        let disarmed = disarm(&runner, &["a".to_string(), "gone".to_string()]);
        assert_eq!(disarmed, ["a"]);
        assert!(!homes.path().join("a/.gpufleet").exists());
    }

    #[test]
    fn h_arms_the_switch_two_hours_ahead_and_says_when_it_fires() {
        let homes = tempfile::tempdir().expect("homes");
        std::fs::create_dir(homes.path().join("a")).expect("home");
        let runner: Arc<dyn HostRunner + Send + Sync> = Arc::new(LocalRunner {
            homes: homes.path().to_path_buf(),
        });
        let plan = DeadManPlan {
            after_minutes: 1,
            command: vec!["true".to_string()],
        };
        let (tx, rx) = mpsc::channel();
        let worker = hold(&runner, "a".to_string(), Some(plan), tx).expect("worker");
        worker.join().expect("join");
        let outcome = match rx.recv().expect("answer") {
            Event::DeadManHeld { outcome } => outcome,
            _ => panic!("another event"),
        };
        let text = outcome.expect("pushed");
        assert!(text.contains("pushed back"), "{text}");
        let dir = homes.path().join("a/.gpufleet/dead_man");
        let deadline: u64 = std::fs::read_to_string(dir.join("deadline"))
            .expect("deadline")
            .trim()
            .parse()
            .expect("number");
        let now = now_ms() / 1_000;
        assert!(
            (now + 7_000..=now + 7_300).contains(&deadline),
            "{deadline} {now}"
        );
        assert_eq!(disarm(&runner, &["a".to_string()]), ["a"]);
    }
}
