//! `gpufleet watch` as it runs for real: the release binary with no terminal, two hosts behind
//! real OpenSSH servers (one of them loses its GPU), a loopback HTTP server standing in for the
//! webhook, and a real Prometheus server (Debian's `prometheus`) scraping `/metrics` and
//! answering its query API. Then SIGTERM: streams closed, ledger saved, exit 0 within 2 s.
//! Bad setups (a missing secret, a port in use, a bad address) are refused before any host is
//! contacted.

use crate::common;
use crate::release_server as server;
use crate::tmux;

use std::io::Read;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::sshd::Sshd;
use server::{Server, answer};
use tmux::binary;

const WAIT: Duration = Duration::from_secs(40);

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

/// Prometheus, or a clear reason why not; under CI a missing Prometheus is a failure.
fn prometheus_available() -> bool {
    let found = Command::new("prometheus").arg("--version").output().is_ok();
    if !found && std::env::var("CI").as_deref() == Ok("true") {
        panic!("prometheus is missing (apt-get install prometheus): .ci/run installs it");
    }
    if !found {
        eprintln!("skipping: prometheus is missing (apt-get install prometheus)");
    }
    found
}

struct Watcher {
    child: Child,
    stderr: PathBuf,
}

impl Watcher {
    /// A watcher serving `/metrics` on a free port; the address with it.
    fn with_metrics(dir: &Path, config: &Path, known_hosts: &Path) -> (Self, String) {
        let metrics = format!("127.0.0.1:{}", free_port());
        let known_hosts = known_hosts.to_str().expect("utf-8");
        let watcher = Self::start(
            dir,
            config,
            &["--metrics", &metrics, "--known-hosts", known_hosts],
            &[],
        );
        (watcher, metrics)
    }

    fn start(dir: &Path, config: &Path, extra: &[&str], env: &[(&str, &str)]) -> Self {
        let stderr = dir.join("watch.log");
        let mut command = Command::new(binary());
        command
            .arg("watch")
            .args(extra)
            .arg("--config")
            .arg(config)
            .env("GPUFLEET_STATE_DIR", dir.join("state"))
            .env("SSH_AUTH_SOCK", "")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr).expect("log"));
        for (k, v) in env {
            command.env(k, v);
        }
        Self {
            child: command.spawn().expect("spawn gpufleet watch"),
            stderr,
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// SIGTERM, then the time until it exited and its status code.
    fn terminate(&mut self) -> (Duration, Option<i32>, String) {
        let pid = self.child.id().to_string();
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .expect("kill");
        let sent = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                let mut out = String::new();
                if let Some(mut stdout) = self.child.stdout.take() {
                    let _ = stdout.read_to_string(&mut out);
                }
                return (sent.elapsed(), status.code(), out);
            }
            assert!(
                sent.elapsed() < Duration::from_secs(10),
                "still running 10 s after SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

struct Prometheus {
    child: Child,
    url: String,
}

impl Prometheus {
    fn start(dir: &Path, target: &str) -> Self {
        let config = dir.join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: gpufleet\n    honor_labels: true\n    static_configs:\n      - targets: [\"{target}\"]\n"
            ),
        )
        .expect("prometheus.yml");
        let port = free_port();
        let child = Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("tsdb").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("prometheus.log")).expect("log"))
            .spawn()
            .expect("start prometheus");
        Self {
            child,
            url: format!("http://127.0.0.1:{port}"),
        }
    }

    /// The instant vector of `query`, once it has a series for every one of `instances`.
    fn wait_for(&self, query: &str, instances: &[&str]) -> serde_json::Value {
        let client = reqwest::blocking::Client::new();
        let deadline = Instant::now() + WAIT;
        let mut last = serde_json::Value::Null;
        while Instant::now() < deadline {
            let mut url = reqwest::Url::parse(&format!("{}/api/v1/query", self.url)).expect("url");
            url.query_pairs_mut().append_pair("query", query);
            let answer = client
                .get(url)
                .send()
                .and_then(|r| r.json::<serde_json::Value>());
            if let Ok(doc) = answer {
                let seen: Vec<String> = doc["data"]["result"]
                    .as_array()
                    .map(|series| {
                        series
                            .iter()
                            .filter_map(|s| s["metric"]["instance"].as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default();
                if instances.iter().all(|i| seen.iter().any(|s| s == i)) {
                    return doc;
                }
                last = doc;
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        panic!("Prometheus never had {query} for {instances:?}; last answer: {last}");
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A known_hosts file trusting `servers`' host keys.
fn known_hosts_of(dir: &Path, servers: &[&Sshd]) -> PathBuf {
    let path = dir.join("known_hosts");
    let lines: String = servers
        .iter()
        .map(|s| format!("{}\n", s.known_hosts_line("ed25519")))
        .collect();
    std::fs::write(&path, lines).expect("known_hosts");
    path
}

fn host_block(name: &str, sshd: &Sshd) -> String {
    format!(
        "[[hosts]]\nname = \"{name}\"\nssh = \"{}@127.0.0.1:{}\"\nidentity_file = \"{}\"\nprice_per_hour = 2.5\ncurrency = \"USD\"\n",
        sshd.user,
        sshd.port,
        sshd.client_key().display()
    )
}

#[test]
fn watch_streams_to_prometheus_alerts_a_lost_gpu_and_stops_cleanly() {
    if !prometheus_available() {
        return;
    }
    let Some(healthy) = Sshd::start() else { return };
    let Some(lost) = Sshd::start() else { return };
    lost.set_scenario("gpu-lost");
    let dir = tempfile::tempdir().expect("temp");
    let known_hosts = known_hosts_of(dir.path(), &[&healthy, &lost]);
    let hook = Server::start(vec![answer(200, "{}")]);
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "interval_ms = 500\n\n{}\n{}\n[[alerts]]\nkind = \"webhook\"\nurl = \"{}/gpu-alerts\"\n",
            host_block("h200-ok", &healthy),
            host_block("h200-lost", &lost),
            hook.base_url
        ),
    )
    .expect("config");
    let (mut watcher, metrics) = Watcher::with_metrics(dir.path(), &config, &known_hosts);
    let prometheus = Prometheus::start(dir.path(), &metrics);

    // Prometheus stores the healthy host's GPU utilization under its own name.
    let util = prometheus.wait_for("DCGM_FI_DEV_GPU_UTIL", &["h200-ok"]);
    let series = &util["data"]["result"][0];
    assert_eq!(series["metric"]["Hostname"], "h200-ok", "{util}");
    assert_eq!(series["metric"]["gpu"], "0", "{util}");
    assert!(
        series["metric"]["modelName"]
            .as_str()
            .is_some_and(|m| m.contains("H200")),
        "{util}"
    );
    let streaming = prometheus.wait_for("gpufleet_host_streaming", &["h200-ok", "h200-lost"]);
    let lost_series = streaming["data"]["result"]
        .as_array()
        .expect("series")
        .iter()
        .find(|s| s["metric"]["instance"] == "h200-lost")
        .expect("the lost host's series")
        .clone();
    assert_eq!(lost_series["value"][1], "0", "{streaming}");

    // The lost GPU reaches the webhook as one JSON object per alert.
    let deadline = Instant::now() + WAIT;
    let alert = loop {
        let found = hook.requests().into_iter().find_map(|r| {
            let body = r.json();
            (body["host"] == "h200-lost" && body["label"] == "gpu_lost").then_some((r, body))
        });
        if let Some(found) = found {
            break found;
        }
        assert!(
            Instant::now() < deadline,
            "no gpu_lost alert; log:\n{}",
            watcher.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let (request, body) = alert;
    assert_eq!(request.method, "POST");
    assert_eq!(request.path, "/gpu-alerts");
    assert_eq!(body["state"], "firing");
    assert_eq!(body["severity"], "critical");
    assert_eq!(body["runbook"], "gpu-lost");
    assert_eq!(body["price_per_hour"], 2.5);
    assert!(body["summary"].as_str().is_some_and(|s| !s.is_empty()));
    assert!(body["at"].as_str().is_some_and(|at| at.ends_with('Z')));
    let again = hook
        .requests()
        .iter()
        .filter(|r| {
            r.json()["host"] == "h200-lost"
                && r.json()["label"] == "gpu_lost"
                && r.json()["gpu"] == body["gpu"]
        })
        .count();
    assert_eq!(again, 1, "one alert per host, GPU and label while it lasts");

    let (took, code, stdout) = watcher.terminate();
    let log = watcher.log();
    assert_eq!(code, Some(0), "{log}");
    assert!(
        took < Duration::from_secs(2),
        "took {took:?} to stop:\n{log}"
    );
    assert!(
        stdout.is_empty(),
        "the watcher writes its log to stderr only: {stdout}"
    );
    assert!(
        log.contains("INFO") && log.contains("stopping signal=\"SIGTERM\""),
        "{log}"
    );
    assert!(log.contains("host=\"h200-ok\""), "structured fields: {log}");
    let ledger =
        std::fs::read_to_string(dir.path().join("state/ledger.json")).expect("ledger saved");
    assert!(ledger.contains("h200-ok"), "{ledger}");
}

/// `gpufleet watch` with `extra` arguments on `config`, which must refuse to start.
fn refused(dir: &Path, config: &Path, extra: &[&str]) -> String {
    let out = Command::new(binary())
        .arg("watch")
        .args(extra)
        .arg("--config")
        .arg(config)
        .env("GPUFLEET_STATE_DIR", dir.join("state"))
        .stdin(Stdio::null())
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    err
}

#[test]
fn a_bad_setup_is_refused_before_any_host_is_contacted() {
    let dir = tempfile::tempdir().expect("temp");
    // Port 9 on loopback: nothing listens, and nothing must try.
    let hosts = "[[hosts]]\nname = \"h\"\nssh = \"root@127.0.0.1:9\"\n";
    let config = dir.path().join("config.toml");

    std::fs::write(
        &config,
        format!("{hosts}[[alerts]]\nkind = \"slack\"\nurl_env = \"NO_SUCH_SLACK_URL\"\n"),
    )
    .expect("config");
    let err = refused(dir.path(), &config, &[]);
    assert!(
        err.contains("NO_SUCH_SLACK_URL") && err.contains("url_env"),
        "{err}"
    );
    assert!(!err.contains("connect"), "nothing connected: {err}");

    std::fs::write(&config, hosts).expect("config");
    let err = refused(dir.path(), &config, &["--metrics", "localhost-9400"]);
    assert!(err.contains("localhost-9400"), "{err}");

    let taken = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = taken.local_addr().expect("addr").to_string();
    let err = refused(dir.path(), &config, &["--metrics", &addr]);
    assert!(err.contains(&addr) && err.contains("metrics"), "{err}");
}

/// The watcher's own `/metrics` page.
fn scrape(addr: &str) -> String {
    reqwest::blocking::get(format!("http://{addr}/metrics"))
        .and_then(|r| r.text())
        .unwrap_or_default()
}

fn wait_until(what: &str, log: &dyn Fn() -> String, mut ok: impl FnMut() -> bool) {
    let deadline = Instant::now() + WAIT;
    while !ok() {
        assert!(Instant::now() < deadline, "never {what}; log:\n{}", log());
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn sighup_adds_and_removes_hosts_without_dropping_the_others_and_keeps_a_broken_config_out() {
    let Some(first) = Sshd::start() else { return };
    let Some(second) = Sshd::start() else { return };
    let dir = tempfile::tempdir().expect("temp");
    let known_hosts = known_hosts_of(dir.path(), &[&first, &second]);
    let config = dir.path().join("config.toml");
    let write = |hosts: &str| {
        std::fs::write(&config, format!("interval_ms = 500\n\n{hosts}")).expect("config");
    };
    write(&host_block("first", &first));
    let (mut watcher, metrics) = Watcher::with_metrics(dir.path(), &config, &known_hosts);
    let log = || watcher.log();
    let streaming = |name: &str| format!("gpufleet_host_streaming{{instance=\"{name}\"}} 1\n");
    wait_until("first streams", &log, || {
        scrape(&metrics).contains(&streaming("first"))
    });
    let streams_started = |sshd: &Sshd| {
        sshd.calls("nvidia-smi")
            .iter()
            .filter(|c| c.contains("-lms"))
            .count()
    };
    assert_eq!(streams_started(&first), 1);
    let hup = |pid: u32| {
        Command::new("kill")
            .args(["-HUP", &pid.to_string()])
            .status()
            .expect("kill");
    };
    let pid = watcher.child.id();

    write(&format!(
        "{}\n{}",
        host_block("first", &first),
        host_block("second", &second)
    ));
    hup(pid);
    wait_until("second streams", &log, || {
        scrape(&metrics).contains(&streaming("second"))
    });
    assert!(scrape(&metrics).contains(&streaming("first")));
    assert_eq!(
        streams_started(&first),
        1,
        "the first host's stream was not restarted"
    );

    std::fs::write(&config, "interval_ms = \"fast\"\n").expect("broken config");
    hup(pid);
    wait_until("the broken config is reported", &log, || {
        watcher.log().contains("config not reloaded")
    });
    let page = scrape(&metrics);
    assert!(
        page.contains(&streaming("first")) && page.contains(&streaming("second")),
        "{page}"
    );
    assert!(
        watcher.log().contains("config.toml"),
        "the error names the file"
    );

    write(&host_block("second", &second));
    hup(pid);
    wait_until("first is gone from /metrics", &log, || {
        let page = scrape(&metrics);
        !page.contains("instance=\"first\"") && page.contains(&streaming("second"))
    });
    assert!(watcher.log().contains("removed=first"), "{}", watcher.log());
    let (_, code, _) = watcher.terminate();
    assert_eq!(code, Some(0), "{}", watcher.log());
}

/// The value of `gpufleet_finding_firing` for `label` on `instance` in a `/metrics` page.
fn finding_value(page: &str, label: &str, instance: &str) -> Option<String> {
    page.lines()
        .filter(|l| l.starts_with("gpufleet_finding_firing{"))
        .find(|l| {
            l.contains(&format!("label=\"{label}\""))
                && l.contains(&format!("instance=\"{instance}\""))
        })
        .and_then(|l| l.rsplit(' ').next())
        .map(str::to_string)
}

/// A GPU falls off the bus on a host behind real sshd: its kernel log says Xid 79 once and
/// nvidia-smi says the GPU is lost for a few seconds, then the GPU streams again (the instance
/// was restarted). The finding fires while the GPU is lost and goes to 0 once it streams.
#[test]
fn an_xid_79_stops_firing_once_its_gpu_streams_again() {
    let Some(sshd) = Sshd::start() else { return };
    sshd.set_scenario("gpu-lost-back");
    std::fs::write(sshd.dir().join("lost_for_s"), "4").expect("lost_for_s");
    let dir = tempfile::tempdir().expect("temp");
    let known_hosts = known_hosts_of(dir.path(), &[&sshd]);
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!("interval_ms = 500\n\n{}", host_block("h200-back", &sshd)),
    )
    .expect("config");
    let (watcher, metrics) = Watcher::with_metrics(dir.path(), &config, &known_hosts);
    let log = || watcher.log();
    wait_until("xid_79 firing", &log, || {
        finding_value(&scrape(&metrics), "xid_79", "h200-back").as_deref() == Some("1")
    });
    assert!(
        finding_value(&scrape(&metrics), "gpu_lost", "h200-back").is_some(),
        "{}",
        scrape(&metrics)
    );
    // Back: the link restarts the stream and the GPU reads again.
    wait_until("xid_79 ended", &log, || {
        finding_value(&scrape(&metrics), "xid_79", "h200-back").as_deref() == Some("0")
    });
    let page = scrape(&metrics);
    assert!(
        page.lines()
            .any(|l| l.starts_with("gpufleet_host_streaming{")
                && l.contains("instance=\"h200-back\"")
                && l.ends_with(" 1")),
        "{page}"
    );
    assert_eq!(
        finding_value(&page, "gpu_lost", "h200-back").as_deref(),
        Some("0"),
        "{page}"
    );
    // Nothing brings it back while the GPU streams.
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(
        finding_value(&scrape(&metrics), "xid_79", "h200-back").as_deref(),
        Some("0")
    );
}

#[test]
fn an_alert_is_logged_with_plain_values_not_rust_debug_names() {
    let dir = tempfile::tempdir().expect("temp");
    let log = dir.path().join("watch.log");
    // The demo's flaky H200 loses its GPU a minute into the scenario: three seconds at 20x.
    let child = Command::new(binary())
        .args(["--demo", "--speed", "20", "watch"])
        .env("GPUFLEET_STATE_DIR", dir.path().join("state"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).expect("log"))
        .spawn()
        .expect("spawn gpufleet watch");
    let mut watcher = Watcher { child, stderr: log };
    let deadline = Instant::now() + WAIT;
    let line = loop {
        let text = watcher.log();
        let found = text
            .lines()
            .find(|l| l.contains("alert") && l.contains("label=gpu_lost"))
            .map(str::to_string);
        if let Some(line) = found {
            break line;
        }
        assert!(
            Instant::now() < deadline,
            "no gpu_lost alert logged:\n{text}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let (_, code, _) = watcher.terminate();
    assert_eq!(code, Some(0));
    assert!(line.contains("host=flaky-h200"), "{line}");
    assert!(
        line.contains(" gpu=0 "),
        "the GPU's index as a number: {line}"
    );
    assert!(!line.contains("Some("), "{line}");
}
