//! `gpufleet cost` with `[[providers]]`: the money nobody watches, from the synced inventory
//! (a loopback vast server): a stopped instance whose storage still bills (per day), a running
//! instance that is no host (no SSH endpoint: the fleet cannot watch it), a price that changed
//! between syncs; red lines, so exit 1. A running instance with SSH is a host of the joined
//! fleet, as in the console: priced in the cost table, not "not watched". An account never
//! synced is synced first; one that cannot be reached leaves the stored inventory, said with
//! its age.

use crate::cli as support;
use crate::provider_api as server;

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
 {{"id": 103, "label": "forgotten", "actual_status": "running", "ssh_host": "ssh8.vast.ai", "ssh_port": 30000, "dph_total": 1.5}},
 {{"id": 104, "label": "nossh", "actual_status": "running", "dph_total": 2.5}}]}}"#
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
            "running, not a host gpufleet watches: vast vast 104 (nossh) at 2.50 USD/h, no SSH endpoint"
        ),
        "{text}"
    );
    // The synced running instance with SSH joined the fleet: a host of the cost table.
    assert!(!text.contains("watches: vast vast 103"), "{text}");
    assert!(
        text.lines()
            .any(|l| l.trim_start().starts_with("forgotten") && l.contains("1.50 USD")),
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
    assert_eq!(unwatched["running_unwatched"][0]["instance_id"], "104");
    assert_eq!(
        unwatched["running_unwatched"].as_array().map(Vec::len),
        Some(1)
    );
    assert!(
        doc["hosts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h["name"] == "forgotten"),
        "{doc:#}"
    );
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

#[test]
fn cost_offline_uses_the_stored_inventory_marked_with_its_age() {
    let phase = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&phase);
    let server = Server::start(move |_, _| match seen.load(Ordering::SeqCst) {
        0 => json(200, &rows(0.712)),
        _ => json(500, r#"{"success": false, "error": "server_error"}"#),
    });
    let (home, config) = setup(&server);
    let out = run(&home, &["--config", &config, "providers", "sync"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // The stored sync made two hours old (older than the 5-minute interval), the API down.
    let path = home.path().join("state/inventory.json");
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let account = &mut doc["accounts"]["vast"];
    for key in ["synced_ms", "attempted_ms"] {
        let at = account[key].as_u64().unwrap();
        account[key] = (at - 7_200_000).into();
    }
    std::fs::write(&path, serde_json::to_string(&doc).unwrap()).unwrap();
    phase.store(1, Ordering::SeqCst);

    let out = run(&home, &["--config", &config, "cost"]);
    let (text, errors) = (stdout(&out), stderr(&out));
    assert!(server.seen().len() >= 2, "tried again: {errors}");
    let age = |line: &str, before: &str| -> u64 {
        let rest = &line[line.find(before).unwrap_or_else(|| panic!("{line}")) + before.len()..];
        rest.split(' ').next().unwrap().parse().unwrap()
    };
    let note = errors
        .lines()
        .find(|l| l.contains("using the last synced inventory"))
        .unwrap_or_else(|| panic!("no offline note: {errors}"));
    assert!(note.starts_with("gpufleet cost: "), "{note}");
    assert!(
        note.contains("vast") && note.contains("500"),
        "names the account: {note}"
    );
    let s = age(note, "(synced ");
    assert!((7_200..7_260).contains(&s), "{note}");
    // The report says it too, and still lists what the stored inventory holds.
    let account = text
        .lines()
        .find(|l| l.contains("vast vast: synced"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(account.contains("the last sync failed"), "{account}");
    assert!(
        (7_200..7_260).contains(&age(account, "synced ")),
        "{account}"
    );
    assert!(
        text.contains("stopped: vast vast 102 (idle): storage still bills 0.05 USD/day"),
        "{text}"
    );
}
