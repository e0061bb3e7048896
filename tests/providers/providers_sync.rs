//! `gpufleet providers sync` as a user runs it, against loopback provider servers: the table
//! and JSON, the inventory kept in the state directory across syncs (a price change recorded,
//! an instance that disappeared kept as gone, a failed account keeping its last good
//! inventory with its age), bad answers that never corrupt what is stored, config errors with
//! file, line and key, and the token never in stdout, stderr or the stored file.

use crate::cli as support;
use crate::provider_api as server;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;
use server::{Reply, Server, json, typed};
use support::{Home, stderr, stdout};

const VAST_TOKEN: &str = "vast-KEY-0a9b8c7d6e";
const RUNPOD_TOKEN: &str = "rpa_RUNPODKEY_5x4y3z";

fn vast_row(id: u64, status: &str, price: f64) -> String {
    format!(
        r#"{{"id": {id}, "label": "job-{id}", "actual_status": "{status}", "gpu_name": "RTX 4090",
           "num_gpus": 1, "ssh_host": "ssh5.vast.ai", "ssh_port": 10600, "public_ipaddr": "203.0.113.7",
           "start_date": 1764633600, "dph_total": {price}, "storage_total_cost": 0.002, "disk_space": 40}}"#
    )
}

fn vast_answer(rows: &[String]) -> Reply {
    json(
        200,
        &format!(
            r#"{{"success": true, "instances_found": {n}, "total_instances": {n}, "label_counts": {{}},
               "next_token": null, "instances": [{}]}}"#,
            rows.join(","),
            n = rows.len()
        ),
    )
}

const RUNPOD_ONE: &str = r#"{"pods": [{"id": "7h9k2m4n6p", "name": "trainer", "status": "RUNNING",
  "gpu": {"id": "NVIDIA H100 80GB HBM3", "count": 8}, "cost": 21.52,
  "ssh": {"proxy": {"host": "ssh.runpod.io", "port": 22, "username": "7h9k2m4n6p-64411eb2",
  "command": "ssh 7h9k2m4n6p-64411eb2@ssh.runpod.io"}, "direct": null},
  "mounts": {"persistent": {"size": 200, "path": "/workspace"}}, "runtime": null,
  "createdAt": "2026-12-01T00:00:00Z", "startedAt": "2026-12-01T00:01:00Z"}]}"#;

struct Fixture {
    home: Home,
    config: String,
    phase: Arc<AtomicUsize>,
    _vast: Server,
    _runpod: Server,
}

/// Two accounts; `vast_later` answers vast from the second sync on.
fn fixture(vast_later: Reply, runpod_later: Reply) -> Fixture {
    let phase = Arc::new(AtomicUsize::new(0));
    let vast_phase = Arc::clone(&phase);
    let vast = Server::start(move |seen, _| {
        assert_eq!(
            seen.header("authorization"),
            Some(format!("Bearer {VAST_TOKEN}").as_str())
        );
        if vast_phase.load(Ordering::SeqCst) == 0 {
            vast_answer(&[
                vast_row(101, "running", 0.712),
                vast_row(102, "stopped", 0.0),
            ])
        } else {
            vast_later.clone()
        }
    });
    let runpod_phase = Arc::clone(&phase);
    let runpod = Server::start(move |_, _| {
        if runpod_phase.load(Ordering::SeqCst) == 0 {
            json(200, RUNPOD_ONE)
        } else {
            runpod_later.clone()
        }
    });
    let home = Home::new();
    let config = home.write(
        "c.toml",
        &format!(
            "[[providers]]\nkind = \"vast\"\ntoken_env = \"VAST_KEY\"\nbase_url = \"{}\"\n\n\
             [[providers]]\nkind = \"runpod\"\nname = \"rp-team\"\ntoken_env = \"RUNPOD_KEY\"\n\
             base_url = \"{}\"\n",
            vast.base_url, runpod.base_url
        ),
    );
    Fixture {
        home,
        config,
        phase,
        _vast: vast,
        _runpod: runpod,
    }
}

impl Fixture {
    fn sync(&self, json: bool) -> std::process::Output {
        let mut args = vec!["--config", self.config.as_str(), "providers", "sync"];
        if json {
            args.push("--json");
        }
        let out = self
            .home
            .command(&args)
            .env("VAST_KEY", VAST_TOKEN)
            .env("RUNPOD_KEY", RUNPOD_TOKEN)
            .output()
            .unwrap();
        for text in [stdout(&out), stderr(&out), self.stored_text()] {
            assert!(
                !text.contains(VAST_TOKEN) && !text.contains(RUNPOD_TOKEN),
                "token leaked: {text}"
            );
        }
        out
    }

    fn stored_text(&self) -> String {
        std::fs::read_to_string(self.home.path().join("state/inventory.json")).unwrap_or_default()
    }

    fn stored(&self) -> Value {
        serde_json::from_str(&self.stored_text()).expect("the stored inventory is JSON")
    }
}

fn instance<'a>(stored: &'a Value, account: &str, id: &str) -> &'a Value {
    stored["accounts"][account]["instances"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["id"] == id)
        .unwrap_or_else(|| panic!("no {id} in {account}: {stored:#}"))
}

#[test]
fn a_second_sync_records_the_new_price_marks_the_gone_and_keeps_a_failed_account() {
    let f = fixture(
        vast_answer(&[vast_row(101, "running", 0.80)]),
        json(
            500,
            r#"{"title": "Internal Server Error", "status": 500, "detail": "db down"}"#,
        ),
    );
    let first = f.sync(false);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let table = stdout(&first);
    assert!(table.starts_with("PROVIDER"), "{table}");
    assert!(table.contains("root@ssh5.vast.ai:10600 (proxy)"), "{table}");
    assert!(
        table.contains("7h9k2m4n6p-64411eb2@ssh.runpod.io:22 (proxy)"),
        "{table}"
    );
    assert!(table.contains("stopped"), "{table}");
    let before = f.stored();
    let runpod_before = before["accounts"]["rp-team"].clone();

    f.phase.store(1, Ordering::SeqCst);
    let second = f.sync(false);
    assert_eq!(second.status.code(), Some(1), "an account failed");
    let err = stderr(&second);
    assert!(
        err.contains("runpod account \"rp-team\": the provider's server failed (HTTP 500)"),
        "{err}"
    );
    let table = stdout(&second);
    assert!(table.contains("gone "), "{table}");
    assert!(
        table.contains("FAILED") && table.contains("showing the inventory synced"),
        "{table}"
    );

    let after = f.stored();
    let prices: Vec<f64> = instance(&after, "vast", "101")["prices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["price_per_hour"].as_f64().unwrap())
        .collect();
    assert_eq!(prices, vec![0.712, 0.80]);
    assert!(
        instance(&after, "vast", "102")["gone_ms"]
            .as_u64()
            .is_some()
    );
    let runpod_after = &after["accounts"]["rp-team"];
    assert_eq!(runpod_after["instances"], runpod_before["instances"]);
    assert_eq!(runpod_after["synced_ms"], runpod_before["synced_ms"]);
    assert!(runpod_after["error"].as_str().unwrap().contains("HTTP 500"));
}

#[test]
fn no_bad_answer_corrupts_or_loses_the_stored_inventory() {
    let html = "<html><head><title>Service Unavailable</title></head></html>";
    let bad = [
        json(
            401,
            r#"{"success": false, "error": "auth_error", "msg": "Invalid user key"}"#,
        ),
        json(
            404,
            r#"{"success": false, "error": "not_found", "msg": "no such path"}"#,
        ),
        json(500, r#"{"success": false, "error": "server_error"}"#),
        typed(200, "text/html", html),
        json(
            200,
            r#"{"success": true, "next_token": null, "instances": [{"id": 101, "actual_st"#,
        ),
        json(
            200,
            r#"{"success": false, "error": "invalid_args", "msg": "bad order_by"}"#,
        ),
    ];
    for reply in bad {
        let shown = reply.body.clone();
        let f = fixture(reply, json(200, RUNPOD_ONE));
        assert_eq!(f.sync(false).status.code(), Some(0));
        let before = f.stored();
        f.phase.store(1, Ordering::SeqCst);
        let out = f.sync(true);
        assert_eq!(out.status.code(), Some(1), "{shown}");
        assert!(
            stderr(&out).contains("vast account \"vast\": "),
            "{}",
            stderr(&out)
        );
        let after = f.stored();
        assert_eq!(
            after["accounts"]["vast"]["instances"], before["accounts"]["vast"]["instances"],
            "{shown}"
        );
        let printed: Value = serde_json::from_str(&stdout(&out)).unwrap();
        let vast = &printed["accounts"][0];
        assert_eq!(
            (vast["account"].as_str(), vast["ok"].as_bool()),
            (Some("vast"), Some(false))
        );
        assert_eq!(
            vast["instances"].as_array().map(Vec::len),
            Some(2),
            "last good kept: {shown}"
        );
    }
}

#[test]
fn json_lists_each_account_with_its_instances() {
    let f = fixture(json(500, "{}"), json(500, "{}"));
    let out = f.sync(true);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let accounts = doc["accounts"].as_array().unwrap();
    assert_eq!(accounts.len(), 2);
    let pod = &accounts[1]["instances"][0];
    assert_eq!(pod["id"], "7h9k2m4n6p");
    assert_eq!(pod["state"], "running");
    assert_eq!(pod["ssh"]["route"], "proxy");
    assert_eq!(pod["price_per_hour"], 21.52);
    assert_eq!(pod["gpu_count"], 8);
    assert_eq!(pod["started_ms"], 1_796_083_260_000u64);
}

#[test]
fn a_damaged_stored_inventory_is_left_alone() {
    let f = fixture(json(500, "{}"), json(500, "{}"));
    let path = f
        .home
        .write("state/inventory.json", "{\"version\": 1, \"accou");
    let out = f.sync(false);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("damaged"), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(path).unwrap(),
        "{\"version\": 1, \"accou"
    );
}

fn config_error(text: &str) -> String {
    let home = Home::new();
    let path = home.write("c.toml", text);
    let out = home.run(&["--config", &path, "providers", "sync"]);
    assert_eq!(out.status.code(), Some(2));
    stderr(&out)
}

#[test]
fn config_errors_name_file_line_and_key() {
    let err = config_error(
        "[[providers]]\nkind = \"vast\"\ntoken_env = \"A\"\n\n[[providers]]\nkind = \"vast\"\n\
         token_env = \"B\"\n",
    );
    assert!(
        err.contains("c.toml:5: providers[1].name: two accounts are called \"vast\""),
        "{err}"
    );
    let err = config_error(
        "[[providers]]\nkind = \"runpod\"\ntoken_env = \"A\"\nbase_url = \"ftp://x\"\n",
    );
    assert!(
        err.contains("c.toml:4: providers[0].base_url: must start with http"),
        "{err}"
    );
    let err = config_error("[[providers]]\nkind = \"lambda\"\n");
    assert!(
        err.contains("c.toml:2: providers[0].kind: kind = \"lambda\" needs token_env"),
        "{err}"
    );
    let err = config_error("[[providers]]\nkind = \"command\"\n");
    assert!(err.contains("providers[0].command: is required"), "{err}");
    let err = config_error("[[providers]]\nkind = \"vast\"\ntoken = \"abc\"\n");
    assert!(
        err.contains("c.toml:3: providers[0].token: do not write a token"),
        "{err}"
    );
    let err = config_error("[[providers]]\nkind = \"gpushare\"\n");
    assert!(err.contains("c.toml:2"), "{err}");
}

#[test]
fn no_accounts_is_a_setup_error() {
    let home = Home::new();
    let path = home.write("c.toml", "");
    let out = home.run(&["--config", &path, "providers", "sync"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no [[providers]] accounts"),
        "{}",
        stderr(&out)
    );
}
