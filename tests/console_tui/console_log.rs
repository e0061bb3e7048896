//! The console's log file: the console (in tmux, on the demo fleet) writes when it started and
//! stopped and every link change with its reason to `gpufleet.log` in the state directory,
//! private to the user, and nothing of it to the terminal.

use crate::tmux;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use tmux::{Tmux, binary};

/// Waits until the log holds every one of `needles`, returning it; panics with the log.
fn wait_for_log(path: &Path, needles: &[&str], timeout: Duration) -> String {
    let start = Instant::now();
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if needles.iter().all(|n| text.contains(n)) {
            return text;
        }
        assert!(
            start.elapsed() < timeout,
            "timed out waiting for {needles:?} in the log:\n{text}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn the_console_logs_link_changes_to_a_private_file() {
    let state = tempfile::tempdir().unwrap();
    let command = format!(
        "GPUFLEET_STATE_DIR={} {} --demo --speed 20",
        state.path().display(),
        binary().display()
    );
    let Some(tmux) = Tmux::start(&command, 100, 30) else {
        return;
    };
    tmux.wait_for("flaky-h200", Duration::from_secs(20));
    let log = state.path().join("gpufleet.log");
    // The demo's unreachable host never answers; its flaky H200 falls off the bus.
    let text = wait_for_log(
        &log,
        &[
            "console started",
            "host=\"unreachable-box\"",
            "disconnected",
            "host=\"flaky-h200\"",
            "GPUs lost",
        ],
        Duration::from_secs(30),
    );
    let disconnected = text
        .lines()
        .find(|l| l.contains("host=\"unreachable-box\"") && l.contains("disconnected"))
        .unwrap();
    assert!(
        disconnected.contains("reason="),
        "the reason is logged: {disconnected}"
    );
    assert!(
        !tmux.screen().contains("console started"),
        "log lines never reach the terminal"
    );
    tmux.keys(&["q"]);
    let text = wait_for_log(
        &log,
        &["console stopped how=\"quit\""],
        Duration::from_secs(10),
    );
    assert!(
        !text.contains("how=Quit"),
        "words, not Rust's names: {text}"
    );
    let mode = std::fs::metadata(&log).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "the log is private");
}
