//! `/metrics` from the console as well as from the watcher: the console in a real terminal
//! (tmux) on the demo fleet, with `[metrics] listen` in its config, answers a scrape with the
//! fleet it shows; after `q` the port is closed.

use crate::tmux;

use std::time::{Duration, Instant};

use tmux::{Tmux, binary};

#[test]
fn the_console_serves_metrics_while_it_runs() {
    let dir = tempfile::tempdir().expect("temp");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!("[metrics]\nlisten = \"127.0.0.1:{port}\"\n"),
    )
    .expect("config");
    let command = format!(
        "GPUFLEET_STATE_DIR={} {} --demo --config {}; echo EXIT=$?; sleep 30",
        dir.path().join("state").display(),
        binary().display(),
        config.display()
    );
    let Some(tmux) = Tmux::start(&command, 100, 30) else {
        return;
    };
    tmux.wait_for("train-h100x8", Duration::from_secs(20));
    let url = format!("http://127.0.0.1:{port}/metrics");
    let deadline = Instant::now() + Duration::from_secs(20);
    let page = loop {
        let page = reqwest::blocking::get(&url)
            .and_then(|r| r.text())
            .unwrap_or_default();
        if page.contains("DCGM_FI_DEV_GPU_UTIL{") {
            break page;
        }
        assert!(
            Instant::now() < deadline,
            "no GPU series from the console: {page}"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(page.contains("instance=\"train-h100x8\""), "{page}");
    assert!(
        page.contains("gpufleet_host_streaming{instance=\"train-h100x8\"} 1"),
        "{page}"
    );

    tmux.keys(&["q"]);
    let after = tmux.wait_for("EXIT=", Duration::from_secs(20));
    assert!(after.contains("EXIT=0"), "{after}");
    assert!(
        reqwest::blocking::get(&url).is_err(),
        "the port is closed once the console quits"
    );
}
