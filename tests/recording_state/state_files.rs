//! State files as several gpufleet processes and a careless user meet them, through the real
//! binary and a real release command: concurrent releases all land in the ledger and the audit
//! log, `cost --json` shows what the ledger holds, a ledger that cannot record a release stops
//! the release before the provider is asked (unless `--force`, which then prints the entry to
//! add by hand), and every state file is private.

use crate::tmux;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use tmux::binary;

const HOSTS: usize = 10;

/// A fleet of `HOSTS` hosts released by a local command that leaves a marker file per host.
struct Fleet {
    dir: tempfile::TempDir,
    config: PathBuf,
}

impl Fleet {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp");
        std::fs::create_dir(dir.path().join("released")).expect("marker dir");
        let mut text = String::new();
        for i in 0..HOSTS {
            text.push_str(&format!(
                "[[hosts]]\nname = \"h{i}\"\nssh = \"root@127.0.0.1:1\"\nprice_per_hour = 2.5\n\
                 currency = \"USD\"\n[hosts.release]\nprovider = \"command\"\n\
                 instance_id = \"inst-{i}\"\ncommand = [\"touch\", \"{}/released/{{instance_id}}\"]\n",
                dir.path().display()
            ));
        }
        let config = dir.path().join("config.toml");
        std::fs::write(&config, text).expect("config");
        Self { dir, config }
    }

    fn state(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(binary());
        command
            .args(args)
            .arg("--config")
            .arg(&self.config)
            .env("GPUFLEET_STATE_DIR", self.state())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("run gpufleet")
    }

    fn released_marker(&self, i: usize) -> PathBuf {
        self.dir.path().join(format!("released/inst-{i}"))
    }

    fn ledger(&self) -> serde_json::Value {
        let text = std::fs::read_to_string(self.state().join("ledger.json")).expect("ledger");
        serde_json::from_str(&text).expect("ledger JSON")
    }
}

fn text(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .expect("metadata")
        .permissions()
        .mode()
        & 0o777
}

#[test]
fn concurrent_releases_all_stay_in_the_ledger_and_the_audit_log() {
    for round in 0..3 {
        let fleet = Fleet::new();
        let children: Vec<_> = (0..HOSTS)
            .map(|i| {
                let name = format!("h{i}");
                fleet
                    .command(&["release", &name, "--yes"])
                    .spawn()
                    .expect("spawn")
            })
            .collect();
        for child in children {
            let out = child.wait_with_output().expect("wait");
            assert_eq!(out.status.code(), Some(0), "round {round}: {}", text(&out));
        }
        let ledger = fleet.ledger();
        for i in 0..HOSTS {
            assert!(fleet.released_marker(i).exists(), "h{i} was not released");
            let released = &ledger["hosts"][format!("h{i}")]["released"];
            assert_eq!(
                released["action"], "stop",
                "round {round}: the ledger lost h{i}'s release: {ledger:#}"
            );
        }
        let audit = std::fs::read_to_string(fleet.state().join("audit.jsonl")).expect("audit");
        for i in 0..HOSTS {
            let lines = audit
                .lines()
                .filter(|line| line.contains(&format!("\"host\":\"h{i}\"")))
                .count();
            assert_eq!(lines, 1, "round {round}: audit lines of h{i}:\n{audit}");
        }
    }
}

#[test]
fn cost_json_shows_the_release_the_ledger_holds() {
    let fleet = Fleet::new();
    let out = fleet.run(&["release", "h3", "--yes"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stored_at = fleet.ledger()["hosts"]["h3"]["released"]["at_ms"].clone();
    assert!(stored_at.is_u64(), "{:#}", fleet.ledger());

    let out = fleet.run(&["cost", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let host = doc["hosts"]
        .as_array()
        .expect("hosts")
        .iter()
        .find(|h| h["name"] == "h3")
        .expect("h3")
        .clone();
    assert_eq!(host["released"]["at_ms"], stored_at, "{doc:#}");
    assert_eq!(host["released"]["action"], "stop");
    assert_eq!(host["released"]["provider"], "command");
    let other = doc["hosts"]
        .as_array()
        .expect("hosts")
        .iter()
        .find(|h| h["name"] == "h4")
        .expect("h4")
        .clone();
    assert!(other["released"].is_null(), "{doc:#}");
}

#[test]
fn a_damaged_ledger_stops_the_release_before_the_provider_is_asked() {
    let fleet = Fleet::new();
    std::fs::create_dir_all(fleet.state()).expect("state");
    let ledger = fleet.state().join("ledger.json");
    std::fs::write(&ledger, "{ \"hosts\": { truncated").expect("damage");

    let out = fleet.run(&["release", "h1", "--yes"]);
    let shown = text(&out);
    assert_ne!(out.status.code(), Some(0), "{shown}");
    assert!(
        !fleet.released_marker(1).exists(),
        "the provider was asked: {shown}"
    );
    assert!(shown.contains("ledger"), "{shown}");
    assert!(shown.contains("--force"), "{shown}");
    assert_eq!(
        std::fs::read_to_string(&ledger).expect("ledger"),
        "{ \"hosts\": { truncated",
        "the damaged ledger is left for the user to look at"
    );

    // Forced: released, but not recorded, so the exit is non-zero and the entry is printed.
    let out = fleet.run(&["release", "h1", "--yes", "--force"]);
    let shown = text(&out);
    assert!(fleet.released_marker(1).exists(), "{shown}");
    assert_eq!(out.status.code(), Some(1), "{shown}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let start = stdout
        .find("  \"h1\": {")
        .expect("the entry to add by hand");
    let entry: String = stdout[start..]
        .lines()
        .map(|line| line.strip_prefix("  ").unwrap_or(line))
        .collect::<Vec<_>>()
        .join("\n");
    let doc: serde_json::Value =
        serde_json::from_str(&format!("{{{entry}}}")).expect("the entry is JSON");
    assert_eq!(doc["h1"]["released"]["action"], "stop", "{shown}");
}

#[test]
fn a_ledger_that_cannot_be_replaced_stops_the_release_too() {
    let fleet = Fleet::new();
    // A directory where the ledger should be: it can be neither read nor replaced, even by root.
    std::fs::create_dir_all(fleet.state().join("ledger.json")).expect("state");
    let out = fleet.run(&["release", "h2", "--yes"]);
    let shown = text(&out);
    assert_ne!(out.status.code(), Some(0), "{shown}");
    assert!(!fleet.released_marker(2).exists(), "{shown}");
    assert!(shown.contains("ledger.json"), "{shown}");
}

#[test]
fn state_files_are_private_and_old_ones_are_tightened() {
    let fleet = Fleet::new();
    let state = fleet.state();
    // An older gpufleet left these readable by everyone.
    std::fs::create_dir_all(&state).expect("state");
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let audit = state.join("audit.jsonl");
    std::fs::write(&audit, "").expect("audit");
    std::fs::set_permissions(&audit, std::fs::Permissions::from_mode(0o644)).expect("chmod");

    let out = fleet.run(&["release", "h0", "--yes"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(mode(&state), 0o700, "state directory");
    assert_eq!(mode(&state.join("ledger.json")), 0o600, "ledger");
    assert_eq!(mode(&audit), 0o600, "audit log");

    // A fresh state directory, several levels deep, is created private.
    let nested = fleet.dir.path().join("deep/er/state");
    let out = fleet
        .command(&["release", "h5", "--yes"])
        .env("GPUFLEET_STATE_DIR", &nested)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    for dir in ["deep", "deep/er", "deep/er/state"] {
        assert_eq!(mode(&fleet.dir.path().join(dir)), 0o700, "{dir}");
    }
    assert_eq!(mode(&nested.join("ledger.json")), 0o600);
    assert_eq!(mode(&nested.join("audit.jsonl")), 0o600);
}
