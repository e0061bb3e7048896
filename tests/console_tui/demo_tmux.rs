//! The demo console in a real terminal (tmux): the simulated fleet shows prices and money spent,
//! a red line crosses within seconds at `--speed 10`, and the release dialog of a demo host is
//! the real dialog, marked simulated, answered by the simulated provider.

use crate::demo_traces as support;
use crate::tmux;

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
    // Nothing of the demo's reached the state directory but its black box and the log.
    support::assert_only_demo_traces(&dir.path().join("state"));
}

/// The console with `--demo` opens no internet socket even where the config has an alert sink
/// (loopback here): strace follows every thread while the demo runs
/// through its alerts (a thermal throttle, a GPU lost).
#[test]
fn the_demo_console_touches_no_network_even_with_a_configured_alert_sink() {
    let traced = std::process::Command::new("strace")
        .args(["-qq", "-e", "trace=none", "true"])
        .status()
        .is_ok_and(|s| s.success());
    if !traced {
        assert!(std::env::var_os("CI").is_none(), "strace is required in CI");
        eprintln!("strace missing or not permitted: skipping");
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    std::fs::create_dir_all(d.join("cfg/gpufleet")).expect("mkdir");
    std::fs::write(
        d.join("cfg/gpufleet/config.toml"),
        "[[alerts]]\nkind = \"webhook\"\nurl = \"http://127.0.0.1:9/alerts\"\n",
    )
    .expect("config");
    let trace = d.join("trace.txt");
    let command = format!(
        "env HOME={d} XDG_CONFIG_HOME={d}/cfg XDG_STATE_HOME={d}/xdg-state \
         GPUFLEET_STATE_DIR={d}/state TERM=xterm-256color \
         strace -f -qq -e trace=socket,connect,bind -o {t} {bin} --demo --speed 50",
        d = d.display(),
        t = trace.display(),
        bin = binary().display()
    );
    let Some(tmux) = Tmux::start(&command, 160, 40) else {
        return;
    };
    tmux.wait_for("GPU lost", Duration::from_secs(30));
    tmux.keys(&["q"]);
    std::thread::sleep(Duration::from_millis(500));
    let calls = std::fs::read_to_string(&trace).unwrap_or_default();
    let network: Vec<&str> = calls
        .lines()
        .filter(|l| l.contains("AF_INET") || l.contains("connect(") || l.contains("bind("))
        .collect();
    // strace ran (it creates its output at the start); `demo_cli` checks it sees connects.
    assert!(trace.exists(), "strace did not run");
    assert!(network.is_empty(), "{}", network.join("\n"));
}
