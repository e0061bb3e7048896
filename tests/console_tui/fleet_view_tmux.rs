//! The fleet view in a real terminal (tmux) at 80x24 and 60x15: a host behind a closed port on
//! 127.0.0.1 says "connection refused" on its row and, in its own view, when it tried and when
//! it retries; the demo fleet cuts no number into another number, marks cut badges with an
//! ellipsis, and ends in a totals line.

use crate::tmux;

use std::net::TcpListener;
use std::path::Path;
use std::time::Duration;

use tmux::{Tmux, binary};

const WAIT: Duration = Duration::from_secs(20);

/// A port on 127.0.0.1 that nothing listens on: bound, then let go.
fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    drop(listener);
    port
}

/// The console on `config`, its state kept in `home`, inside tmux at `width`x`height`.
fn console(config: &Path, home: &Path, width: u16, height: u16) -> Option<Tmux> {
    let command = format!(
        "SSH_AUTH_SOCK= HOME={home} XDG_CONFIG_HOME={home}/config XDG_STATE_HOME={home}/state \
         GPUFLEET_STATE_DIR={home}/gpufleet {bin} --config {config} --known-hosts {home}/known_hosts; \
         echo EXIT=$?; sleep 30",
        home = home.display(),
        bin = binary().display(),
        config = config.display(),
    );
    Tmux::start(&command, width, height)
}

/// A priced host behind a closed port, billing for two hours already.
fn refused_config(dir: &Path, port: u16) -> std::path::PathBuf {
    let started_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_millis() as u64
        - 2 * 3_600_000;
    let (y, mo, d, h, mi, s, _) = gpufleet::utc::utc_parts(started_ms);
    let path = dir.join("config.toml");
    std::fs::write(
        &path,
        format!(
            "interval_ms = 1000\n\n[[hosts]]\nname = \"refused-box\"\n\
             ssh = \"root@127.0.0.1:{port}\"\nprice_per_hour = 2.5\ncurrency = \"USD\"\n\
             billing_started = \"{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z\"\n"
        ),
    )
    .expect("config");
    path
}

fn row<'a>(screen: &'a str, name: &str) -> &'a str {
    screen
        .lines()
        .find(|l| l.contains(name))
        .unwrap_or_else(|| panic!("no row for {name}:\n{screen}"))
}

#[test]
fn a_refused_host_says_why_on_its_row_and_in_its_view() {
    let dir = tempfile::tempdir().expect("temp");
    let port = closed_port();
    let config = refused_config(dir.path(), port);
    let Some(tmux) = console(&config, dir.path(), 80, 24) else {
        return;
    };
    let screen = tmux.wait_for("connection refused", WAIT);
    let line = row(&screen, "refused-box");
    assert!(line.contains("unreachable"), "{screen}");
    assert!(line.contains("connection refused"), "{screen}");
    assert!(line.contains("retry "), "when it tries again:\n{screen}");
    // The line under it: when it tried, and the whole message.
    assert!(screen.contains("tried "), "{screen}");
    // The totals: the hourly rate and what two hours cost, never observed or not.
    let totals = row(&screen, "Total");
    assert!(totals.contains("2.50 USD/h"), "{screen}");
    assert!(totals.contains("spent 5.0"), "{screen}");
    assert!(screen.contains(" 1 host "), "singular: {screen}");

    // Its own view: the banner says why, when it tried and when it retries.
    tmux.keys(&["Enter"]);
    let view = tmux.wait_for("refused-box: connection refused", WAIT);
    assert!(view.contains("tried "), "{view}");
    assert!(view.contains("retry "), "{view}");
    tmux.keys(&["Escape", "q"]);
    let after = tmux.wait_for("EXIT=", WAIT);
    assert!(after.contains("EXIT=0"), "{after}");
}

#[test]
fn a_refused_host_says_why_at_60x15() {
    let dir = tempfile::tempdir().expect("temp");
    let config = refused_config(dir.path(), closed_port());
    let Some(tmux) = console(&config, dir.path(), 60, 15) else {
        return;
    };
    let screen = tmux.wait_for("connection refused", WAIT);
    let line = row(&screen, "refused-box");
    assert!(line.contains("unreachable"), "{screen}");
    assert!(line.contains("connection refused"), "{screen}");
    assert_boxed(&screen, 60);
    tmux.keys(&["q"]);
    tmux.wait_for("EXIT=", WAIT);
}

/// Every GPU total and power limit of the demo fleet: whatever is drawn after a `/` must be
/// one of these, whole, or a number was cut.
const DEMO_TOTALS: [&str; 15] = [
    "637", "80.0", "24.0", "15.0", "140", "5600", "400", "450", "70", "700", "512", "16.0", "45.7",
    "500", "192",
];

/// Badges the demo shows; none may appear cut without an ellipsis.
const DEMO_BADGES: [&str; 6] = [
    "GPU LOST",
    "THERMAL",
    "UNREACHABLE",
    "XID 79",
    "IDLE BILLING",
    "VRAM FULL",
];

/// Checks the fleet rows of a demo screen: fractions whole, badges whole or ellipsized.
fn assert_rows_honest(screen: &str) {
    for line in screen.lines().filter(|l| l.starts_with('│')) {
        let inner = line.trim_start_matches('│').trim_end_matches('│');
        for token in inner.split_whitespace().filter(|t| t.contains('/')) {
            let Some((_, total)) = token.split_once('/') else {
                continue;
            };
            if total.chars().all(|c| c.is_ascii_digit() || c == '.') && !total.is_empty() {
                assert!(
                    DEMO_TOTALS.contains(&total),
                    "{token:?} is a cut number in {line:?}:\n{screen}"
                );
            }
        }
        // A cut reaches the box's right border: the text runs up to it, no space left.
        for badge in DEMO_BADGES {
            for cut in 3..badge.len() {
                let prefix = &badge[..cut];
                assert!(
                    !inner.ends_with(prefix),
                    "badge {badge:?} cut to {prefix:?} without an ellipsis in {line:?}:\n{screen}"
                );
            }
        }
    }
}

/// Every line is at most `width` wide and the fleet box is whole: its rows start and end with
/// its border, so nothing was drawn over it.
fn assert_boxed(screen: &str, width: usize) {
    let lines: Vec<&str> = screen.lines().collect();
    for line in &lines {
        assert!(line.chars().count() <= width, "{line:?}");
    }
    let top = lines
        .iter()
        .position(|l| l.starts_with("┌ Fleet"))
        .unwrap_or_else(|| panic!("no fleet box:\n{screen}"));
    let bottom = lines
        .iter()
        .position(|l| l.starts_with('└'))
        .unwrap_or_else(|| panic!("no bottom border:\n{screen}"));
    for line in &lines[top + 1..bottom] {
        assert!(
            line.starts_with('│') && line.chars().nth(width - 1) == Some('│'),
            "a row that is not inside the box: {line:?}\n{screen}"
        );
    }
}

fn demo(width: u16, height: u16) -> Option<Tmux> {
    let command = format!(
        "{} --demo --speed 20; echo EXIT=$?; sleep 30",
        binary().display()
    );
    Tmux::start(&command, width, height)
}

#[test]
fn the_demo_at_80x24_cuts_no_number_and_totals_the_fleet() {
    let Some(tmux) = demo(80, 24) else { return };
    // At 20x the H200 falls off the bus within seconds: its row then says so, not figures.
    let screen = tmux.wait_for("GPU lost", WAIT);
    assert_rows_honest(&screen);
    let screen = tmux.wait_for("last reading", WAIT);
    assert_rows_honest(&screen);
    assert_boxed(&screen, 80);
    let lost = row(&screen, "flaky-h200");
    assert!(lost.contains("last reading"), "{screen}");
    assert!(
        !lost.contains("/700"),
        "no live-looking power on a lost GPU: {screen}"
    );
    // The demo's hosts are priced: short of room, the total keeps the money (the rate per
    // currency and what was spent) and leaves out the GPU count first.
    let totals = row(&screen, "Total");
    assert!(
        totals.contains("USD/h") && totals.contains("CNY/h") && totals.contains("spent"),
        "{screen}"
    );
    // Nine hosts leave no room for a line under each: one line per host, every host shown.
    assert!(
        row(&screen, "cambricon-mlu").contains("MLU370-X8"),
        "{screen}"
    );
    let unreachable = row(&screen, "unreachable-box");
    assert!(unreachable.contains("timed out"), "{screen}");
    tmux.keys(&["q"]);
    tmux.wait_for("EXIT=", WAIT);
}

#[test]
fn the_demo_at_60x15_overlaps_nothing_and_cuts_no_number() {
    let Some(tmux) = demo(60, 15) else { return };
    let screen = tmux.wait_for("GPU lost", WAIT);
    assert_rows_honest(&screen);
    assert_boxed(&screen, 60);
    assert!(row(&screen, "Total").contains("USD/h"), "{screen}");
    tmux.keys(&["q"]);
    tmux.wait_for("EXIT=", WAIT);
}

/// Wide: every column has room; a guard that the sizing never cuts there either.
#[test]
fn the_demo_at_200x50_cuts_no_number() {
    let Some(tmux) = demo(200, 50) else { return };
    let screen = tmux.wait_for("GPU lost", WAIT);
    assert_rows_honest(&screen);
    assert_boxed(&screen, 200);
    // One line per host and one under it: bars per GPU for the eight H100s.
    assert!(
        screen.lines().any(|l| l.contains("GPU ")
            && l.matches(['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█']).count() >= 8),
        "per-GPU bars:\n{screen}"
    );
    tmux.keys(&["q"]);
    tmux.wait_for("EXIT=", WAIT);
}
