//! End to end over real sshd: a fleet that connects at once takes a thread for each handshake
//! under way, not one for each host. `gpufleet watch` (the built binary) follows 40 hosts that
//! start together; at most `MAX_CONCURRENT_HANDSHAKES` of them handshake at a time, and the
//! others wait for a slot as tasks on the links' runtime, so the links' threads (the one
//! worker and the connection attempts' pool, all named `ssh-links`) stay near that number
//! while every host still comes to stream.

use crate::common;
use crate::tmux;

use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::sshd::{Sshd, SshdOptions};
use gpufleet::remote::MAX_CONCURRENT_HANDSHAKES;
use tmux::binary;

const HOSTS: usize = 40;
const WAIT: Duration = Duration::from_secs(90);

/// The process's threads named `ssh-links`.
fn link_threads(pid: u32) -> usize {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .filter_map(Result::ok)
        .filter_map(|t| std::fs::read_to_string(t.path().join("comm")).ok())
        .filter(|comm| comm.trim() == "ssh-links")
        .count()
}

/// Hosts the watcher's `/metrics` reports streaming.
fn streaming(addr: &str) -> usize {
    reqwest::blocking::get(format!("http://{addr}/metrics"))
        .and_then(|r| r.text())
        .unwrap_or_default()
        .lines()
        .filter(|l| l.starts_with("gpufleet_host_streaming{") && l.ends_with(" 1"))
        .count()
}

#[test]
fn a_fleet_connecting_at_once_has_a_thread_per_handshake_not_per_host() {
    // Room for every login at once, as each host of a real fleet has its own sshd.
    let Some(sshd) = Sshd::start_with(&SshdOptions {
        max_startups: Some(format!("{}:30:{}", 2 * HOSTS, 4 * HOSTS)),
        ..Default::default()
    }) else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp");
    let mut config = String::from("interval_ms = 1000\n\n");
    for i in 0..HOSTS {
        config.push_str(&format!(
            "[[hosts]]\nname = \"h{i:02}\"\nssh = \"{}@127.0.0.1:{}\"\nidentity_file = \"{}\"\n\n",
            sshd.user,
            sshd.port,
            sshd.client_key().display()
        ));
    }
    let config_path = dir.path().join("config.toml");
    std::fs::write(&config_path, config).expect("config");
    let metrics = TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .to_string();
    let mut child = Command::new(binary())
        .args(["watch", "-q", "--metrics", &metrics, "--config"])
        .arg(&config_path)
        .arg("--known-hosts")
        .arg(sshd.trusted_known_hosts())
        .env("GPUFLEET_STATE_DIR", dir.path().join("state"))
        .env("SSH_AUTH_SOCK", "")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn gpufleet watch");
    let started = Instant::now();
    let mut most = 0;
    let mut live = 0;
    let mut last_scrape = Instant::now();
    while live < HOSTS && started.elapsed() < WAIT {
        most = most.max(link_threads(child.id()));
        if last_scrape.elapsed() >= Duration::from_millis(250) {
            live = streaming(&metrics);
            last_scrape = Instant::now();
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(live, HOSTS, "every host streams");
    // The worker, the handshakes under way, and as many again for a thread that has given its
    // slot back but not yet returned to the pool when the next attempt starts.
    let bound = 1 + 2 * MAX_CONCURRENT_HANDSHAKES;
    assert!(
        most <= bound,
        "{most} link threads while {HOSTS} hosts connected (at most {bound} expected)"
    );
    assert!(most >= 2, "the link threads were seen: {most}");
}
