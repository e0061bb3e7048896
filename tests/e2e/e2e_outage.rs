//! End to end over real sshd: during an outage the console says the host is unreachable, and
//! why, within two intervals, while keeping its last figures; it reconnects by itself when
//! sshd is back.

use crate::common;
use crate::tmux;

use std::time::{Duration, Instant};

use common::sshd::Sshd;
use tmux::{Tmux, binary};

const WAIT: Duration = Duration::from_secs(20);
const INTERVAL: Duration = Duration::from_millis(1_000);
/// Two intervals, and room for the frame and for reading the screen back on a busy machine.
const NOTICED_WITHIN: Duration = Duration::from_millis(3_000);

/// The host's row once it has `words` in it, and how long that took; fails after `limit`.
fn row_with(tmux: &Tmux, words: &[&str], limit: Duration) -> (String, Duration) {
    let start = Instant::now();
    loop {
        let screen = tmux.screen();
        if let Some(row) = screen
            .lines()
            .find(|l| l.contains("h200-test") && words.iter().all(|w| l.contains(w)))
        {
            return (row.to_string(), start.elapsed());
        }
        assert!(
            start.elapsed() < limit,
            "no row with {words:?} within {limit:?}; screen:\n{screen}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn an_outage_shows_unreachable_with_its_reason_within_two_intervals() {
    let Some(mut sshd) = Sshd::start() else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp");
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "interval_ms = {}\n\n[[hosts]]\nname = \"h200-test\"\nssh = \"{}@127.0.0.1:{}\"\nidentity_file = \"{}\"\n",
            INTERVAL.as_millis(),
            sshd.user,
            sshd.port,
            sshd.client_key().display()
        ),
    )
    .expect("config");
    let command = format!(
        "SSH_AUTH_SOCK= {} --config {} --known-hosts {}; echo EXIT=$?; sleep 30",
        binary().display(),
        config.display(),
        sshd.trusted_known_hosts().display()
    );
    // Wide enough for the whole reason after the badges.
    let Some(tmux) = Tmux::start(&command, 240, 30) else {
        return;
    };
    row_with(&tmux, &["live", "H200"], WAIT);

    // The connection goes silent without closing (sshd stopped, or the path died).
    assert!(!sshd.freeze_sessions().is_empty());
    let (row, took) = row_with(&tmux, &["unreachable", "no data"], WAIT);
    eprintln!("silent link noticed in {took:?}: {row}");
    assert!(took <= NOTICED_WITHIN, "took {took:?}: {row}");
    assert!(row.contains("1x H200"), "the last figures stay: {row}");

    // sshd is gone altogether: the reason says so.
    sshd.kill();
    let (row, took) = row_with(&tmux, &["unreachable", "refused"], WAIT);
    eprintln!("sshd gone noticed in {took:?}: {row}");
    assert!(took <= NOTICED_WITHIN, "took {took:?}: {row}");

    // Back: the link was retrying all along.
    sshd.restart();
    row_with(&tmux, &["live"], WAIT);
    tmux.keys(&["q"]);
    let after = tmux.wait_for("EXIT=", WAIT);
    assert!(after.contains("EXIT=0"), "{after}");
}
