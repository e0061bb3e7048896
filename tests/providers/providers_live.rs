//! The fleet follows the provider accounts while it runs: after a background sync, a new
//! running instance with SSH starts streaming in the running watcher and console (no restart,
//! no SIGHUP), an instance gone from its account is marked gone with its ledger closed, and a
//! price that changed bills from then on while the time before keeps the old price (the
//! ledger, `gpufleet cost` and the totals agree). A RunPod account on a loopback server whose
//! pods' direct SSH endpoint is a real sshd on 127.0.0.1; the console in tmux.

use crate::cli as support;
use crate::common;
use crate::fleet_setup;
use crate::provider_api as server;
use crate::tmux;

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::sshd::Sshd;
use fleet_setup::setup;
use serde_json::Value;
use server::{Server, json};
use support::{Home, stderr, stdout};

const TOKEN: &str = "rp-KEY-live-6262";
const WAIT: Duration = Duration::from_secs(30);

/// One running pod of RunPod REST v2's `/v2/pods` whose direct endpoint is the test sshd.
fn pod(sshd: &Sshd, id: &str, name: &str, cost: f64) -> String {
    format!(
        r#"{{"id": "{id}", "name": "{name}", "status": "RUNNING", "gpu": {{"id": "NVIDIA H200", "count": 1}},
  "ssh": {{"proxy": null, "direct": {{"host": "127.0.0.1", "port": {port}, "username": "{user}",
  "command": "ssh {user}@127.0.0.1 -p {port}"}}}}, "cost": {cost}, "mounts": {{}},
  "createdAt": "2026-06-01T12:00:00Z", "startedAt": "2026-06-01T12:02:00Z"}}"#,
        port = sshd.port,
        user = sshd.user
    )
}

fn pods(list: &[String]) -> String {
    format!(r#"{{"pods": [{}]}}"#, list.join(",\n"))
}

/// A server answering `first` until `phase` is set, then `later`.
fn server(first: String, later: String) -> (Server, Arc<AtomicUsize>) {
    let phase = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&phase);
    let server = Server::start(move |_, _| match seen.load(Ordering::SeqCst) {
        0 => json(200, &first),
        _ => json(200, &later),
    });
    (server, phase)
}

/// `providers sync`, then the stored attempt made ten minutes old, so a driver started now
/// syncs again at once (the default `sync_interval_s` is five minutes).
fn sync_and_age(home: &Home, config: &str) {
    let out = home
        .command(&["--config", config, "providers", "sync"])
        .env("RUNPOD_KEY", TOKEN)
        .output()
        .expect("sync");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let path = home.path().join("state/inventory.json");
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let account = &mut doc["accounts"]["runpod"];
    let attempted = account["attempted_ms"].as_u64().expect("attempted_ms");
    account["attempted_ms"] = (attempted - 600_000).into();
    std::fs::write(&path, serde_json::to_string(&doc).unwrap()).unwrap();
}

fn wait_until(what: &str, why: &dyn Fn() -> String, mut ok: impl FnMut() -> bool) {
    let deadline = Instant::now() + WAIT;
    while !ok() {
        assert!(Instant::now() < deadline, "never {what}:\n{}", why());
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn hours(ms: u64) -> f64 {
    ms as f64 / 3_600_000.0
}

#[test]
fn the_running_watcher_starts_new_instances_marks_gone_ones_and_bills_a_new_price_from_then() {
    let Some(sshd) = Sshd::start() else { return };
    let first = pods(&[
        pod(&sshd, "pod1", "gpu train", 0.44),
        pod(&sshd, "pod3", "old", 0.30),
    ]);
    // The next sync: pod1's price doubled, pod3 gone, pod2 new.
    let later = pods(&[
        pod(&sshd, "pod1", "gpu train", 0.88),
        pod(&sshd, "pod2", "second", 0.50),
    ]);
    let (server, phase) = server(first, later);
    let home = Home::new();
    let (config, ssh_config) = setup(&home, &sshd, &server, "");
    sync_and_age(&home, &config);
    phase.store(1, Ordering::SeqCst);

    let log = home.path().join("watch.log");
    let known = sshd.trusted_known_hosts();
    let mut watcher = home
        .command(&[
            "watch",
            "--config",
            &config,
            "--ssh-config",
            &ssh_config,
            "--known-hosts",
            known.to_str().unwrap(),
        ])
        .env("RUNPOD_KEY", TOKEN)
        .env("SSH_AUTH_SOCK", "")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("watch");
    let read_log = || std::fs::read_to_string(&log).unwrap_or_default();
    wait_until("the new pod streaming", &read_log, || {
        read_log()
            .lines()
            .any(|l| l.contains("connected") && l.contains("second"))
    });
    let text = read_log();
    let joined = text
        .lines()
        .find(|l| l.contains("provider inventory joined"))
        .unwrap_or_else(|| panic!("no join logged:\n{text}"));
    assert!(joined.contains("added=second"), "{joined}");
    assert!(joined.contains("gone=old"), "{joined}");
    assert!(
        joined.contains("restarted=gpu-train"),
        "new price: {joined}"
    );
    std::thread::sleep(Duration::from_millis(1500));
    Command::new("kill")
        .args(["-TERM", &watcher.id().to_string()])
        .status()
        .expect("kill");
    let started = Instant::now();
    while watcher.try_wait().expect("wait").is_none() {
        assert!(started.elapsed() < WAIT, "watch did not stop");
        std::thread::sleep(Duration::from_millis(20));
    }
    let text = read_log();
    assert!(!text.contains(TOKEN), "token leaked: {text}");

    // The ledger: the gone pod closed, the repriced one billed at 0.44 until the sync.
    let ledger: Value = serde_json::from_str(
        &std::fs::read_to_string(home.path().join("state/ledger.json")).unwrap(),
    )
    .unwrap();
    let hosts = &ledger["hosts"];
    assert_eq!(hosts["old"]["released"]["action"], "gone", "{ledger:#}");
    let train = &hosts["gpu-train"];
    assert_eq!(train["price_per_hour"], 0.88, "{ledger:#}");
    assert_eq!(
        train["earlier_prices"][0]["price_per_hour"], 0.44,
        "{ledger:#}"
    );
    let at_old_ms = train["earlier_prices"][0]["billed_ms"].as_u64().unwrap();
    assert!(at_old_ms > 0, "{ledger:#}");

    // `cost` prices it the same way, and its total adds what each host spent.
    let out = home
        .command(&["--config", &config, "cost", "--json"])
        .env("RUNPOD_KEY", TOKEN)
        .output()
        .unwrap();
    let doc: Value = serde_json::from_str(&stdout(&out))
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(&out), stderr(&out)));
    let host = |name: &str| {
        doc["hosts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no {name}: {doc:#}"))
    };
    let train = host("gpu-train");
    let billed_ms = train["billed_ms"].as_u64().unwrap();
    let expected = 0.44 * hours(at_old_ms) + 0.88 * hours(billed_ms - at_old_ms);
    let spent = train["spent"].as_f64().unwrap();
    assert!(
        (spent - expected).abs() < 0.02,
        "{spent} vs {expected}: {doc:#}"
    );
    let sum: f64 = doc["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|h| h["spent"].as_f64())
        .sum();
    let total = doc["fleet"]["by_currency"][0]["spent"].as_f64().unwrap();
    assert!((total - sum).abs() < 0.05, "{total} vs {sum}: {doc:#}");
    let unwatched = &doc["inventory"]["unwatched"]["running_unwatched"];
    assert_eq!(unwatched.as_array().map(Vec::len), Some(0), "{doc:#}");
}

#[test]
fn the_running_console_starts_a_new_instance_and_says_which_one_went() {
    let Some(sshd) = Sshd::start() else { return };
    let first = pods(&[pod(&sshd, "pod1", "gpu train", 0.44)]);
    let later = pods(&[pod(&sshd, "pod2", "second", 0.50)]);
    let (server, phase) = server(first, later);
    let home = Home::new();
    let (config, ssh_config) = setup(&home, &sshd, &server, "");
    sync_and_age(&home, &config);
    phase.store(1, Ordering::SeqCst);
    let command = format!(
        "SSH_AUTH_SOCK= GPUFLEET_STATE_DIR={} RUNPOD_KEY={TOKEN} {} --config {config} \
         --ssh-config {ssh_config} --known-hosts {}; sleep 30",
        home.path().join("state").display(),
        tmux::binary().display(),
        sshd.trusted_known_hosts().display()
    );
    let Some(tmux) = tmux::Tmux::start(&command, 160, 40) else {
        return;
    };
    let screen = tmux.wait_for("now watching second", WAIT);
    assert!(
        screen.contains("instance gone, marked and its ledger closed: gpu-train"),
        "{screen}"
    );
    // The new pod streams: its GPU shows on its row.
    let deadline = Instant::now() + WAIT;
    loop {
        let screen = tmux.screen();
        if screen
            .lines()
            .any(|l| l.contains("second") && l.contains("H200"))
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "second never streamed:\n{screen}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(!tmux.screen().contains(TOKEN));
    tmux.keys(&["q"]);
}
