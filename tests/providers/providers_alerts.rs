//! The money nobody watches reaches the alert sinks when nobody looks: `gpufleet watch` on a
//! real sshd host, a vast account (loopback server, its documented body) with a stopped
//! instance whose storage still bills, and a loopback webhook. The watcher alerts the stopped
//! instance once (`stopped_billing`, firing), named as the cost panel names it, with the money
//! a day; the watched host raises nothing of the kind.

use crate::cli as support;
use crate::common;
use crate::provider_api as server;
use crate::release_server as hook;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::sshd::Sshd;
use server::{Server, json};
use support::Home;

const TOKEN: &str = "vk-alerts-7301";
const WAIT: Duration = Duration::from_secs(40);

/// One stopped instance, its disk billing 0.002 an hour (vast's `storage_total_cost`).
const STOPPED: &str = r#"{"success": true, "next_token": null, "instances": [
 {"id": 102, "label": "idle", "actual_status": "stopped", "ssh_host": "ssh7.vast.ai", "ssh_port": 20400,
  "dph_total": 0.002, "storage_total_cost": 0.002, "disk_space": 100}]}"#;

#[test]
fn the_watcher_alerts_a_stopped_instance_whose_storage_still_bills() {
    let Some(sshd) = Sshd::start() else { return };
    let vast = Server::start(|_, _| json(200, STOPPED));
    let webhook = hook::Server::start(vec![hook::answer(200, "{}")]);
    let home = Home::new();
    let config = home.write(
        "c.toml",
        &format!(
            "interval_ms = 500\n\n[[hosts]]\nname = \"h1\"\nssh = \"{}@127.0.0.1:{}\"\n\
             identity_file = \"{}\"\n\n[[providers]]\nkind = \"vast\"\ntoken_env = \"VAST_KEY\"\n\
             base_url = \"{}\"\n\n[[alerts]]\nkind = \"webhook\"\nurl = \"{}/hook\"\n",
            sshd.user,
            sshd.port,
            sshd.client_key().display(),
            vast.base_url,
            webhook.base_url
        ),
    );
    let log = home.path().join("watch.log");
    let known = sshd.trusted_known_hosts();
    let mut watcher = home
        .command(&[
            "watch",
            "--config",
            &config,
            "--known-hosts",
            known.to_str().expect("utf-8"),
        ])
        .env("VAST_KEY", TOKEN)
        .env("SSH_AUTH_SOCK", "")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).expect("log"))
        .spawn()
        .expect("watch");
    let alerts = || -> Vec<serde_json::Value> {
        webhook
            .requests()
            .iter()
            .map(hook::Recorded::json)
            .filter(|a| a["label"] == "stopped_billing")
            .collect()
    };
    let deadline = Instant::now() + WAIT;
    while alerts().is_empty() {
        assert!(
            Instant::now() < deadline,
            "no stopped_billing alert:\n{}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // Time for a second sender or a repeat to show up: one alert while it lasts.
    std::thread::sleep(Duration::from_secs(2));
    let _ = Command::new("kill")
        .args(["-TERM", &watcher.id().to_string()])
        .status();
    let _ = watcher.wait();
    let found = alerts();
    assert_eq!(found.len(), 1, "{found:#?}");
    let alert = &found[0];
    assert_eq!(alert["state"], "firing", "{alert:#}");
    assert_eq!(alert["host"], "vast vast 102 (idle)", "{alert:#}");
    assert_eq!(
        alert["summary"], "stopped: vast vast 102 (idle): storage still bills 0.05 USD/day",
        "{alert:#}"
    );
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(!text.contains(TOKEN), "token leaked: {text}");
}
