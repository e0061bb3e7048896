//! One watcher serves the fleet, consoles attach to it: `gpufleet watch --serve` on two hosts
//! behind real OpenSSH servers and `gpufleet attach` in tmux showing both hosts live with no SSH
//! login of its own (counted in the servers' logs); the stream refused without the token or
//! with a wrong one; a stream of a newer format refused with a clear error; a console that
//! stops reading dropped while another keeps receiving; the watcher restarted under an attached
//! console, which says so and reconnects; `snapshot --from` reading a watcher's fleet once;
//! `report --from` writing the bundle the watcher made of a host, and only a bundle's files.

use crate::common;
use crate::tmux;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::sshd::Sshd;
use tmux::{Tmux, binary};

pub(crate) const WAIT: Duration = Duration::from_secs(40);
pub(crate) const TOKEN: &str = "team-s3cret";

pub(crate) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

/// `gpufleet watch --serve ADDR` as a child process, killed on drop.
pub(crate) struct Served {
    child: Child,
    log: PathBuf,
}

impl Served {
    fn start(dir: &Path, args: &[&str], addr: &str) -> Self {
        Self::start_with(dir, args, addr, &[])
    }

    pub(crate) fn start_with(dir: &Path, args: &[&str], addr: &str, env: &[(&str, &str)]) -> Self {
        let log = dir.join(format!("watch-{}.log", free_port()));
        let child = Command::new(binary())
            .args(args)
            .args(["watch", "--serve", addr])
            .env("GPUFLEET_STATE_DIR", dir.join("watcher-state"))
            .env("GPUFLEET_SERVE_TOKEN", TOKEN)
            .env("SSH_AUTH_SOCK", "")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).expect("log"))
            .spawn()
            .expect("spawn gpufleet watch --serve");
        let served = Self { child, log };
        served.wait_log("serving the fleet");
        served
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGHUP: the watcher reads its config again.
    pub(crate) fn reload(&self) {
        let status = Command::new("kill")
            .args(["-HUP", &self.pid().to_string()])
            .status()
            .expect("kill -HUP");
        assert!(status.success());
    }

    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    pub(crate) fn wait_log(&self, needle: &str) {
        let deadline = Instant::now() + WAIT;
        while !self.log().contains(needle) {
            assert!(
                Instant::now() < deadline,
                "the watcher never logged {needle:?}:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The demo fleet served on `addr`.
fn demo_watcher(dir: &Path, addr: &str) -> Served {
    Served::start(dir, &["--demo"], addr)
}

/// SSH logins the server accepted so far.
fn logins(sshd: &Sshd) -> usize {
    sshd.log().matches("Accepted publickey").count()
}

fn get(url: &str, token: Option<&str>) -> reqwest::blocking::Response {
    let client = reqwest::blocking::Client::builder()
        .timeout(None::<Duration>)
        .build()
        .expect("client");
    let mut request = client.get(url);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    request.send().expect("request")
}

/// The console attached in tmux, in `dir`, with a state directory of its own and the token set.
fn attach(dir: &Path, urls: &[&str]) -> Option<Tmux> {
    let command = format!(
        "cd {} && GPUFLEET_STATE_DIR={} GPUFLEET_TOKEN={TOKEN} SSH_AUTH_SOCK= {} attach {}; echo EXIT=$?; sleep 30",
        dir.display(),
        dir.join("console-state").display(),
        binary().display(),
        urls.join(" ")
    );
    Tmux::start(&command, 100, 30)
}

#[test]
fn an_attached_console_shows_the_watchers_hosts_live_with_no_ssh_login_of_its_own() {
    let Some(first) = Sshd::start() else { return };
    let Some(second) = Sshd::start() else { return };
    let dir = tempfile::tempdir().expect("temp");
    let known_hosts = dir.path().join("known_hosts");
    std::fs::write(
        &known_hosts,
        format!(
            "{}\n{}\n",
            first.known_hosts_line("ed25519"),
            second.known_hosts_line("ed25519")
        ),
    )
    .expect("known_hosts");
    let host = |name: &str, sshd: &Sshd| {
        format!(
            "[[hosts]]\nname = \"{name}\"\nssh = \"{}@127.0.0.1:{}\"\nidentity_file = \"{}\"\n",
            sshd.user,
            sshd.port,
            sshd.client_key().display()
        )
    };
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "interval_ms = 500\n\n{}\n{}",
            host("gpu-east", &first),
            host("gpu-west", &second)
        ),
    )
    .expect("config");
    let addr = format!("127.0.0.1:{}", free_port());
    let watcher = Served::start(
        dir.path(),
        &[
            "--config",
            config.to_str().expect("utf-8"),
            "--known-hosts",
            known_hosts.to_str().expect("utf-8"),
        ],
        &addr,
    );
    let url = format!("http://{addr}");

    // Without the token, or with a wrong one: 401 and nothing else.
    for token in [None, Some("not-the-token")] {
        let refused = get(&format!("{url}/v1/events"), token);
        assert_eq!(refused.status().as_u16(), 401, "token {token:?}");
        assert_eq!(refused.text().expect("body"), "", "a refusal says nothing");
    }

    // The watcher's own logins, once its links are up.
    let deadline = Instant::now() + WAIT;
    while logins(&first) == 0 || logins(&second) == 0 {
        assert!(
            Instant::now() < deadline,
            "watcher never logged in:\n{}",
            watcher.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_secs(2));
    let before = (logins(&first), logins(&second));

    let Some(console) = attach(dir.path(), &[&url]) else {
        return;
    };
    let screen = console.wait_until("both hosts live", WAIT, |s| {
        s.lines()
            .filter(|l| (l.contains("gpu-east") || l.contains("gpu-west")) && l.contains("live"))
            .count()
            == 2
    });
    assert!(
        screen.contains("H200") || screen.contains("H100") || screen.contains("A100"),
        "{screen}"
    );
    // Live: a host's samples keep coming through the watcher.
    std::thread::sleep(Duration::from_secs(3));
    let later = console.screen();
    assert_eq!(
        later
            .lines()
            .filter(|l| (l.contains("gpu-east") || l.contains("gpu-west")) && l.contains("live"))
            .count(),
        2,
        "{later}"
    );
    assert_eq!(
        (logins(&first), logins(&second)),
        before,
        "the console opened SSH sessions of its own:\n{}\n{}",
        first.log(),
        second.log()
    );
    assert!(
        watcher.log().contains("a console attached"),
        "{}",
        watcher.log()
    );

    // The bundle of a real host, made by the watcher from what it recorded over SSH.
    let out = dir.path().to_str().expect("utf-8");
    let deadline = Instant::now() + WAIT;
    let folder = loop {
        let (code, stdout, stderr) = report_from(
            dir.path(),
            &["gpu-east", "--from", &url, "--out", out],
            Some(TOKEN),
        );
        if code == Some(0) {
            break PathBuf::from(stdout);
        }
        assert!(Instant::now() < deadline, "no bundle: {stderr}");
        std::thread::sleep(Duration::from_millis(500));
    };
    let samples = std::fs::read_to_string(folder.join("samples.csv")).expect("csv");
    assert!(samples.lines().count() >= 2, "{samples}");

    // The attached console's `e` has the watcher make the selected host's bundle, written in
    // the console's folder.
    let bundles = |host: &str| {
        std::fs::read_dir(dir.path())
            .expect("dir")
            .filter_map(|e| e.ok())
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with(&format!("gpufleet-report-{host}-"))
            })
            .count()
    };
    let east_before = bundles("gpu-east");
    console.keys(&["e"]);
    let screen = console.wait_until("the report written", WAIT, |s| s.contains("report written"));
    assert_eq!(
        bundles("gpu-east") + bundles("gpu-west"),
        east_before + 1,
        "{screen}"
    );
    assert_eq!(
        (logins(&first), logins(&second)),
        before,
        "the reports opened SSH sessions of their own"
    );
}

#[test]
fn a_watcher_restarted_under_an_attached_console_is_said_gone_then_followed_again() {
    let dir = tempfile::tempdir().expect("temp");
    let addr = format!("127.0.0.1:{}", free_port());
    let url = format!("http://{addr}");
    let watcher = demo_watcher(dir.path(), &addr);
    let Some(console) = attach(dir.path(), &[&url]) else {
        return;
    };
    console.wait_for("flaky-h200", WAIT);
    drop(watcher);
    console.wait_for("went away", WAIT);
    let _again = demo_watcher(dir.path(), &addr);
    let screen = console.wait_for("is back", WAIT);
    assert!(
        !screen.contains("EXIT="),
        "the console kept running:\n{screen}"
    );
}

#[test]
fn a_console_that_stops_reading_is_dropped_while_another_keeps_receiving() {
    let dir = tempfile::tempdir().expect("temp");
    let addr = format!("127.0.0.1:{}", free_port());
    // Ten times the demo's pace: the stalled console's buffers fill sooner.
    let watcher = Served::start(dir.path(), &["--demo", "--speed", "10"], &addr);
    // A console that asks for the stream and never reads a byte of it.
    let mut stalled = TcpStream::connect(&addr).expect("connect");
    write!(
        stalled,
        "GET /v1/events HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {TOKEN}\r\n\r\n"
    )
    .expect("request");
    // One that reads on.
    let reading = get(&format!("http://{addr}/v1/events"), Some(TOKEN));
    assert_eq!(reading.status().as_u16(), 200);
    let mut lines = BufReader::new(reading).lines();
    let header = lines.next().expect("header").expect("line");
    assert!(
        header.contains("\"format\":\"gpufleet-recording\""),
        "{header}"
    );
    let deadline = Instant::now() + Duration::from_secs(90);
    let dropped = |log: &str| log.contains("fell behind: dropped") || log.contains("went away");
    while !dropped(&watcher.log()) {
        assert!(
            Instant::now() < deadline,
            "the stalled console was never dropped:\n{}",
            watcher.log()
        );
        lines
            .next()
            .expect("the reading console's stream ended")
            .expect("line");
    }
    // The reading console still receives samples after the other was dropped.
    let mut samples = 0;
    while samples < 20 {
        let line = lines.next().expect("stream went on").expect("line");
        if line.contains("\"kind\":\"sample\"") {
            samples += 1;
        }
    }
    // The watcher closed the stalled connection: what it had sent ends, rather than the read
    // waiting out its timeout.
    stalled
        .set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    let mut rest = Vec::new();
    let end = stalled.read_to_end(&mut rest);
    assert!(end.is_ok(), "the stalled connection stayed open: {end:?}");
}

/// A stand-in watcher answering every request with `body` (one connection at a time).
fn fake_watcher(body: String) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut request = [0u8; 4096];
            let _ = stream.read(&mut request);
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    format!("http://{addr}")
}

#[test]
fn a_watcher_of_a_newer_wire_version_is_refused_with_a_clear_error() {
    let newer = "{\"format\":\"gpufleet-recording\",\"version\":99,\"gpufleet\":\"9.9.9\",\"started_ms\":1,\"started\":\"1970-01-01T00:00:00.001Z\",\"hosts\":[\"a\"]}\n\
                 {\"t_ms\":2,\"host\":\"a\",\"event\":{\"kind\":\"warp\",\"at_ms\":2}}\n";
    let url = fake_watcher(newer.to_string());
    let dir = tempfile::tempdir().expect("temp");
    for args in [
        vec!["snapshot", "--json", "--from", url.as_str()],
        vec!["attach", url.as_str()],
    ] {
        let out = Command::new(binary())
            .args(&args)
            .env("GPUFLEET_TOKEN", TOKEN)
            .env("GPUFLEET_STATE_DIR", dir.path())
            .env("LC_ALL", "C.UTF-8")
            .stdin(Stdio::null())
            .output()
            .expect("run");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("version 99"), "{args:?}: {err}");
        assert!(err.contains(&url), "names the watcher: {err}");
        assert!(
            out.stdout.is_empty(),
            "nothing read from it: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}

#[test]
fn snapshot_from_a_watcher_reads_its_fleet_once_and_serve_refuses_a_bad_setup() {
    let dir = tempfile::tempdir().expect("temp");
    let addr = format!("127.0.0.1:{}", free_port());
    let watcher = demo_watcher(dir.path(), &addr);
    let url = format!("http://{addr}");
    let deadline = Instant::now() + WAIT;
    let snapshot = loop {
        let out = Command::new(binary())
            .args(["snapshot", "--json", "--from", &url])
            .env("GPUFLEET_TOKEN", TOKEN)
            .env("GPUFLEET_STATE_DIR", dir.path().join("reader-state"))
            .stdin(Stdio::null())
            .output()
            .expect("run");
        let doc: serde_json::Value =
            serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
        let sampled = doc["hosts"].as_array().is_some_and(|hosts| {
            hosts
                .iter()
                .any(|h| h["gpus"].as_array().is_some_and(|g| !g.is_empty()))
        });
        if sampled {
            break doc;
        }
        assert!(
            Instant::now() < deadline,
            "no sampled host: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            watcher.log()
        );
        std::thread::sleep(Duration::from_millis(500));
    };
    let names: Vec<&str> = snapshot["hosts"]
        .as_array()
        .expect("hosts")
        .iter()
        .filter_map(|h| h["name"].as_str())
        .collect();
    assert!(names.contains(&"flaky-h200"), "{names:?}");

    // Without the token the one-shot read is refused, exit 2.
    let out = Command::new(binary())
        .args(["snapshot", "--json", "--from", &url])
        .env_remove("GPUFLEET_TOKEN")
        .env("GPUFLEET_STATE_DIR", dir.path().join("reader-state"))
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("GPUFLEET_TOKEN"));

    // `--serve` with no token at all, or on an address off loopback in plain HTTP: refused.
    for (addr, token) in [("127.0.0.1:0", None), ("0.0.0.0:0", Some(TOKEN))] {
        let mut command = Command::new(binary());
        command
            .args(["--demo", "watch", "--serve", addr])
            .env_remove("GPUFLEET_SERVE_TOKEN")
            .env("GPUFLEET_STATE_DIR", dir.path().join("refused-state"))
            .stdin(Stdio::null());
        if let Some(token) = token {
            command.env("GPUFLEET_SERVE_TOKEN", token);
        }
        let out = command.output().expect("run");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{addr}: {err}");
        let said = if token.is_none() {
            "GPUFLEET_SERVE_TOKEN"
        } else {
            "allow_plaintext"
        };
        assert!(err.contains(said), "{addr}: {err}");
    }
}

#[test]
fn an_action_needs_a_token_that_may_act_and_runs_once_for_its_key() {
    let dir = tempfile::tempdir().expect("temp");
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        "[serve]\n\n[[serve.tokens]]\nname = \"viewer\"\ntoken_env = \"VIEWER_TOKEN\"\n\n\
         [[serve.tokens]]\nname = \"ops\"\ntoken_env = \"OPS_TOKEN\"\nactions = true\n",
    )
    .expect("config");
    let addr = format!("127.0.0.1:{}", free_port());
    let watcher = Served::start_with(
        dir.path(),
        &["--demo", "--config", config.to_str().expect("utf-8")],
        &addr,
        &[
            ("VIEWER_TOKEN", "view-only-1"),
            ("OPS_TOKEN", "ops-may-act-2"),
        ],
    );
    let client = reqwest::blocking::Client::new();
    let post = |token: &str, body: &str| {
        let response = client
            .post(format!("http://{addr}/v1/actions"))
            .bearer_auth(token)
            .body(body.to_string())
            .send()
            .expect("post");
        let status = response.status().as_u16();
        (status, response.text().expect("body"))
    };
    let hold = r#"{"action":"hold","host":"flaky-h200","key":"hold-flaky-1"}"#;

    // The viewer's token watches but may not act; GPUFLEET_SERVE_TOKEN is not one of the
    // listed tokens.
    assert_eq!(
        get(&format!("http://{addr}/v1/events"), Some("view-only-1"))
            .status()
            .as_u16(),
        200
    );
    assert_eq!(post("view-only-1", hold).0, 403);
    assert_eq!(post(TOKEN, hold).0, 401);

    // The operator's hold runs once, however often it is asked with its key.
    let first = post("ops-may-act-2", hold);
    assert_eq!(first.0, 200, "{}", first.1);
    assert!(first.1.contains("\"outcome\":\"done\""), "{}", first.1);
    assert_eq!(
        post("ops-may-act-2", hold),
        first,
        "a retry reads the outcome back"
    );
    let audit =
        std::fs::read_to_string(dir.path().join("watcher-state/audit.jsonl")).expect("audit");
    let held: Vec<&str> = audit.lines().filter(|l| l.contains("flaky-h200")).collect();
    assert_eq!(held.len(), 1, "run once: {audit}");
    assert!(held[0].contains("asked by ops"), "{audit}");

    // A host the watcher does not watch, a body that is not a request: refused.
    assert_eq!(
        post(
            "ops-may-act-2",
            r#"{"action":"hold","host":"nope","key":"k2"}"#
        )
        .0,
        404
    );
    assert_eq!(post("ops-may-act-2", "hold flaky-h200").0, 400);
    drop(watcher);
}

#[test]
fn two_watchers_read_as_one_fleet_tag_the_hosts_whose_names_clash() {
    let dir = tempfile::tempdir().expect("temp");
    let (first, second) = (
        format!("127.0.0.1:{}", free_port()),
        format!("127.0.0.1:{}", free_port()),
    );
    let east = dir.path().join("east");
    let west = dir.path().join("west");
    std::fs::create_dir_all(&east).expect("dir");
    std::fs::create_dir_all(&west).expect("dir");
    // Both watch the demo fleet: every host name is on both.
    let _east = demo_watcher(&east, &first);
    let _west = demo_watcher(&west, &second);
    let out = Command::new(binary())
        .args(["snapshot", "--json"])
        .args(["--from", &format!("http://{first}")])
        .args(["--from", &format!("http://{second}/")])
        .env("GPUFLEET_TOKEN", TOKEN)
        .env("GPUFLEET_STATE_DIR", dir.path().join("reader-state"))
        .stdin(Stdio::null())
        .output()
        .expect("run");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let names: Vec<&str> = doc["hosts"]
        .as_array()
        .expect("hosts")
        .iter()
        .filter_map(|h| h["name"].as_str())
        .collect();
    assert!(
        names.contains(&format!("flaky-h200@{first}").as_str()),
        "{names:?}"
    );
    assert!(
        names.contains(&format!("flaky-h200@{second}").as_str()),
        "{names:?}"
    );
    assert!(
        !names.contains(&"flaky-h200"),
        "an untagged clashing name: {names:?}"
    );
}

#[test]
fn a_watcher_serves_https_with_the_configs_certificate_and_refuses_half_of_one() {
    let dir = tempfile::tempdir().expect("temp");
    let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    let made = Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
        ])
        .args(["-nodes", "-days", "2", "-subj", "/CN=127.0.0.1"])
        .args(["-addext", "subjectAltName=IP:127.0.0.1"])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output();
    let Ok(made) = made else {
        eprintln!("skipping: openssl is missing");
        return;
    };
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[serve]\ntls_cert = \"{}\"\ntls_key = \"{}\"\n",
            cert.display(),
            key.display()
        ),
    )
    .expect("config");
    let addr = format!("127.0.0.1:{}", free_port());
    let _watcher = Served::start(
        dir.path(),
        &["--demo", "--config", config.to_str().expect("utf-8")],
        &addr,
    );
    // Over HTTPS, trusting the certificate: the fleet is read.
    let out = Command::new(binary())
        .args(["snapshot", "--json", "--from", &format!("https://{addr}")])
        .env("GPUFLEET_TOKEN", TOKEN)
        .env("SSL_CERT_FILE", &cert)
        .env("GPUFLEET_STATE_DIR", dir.path().join("reader-state"))
        .stdin(Stdio::null())
        .output()
        .expect("run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("\"flaky-h200\""),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // In plain HTTP nothing is answered.
    let plain = reqwest::blocking::Client::new()
        .get(format!("http://{addr}/v1/events"))
        .bearer_auth(TOKEN)
        .timeout(Duration::from_secs(10))
        .send();
    assert!(plain.is_err(), "plain HTTP was answered: {plain:?}");

    // A certificate without its key is refused at start.
    std::fs::write(
        &config,
        format!("[serve]\ntls_cert = \"{}\"\n", cert.display()),
    )
    .expect("config");
    let out = Command::new(binary())
        .args(["--demo", "--config", config.to_str().expect("utf-8")])
        .args(["watch", "--serve", "127.0.0.1:0"])
        .env("GPUFLEET_SERVE_TOKEN", TOKEN)
        .env("GPUFLEET_STATE_DIR", dir.path().join("refused-state"))
        .stdin(Stdio::null())
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("tls_key"), "{err}");
}

/// `gpufleet report ARGS` with the token in `token` (none: unset) and a state directory of its
/// own; its exit code, stdout and stderr.
fn report_from(dir: &Path, args: &[&str], token: Option<&str>) -> (Option<i32>, String, String) {
    let mut command = Command::new(binary());
    command
        .arg("report")
        .args(args)
        .env("GPUFLEET_STATE_DIR", dir.join("reader-state"))
        .env("LC_ALL", "C.UTF-8")
        .env_remove("GPUFLEET_TOKEN")
        .stdin(Stdio::null());
    if let Some(token) = token {
        command.env("GPUFLEET_TOKEN", token);
    }
    let out = command.output().expect("run gpufleet report");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).trim().to_string(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn report_from_a_watcher_writes_the_bundle_the_watcher_made_from_its_black_box() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("temp");
    let addr = format!("127.0.0.1:{}", free_port());
    let watcher = demo_watcher(dir.path(), &addr);
    let url = format!("http://{addr}");
    let out = dir.path().join("bundles");
    std::fs::create_dir(&out).expect("out");
    let out_arg = out.to_str().expect("utf-8");

    // The watcher's black box has the host once its first samples are flushed.
    let deadline = Instant::now() + WAIT;
    let folder = loop {
        let (code, stdout, stderr) = report_from(
            dir.path(),
            &["flaky-h200", "--from", &url, "--out", out_arg],
            Some(TOKEN),
        );
        if code == Some(0) {
            assert!(
                stderr.contains("report.md"),
                "the summary is said: {stderr}"
            );
            break PathBuf::from(stdout);
        }
        assert_eq!(code, Some(1), "nothing yet is exit 1: {stderr}");
        assert!(
            Instant::now() < deadline,
            "no bundle came: {stderr}\n{}",
            watcher.log()
        );
        std::thread::sleep(Duration::from_millis(500));
    };
    assert_eq!(folder.parent(), Some(out.as_path()), "{}", folder.display());
    let mode = |path: &Path| std::fs::metadata(path).expect("meta").permissions().mode() & 0o777;
    assert_eq!(mode(&folder), 0o700);
    let mut names: Vec<String> = std::fs::read_dir(&folder)
        .expect("folder")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "failure.txt",
            "kernel.log",
            "nvidia-smi-q.txt",
            "recording.ndjson",
            "report.json",
            "report.md",
            "samples.csv"
        ]
    );
    for name in &names {
        assert_eq!(mode(&folder.join(name)), 0o600, "{name}");
    }
    let report: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(folder.join("report.json")).expect("report.json"),
    )
    .expect("json");
    assert_eq!(report["host"], "flaky-h200", "{report}");
    let samples = std::fs::read_to_string(folder.join("samples.csv")).expect("csv");
    assert!(samples.lines().count() >= 2, "a sampled row: {samples}");
    let recording = std::fs::read_to_string(folder.join("recording.ndjson")).expect("ndjson");
    let header: serde_json::Value =
        serde_json::from_str(recording.lines().next().expect("header")).expect("header json");
    assert_eq!(header["hosts"], serde_json::json!(["flaky-h200"]));
    // Made by the watcher: the reader kept no black box of its own.
    assert!(
        !dir.path().join("reader-state").join("blackbox").exists(),
        "the reader recorded something itself"
    );
    assert!(
        watcher.log().contains("a report asked for"),
        "{}",
        watcher.log()
    );

    // No token, a wrong token: exit 2 and said; a host the watcher does not serve: exit 1.
    let (code, stdout, stderr) = report_from(dir.path(), &["flaky-h200", "--from", &url], None);
    assert_eq!((code, stdout.as_str()), (Some(2), ""), "{stderr}");
    assert!(stderr.contains("GPUFLEET_TOKEN"), "{stderr}");
    let (code, _, stderr) = report_from(
        dir.path(),
        &["flaky-h200", "--from", &url],
        Some("not-the-token"),
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("401"), "{stderr}");
    let (code, _, stderr) = report_from(
        dir.path(),
        &["no-such-host", "--from", &url, "--out", out_arg],
        Some(TOKEN),
    );
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("serves a host named no-such-host"),
        "{stderr}"
    );
    // --token-file goes with a watcher's URL only.
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, TOKEN).expect("token");
    let token_arg = token_file.to_str().expect("utf-8");
    let (code, _, stderr) = report_from(
        dir.path(),
        &[
            "flaky-h200",
            "--from",
            "a.ndjson",
            "--token-file",
            token_arg,
        ],
        None,
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--from URL"), "{stderr}");
    let (code, _, stderr) = report_from(
        dir.path(),
        &[
            "flaky-h200",
            "--from",
            &url,
            "--token-file",
            token_arg,
            "--out",
            out_arg,
        ],
        None,
    );
    assert_eq!(code, Some(0), "{stderr}");

    // Several watchers: the first that serves the host makes it, one that cannot be asked
    // passed over; a name tagged with its watcher (as an attached console shows a name two
    // watchers have) asks that one.
    let gone = format!("http://127.0.0.1:{}", free_port());
    let (code, _, stderr) = report_from(
        dir.path(),
        &[
            "flaky-h200",
            "--from",
            &gone,
            "--from",
            &url,
            "--out",
            out_arg,
        ],
        Some(TOKEN),
    );
    assert_eq!(code, Some(0), "{stderr}");
    let tagged = format!("flaky-h200@{addr}");
    let (code, stdout, stderr) = report_from(
        dir.path(),
        &[&tagged, "--from", &gone, "--from", &url, "--out", out_arg],
        Some(TOKEN),
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout.contains(&format!(
            "gpufleet-report-flaky-h200@127.0.0.1_{}",
            addr.split(':').nth(1).unwrap_or_default()
        )),
        "{stdout}"
    );
    // None serves it, and one could not be asked: that is said, exit 2.
    let (code, _, stderr) = report_from(
        dir.path(),
        &["no-such-host", "--from", &gone, "--from", &url],
        Some(TOKEN),
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains(&gone), "{stderr}");
    // A recording file goes alone.
    let (code, _, stderr) = report_from(
        dir.path(),
        &["flaky-h200", "--from", "a.ndjson", "--from", &url],
        Some(TOKEN),
    );
    assert_eq!(code, Some(2), "{stderr}");
}

#[test]
fn a_bundle_from_a_watcher_writes_only_the_bundles_own_files() {
    let hostile = serde_json::json!({
        "outcome": "written",
        "host": "h",
        "from": "2026-12-06T10:00:00Z",
        "to": "2026-12-06T11:00:00Z",
        "warnings": ["damaged \u{1b}]0;owned\u{7} segment"],
        "files": [
            {"name": "../escaped.txt", "text": "outside"},
            {"name": "report.md", "text": "# h\n"},
            {"name": "report.md", "text": "a second report.md"},
            {"name": ".bashrc", "text": "rm -rf ~"}
        ]
    });
    let url = fake_watcher(hostile.to_string());
    let dir = tempfile::tempdir().expect("temp");
    let out = dir.path().join("bundles");
    std::fs::create_dir(&out).expect("out");
    let (code, stdout, stderr) = report_from(
        dir.path(),
        &["h", "--from", &url, "--out", out.to_str().expect("utf-8")],
        Some(TOKEN),
    );
    assert_eq!(code, Some(0), "{stderr}");
    let folder = PathBuf::from(stdout);
    let names: Vec<String> = std::fs::read_dir(&folder)
        .expect("folder")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["report.md"]);
    assert_eq!(
        std::fs::read_to_string(folder.join("report.md")).expect("md"),
        "# h\n"
    );
    assert!(!dir.path().join("escaped.txt").exists());
    assert!(!out.join("escaped.txt").exists());
    assert!(
        stderr.contains("../escaped.txt") && stderr.contains(".bashrc"),
        "{stderr}"
    );
    assert!(
        !stderr.contains('\u{1b}'),
        "the watcher's words reach the terminal escaped: {stderr:?}"
    );
}
