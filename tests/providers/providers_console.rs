//! The console syncs the provider accounts on its own thread and its cost panel (`$`) lists
//! the money nobody watches, as `gpufleet cost` does: a RunPod account on a loopback server
//! with a stopped pod whose volume disk still bills and a running pod without an SSH endpoint
//! (no host the console can watch), next to a configured host streaming from a real sshd.
//! After a release from the console's dialog (a vast.ai account on loopback, synced hourly),
//! the account is listed again within a minute and a half and the inventory says "stopped".

use crate::common;
use crate::provider_api as server;
use crate::tmux;
use crate::vast_list;

use std::time::Duration;

use common::sshd::Sshd;
use server::{Server, json};
use tmux::{Tmux, binary};

const WAIT: Duration = Duration::from_secs(20);

const PODS: &str = r#"{"pods": [
 {"id": "pod9", "name": "elsewhere", "status": "RUNNING", "gpu": {"id": "NVIDIA A40", "count": 1},
  "ssh": {"proxy": null, "direct": null}, "cost": 0.39, "mounts": {},
  "createdAt": "2026-06-01T12:00:00Z", "startedAt": "2026-06-01T12:02:00Z"},
 {"id": "exited0001", "name": "paused", "status": "EXITED", "gpu": {"id": "NVIDIA A100 80GB PCIe", "count": 1},
  "ssh": {"proxy": null, "direct": null}, "cost": 0.0, "mounts": {"persistent": {"size": 100, "path": "/workspace"}},
  "createdAt": "2026-05-30T08:00:00Z", "startedAt": null}
]}"#;

#[test]
fn the_cost_panel_lists_what_the_accounts_bill_unwatched() {
    let Some(sshd) = Sshd::start() else { return };
    let server = Server::start(|_, _| json(200, PODS));
    let dir = tempfile::tempdir().expect("temp");
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "interval_ms = 500\n\n[[hosts]]\nname = \"h200-test\"\nssh = \"{}@127.0.0.1:{}\"\n\
             identity_file = \"{}\"\n\n[[providers]]\nkind = \"runpod\"\n\
             token_env = \"RUNPOD_KEY\"\nbase_url = \"{}\"\n",
            sshd.user,
            sshd.port,
            sshd.client_key().display(),
            server.base_url
        ),
    )
    .expect("config");
    let command = format!(
        "SSH_AUTH_SOCK= GPUFLEET_STATE_DIR={} RUNPOD_KEY=rp-console-key {} --config {} \
         --known-hosts {}; sleep 30",
        dir.path().join("state").display(),
        binary().display(),
        config.display(),
        sshd.trusted_known_hosts().display()
    );
    let Some(tmux) = Tmux::start(&command, 160, 40) else {
        return;
    };
    tmux.wait_for("h200-test", WAIT);
    tmux.keys(&["$"]);
    // 100 GB at $0.20 per GB-month, over 730 hours, for 24 hours.
    let panel = tmux.wait_for("storage still bills 0.66 USD/day", WAIT);
    assert!(panel.contains("The money nobody watches"), "{panel}");
    assert!(
        panel.contains("stopped: runpod runpod exited0001 (paused)"),
        "{panel}"
    );
    let panel = tmux.wait_for("running, no SSH endpoint: runpod runpod pod9", WAIT);
    assert!(panel.contains("at 0.39 USD/h"), "{panel}");
    assert!(!panel.contains("rp-console-key"), "{panel}");
    assert_eq!(server.seen()[0].path, "/v2/pods", "synced by the console");
    tmux.keys(&["q"]);
}

#[test]
fn a_release_from_the_console_has_its_account_listed_again_within_a_minute_and_a_half() {
    let released = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let put = std::sync::Arc::clone(&released);
    let server = Server::start(move |seen, _| {
        if seen.method == "PUT" {
            put.store(true, std::sync::atomic::Ordering::SeqCst);
            json(200, r#"{"success": true}"#)
        } else if put.load(std::sync::atomic::Ordering::SeqCst) {
            json(200, &vast_list::one_instance("stopped"))
        } else {
            json(200, &vast_list::one_instance("running"))
        }
    });
    let dir = tempfile::tempdir().expect("temp");
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[[hosts]]\nname = \"h1\"\nssh = \"root@127.0.0.1:1\"\n\n[hosts.release]\n\
             provider = \"vast\"\ninstance_id = \"12345\"\ntoken_env = \"VAST_KEY\"\n\
             base_url = \"{0}\"\n\n[[providers]]\nkind = \"vast\"\ntoken_env = \"VAST_KEY\"\n\
             base_url = \"{0}\"\nsync_interval_s = 3600\n",
            server.base_url
        ),
    )
    .expect("config");
    let state = dir.path().join("state");
    let command = format!(
        "SSH_AUTH_SOCK= GPUFLEET_STATE_DIR={} VAST_KEY=vast-console-key {} --config {}; sleep 30",
        state.display(),
        binary().display(),
        config.display(),
    );
    let Some(tmux) = Tmux::start(&command, 100, 30) else {
        return;
    };
    let listings = || -> Vec<std::time::Instant> {
        server
            .seen()
            .iter()
            .filter(|s| s.method == "GET" && s.path == "/api/v1/instances/")
            .map(|s| s.at)
            .collect()
    };
    tmux.wait_until("the first listing", WAIT, |_| listings().len() == 1);
    tmux.keys(&["R"]);
    tmux.wait_for("type h1 to stop it", WAIT);
    tmux.keys(&["h", "1", "Enter"]);
    tmux.wait_for("stop sent and accepted", WAIT);
    let sent_at = server
        .seen()
        .iter()
        .find(|s| s.method == "PUT")
        .map(|s| s.at)
        .expect("the release request");

    // Listed again once the provider can show it, not at the next hourly round, and never
    // sooner than the providers' minimum gap.
    tmux.wait_until(
        "the listing after the release",
        Duration::from_secs(100),
        |_| listings().len() >= 2,
    );
    let at = listings();
    assert!(
        at[1] - at[0] >= Duration::from_secs(59),
        "{:?} between the listings",
        at[1] - at[0]
    );
    assert!(
        at[1] - sent_at >= Duration::from_secs(19),
        "{:?} after the release",
        at[1] - sent_at
    );
    let inventory = state.join("inventory.json");
    tmux.wait_until("the stored inventory", WAIT, |_| {
        std::fs::read_to_string(&inventory).is_ok_and(|s| s.contains("stopped"))
    });
    tmux.keys(&["q"]);
}
