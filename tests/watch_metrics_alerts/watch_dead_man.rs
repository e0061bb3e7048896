//! The dead-man switch end to end, with the release binary and a real sshd host: with
//! `[hosts.dead_man] after_minutes = 1` and a stop command of its own (a stand-in that writes a
//! file: no test ever shuts a machine down), the host is not stopped while `gpufleet watch`
//! runs, well past the minute, and stops itself within about two minutes once the watcher is
//! killed with SIGKILL. `gpufleet hold h1 --disarm` then removes what was left on the host.

use crate::common;
use crate::tmux;
use crate::watcher;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::sshd::{Sshd, SshdOptions};
use tmux::binary;
use watcher::Watcher;

/// How long the watcher is left to watch after the switch is armed: past the minute and the
/// switch's ten-second check, so a switch that was not pushed would have fired.
const WATCHED: Duration = Duration::from_secs(80);
/// After the watcher dies: the minute since its last push (at most 20 s before), the check
/// every ten seconds, and room for a slow machine.
const FIRES_WITHIN: Duration = Duration::from_secs(120);

fn wait_until(what: &str, within: Duration, log: &dyn Fn() -> String, ok: impl FnMut() -> bool) {
    watcher::wait_until(what, within, log, ok);
}

#[test]
fn an_unwatched_host_stops_itself_and_a_watched_one_does_not() {
    let dir = tempfile::tempdir().expect("temp");
    let home = dir.path().join("home");
    std::fs::create_dir(&home).expect("home");
    let Some(sshd) = Sshd::start_with(&SshdOptions {
        home: Some(home.clone()),
        ..Default::default()
    }) else {
        return;
    };
    sshd.set_scenario("idle");
    let known_hosts = dir.path().join("known_hosts");
    std::fs::write(&known_hosts, sshd.known_hosts_line("ed25519")).expect("known_hosts");
    let stopped = dir.path().join("stopped");
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "interval_ms = 500\n\n[[hosts]]\nname = \"h1\"\nssh = \"{}@127.0.0.1:{}\"\n\
             identity_file = \"{}\"\n\n[hosts.dead_man]\nafter_minutes = 1\n\
             command = [\"touch\", \"{}\"]\n",
            sshd.user,
            sshd.port,
            sshd.client_key().display(),
            stopped.display()
        ),
    )
    .expect("config");
    let state = dir.path().join("state");
    let deadline = home.join(".gpufleet/dead_man/deadline");

    let watcher = Watcher::start(
        &binary(),
        &config,
        &known_hosts,
        &state,
        &dir.path().join("watch.log"),
    );
    let log = || watcher.log();
    wait_until("the switch is armed", Duration::from_secs(30), &log, || {
        deadline.is_file()
    });
    let armed_at = Instant::now();
    // The file is written on the host a moment before the link reads the answer and logs it.
    wait_until("the log says so", Duration::from_secs(10), &log, || {
        watcher.log().contains("dead-man switch")
    });
    while armed_at.elapsed() < WATCHED {
        assert!(
            !exists(&stopped),
            "stopped while watched, after {:?}:\n{}",
            armed_at.elapsed(),
            watcher.log()
        );
        std::thread::sleep(Duration::from_millis(500));
    }

    // SIGKILL: nothing gets to disarm or say goodbye.
    let last_log = watcher.log();
    drop(watcher);
    let killed_at = Instant::now();
    wait_until(
        "the unwatched host stops itself",
        FIRES_WITHIN,
        &|| last_log.clone(),
        || exists(&stopped),
    );
    let after = killed_at.elapsed();
    let switch_log =
        std::fs::read_to_string(home.join(".gpufleet/dead_man/log")).expect("the switch's log");
    assert!(
        switch_log.contains("fired") && switch_log.contains("exit status 0"),
        "{switch_log}"
    );
    assert!(
        switch_log.contains(&stopped.display().to_string()),
        "{switch_log}"
    );
    assert!(
        after >= Duration::from_secs(20),
        "fired too soon: {after:?}"
    );

    // Disarmed from a shell: nothing is left on the host.
    let out = Command::new(binary())
        .args(["hold", "h1", "--disarm", "--known-hosts"])
        .arg(&known_hosts)
        .arg("--config")
        .arg(&config)
        .env("GPUFLEET_STATE_DIR", &state)
        .env("SSH_AUTH_SOCK", "")
        .stdin(Stdio::null())
        .output()
        .expect("gpufleet hold --disarm");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("disarmed"), "{said}");
    assert!(!home.join(".gpufleet").exists(), "files left on the host");
}

fn exists(path: &Path) -> bool {
    path.exists()
}
