//! Auto-release with nobody at a terminal: a host over its budget (a real sshd host with no
//! compute process running) is counted down, announced to the webhook, and released through
//! its `command` provider; `gpufleet hold HOST` from a shell cancels the countdown; and only one
//! process (here the first of two watchers) releases automatically. In Chinese the alert of the
//! release is Chinese while the log line stays English.

use crate::common;
use crate::release_server as server;
use crate::tmux;
use crate::watcher;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::sshd::Sshd;
use server::{Server, answer};
use tmux::binary;
use watcher::Watcher;

const WAIT: Duration = Duration::from_secs(40);

struct Fixture {
    dir: tempfile::TempDir,
    config: PathBuf,
    known_hosts: PathBuf,
    hook: Server,
    _sshd: Sshd,
}

impl Fixture {
    /// One host billed two hours at 100 USD/h with `max_spend = 1`: over budget at once.
    fn new() -> Option<Self> {
        Self::with("", None)
    }

    /// [`Fixture::new`] with `top` first in the config (`language = ...`) and, where given,
    /// another `[hosts.release]` table.
    fn with(top: &str, release: Option<&str>) -> Option<Self> {
        let sshd = Sshd::start()?;
        sshd.set_scenario("idle");
        let dir = tempfile::tempdir().expect("temp");
        let known_hosts = dir.path().join("known_hosts");
        std::fs::write(&known_hosts, sshd.known_hosts_line("ed25519")).expect("known_hosts");
        let hook = Server::start(vec![answer(200, "{}")]);
        let billing_started = watcher::hours_ago(2);
        let config = dir.path().join("config.toml");
        let command = format!(
            "[hosts.release]\nprovider = \"command\"\ninstance_id = \"i-1\"\n\
             command = [\"touch\", \"{}/released-{{instance_id}}\"]\n",
            dir.path().display()
        );
        let release = release.map_or(command, str::to_string);
        std::fs::write(
            &config,
            format!(
                "{top}interval_ms = 500\ncountdown_s = 10\n\n[[hosts]]\nname = \"h1\"\nssh = \"{}@127.0.0.1:{}\"\nidentity_file = \"{}\"\n\
                 price_per_hour = 100.0\ncurrency = \"USD\"\nbilling_started = \"{billing_started}\"\nmax_spend = 1.0\nauto_release = true\n\
                 {release}\n\
                 [[alerts]]\nkind = \"webhook\"\nurl = \"{}/hook\"\nmin_severity = \"info\"\n",
                sshd.user,
                sshd.port,
                sshd.client_key().display(),
                hook.base_url
            ),
        )
        .expect("config");
        Some(Self {
            dir,
            config,
            known_hosts,
            hook,
            _sshd: sshd,
        })
    }

    fn state(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    fn marker(&self) -> PathBuf {
        self.dir.path().join("released-i-1")
    }

    fn watch(&self, log: &str) -> Watcher {
        let log = self.dir.path().join(log);
        Watcher::start(
            &binary(),
            &self.config,
            &self.known_hosts,
            &self.state(),
            &log,
        )
    }

    /// The webhook's alerts with `label`, as JSON.
    fn alerts(&self, label: &str) -> Vec<serde_json::Value> {
        self.hook
            .requests()
            .iter()
            .map(|r| r.json())
            .filter(|a| a["label"] == label)
            .collect()
    }

    fn audit(&self) -> String {
        std::fs::read_to_string(self.state().join("audit.jsonl")).unwrap_or_default()
    }
}

/// Waits up to `WAIT`.
fn wait_until(what: &str, log: &dyn Fn() -> String, ok: impl FnMut() -> bool) {
    watcher::wait_until(what, WAIT, log, ok);
}

fn hold(fx: &Fixture) -> std::process::Output {
    Command::new(binary())
        .args(["hold", "h1", "--config"])
        .arg(&fx.config)
        .env("GPUFLEET_STATE_DIR", fx.state())
        .stdin(Stdio::null())
        .output()
        .expect("gpufleet hold")
}

fn exists(path: &Path) -> bool {
    path.exists()
}

#[test]
fn an_over_budget_host_is_announced_counted_down_and_released() {
    let Some(fx) = Fixture::new() else { return };
    let watcher = fx.watch("watch.log");
    let log = || watcher.log();
    wait_until("the countdown is announced", &log, || {
        !fx.alerts("auto_release").is_empty()
    });
    let started = Instant::now();
    let announced = fx.alerts("auto_release")[0].clone();
    assert_eq!(announced["state"], "firing");
    assert_eq!(announced["severity"], "critical");
    let summary = announced["summary"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(summary.contains("gpufleet hold h1"), "{summary}");
    assert!(
        !exists(&fx.marker()),
        "released before the countdown ran out"
    );
    wait_until("the host is released", &log, || exists(&fx.marker()));
    assert!(
        started.elapsed() >= Duration::from_secs(8),
        "the countdown ran {:?}",
        started.elapsed()
    );
    wait_until("the release is alerted", &log, || {
        !fx.alerts("auto_release_done").is_empty()
    });
    let audit = fx.audit();
    assert!(audit.contains("\"kind\":\"auto_release\""), "{audit}");
    wait_until("the ledger is closed", &log, || {
        std::fs::read_to_string(fx.state().join("ledger.json"))
            .is_ok_and(|l| l.contains("\"released\": {"))
    });
    assert!(
        fx.alerts("auto_release")
            .iter()
            .any(|a| a["state"] == "resolved"),
        "the countdown alert resolves"
    );
}

#[test]
fn gpufleet_hold_cancels_the_countdown_and_only_one_watcher_releases() {
    let Some(fx) = Fixture::new() else { return };
    let first = fx.watch("first.log");
    let log = || first.log();
    wait_until("the first watcher arms", &log, || {
        first.log().contains("auto-release is armed")
    });
    let second = fx.watch("second.log");
    wait_until("the second watcher defers", &|| second.log(), || {
        second
            .log()
            .contains("auto-release is done by gpufleet watch (pid ")
    });
    assert!(
        second.log().contains("gpufleet watch (pid "),
        "{}",
        second.log()
    );

    wait_until("the countdown is announced", &log, || {
        !fx.alerts("auto_release").is_empty()
    });
    let out = hold(&fx);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    wait_until("the hold is taken", &log, || {
        first.log().contains("auto-release held")
    });
    // Past the 10 s countdown: nothing was released.
    std::thread::sleep(Duration::from_secs(12));
    assert!(
        !exists(&fx.marker()),
        "released although held:\n{}",
        first.log()
    );
    assert!(
        fx.audit().contains("\"kind\":\"auto_release_hold\""),
        "{}",
        fx.audit()
    );
    assert!(
        fx.alerts("auto_release")
            .iter()
            .any(|a| a["state"] == "resolved"),
        "the countdown alert resolves"
    );
    assert!(fx.alerts("auto_release_done").is_empty());
    drop(second);
}

#[test]
fn in_chinese_the_release_alert_is_chinese_and_its_log_line_english() {
    let Some(fx) = Fixture::with("language = \"zh-CN\"\n", None) else {
        return;
    };
    let watcher = fx.watch("watch.log");
    let log = || watcher.log();
    wait_until("the release is alerted", &log, || {
        !fx.alerts("auto_release_done").is_empty()
    });
    let done = fx.alerts("auto_release_done")[0].clone();
    let summary = done["summary"].as_str().unwrap_or_default();
    assert_eq!(summary, "已自动释放：stop 已发送并被平台接受", "{done}");
    wait_until("the release is logged", &log, || {
        watcher.log().contains("auto-release done")
    });
    let line = watcher
        .log()
        .lines()
        .find(|l| l.contains("auto-release done"))
        .unwrap_or_default()
        .to_string();
    assert!(line.contains("stop sent and accepted"), "{line}");
    assert!(!line.contains("已"), "{line}");
}

#[test]
fn a_release_refused_for_want_of_a_token_is_logged_in_english_and_alerted_in_chinese() {
    let release = "[hosts.release]\nprovider = \"vast\"\ninstance_id = \"12345\"\n\
                   token_env = \"GPUFLEET_TEST_NO_TOKEN\"\nbase_url = \"http://127.0.0.1:1\"\n";
    let Some(fx) = Fixture::with("language = \"zh-CN\"\n", Some(release)) else {
        return;
    };
    let watcher = fx.watch("watch.log");
    let log = || watcher.log();
    wait_until("the failure is alerted", &log, || {
        !fx.alerts("auto_release_failed").is_empty()
    });
    let failed = fx.alerts("auto_release_failed")[0].clone();
    let summary = failed["summary"].as_str().unwrap_or_default();
    assert!(
        summary.starts_with("自动释放失败：没有 API 令牌无法释放：环境变量 GPUFLEET_TEST_NO_TOKEN"),
        "{failed}"
    );
    wait_until("the failure is logged", &log, || {
        watcher.log().contains("auto-release failed")
    });
    let line = watcher
        .log()
        .lines()
        .find(|l| l.contains("auto-release failed"))
        .unwrap_or_default()
        .to_string();
    assert!(
        line.contains(
            "cannot release without the API token: the environment variable GPUFLEET_TEST_NO_TOKEN"
        ),
        "{line}"
    );
    assert!(!line.contains("环境变量"), "{line}");
}
