//! End to end over a real sshd: the console asks about the unknown host key, the user accepts,
//! the host goes live with the replayed H200 readings; a declined key is asked again with `K`;
//! `snapshot` over SSH.

use crate::common;
use crate::tmux;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::sshd::Sshd;
use tmux::{Tmux, binary};

const WAIT: Duration = Duration::from_secs(20);

/// A config with one host: the test sshd, logged into with its client key.
fn write_config(sshd: &Sshd, dir: &Path) -> std::path::PathBuf {
    let path = dir.join("config.toml");
    let text = format!(
        "interval_ms = 500\n\n[[hosts]]\nname = \"h200-test\"\nssh = \"{}@127.0.0.1:{}\"\nidentity_file = \"{}\"\n",
        sshd.user,
        sshd.port,
        sshd.client_key().display()
    );
    std::fs::write(&path, text).expect("config");
    path
}

#[test]
fn unknown_host_key_is_asked_then_the_host_streams() {
    let Some(sshd) = Sshd::start() else { return };
    let dir = tempfile::tempdir().expect("temp");
    let config = write_config(&sshd, dir.path());
    let known_hosts = dir.path().join("known_hosts");
    let command = format!(
        "SSH_AUTH_SOCK= {} --config {} --known-hosts {}; echo EXIT=$?; sleep 30",
        binary().display(),
        config.display(),
        known_hosts.display()
    );
    let Some(tmux) = Tmux::start(&command, 100, 30) else {
        return;
    };
    let dialog = tmux.wait_for("Unknown host key", WAIT);
    let fingerprint = common::sshd::fingerprint_of(&sshd.host_key_pub("ed25519"));
    assert!(
        dialog.contains(&fingerprint),
        "fingerprint shown:\n{dialog}"
    );
    assert!(
        !known_hosts.exists(),
        "nothing written before the user says yes"
    );

    tmux.keys(&["y"]);
    let live = tmux.wait_for("1x H200", WAIT);
    assert!(live.contains("h200-test"), "{live}");
    assert!(live.contains("live"), "{live}");
    let written = std::fs::read_to_string(&known_hosts).expect("known_hosts written");
    assert!(
        written.contains(&format!("[127.0.0.1]:{}", sshd.port)),
        "{written}"
    );

    tmux.keys(&["Enter"]);
    let host = tmux.wait_for("580.159.04", WAIT);
    assert!(host.contains("CUDA 13.0"), "{host}");
    assert!(
        host.contains("python3"),
        "the replayed process is listed:\n{host}"
    );

    tmux.keys(&["q"]);
    let after = tmux.wait_for("EXIT=", WAIT);
    assert!(after.contains("EXIT=0"), "{after}");
}

#[test]
fn a_declined_host_key_never_logs_in_until_k_asks_again() {
    let Some(sshd) = Sshd::start() else { return };
    let dir = tempfile::tempdir().expect("temp");
    let config = write_config(&sshd, dir.path());
    let known_hosts = dir.path().join("known_hosts");
    let command = format!(
        "SSH_AUTH_SOCK= {} --config {} --known-hosts {}; echo EXIT=$?; sleep 30",
        binary().display(),
        config.display(),
        known_hosts.display()
    );
    let Some(tmux) = Tmux::start(&command, 100, 30) else {
        return;
    };
    tmux.wait_for("Unknown host key", WAIT);
    // Keys meant for the screen below do not answer the question.
    tmux.keys(&["Down", "PageDown", "Enter", "Space"]);
    let asked = tmux.screen();
    assert!(asked.contains("Unknown host key"), "{asked}");
    assert!(asked.contains("n / Esc"), "{asked}");
    tmux.keys(&["n"]);
    let refused = tmux.wait_for("K asks again", WAIT);
    assert!(!refused.contains("Unknown host key"), "{refused}");
    assert!(!refused.contains("not retrying"), "{refused}");
    assert!(!known_hosts.exists(), "a declined key is not recorded");
    assert!(
        sshd.calls("nvidia-smi").is_empty(),
        "nothing ran on a host whose key was declined"
    );
    // K on the row: the link connects again and the question comes back.
    tmux.keys(&["K"]);
    tmux.wait_for("Unknown host key", WAIT);
    tmux.keys(&["y"]);
    let live = tmux.wait_for("1x H200", WAIT);
    assert!(live.contains("live"), "{live}");
    assert!(known_hosts.exists(), "accepted the second time");
    tmux.keys(&["q"]);
    tmux.wait_for("EXIT=0", WAIT);
}

#[test]
fn snapshot_over_ssh_reads_the_replayed_h200() {
    let Some(sshd) = Sshd::start() else { return };
    let dir = tempfile::tempdir().expect("temp");
    let config = write_config(&sshd, dir.path());
    let out = Command::new(binary())
        .env("SSH_AUTH_SOCK", "")
        .args(["snapshot", "--json", "--accept-new-host-keys", "--config"])
        .arg(&config)
        .arg("--known-hosts")
        .arg(dir.path().join("known_hosts"))
        .output()
        .expect("snapshot");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    let host = &doc["hosts"][0];
    assert_eq!(host["name"], "h200-test");
    assert_eq!(host["status"], "live");
    assert_eq!(host["driver_version"], "580.159.04");
    assert_eq!(host["cuda_version"], "13.0");
    let gpu = &host["gpus"][0];
    assert_eq!(gpu["name"], "NVIDIA H200");
    assert_eq!(gpu["memory_total_mib"], 143771);
    assert_eq!(gpu["power_limit_w"], 700.0);
    assert_eq!(host["processes"][0]["name"], "python3");
}

#[test]
fn snapshot_of_a_host_that_is_down_is_a_row_and_exit_1() {
    let Some(mut sshd) = Sshd::start() else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp");
    let config = write_config(&sshd, dir.path());
    sshd.kill();
    let out = Command::new(binary())
        .env("SSH_AUTH_SOCK", "")
        .args(["snapshot", "--accept-new-host-keys", "--config"])
        .arg(&config)
        .arg("--known-hosts")
        .arg(dir.path().join("known_hosts"))
        .output()
        .expect("snapshot");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("h200-test"), "{stdout}");
    assert!(stdout.contains("unreachable"), "{stdout}");
}
