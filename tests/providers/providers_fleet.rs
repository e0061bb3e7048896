//! Synced instances join the fleet: a RunPod account on a loopback server whose running pod's
//! direct SSH endpoint is a real sshd on 127.0.0.1. `snapshot --json` (which syncs first) shows
//! the pod as a streaming host named from its label, priced from the API; the stopped pod is
//! no host and does not fail the snapshot; a `[[hosts]]` entry for the same pod wins field by
//! field. A pod that disappears from the account is a host marked gone (not dropped), and the
//! watcher closes its ledger with the time it went.

use crate::cli as support;
use crate::common;
use crate::fleet_setup;
use crate::provider_api as server;

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::sshd::Sshd;
use fleet_setup::setup;
use server::{Server, json};
use support::{Home, stderr, stdout};

const TOKEN: &str = "rp-KEY-fleet-5151";

/// RunPod REST v2's `/v2/pods`, shaped as in tests/providers/providers_api.rs: one running pod whose
/// direct endpoint is the test sshd, one EXITED pod without SSH.
fn pods(sshd: &Sshd) -> String {
    format!(
        r#"{{"pods": [
 {{"id": "pod1", "name": "gpu train", "status": "RUNNING", "gpu": {{"id": "NVIDIA H200", "count": 1}},
  "ssh": {{"proxy": null, "direct": {{"host": "127.0.0.1", "port": {port}, "username": "{user}",
  "command": "ssh {user}@127.0.0.1 -p {port}"}}}}, "cost": 0.44, "mounts": {{}},
  "createdAt": "2026-06-01T12:00:00Z", "startedAt": "2026-06-01T12:02:00Z"}},
 {{"id": "exited0001", "name": "paused", "status": "EXITED", "gpu": {{"id": "NVIDIA A100 80GB PCIe", "count": 1}},
  "ssh": {{"proxy": null, "direct": null}}, "cost": 0.0, "mounts": {{"persistent": {{"size": 100, "path": "/workspace"}}}},
  "createdAt": "2026-05-30T08:00:00Z", "startedAt": null}}
]}}"#,
        port = sshd.port,
        user = sshd.user
    )
}

fn snapshot(home: &Home, config: &str, ssh_config: &str) -> (Option<i32>, serde_json::Value) {
    let known = home.path().join("known_hosts");
    let out = home
        .command(&[
            "snapshot",
            "--json",
            "--accept-new-host-keys",
            "--config",
            config,
            "--ssh-config",
            ssh_config,
            "--known-hosts",
            known.to_str().unwrap(),
        ])
        .env("RUNPOD_KEY", TOKEN)
        .env("SSH_AUTH_SOCK", "")
        .stdin(Stdio::null())
        .output()
        .expect("snapshot");
    let (text, errors) = (stdout(&out), stderr(&out));
    assert!(!text.contains(TOKEN) && !errors.contains(TOKEN));
    let doc = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}\n{errors}"));
    (out.status.code(), doc)
}

#[test]
fn a_running_pod_streams_in_snapshot_priced_from_the_api_and_a_stopped_one_is_no_host() {
    let Some(sshd) = Sshd::start() else { return };
    let body = pods(&sshd);
    let server = Server::start(move |_, _| json(200, &body));
    let home = Home::new();
    let (config, ssh_config) = setup(&home, &sshd, &server, "");
    let (code, doc) = snapshot(&home, &config, &ssh_config);
    let hosts = doc["hosts"].as_array().expect("hosts");
    assert_eq!(hosts.len(), 1, "the stopped pod is inventory only: {doc:#}");
    let host = &hosts[0];
    assert_eq!(host["name"], "gpu-train", "{doc:#}");
    assert_eq!(host["status"], "live", "{doc:#}");
    assert_eq!(host["gpus"][0]["name"], "NVIDIA H200");
    assert_eq!(host["price_per_hour"], 0.44);
    assert_eq!(host["currency"], "USD");
    assert_eq!(code, Some(0), "{doc:#}");
    assert_eq!(server.seen()[0].path, "/v2/pods", "synced first");
}

#[test]
fn a_hosts_entry_for_the_same_pod_wins_field_by_field() {
    let Some(sshd) = Sshd::start() else { return };
    let body = pods(&sshd);
    let server = Server::start(move |_, _| json(200, &body));
    let home = Home::new();
    let hosts = format!(
        "[[hosts]]\nname = \"mine\"\nssh = \"{}@127.0.0.1:{}\"\nprice_per_hour = 1.25\n\
         [hosts.release]\nprovider = \"runpod\"\ninstance_id = \"pod1\"\ntoken_env = \"RUNPOD_KEY\"\n",
        sshd.user, sshd.port
    );
    let (config, ssh_config) = setup(&home, &sshd, &server, &hosts);
    let (code, doc) = snapshot(&home, &config, &ssh_config);
    let hosts = doc["hosts"].as_array().expect("hosts");
    assert_eq!(hosts.len(), 1, "one host for the pod: {doc:#}");
    assert_eq!(hosts[0]["name"], "mine");
    assert_eq!(hosts[0]["status"], "live", "{doc:#}");
    assert_eq!(hosts[0]["price_per_hour"], 1.25, "the user's price stands");
    assert_eq!(
        hosts[0]["currency"], "USD",
        "what the entry leaves out: the API's"
    );
    assert_eq!(code, Some(0));
}

#[test]
fn a_pod_that_disappears_is_a_host_marked_gone_and_its_ledger_is_closed() {
    let Some(sshd) = Sshd::start() else { return };
    let body = pods(&sshd);
    // The first sync lists the pods, every later one an empty account.
    let server = Server::start(move |_, n| match n {
        0 => json(200, &body),
        _ => json(200, r#"{"pods": []}"#),
    });
    let home = Home::new();
    let (config, ssh_config) = setup(&home, &sshd, &server, "");
    for _ in 0..2 {
        let out = home
            .command(&["--config", &config, "providers", "sync"])
            .env("RUNPOD_KEY", TOKEN)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    let (code, doc) = snapshot(&home, &config, &ssh_config);
    let host = &doc["hosts"][0];
    assert_eq!(host["name"], "gpu-train", "kept, not dropped: {doc:#}");
    assert_eq!(host["status"], "gone", "{doc:#}");
    let gone_ms = host["gone_ms"].as_u64().expect("gone_ms");
    assert_eq!(code, Some(0), "nothing left to read is no failure");

    // The watcher (the console alike) closes the host's ledger at that time.
    let mut watcher = home
        .command(&["watch", "--config", &config, "--ssh-config", &ssh_config])
        .env("RUNPOD_KEY", TOKEN)
        .env("SSH_AUTH_SOCK", "")
        .stdin(Stdio::null())
        .spawn()
        .expect("watch");
    std::thread::sleep(Duration::from_millis(1500));
    Command::new("kill")
        .args(["-TERM", &watcher.id().to_string()])
        .status()
        .expect("kill");
    let started = Instant::now();
    while watcher.try_wait().expect("wait").is_none() {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "watch did not stop"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut log = String::new();
    if let Some(mut err) = watcher.stderr.take() {
        let _ = err.read_to_string(&mut log);
    }
    let ledger = std::fs::read_to_string(home.path().join("state/ledger.json"))
        .unwrap_or_else(|e| panic!("{e}\n{log}"));
    let ledger: serde_json::Value = serde_json::from_str(&ledger).unwrap();
    let released = &ledger["hosts"]["gpu-train"]["released"];
    assert_eq!(released["action"], "gone", "{ledger:#}\n{log}");
    assert_eq!(released["at_ms"].as_u64(), Some(gone_ms), "{ledger:#}");
}

#[test]
fn a_synced_instance_is_released_with_its_accounts_token() {
    const VAST_TOKEN: &str = "vast-KEY-release-7373";
    let rows = r#"{"success": true, "next_token": null, "instances": [
 {"id": 101, "label": "train a", "actual_status": "running", "gpu_name": "RTX 4090", "num_gpus": 1,
  "ssh_host": "ssh5.vast.ai", "ssh_port": 10600, "start_date": 1764633600, "dph_total": 0.712}]}"#;
    let server = Server::start(move |seen, _| match seen.method.as_str() {
        "GET" => json(200, rows),
        _ => json(200, r#"{"success": true}"#),
    });
    let home = Home::new();
    let config = home.write(
        "c.toml",
        &format!(
            "[[providers]]\nkind = \"vast\"\ntoken_env = \"VAST_KEY\"\nbase_url = \"{}\"\n",
            server.base_url
        ),
    );
    let release = |args: &[&str]| {
        let mut all = vec!["--config", config.as_str(), "release", "train-a"];
        all.extend_from_slice(args);
        let out = home
            .command(&all)
            .env("VAST_KEY", VAST_TOKEN)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(!stdout(&out).contains(VAST_TOKEN) && !stderr(&out).contains(VAST_TOKEN));
        out
    };
    let dry = release(&["--dry-run", "--json"]);
    let plan: serde_json::Value = serde_json::from_str(&stdout(&dry))
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&dry), stderr(&dry)));
    assert_eq!(plan["provider"], "vast", "{plan:#}");
    assert_eq!(plan["instance_id"], "101");
    assert_eq!(plan["token_problem"], serde_json::Value::Null);
    assert_eq!(
        plan["steps"][0]["url"],
        format!("{}/api/v0/instances/101/", server.base_url)
    );

    let sent = release(&["--yes"]);
    assert_eq!(sent.status.code(), Some(0), "{}", stderr(&sent));
    let put = server
        .seen()
        .into_iter()
        .find(|s| s.method == "PUT")
        .expect("the release request");
    assert_eq!(put.path, "/api/v0/instances/101/");
    assert_eq!(
        put.header("authorization"),
        Some(format!("Bearer {VAST_TOKEN}").as_str())
    );
}
