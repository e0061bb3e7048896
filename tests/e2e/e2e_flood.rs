//! End to end: the built binary watches one flooding host among normal ones, over real sshd.
//! The console must flag the host, stay responsive (it quits on `q`) and keep its memory flat
//! (at most 200 MB resident, read from `/proc` while it runs); `snapshot --json` must end and
//! say which host floods.

use crate::common;
use crate::tmux;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::sshd::Sshd;
use tmux::{Tmux, binary};

const RSS_LIMIT_KB: u64 = 200 * 1024;
const WAIT: Duration = Duration::from_secs(20);

/// Three hosts: `flood` (its nvidia-smi floods) and two that stream normally; all trusted.
fn fleet(dir: &Path) -> Option<(Vec<Sshd>, PathBuf, PathBuf)> {
    let servers: Vec<Sshd> = (0..3).filter_map(|_| Sshd::start()).collect();
    if servers.len() < 3 {
        return None;
    }
    servers[0].set_scenario("flood");
    let mut config = String::from("interval_ms = 500\n");
    let mut known = String::new();
    for (s, name) in servers.iter().zip(["flood", "calm-a", "calm-b"]) {
        config.push_str(&format!(
            "\n[[hosts]]\nname = \"{name}\"\nssh = \"{}@127.0.0.1:{}\"\nidentity_file = \"{}\"\n",
            s.user,
            s.port,
            s.client_key().display()
        ));
        known.push_str(&s.known_hosts_line("ed25519"));
    }
    let config_path = dir.join("config.toml");
    let known_path = dir.join("known_hosts");
    std::fs::write(&config_path, config).expect("config");
    std::fs::write(&known_path, known).expect("known_hosts");
    Some((servers, config_path, known_path))
}

/// The console's pid: the process whose program is the binary and whose arguments name
/// `config`.
fn console_pid(config: &Path) -> Option<u32> {
    let wanted = config.display().to_string();
    std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .find_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
            let args: Vec<String> = cmdline
                .split(|&b| b == 0)
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect();
            let program = args.first()?;
            (program.ends_with("gpufleet") && args.contains(&wanted)).then_some(pid)
        })
}

fn status_kb(pid: u32, field: &str) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find(|l| l.starts_with(field))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Fails the test (killing the console first, so a runaway does not take the machine) when
/// its peak resident memory passed the limit.
fn check_memory(pid: u32) -> u64 {
    let peak = status_kb(pid, "VmHWM:").unwrap_or(0);
    if peak > RSS_LIMIT_KB {
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
        panic!("the console's peak RSS reached {} MB", peak / 1024);
    }
    peak
}

#[test]
fn a_flooding_host_leaves_the_console_responsive_and_its_memory_flat() {
    let dir = tempfile::tempdir().expect("temp");
    let Some((servers, config, known)) = fleet(dir.path()) else {
        return;
    };
    let command = format!(
        "SSH_AUTH_SOCK= {} --config {} --known-hosts {}; echo EXIT=$?; sleep 30",
        binary().display(),
        config.display(),
        known.display()
    );
    let Some(tmux) = Tmux::start(&command, 160, 30) else {
        return;
    };
    let start = Instant::now();
    let pid = loop {
        if let Some(pid) = console_pid(&config) {
            break pid;
        }
        assert!(start.elapsed() < WAIT, "the console never started");
        std::thread::sleep(Duration::from_millis(20));
    };
    // Watch memory the whole time: until the flag shows, then five seconds more of flood.
    let mut flagged_at = None;
    let mut screen = String::new();
    while flagged_at.is_none_or(|t: Instant| t.elapsed() < Duration::from_secs(5)) {
        check_memory(pid);
        screen = tmux.screen();
        let rows_ok = screen
            .lines()
            .any(|l| l.contains("flood ") && l.contains("flooding"))
            && screen
                .lines()
                .filter(|l| l.contains("calm-") && l.contains("live"))
                .count()
                == 2;
        if flagged_at.is_none() && rows_ok {
            flagged_at = Some(Instant::now());
        }
        assert!(
            start.elapsed() < WAIT + Duration::from_secs(5),
            "no flooding row beside two live ones; screen:\n{screen}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let peak = check_memory(pid);
    eprintln!("console peak RSS with a flooding host: {} MB", peak / 1024);
    assert!(
        screen.contains("over budget"),
        "the reason shows:\n{screen}"
    );

    // Keys still get through: `q` quits at once.
    let asked = Instant::now();
    tmux.keys(&["q"]);
    let after = tmux.wait_for("EXIT=", Duration::from_secs(5));
    assert!(after.contains("EXIT=0"), "{after}");
    assert!(
        asked.elapsed() < Duration::from_secs(3),
        "{:?}",
        asked.elapsed()
    );

    // And nothing it started on the hosts outlives it (the kernel followers included).
    let quit = Instant::now();
    let left = loop {
        let left: Vec<u32> = servers.iter().flat_map(Sshd::host_processes).collect();
        if left.is_empty() || quit.elapsed() > Duration::from_secs(5) {
            break left;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(left.is_empty(), "still running on the hosts: {left:?}");
}

#[test]
fn snapshot_ends_and_says_which_host_floods() {
    let dir = tempfile::tempdir().expect("temp");
    let Some((_servers, config, known)) = fleet(dir.path()) else {
        return;
    };
    let mut child = Command::new(binary())
        .env("SSH_AUTH_SOCK", "")
        .args(["snapshot", "--json", "--config"])
        .arg(&config)
        .arg("--known-hosts")
        .arg(&known)
        .stdout(Stdio::piped())
        .spawn()
        .expect("snapshot");
    let start = Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            break;
        }
        check_memory(child.id());
        if start.elapsed() > Duration::from_secs(15) {
            let _ = child.kill();
            panic!("snapshot did not end within 15 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().expect("output");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let hosts = doc["hosts"].as_array().expect("hosts");
    assert_eq!(hosts[0]["name"], "flood");
    assert_eq!(hosts[0]["flooding"], true, "{:#}", hosts[0]);
    assert_eq!(hosts[0]["status"], "flooding");
    assert!(
        hosts[0]["status_detail"]
            .as_str()
            .is_some_and(|d| d.contains("over budget")),
        "{:#}",
        hosts[0]
    );
    for calm in &hosts[1..] {
        assert_eq!(calm["flooding"], false);
        assert_eq!(calm["status"], "live");
    }
    assert_eq!(out.status.code(), Some(1), "not every host read cleanly");
}
