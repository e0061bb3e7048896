//! `gpufleet cost` with `[[providers]]`: the money nobody watches, from the synced inventory
//! (a loopback vast server): a stopped instance whose storage still bills (per day), a running
//! instance that is no host, a price that changed between syncs; red lines, so exit 1. An
//! account never synced is synced first.

#[path = "providers_support/server.rs"]
mod server;
#[path = "support/cli.rs"]
mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;
use server::{Server, json};
use support::{Home, stderr, stdout};

fn rows(price: f64) -> String {
    format!(
        r#"{{"success": true, "next_token": null, "instances": [
 {{"id": 101, "label": "watched", "actual_status": "running", "ssh_host": "ssh5.vast.ai", "ssh_port": 10600, "dph_total": {price}}},
 {{"id": 102, "label": "idle", "actual_status": "stopped", "ssh_host": "ssh7.vast.ai", "ssh_port": 20400,
   "dph_total": 0.002, "storage_total_cost": 0.002, "disk_space": 100}},
 {{"id": 103, "label": "forgotten", "actual_status": "running", "ssh_host": "ssh8.vast.ai", "ssh_port": 30000, "dph_total": 1.5}}]}}"#
    )
}

fn setup(server: &Server) -> (Home, String) {
    let home = Home::new();
    let config = home.write(
        "c.toml",
        &format!(
            "[[hosts]]\nname = \"watched\"\nssh = \"root@ssh5.vast.ai:10600\"\n\
             [hosts.release]\nprovider = \"vast\"\ninstance_id = \"101\"\ntoken_env = \"VAST_KEY\"\n\n\
             [[providers]]\nkind = \"vast\"\ntoken_env = \"VAST_KEY\"\nbase_url = \"{}\"\n",
            server.base_url
        ),
    );
    (home, config)
}

fn run(home: &Home, args: &[&str]) -> std::process::Output {
    let out = home
        .command(args)
        .env("VAST_KEY", "vk-cost-5150")
        .output()
        .unwrap();
    assert!(!stdout(&out).contains("vk-cost-5150") && !stderr(&out).contains("vk-cost-5150"));
    out
}

#[test]
fn cost_names_the_money_nobody_watches() {
    let phase = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&phase);
    let server = Server::start(move |_, _| {
        json(
            200,
            &rows(if seen.load(Ordering::SeqCst) == 0 {
                0.712
            } else {
                0.80
            }),
        )
    });
    let (home, config) = setup(&server);
    assert_eq!(
        run(&home, &["--config", &config, "providers", "sync"])
            .status
            .code(),
        Some(0)
    );
    phase.store(1, Ordering::SeqCst);
    assert_eq!(
        run(&home, &["--config", &config, "providers", "sync"])
            .status
            .code(),
        Some(0)
    );
    let requests = server.seen().len();

    let out = run(&home, &["--config", &config, "cost"]);
    assert_eq!(out.status.code(), Some(1), "red lines: {}", stderr(&out));
    assert_eq!(
        server.seen().len(),
        requests,
        "a fresh inventory is not synced again"
    );
    let text = stdout(&out);
    assert!(
        text.contains("stopped: vast vast 102 (idle): storage still bills 0.05 USD/day"),
        "{text}"
    );
    assert!(
        text.contains(
            "running, not a host gpufleet watches: vast vast 103 (forgotten) at 1.50 USD/h"
        ),
        "{text}"
    );
    assert!(
        !text.contains("watches: vast vast 101"),
        "a configured host is watched: {text}"
    );
    assert!(
        text.contains("price changed: vast vast 101 (watched): 0.71 USD -> 0.80 USD/h"),
        "{text}"
    );

    let out = run(&home, &["--config", &config, "cost", "--json"]);
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let unwatched = &doc["inventory"]["unwatched"];
    let per_day = unwatched["stopped_billing"][0]["storage_per_day"]
        .as_f64()
        .unwrap();
    assert!((per_day - 0.048).abs() < 1e-9, "{per_day}");
    assert_eq!(unwatched["running_unwatched"][0]["instance_id"], "103");
    assert_eq!(unwatched["price_changes"][0]["to_price"], 0.80);
}

#[test]
fn cost_syncs_an_account_never_synced_first() {
    let server = Server::start(|_, _| json(200, &rows(0.712)));
    let (home, config) = setup(&server);
    let out = run(&home, &["--config", &config, "cost"]);
    assert_eq!(server.seen().len(), 1, "synced first: {}", stderr(&out));
    assert!(home.path().join("state/inventory.json").exists());
    assert!(
        stdout(&out).contains("vast vast: synced 0 s ago"),
        "{}",
        stdout(&out)
    );
}
