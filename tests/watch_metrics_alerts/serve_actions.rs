//! Actions asked through the watcher (`POST /v1/actions`): a release run by the watcher with its
//! own release flow against a provider API on loopback that records every request. The
//! provider gets exactly one request for a release asked twice with the same idempotency key,
//! none for a watching token's request or an unconfirmed one; the provider's refusal comes
//! back with its words; the audit log names the token that asked, and the team's alert sink
//! hears of the release that went out, and the provider's inventory is listed again within a
//! minute and a half instead of at the next hourly sync. In tmux, an attached
//! console's release dialog asks the watcher (the provider gets the one request) and a
//! watching token's console says it may only watch; a host the watcher adds on a reload shows
//! in the attached console without attaching again.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::release_server::{Server, answer};
use crate::serve_attach::{Served, WAIT, free_port};
use crate::tmux::{Tmux, binary};
use crate::vast_list;

const VAST_TOKEN: &str = "vast-api-key-7";

/// A watcher of host `h1` (its SSH unreachable: a release by the API needs none) released
/// through `provider`, with a watching token and one that may act.
fn watcher(dir: &Path, provider: &Server) -> (Served, String) {
    watcher_with(dir, provider, "")
}

/// As [`watcher`], with `more` in its config.
fn watcher_with(dir: &Path, provider: &Server, more: &str) -> (Served, String) {
    let config = dir.join("config.toml");
    std::fs::write(&config, config_text(provider, more)).expect("config");
    let addr = format!("127.0.0.1:{}", free_port());
    let served = Served::start_with(
        dir,
        &["--config", config.to_str().expect("utf-8")],
        &addr,
        &[
            ("VIEWER_TOKEN", "view-only-1"),
            ("OPS_TOKEN", "ops-may-act-2"),
            ("GPUFLEET_TEST_VAST_TOKEN", VAST_TOKEN),
        ],
    );
    (served, addr)
}

/// The watcher's config: `h1`, then `more` hosts.
fn config_text(provider: &Server, more: &str) -> String {
    format!(
        "[[hosts]]\nname = \"h1\"\nssh = \"root@127.0.0.1:1\"\n\
             [hosts.release]\nprovider = \"vast\"\ninstance_id = \"12345\"\n\
             token_env = \"GPUFLEET_TEST_VAST_TOKEN\"\nbase_url = \"{}\"\n\n\
             [serve]\n\n[[serve.tokens]]\nname = \"viewer\"\ntoken_env = \"VIEWER_TOKEN\"\n\n\
             [[serve.tokens]]\nname = \"ops-alice\"\ntoken_env = \"OPS_TOKEN\"\nactions = true\n\n{more}",
        provider.base_url
    )
}

/// `gpufleet attach` in tmux with `token`, a state directory of its own.
fn console(dir: &Path, addr: &str, token: &str, lang: &str) -> Option<Tmux> {
    let command = format!(
        "GPUFLEET_STATE_DIR={} GPUFLEET_TOKEN={token} SSH_AUTH_SOCK= {} --lang {lang} attach http://{addr}; echo EXIT=$?; sleep 30",
        dir.join(format!("console-{token}")).display(),
        binary().display(),
    );
    Tmux::start(&command, 100, 30)
}

fn post(addr: &str, token: &str, body: &str) -> (u16, serde_json::Value) {
    let response = reqwest::blocking::Client::new()
        .post(format!("http://{addr}/v1/actions"))
        .bearer_auth(token)
        .body(body.to_string())
        .send()
        .expect("post");
    let status = response.status().as_u16();
    let text = response.text().expect("body");
    (
        status,
        serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text)),
    )
}

#[test]
fn a_release_through_the_watcher_reaches_the_provider_once_for_its_key() {
    let provider = Server::start(vec![
        answer(200, r#"{"success": true}"#),
        answer(
            200,
            r#"{"success": false, "error": "invalid_args", "msg": "instance is not yours"}"#,
        ),
    ]);
    let dir = tempfile::tempdir().expect("temp");
    let hook = Server::start(vec![answer(200, "{}")]);
    let (served, addr) = watcher_with(
        dir.path(),
        &provider,
        &format!(
            "[[alerts]]\nkind = \"webhook\"\nurl = \"{}/hook\"\n",
            hook.base_url
        ),
    );
    let release =
        r#"{"action":"release","host":"h1","release":"stop","confirm":"h1","key":"rel-h1-1"}"#;

    // A watching token may not act: refused before anything is sent.
    assert_eq!(post(&addr, "view-only-1", release).0, 403);
    // A name typed wrong confirms nothing.
    let wrong = post(
        &addr,
        "ops-may-act-2",
        r#"{"action":"release","host":"h1","confirm":"h2","key":"rel-h1-0"}"#,
    );
    assert_eq!(wrong.0, 400, "{}", wrong.1);
    assert_eq!(wrong.1["outcome"], "not_confirmed", "{}", wrong.1);
    assert!(provider.requests().is_empty(), "{:?}", provider.requests());

    // Confirmed: sent once; the same key again (a retry after a cut) reads the outcome back.
    let first = post(&addr, "ops-may-act-2", release);
    assert_eq!(first.0, 200, "{}\n{}", first.1, served.log());
    assert_eq!(first.1["outcome"], "done", "{}", first.1);
    assert!(
        first.1["said"]
            .as_str()
            .unwrap_or_default()
            .contains("stop"),
        "{}",
        first.1
    );
    assert_eq!(post(&addr, "ops-may-act-2", release), first);
    // The team hears of it: one alert naming who asked, as for an automatic release.
    let deadline = std::time::Instant::now() + WAIT;
    let alerted = loop {
        let alerts: Vec<serde_json::Value> = hook
            .requests()
            .iter()
            .map(|r| r.json())
            .filter(|a| a["label"] == "release_asked_done")
            .collect();
        if !alerts.is_empty() {
            break alerts;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no alert: {:?}\n{}",
            hook.requests(),
            served.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(alerted.len(), 1, "{alerted:?}");
    assert_eq!(alerted[0]["host"], "h1", "{alerted:?}");
    let summary = alerted[0]["summary"].as_str().unwrap_or_default();
    assert!(
        summary.contains("ops-alice") && summary.contains("stop"),
        "{summary}"
    );
    let seen = provider.requests();
    assert_eq!(seen.len(), 1, "one provider request: {seen:?}");
    assert_eq!(seen[0].method, "PUT");
    assert_eq!(seen[0].path, "/api/v0/instances/12345/");
    assert_eq!(
        seen[0].header("authorization"),
        Some(format!("Bearer {VAST_TOKEN}").as_str())
    );
    assert_eq!(seen[0].json(), serde_json::json!({"state": "stopped"}));

    // A new key is a new release; the provider's refusal comes back with its words.
    let refused = post(
        &addr,
        "ops-may-act-2",
        r#"{"action":"release","host":"h1","confirm":"h1","key":"rel-h1-2"}"#,
    );
    assert_eq!(refused.0, 409, "{}", refused.1);
    assert_eq!(refused.1["outcome"], "refused", "{}", refused.1);
    assert!(
        refused.1["error"]
            .as_str()
            .unwrap_or_default()
            .contains("instance is not yours"),
        "{}",
        refused.1
    );
    assert_eq!(provider.requests().len(), 2);
    // A refusal is the asker's answer, not the team's alert.
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        hook.requests()
            .iter()
            .filter(|r| r.json()["label"]
                .as_str()
                .unwrap_or_default()
                .starts_with("release_asked"))
            .count(),
        1,
        "{:?}",
        hook.requests()
    );

    // The audit log names who asked, each time, and holds the provider's own lines.
    let audit =
        std::fs::read_to_string(dir.path().join("watcher-state/audit.jsonl")).expect("audit");
    let asked: Vec<&str> = audit
        .lines()
        .filter(|l| l.contains("asked by ops-alice through the watcher"))
        .collect();
    assert_eq!(asked.len(), 3, "{audit}");
    assert!(asked[1].contains("\"outcome\":\"ok\""), "{audit}");
    assert!(asked[2].contains("\"outcome\":\"refused\""), "{audit}");
    assert!(!audit.contains("viewer"), "{audit}");
    assert!(!audit.contains(VAST_TOKEN), "{audit}");
    drop(served);
}

#[test]
fn a_restart_or_start_through_the_watcher_reaches_the_provider_once_for_its_key() {
    let provider = Server::start(vec![answer(200, r#"{"success": true}"#)]);
    let dir = tempfile::tempdir().expect("temp");
    let (served, addr) = watcher(dir.path(), &provider);
    let restart = r#"{"action":"restart","host":"h1","confirm":"h1","key":"restart-h1-1"}"#;

    // A watching token may not act; a wrong name confirms nothing.
    assert_eq!(post(&addr, "view-only-1", restart).0, 403);
    let wrong = post(
        &addr,
        "ops-may-act-2",
        r#"{"action":"restart","host":"h1","confirm":"h","key":"restart-h1-0"}"#,
    );
    assert_eq!(wrong.1["outcome"], "not_confirmed", "{}", wrong.1);
    assert!(provider.requests().is_empty(), "{:?}", provider.requests());

    // Confirmed: one reboot request, however often the key is asked again.
    let first = post(&addr, "ops-may-act-2", restart);
    assert_eq!(first.0, 200, "{}\n{}", first.1, served.log());
    assert!(
        first.1["said"]
            .as_str()
            .unwrap_or_default()
            .contains("restart"),
        "{}",
        first.1
    );
    assert_eq!(post(&addr, "ops-may-act-2", restart), first);
    let seen = provider.requests();
    assert_eq!(seen.len(), 1, "one provider request: {seen:?}");
    assert_eq!(
        (seen[0].method.as_str(), seen[0].path.as_str()),
        ("PUT", "/api/v0/instances/reboot/12345/")
    );

    // A start is its own action: the instance's state asked running.
    let start = post(
        &addr,
        "ops-may-act-2",
        r#"{"action":"start","host":"h1","confirm":"h1","key":"start-h1-1"}"#,
    );
    assert_eq!(start.0, 200, "{}", start.1);
    let seen = provider.requests();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(seen[1].json(), serde_json::json!({"state": "running"}));

    // The audit log names the command and who asked; the ledger stays open (nothing released).
    let audit =
        std::fs::read_to_string(dir.path().join("watcher-state/audit.jsonl")).expect("audit");
    let restarted: Vec<&str> = audit
        .lines()
        .filter(|l| l.contains("gpufleet restart h1 (asked by ops-alice through the watcher)"))
        .collect();
    assert_eq!(
        restarted.len(),
        2,
        "the wrong name and the restart: {audit}"
    );
    assert!(restarted[1].contains("\"outcome\":\"ok\""), "{audit}");
    assert!(
        audit.contains("gpufleet start h1 (asked by ops-alice through the watcher)"),
        "{audit}"
    );
    assert!(!audit.contains("viewer"), "{audit}");
    drop(served);
}

#[test]
fn the_inventory_follows_a_release_through_the_watcher_within_a_minute_and_a_half() {
    // The account is listed at start, the release goes out, and the next listing (the
    // instance stopped) comes well before the hourly interval: within the providers' minimum
    // gap of a minute after the first one, plus the wait for the provider to show it.
    let provider = Server::start(vec![
        answer(200, &vast_list::one_instance("running")),
        answer(200, r#"{"success": true}"#),
        answer(200, &vast_list::one_instance("stopped")),
    ]);
    let dir = tempfile::tempdir().expect("temp");
    let (served, addr) = watcher_with(
        dir.path(),
        &provider,
        &format!(
            "[[providers]]\nkind = \"vast\"\ntoken_env = \"GPUFLEET_TEST_VAST_TOKEN\"\n\
             base_url = \"{}\"\nsync_interval_s = 3600\n",
            provider.base_url
        ),
    );
    let listed = |count: usize| {
        let deadline = std::time::Instant::now() + Duration::from_secs(100);
        loop {
            let seen = provider.requests();
            let lists = seen.iter().filter(|r| r.method == "GET").count();
            if lists >= count {
                return std::time::Instant::now();
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{lists} listings, not {count}: {seen:?}\n{}",
                served.log()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    };
    let first_listed = listed(1);
    let release =
        r#"{"action":"release","host":"h1","release":"stop","confirm":"h1","key":"rel-sync-1"}"#;
    let released = post(&addr, "ops-may-act-2", release);
    assert_eq!(released.0, 200, "{}\n{}", released.1, served.log());
    let released_at = std::time::Instant::now();
    let seen = provider.requests();
    assert_eq!(
        seen.iter().map(|r| r.method.as_str()).collect::<Vec<_>>(),
        ["GET", "PUT"],
        "{seen:?}"
    );

    let second_listed = listed(2);
    // Not sooner than the providers' minimum gap, nor than the provider could show it.
    assert!(
        second_listed - first_listed >= Duration::from_secs(59),
        "listed again {:?} after the first listing",
        second_listed - first_listed
    );
    assert!(
        second_listed - released_at >= Duration::from_secs(19),
        "listed again {:?} after the release",
        second_listed - released_at
    );
    let seen = provider.requests();
    assert!(seen[2].path.starts_with("/api/v1/instances/?"), "{seen:?}");
    // The stored inventory says what the provider said after the release.
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let stored = std::fs::read_to_string(dir.path().join("watcher-state/inventory.json"))
            .unwrap_or_default();
        if stored.contains("stopped") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the inventory still says: {stored}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    drop(served);
}

#[test]
fn an_attached_consoles_release_dialog_asks_the_watcher_and_a_watching_token_is_told_so() {
    let provider = Server::start(vec![answer(200, r#"{"success": true}"#)]);
    let dir = tempfile::tempdir().expect("temp");
    let (served, addr) = watcher(dir.path(), &provider);

    // A watching token's console: the same dialog, and the watcher's 403 said plainly.
    let Some(viewer) = console(dir.path(), &addr, "view-only-1", "en") else {
        return;
    };
    viewer.wait_for("h1", WAIT);
    viewer.keys(&["R"]);
    viewer.wait_for("type h1 to stop it", WAIT);
    viewer.keys(&["h", "1", "Enter"]);
    let screen = viewer.wait_for("may only watch", WAIT);
    assert!(!screen.contains("sent and accepted"), "{screen}");
    assert!(provider.requests().is_empty(), "{:?}", provider.requests());

    // Empty input is Cancel: nothing asked.
    let Some(ops) = console(dir.path(), &addr, "ops-may-act-2", "zh-CN") else {
        return;
    };
    ops.wait_for("h1", WAIT);
    ops.keys(&["R"]);
    ops.wait_for("输入 h1", WAIT);
    ops.keys(&["Enter"]);
    std::thread::sleep(Duration::from_millis(500));
    assert!(provider.requests().is_empty(), "{:?}", provider.requests());

    // Typed: the watcher sends the release, once; the console says the provider took it.
    ops.keys(&["R"]);
    ops.wait_for("输入 h1", WAIT);
    ops.keys(&["h", "1", "Enter"]);
    let screen = ops.wait_until("the release's outcome", WAIT, |s| {
        !provider.requests().is_empty() && s.contains("stop sent and accepted")
    });
    assert!(!screen.contains("EXIT="), "{screen}");
    let seen = provider.requests();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].json(), serde_json::json!({"state": "stopped"}));

    // `r`: the same typed confirmation, Cancel by default; typed, the watcher restarts it.
    ops.keys(&["Escape"]);
    ops.keys(&["r"]);
    ops.wait_for("输入 h1", WAIT);
    ops.keys(&["Enter"]);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(provider.requests().len(), 1, "{:?}", provider.requests());
    ops.keys(&["r"]);
    ops.wait_for("输入 h1", WAIT);
    ops.keys(&["h", "1", "Enter"]);
    ops.wait_until("the restart's outcome", WAIT, |_| {
        provider.requests().len() == 2
    });
    let seen = provider.requests();
    assert_eq!(seen[1].path, "/api/v0/instances/reboot/12345/", "{seen:?}");
    // The audit line follows the provider's answer by a moment.
    let audit_path = dir.path().join("watcher-state/audit.jsonl");
    let read_audit = || std::fs::read_to_string(&audit_path).unwrap_or_default();
    ops.wait_until("the restart's audit line", WAIT, |_| {
        read_audit().contains("gpufleet restart h1 (asked by ops-alice")
    });
    let audit = read_audit();
    assert!(audit.contains("asked by ops-alice"), "{audit}");
    assert!(!audit.contains("asked by viewer"), "{audit}");
    drop(served);
}

#[test]
fn a_host_the_watcher_adds_on_reload_shows_in_an_attached_console() {
    let provider = Server::start(vec![answer(200, r#"{"success": true}"#)]);
    let dir = tempfile::tempdir().expect("temp");
    let (served, addr) = watcher(dir.path(), &provider);
    let Some(console) = console(dir.path(), &addr, "view-only-1", "en") else {
        return;
    };
    console.wait_for("h1", WAIT);
    assert!(!console.screen().contains("late-h9"));
    std::fs::write(
        dir.path().join("config.toml"),
        config_text(
            &provider,
            "[[hosts]]\nname = \"late-h9\"\nssh = \"root@127.0.0.1:1\"\n",
        ),
    )
    .expect("config");
    served.reload();
    served.wait_log("late-h9");
    let screen = console.wait_for("late-h9", WAIT);
    assert!(!screen.contains("EXIT="), "{screen}");
    drop(served);
}

/// A job on the sshd host: notes each signal in `signals`, ignores SIGINT, ends on SIGTERM.
struct Job {
    child: std::process::Child,
    signals: std::path::PathBuf,
}

impl Job {
    fn start(dir: &Path) -> Self {
        let signals = dir.join("signals");
        let script = format!(
            "trap 'echo INT >> \"{s}\"' INT; trap 'echo TERM >> \"{s}\"; exit 0' TERM; \
             while :; do sleep 0.2; done",
            s = signals.display()
        );
        let child = Command::new("sh")
            .arg("-c")
            .arg(script)
            .stdin(std::process::Stdio::null())
            .spawn()
            .expect("job");
        Self { child, signals }
    }

    fn signals(&self) -> String {
        std::fs::read_to_string(&self.signals).unwrap_or_default()
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A watcher of host `h1` on `sshd`, with a watching token and one that may act.
fn sshd_watcher(sshd: &crate::common::sshd::Sshd, dir: &Path) -> (Served, String) {
    let known_hosts = dir.join("known_hosts");
    std::fs::write(&known_hosts, sshd.known_hosts_line("ed25519")).expect("known_hosts");
    let config = dir.join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[[hosts]]\nname = \"h1\"\nssh = \"{}@127.0.0.1:{}\"\nidentity_file = \"{}\"\n\n\
             [serve]\n\n[[serve.tokens]]\nname = \"viewer\"\ntoken_env = \"VIEWER_TOKEN\"\n\n\
             [[serve.tokens]]\nname = \"ops-alice\"\ntoken_env = \"OPS_TOKEN\"\nactions = true\n",
            sshd.user,
            sshd.port,
            sshd.client_key().display()
        ),
    )
    .expect("config");
    let addr = format!("127.0.0.1:{}", free_port());
    let served = Served::start_with(
        dir,
        &[
            "--known-hosts",
            known_hosts.to_str().expect("utf-8"),
            "--config",
            config.to_str().expect("utf-8"),
        ],
        &addr,
        &[
            ("VIEWER_TOKEN", "view-only-1"),
            ("OPS_TOKEN", "ops-may-act-2"),
        ],
    );
    (served, addr)
}

#[test]
fn a_stop_job_and_a_check_through_the_watcher_run_on_its_ssh_host() {
    let Some(sshd) = crate::common::sshd::Sshd::start() else {
        return;
    };
    sshd.set_scenario("healthy");
    let dir = tempfile::tempdir().expect("temp");
    let (served, addr) = sshd_watcher(&sshd, dir.path());
    let mut job = Job::start(dir.path());
    let pid = job.child.id();
    let stop =
        format!(r#"{{"action":"stop-job","host":"h1","pid":{pid},"grace":1,"key":"stop-1"}}"#);

    // A watching token may not stop a job, nor check a host: nothing runs.
    assert_eq!(post(&addr, "view-only-1", &stop).0, 403);
    let check = r#"{"action":"check","host":"h1","key":"check-1"}"#;
    assert_eq!(post(&addr, "view-only-1", check).0, 403);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(job.signals(), "");
    assert!(
        sshd.calls("nvidia-smi").iter().all(|c| c != "-q -x"),
        "{:?}",
        sshd.calls("nvidia-smi")
    );

    // The job gets SIGINT, then SIGTERM after its grace period, over the watcher's SSH.
    let stopped = post(&addr, "ops-may-act-2", &stop);
    assert_eq!(stopped.0, 200, "{}\n{}", stopped.1, served.log());
    assert!(
        stopped.1["said"]
            .as_str()
            .unwrap_or_default()
            .contains("SIGTERM"),
        "{}",
        stopped.1
    );
    // The shell runs its trap once its `sleep` ends.
    let deadline = std::time::Instant::now() + WAIT;
    while !matches!(job.child.try_wait(), Ok(Some(_))) {
        assert!(std::time::Instant::now() < deadline, "the job still runs");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(job.signals(), "INT\nTERM\n");
    // Asked again with its key: the first answer, no signal sent again.
    assert_eq!(post(&addr, "ops-may-act-2", &stop), stopped);
    assert_eq!(job.signals(), "INT\nTERM\n");

    // The check runs on the host through the watcher; its report comes back whole.
    let checked = post(&addr, "ops-may-act-2", check);
    assert_eq!(checked.0, 200, "{}\n{}", checked.1, served.log());
    assert!(sshd.calls("nvidia-smi").iter().any(|c| c == "-q -x"));
    let report = checked.1["report"].as_str().unwrap_or_default();
    assert!(report.contains("NVIDIA H200"), "{report}");
    assert!(
        !checked.1["said"].as_str().unwrap_or_default().is_empty(),
        "{}",
        checked.1
    );

    // The audit log: the signals as they ran, and who asked each action.
    let audit =
        std::fs::read_to_string(dir.path().join("watcher-state/audit.jsonl")).expect("audit");
    assert!(
        audit.contains(&format!("\"command\":\"kill -s INT {pid}\"")),
        "{audit}"
    );
    assert!(
        audit.contains(&format!("\"command\":\"kill -s TERM {pid}\"")),
        "{audit}"
    );
    assert!(
        audit.contains(&format!(
            "gpufleet stop-job h1 {pid} (asked by ops-alice through the watcher)"
        )),
        "{audit}"
    );
    assert!(
        audit.contains("gpufleet check h1 (asked by ops-alice through the watcher)"),
        "{audit}"
    );
    assert!(!audit.contains("viewer"), "{audit}");

    // An attached console's `c` asks the watcher too: the pane says where it runs, then
    // shows the watcher's report.
    let Some(ops) = console(dir.path(), &addr, "ops-may-act-2", "en") else {
        return;
    };
    ops.wait_for("h1", WAIT);
    let checks = || {
        sshd.calls("nvidia-smi")
            .iter()
            .filter(|c| c.as_str() == "-q -x")
            .count()
    };
    let before = checks();
    ops.keys(&["c"]);
    ops.wait_for("running on the watcher", WAIT);
    let screen = ops.wait_until("the watcher's report", 2 * WAIT, |s| {
        s.contains("NVIDIA H200") && s.contains("kept on the watcher")
    });
    assert!(!screen.contains("EXIT="), "{screen}");
    assert_eq!(checks(), before + 1, "one check ran on the host");
    drop(served);
}

/// Puts the runbook fakes (`nvidia-smi` that keeps a power limit, `id`, `sudo`, ...) first on
/// the sshd's remote PATH.
fn install_runbook_fakes(bin: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/playbook");
    for entry in std::fs::read_dir(&source).expect("fixtures").flatten() {
        let target = bin.join(entry.file_name());
        std::fs::copy(entry.path(), &target).expect("copy fake");
        let name = entry.file_name().to_string_lossy().to_string();
        if !name.ends_with(".txt") && !name.ends_with(".md") {
            std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o755))
                .expect("chmod");
        }
    }
}

/// `power-limit`'s step `step` of run `run`, with the command the console showed.
fn step(run: &str, step: &str, watts: &str, command: &[&str]) -> String {
    serde_json::json!({
        "action": "runbook-step",
        "host": "h1",
        "key": format!("{run}-{step}-{watts}-{}", command.len()),
        "run": run,
        "runbook": "power-limit",
        "step": step,
        "params": {"watts": watts},
        "command": command,
    })
    .to_string()
}

const READ_LIMITS: [&str; 3] = [
    "nvidia-smi",
    "--query-gpu=index,power.min_limit,power.max_limit,power.default_limit,enforced.power.limit",
    "--format=csv,noheader,nounits",
];

#[test]
fn a_runbook_step_through_the_watcher_runs_the_command_its_own_catalogue_builds() {
    let Some(sshd) = crate::common::sshd::Sshd::start() else {
        return;
    };
    install_runbook_fakes(&sshd.dir().join("bin"));
    let dir = tempfile::tempdir().expect("temp");
    let (served, addr) = sshd_watcher(&sshd, dir.path());
    let limits = |calls: Vec<String>| -> Vec<String> {
        calls.into_iter().filter(|c| c.contains("-pl")).collect()
    };

    // A watching token may not run a step, even a read.
    let read = step("run-1", "read-limits", "250", &READ_LIMITS);
    assert_eq!(post(&addr, "view-only-1", &read).0, 403);

    // The read steps run on the host and their output comes back.
    let first = post(&addr, "ops-may-act-2", &read);
    assert_eq!(first.0, 200, "{}\n{}", first.1, served.log());
    assert_eq!(first.1["exit_status"], 0, "{}", first.1);
    assert_eq!(first.1["output"][0], "0, 200.00, 700.00, 700.00, 700.00");
    let whoami = post(
        &addr,
        "ops-may-act-2",
        &step("run-1", "whoami", "250", &["id", "-u"]),
    );
    assert_eq!(whoami.0, 200, "{}", whoami.1);
    let root = whoami.1["output"][0].as_str() == Some("0");
    let apply: Vec<&str> = if root {
        vec!["nvidia-smi", "-i", "0", "-pl", "250"]
    } else {
        vec!["sudo", "-n", "nvidia-smi", "-i", "0", "-pl", "250"]
    };

    // A command that is not the one the watcher's runbook builds is refused, never run.
    let mut forged = apply.clone();
    forged.push("--force");
    let refused = post(
        &addr,
        "ops-may-act-2",
        &step("run-1", "apply", "250", &forged),
    );
    assert_eq!(refused.0, 409, "{}", refused.1);
    assert!(
        refused.1["error"]
            .as_str()
            .unwrap_or_default()
            .contains("-pl 250"),
        "{}",
        refused.1
    );
    assert!(limits(sshd.calls("nvidia-smi")).is_empty());

    // A value outside the range the run read from the host is refused before it runs.
    let low = post(
        &addr,
        "ops-may-act-2",
        &step("run-1", "apply", "50", &apply),
    );
    assert_eq!(low.0, 409, "{}", low.1);
    assert!(limits(sshd.calls("nvidia-smi")).is_empty());

    // The confirmed step runs on the host, once for its key.
    let applied = step("run-1", "apply", "250", &apply);
    let done = post(&addr, "ops-may-act-2", &applied);
    assert_eq!(done.0, 200, "{}\n{}", done.1, served.log());
    assert_eq!(done.1["exit_status"], 0, "{}", done.1);
    assert_eq!(post(&addr, "ops-may-act-2", &applied), done);
    assert_eq!(limits(sshd.calls("nvidia-smi")), ["-i 0 -pl 250"]);

    // A run that never read the host's limits cannot apply one: nothing to check it against.
    let blind = post(
        &addr,
        "ops-may-act-2",
        &step("run-2", "apply", "250", &apply),
    );
    assert_eq!(blind.0, 409, "{}", blind.1);
    assert_eq!(limits(sshd.calls("nvidia-smi")).len(), 1);

    // The audit log: each step with its runbook, and who asked.
    let audit =
        std::fs::read_to_string(dir.path().join("watcher-state/audit.jsonl")).expect("audit");
    let steps: Vec<&str> = audit
        .lines()
        .filter(|l| l.contains("\"runbook\":\"power-limit\""))
        .collect();
    let asked = format!(
        "\"command\":\"{} (asked by ops-alice through the watcher)\"",
        apply.join(" ")
    );
    assert!(
        steps.iter().any(|l| l.contains(&asked)
            && l.contains("\"outcome\":\"ok\"")
            && l.contains("\"step\":\"apply\"")),
        "{audit}"
    );
    assert!(
        steps
            .iter()
            .any(|l| l.contains("--force") && l.contains("\"outcome\":\"refused\"")),
        "{audit}"
    );
    assert!(!audit.contains("viewer"), "{audit}");

    // An attached console runs the runbook as everywhere (each command shown, a change asked
    // first), and each step's command runs on the watcher's host.
    let Some(ops) = console(dir.path(), &addr, "ops-may-act-2", "en") else {
        return;
    };
    ops.wait_for("h1", WAIT);
    ops.keys(&["p"]);
    ops.wait_for("power-limit", WAIT);
    ops.keys(&["Enter"]);
    ops.wait_for("watts", WAIT);
    ops.keys(&["Tab", "2", "5", "0", "Enter"]);
    let screen = ops.wait_for("Run it on the host?", WAIT);
    assert!(screen.contains("-pl 250"), "{screen}");
    assert_eq!(
        limits(sshd.calls("nvidia-smi")).len(),
        1,
        "asked before it runs"
    );
    ops.keys(&["y"]);
    ops.wait_until("the step ran on the host", WAIT, |_| {
        limits(sshd.calls("nvidia-smi")).len() == 2
    });
    let audit =
        std::fs::read_to_string(dir.path().join("watcher-state/audit.jsonl")).expect("audit");
    let verified = audit
        .lines()
        .filter(|l| l.contains("\"step\":\"verify\"") && l.contains("asked by ops-alice"))
        .count();
    let screen = ops.wait_until("the run's end", WAIT, |_| {
        std::fs::read_to_string(dir.path().join("watcher-state/audit.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains("\"step\":\"verify\""))
            .count()
            > verified
    });
    assert!(!screen.contains("EXIT="), "{screen}");
    drop(served);
}

/// The status of `GET /health` with `token`.
fn health(addr: &str, token: &str) -> u16 {
    reqwest::blocking::Client::new()
        .get(format!("http://{addr}/health"))
        .bearer_auth(token)
        .send()
        .expect("get")
        .status()
        .as_u16()
}

#[test]
fn a_token_taken_out_of_the_config_is_refused_after_a_reload_and_its_stream_ends() {
    use std::io::BufRead;
    let provider = Server::start(vec![answer(200, r#"{"success": true}"#)]);
    let dir = tempfile::tempdir().expect("temp");
    let (served, addr) = watcher(dir.path(), &provider);
    // The viewer's console streams.
    let stream = reqwest::blocking::Client::builder()
        .timeout(None::<Duration>)
        .build()
        .expect("client")
        .get(format!("http://{addr}/v1/events"))
        .bearer_auth("view-only-1")
        .send()
        .expect("stream");
    assert_eq!(stream.status().as_u16(), 200);
    let (ended_tx, ended) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = std::io::BufReader::new(stream);
        let mut line = String::new();
        while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
            line.clear();
        }
        let _ = ended_tx.send(());
    });
    assert_eq!(health(&addr, "carol-rotated-3"), 401);

    // The config now: the viewer's token taken out, Carol's added (from a file).
    let carol = dir.path().join("carol.token");
    std::fs::write(&carol, "carol-rotated-3\n").expect("token");
    let viewer = "[[serve.tokens]]\nname = \"viewer\"\ntoken_env = \"VIEWER_TOKEN\"\n";
    let text = config_text(&provider, "");
    assert!(text.contains(viewer), "{text}");
    std::fs::write(
        dir.path().join("config.toml"),
        text.replace(
            viewer,
            &format!(
                "[[serve.tokens]]\nname = \"carol\"\ntoken_file = \"{}\"\n",
                carol.display()
            ),
        ),
    )
    .expect("config");
    served.reload();
    served.wait_log("serve tokens reloaded");
    assert!(
        ended.recv_timeout(WAIT).is_ok(),
        "the viewer's stream still runs:\n{}",
        served.log()
    );
    assert_eq!(health(&addr, "view-only-1"), 401);
    assert_eq!(health(&addr, "carol-rotated-3"), 200);
    assert_eq!(health(&addr, "ops-may-act-2"), 200);
    assert!(served.log().contains("revoked=viewer"), "{}", served.log());
    assert!(
        !served.log().contains("carol-rotated-3"),
        "{}",
        served.log()
    );
}
