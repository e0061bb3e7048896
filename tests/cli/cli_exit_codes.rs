//! Exit codes a script depends on: Ctrl-C is 130 everywhere (a one-shot command, the watcher,
//! the console), as is a declined confirmation (`cli_commands.rs` for `release`; SIGTERM ending
//! the watcher with 0 is in `watch.rs`).

use crate::cli;
use crate::tmux;

use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use cli::Home;

/// Waits until `child` catches SIGINT (its handler is installed: `SigCgt` in /proc), so the
/// signal sent next meets the program, not the default action.
fn wait_until_catching_sigint(child: &Child) {
    let status = format!("/proc/{}/status", child.id());
    let start = Instant::now();
    loop {
        let text = std::fs::read_to_string(&status).unwrap_or_default();
        let caught = text
            .lines()
            .find_map(|l| l.strip_prefix("SigCgt:"))
            .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
            .is_some_and(|mask| mask & (1 << (libc::SIGINT - 1)) != 0);
        if caught {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "SIGINT never handled: {text}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn interrupt(child: &mut Child) -> Option<i32> {
    wait_until_catching_sigint(child);
    // Let it reach what it waits on (its input, its loop).
    std::thread::sleep(Duration::from_millis(300));
    let pid = i32::try_from(child.id()).expect("pid");
    // SAFETY: kill(2) on our own child's pid.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status.code();
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "still running after SIGINT"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn ctrl_c_during_a_one_shot_command_exits_130() {
    let home = Home::new();
    // `diagnose` waiting for its input on a pipe that stays open.
    let mut child = home
        .command(&["diagnose"])
        .stdin(Stdio::piped())
        .spawn()
        .expect("spawn");
    let code = interrupt(&mut child);
    assert_eq!(code, Some(130), "exit status, not a death by signal");
}

#[test]
fn ctrl_c_stops_the_watcher_with_130() {
    let home = Home::new();
    let mut child = home
        .command(&["watch", "--demo"])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    assert_eq!(interrupt(&mut child), Some(130));
}

#[test]
fn ctrl_c_in_the_console_exits_130_and_q_exits_0() {
    let home = Home::new();
    let env = format!(
        "HOME={0} XDG_CONFIG_HOME={0}/xdg-config XDG_STATE_HOME={0}/xdg-state GPUFLEET_STATE_DIR={0}/state",
        home.path().display()
    );
    for (key, code) in [("C-c", "EXIT=130"), ("q", "EXIT=0")] {
        let command = format!(
            "env {env} {} --demo; echo EXIT=$?; sleep 30",
            cli::binary().display()
        );
        let Some(tmux) = tmux::Tmux::start(&command, 100, 30) else {
            return;
        };
        tmux.wait_for("train-h100x8", Duration::from_secs(20));
        tmux.keys(&[key]);
        let screen = tmux.wait_for("EXIT=", Duration::from_secs(10));
        assert!(screen.contains(code), "{key}: {screen}");
    }
}
