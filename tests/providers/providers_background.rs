//! The background sync the watcher runs: each account synced again every `sync_interval_s`
//! into the stored inventory, a note per account and round, nothing sent once it is stopped,
//! an account not synced again before its interval after a restart, and `gpufleet watch`
//! running it: the inventory stored and a log line per account, the token in neither. Asked
//! for a round soon (a release went out), every account is listed again 20 s later, never
//! sooner than a minute after its last attempt.

use crate::cli as support;
use crate::provider_api as server;

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gpufleet::config;
use gpufleet::providers::{BackgroundSync, InventoryStore, SyncNote, SyncSoon};
use gpufleet::release::SendOptions;
use server::{Server, json};

const ROWS: &str = r#"{"success": true, "next_token": null, "instances": [
 {"id": 7, "label": "bg", "actual_status": "running", "ssh_host": "ssh5.vast.ai", "ssh_port": 10600, "dph_total": 0.5}]}"#;

fn now_ms() -> u64 {
    gpufleet::telemetry::source::now_ms()
}

fn start(server: &Server, dir: &Path, notes: Arc<Mutex<Vec<SyncNote>>>) -> BackgroundSync {
    // Shorter than the config allows, so the test takes seconds.
    start_with(server, dir, notes, 1, now_ms, SyncSoon::default())
}

fn start_with(
    server: &Server,
    dir: &Path,
    notes: Arc<Mutex<Vec<SyncNote>>>,
    interval_s: u64,
    clock: fn() -> u64,
    soon: SyncSoon,
) -> BackgroundSync {
    let text = format!(
        "[[providers]]\nkind = \"vast\"\ntoken_env = \"BG_KEY\"\nbase_url = \"{}\"\n",
        server.base_url
    );
    let mut account = config::parse(&text, Path::new("c.toml")).unwrap().providers[0].clone();
    account.sync_interval_s = interval_s;
    BackgroundSync::start(
        vec![account],
        InventoryStore::in_dir(dir),
        Box::new(|name: &str| (name == "BG_KEY").then(|| "bg-token-123".to_string())),
        SendOptions::default(),
        clock,
        Box::new(move |note| {
            if let Ok(note) = note {
                notes.lock().unwrap().push(note);
            }
        }),
        soon,
    )
    .unwrap()
}

/// A clock the test moves: milliseconds since the epoch.
static CLOCK: AtomicU64 = AtomicU64::new(0);

fn test_clock() -> u64 {
    CLOCK.load(Ordering::SeqCst)
}

#[test]
fn a_round_asked_soon_lists_the_accounts_again_after_the_least_gap() {
    let server = Server::start(|_, _| json(200, ROWS));
    let dir = tempfile::tempdir().unwrap();
    let t0 = now_ms();
    CLOCK.store(t0, Ordering::SeqCst);
    let soon = SyncSoon::default();
    // An hour's interval: nothing comes again by itself in this test.
    let sync = start_with(
        &server,
        dir.path(),
        Arc::default(),
        3_600,
        test_clock,
        soon.clone(),
    );
    wait_for("the first sync", || server.seen().len() == 1);
    // A release went out 30 s later: asked again at the earliest a minute after the first.
    CLOCK.store(t0 + 30_000, Ordering::SeqCst);
    soon.ask();
    // The sync thread looks every 5 s at most: it has taken the request (due at t0 + 50 s,
    // held to t0 + 60 s) before the clock moves on.
    std::thread::sleep(Duration::from_secs(6));
    CLOCK.store(t0 + 59_000, Ordering::SeqCst);
    std::thread::sleep(Duration::from_secs(6));
    assert_eq!(server.seen().len(), 1, "not before the least gap");
    CLOCK.store(t0 + 61_000, Ordering::SeqCst);
    wait_for("the round asked for", || server.seen().len() == 2);
    // Asked once, listed once.
    CLOCK.store(t0 + 200_000, Ordering::SeqCst);
    std::thread::sleep(Duration::from_secs(6));
    assert_eq!(server.seen().len(), 2);
    sync.stop(Duration::from_secs(1));
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn accounts_are_synced_again_each_interval_and_not_after_stop() {
    let server = Server::start(|_, _| json(200, ROWS));
    let dir = tempfile::tempdir().unwrap();
    let notes = Arc::new(Mutex::new(Vec::new()));
    let sync = start(&server, dir.path(), Arc::clone(&notes));
    wait_for("two syncs", || server.seen().len() >= 2);
    let seen = server.seen();
    assert!(
        seen[1].at - seen[0].at >= Duration::from_millis(900),
        "once an interval"
    );
    let stored = InventoryStore::in_dir(dir.path()).load().unwrap();
    assert_eq!(stored.accounts["vast"].instances[0].instance.id, "7");
    let first = notes.lock().unwrap()[0].clone();
    assert_eq!((first.account.as_str(), first.outcome), ("vast", Ok(1)));
    sync.stop(Duration::from_secs(1));
    let after_stop = server.seen().len();
    std::thread::sleep(Duration::from_millis(1_500));
    assert_eq!(server.seen().len(), after_stop, "nothing sent once stopped");
}

#[test]
fn a_restart_waits_for_the_interval_since_the_last_attempt() {
    let server = Server::start(|_, _| json(200, ROWS));
    let dir = tempfile::tempdir().unwrap();
    let notes = Arc::new(Mutex::new(Vec::new()));
    let sync = start(&server, dir.path(), Arc::clone(&notes));
    wait_for("the first sync", || !notes.lock().unwrap().is_empty());
    sync.stop(Duration::from_secs(1));
    let before = server.seen().len();
    let sync = start(&server, dir.path(), Arc::clone(&notes));
    // The first sync was moments ago and the interval is 1 s: nothing for now.
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(server.seen().len(), before, "not at once after a restart");
    wait_for("the next sync", || server.seen().len() > before);
    sync.stop(Duration::from_secs(1));
}

#[test]
fn the_watcher_syncs_the_accounts_and_logs_each_without_the_token() {
    let server = Server::start(|_, _| json(200, ROWS));
    let home = support::Home::new();
    let config = home.write(
        "c.toml",
        &format!(
            "[[hosts]]\nname = \"away\"\nssh = \"root@127.0.0.1:1\"\n\n\
             [[providers]]\nkind = \"vast\"\ntoken_env = \"BG_KEY\"\nbase_url = \"{}\"\n",
            server.base_url
        ),
    );
    let log = home.path().join("watch.log");
    let mut child = home
        .command(&["--config", &config, "watch"])
        .env("BG_KEY", "bg-token-watch-987")
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let inventory = home.path().join("state/inventory.json");
    let read_log = || std::fs::read_to_string(&log).unwrap_or_default();
    let started = Instant::now();
    while !(inventory.exists() && read_log().contains("provider account synced")) {
        if started.elapsed() > Duration::from_secs(15) {
            let _ = child.kill();
            panic!("no sync logged: {}", read_log());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    let text = read_log();
    assert!(text.contains("instances=1"), "{text}");
    for written in [text, std::fs::read_to_string(&inventory).unwrap()] {
        assert!(
            !written.contains("bg-token-watch-987"),
            "token leaked: {written}"
        );
    }
}
