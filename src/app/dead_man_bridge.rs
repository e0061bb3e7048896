//! The console's side of quitting with dead-man switches armed, when the user chose to disarm
//! them: each host's switch is disarmed over SSH through the console's host runner, all at once
//! on worker threads, waited for at most a few seconds so that an unreachable host cannot hold
//! the console open (its switch then stays armed).

use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::release::HostRunner;
use crate::remote::{DeadManAnswer, DeadManStep, dead_man_command, read_dead_man_answer};

/// How long quitting waits for the hosts to answer.
const WAIT: Duration = Duration::from_secs(15);

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
}
