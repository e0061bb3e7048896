//! The console syncs the provider accounts on its own thread and its cost panel (`$`) lists
//! the money nobody watches, as `gpufleet cost` does: a RunPod account on a loopback server
//! with a stopped pod whose volume disk still bills and a running pod without an SSH endpoint
//! (no host the console can watch), next to a configured host streaming from a real sshd.

use crate::common;
use crate::provider_api as server;
use crate::tmux;

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
