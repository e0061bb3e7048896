//! The demo console in a real terminal (tmux): the simulated fleet shows prices and money spent,
//! a red line crosses within seconds at `--speed 10`, and the release dialog of a demo host is
//! the real dialog, marked simulated, answered by the simulated provider.

#[path = "support/tmux.rs"]
mod tmux;

use std::time::Duration;

use tmux::{Tmux, binary};

fn demo_console(dir: &std::path::Path) -> Option<Tmux> {
    let command = format!(
        "env HOME={d} XDG_CONFIG_HOME={d}/cfg XDG_STATE_HOME={d}/xdg-state \
         GPUFLEET_STATE_DIR={d}/state TERM=xterm-256color {bin} --demo --speed 10",
        d = dir.display(),
        bin = binary().display()
    );
    Tmux::start(&command, 200, 45)
}

#[test]
fn the_demo_console_shows_prices_spend_a_red_line_and_a_simulated_release() {
    let dir = tempfile::tempdir().expect("temp dir");
    let Some(tmux) = demo_console(dir.path()) else {
        return;
    };
    let screen = tmux.wait_for("23.92 USD", Duration::from_secs(20));
    assert!(
        screen.contains("$/h") && screen.contains("SPENT"),
        "{screen}"
    );
    assert!(screen.contains("1.98 CNY"), "{screen}");
    // train-h100x8 bills $23.92/h against a $0.25 budget: 38 simulated seconds, under 4 s here.
    let screen = tmux.wait_for("over its budget of 0.25 USD", Duration::from_secs(30));
    assert!(screen.contains("train-h100x8"), "{screen}");

    // The release dialog of the selected host: the real request, the simulated provider.
    tmux.keys(&["R"]);
    let screen = tmux.wait_for("(simulated)", Duration::from_secs(10));
    assert!(
        screen.contains("simulated: a demo host; the provider answers in-process"),
        "{screen}"
    );
    assert!(screen.contains("<redacted>"), "{screen}");
    // Typing the host's name confirms, as for a real host; the simulated provider accepts.
    tmux.keys(&["train-h100x8"]);
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("sent and accepted", Duration::from_secs(10));
    assert!(
        screen.contains("/api/v1/instance-operations/terminate (simulated): 200"),
        "{screen}"
    );
    tmux.keys(&["Escape"]);
    let screen = tmux.wait_for("released", Duration::from_secs(10));
    assert!(screen.contains("train-h100x8"), "{screen}");
    tmux.keys(&["q"]);
    // Nothing of the demo's reached the state directory.
    let state = dir.path().join("state");
    let entries: Vec<_> = std::fs::read_dir(&state)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(entries.is_empty(), "{entries:?}");
}
