//! `/metrics` against a careless user and an attacker, through the real binary: it still
//! answers after hundreds of idle connections under systemd's 1,024-descriptor limit, a
//! configured bearer token guards it (a wrong or missing one gets 401), and a listener off
//! loopback with neither a token nor `allow_unauthenticated` is refused before it starts.

use crate::tmux::binary;

use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

/// `gpufleet watch --demo` under `ulimit -n 1024`, its stderr in `log`.
fn watcher(config: &Path, log: &Path, extra: &str, env: &[(&str, &str)]) -> Child {
    let script = format!("ulimit -n 1024 && exec \"$0\" watch --demo --config \"$1\" {extra}",);
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(script)
        .arg(binary())
        .arg(config)
        .env("GPUFLEET_STATE_DIR", log.with_extension("state"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).expect("log"));
    for (k, v) in env {
        command.env(k, v);
    }
    command.spawn().expect("spawn gpufleet watch")
}

struct Stop(Child);

impl Drop for Stop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The status of `GET /metrics` (with `token` as a bearer token), or `None` when no answer
/// came.
fn scrape(addr: &str, token: Option<&str>) -> Option<u16> {
    let client = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .expect("client");
    let mut request = client.get(format!("http://{addr}/metrics"));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    request.send().ok().map(|r| r.status().as_u16())
}

fn wait_for_status(addr: &str, token: Option<&str>, log: &Path) -> u16 {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(status) = scrape(addr, token) {
            return status;
        }
        assert!(
            Instant::now() < deadline,
            "/metrics never answered; log:\n{}",
            std::fs::read_to_string(log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn metrics_still_answers_after_700_idle_connections_under_a_1024_descriptor_limit() {
    let dir = tempfile::tempdir().expect("temp");
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "").expect("config");
    let log = dir.path().join("watch.log");
    let addr = format!("127.0.0.1:{}", free_port());
    let _watcher = Stop(watcher(&config, &log, &format!("--metrics {addr}"), &[]));
    assert_eq!(wait_for_status(&addr, None, &log), 200);

    // Idle connections that never send a byte, held open by this process.
    let idle: Vec<TcpStream> = (0..700)
        .filter_map(|_| TcpStream::connect(&addr).ok())
        .collect();
    // Give the server time to take them all in.
    std::thread::sleep(Duration::from_secs(2));
    for round in 0..3 {
        assert_eq!(
            scrape(&addr, None),
            Some(200),
            "scrape {round} with {} idle connections open; log:\n{}",
            idle.len(),
            std::fs::read_to_string(&log).unwrap_or_default()
        );
    }
    // Every one of them was let in (the listener never went away).
    assert_eq!(idle.len(), 700);
    drop(idle);
    assert_eq!(scrape(&addr, None), Some(200));
    let out = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(!out.contains("panicked"), "{out}");
}

#[test]
fn a_bearer_token_guards_metrics_and_an_open_listener_off_loopback_is_refused() {
    let dir = tempfile::tempdir().expect("temp");
    let config = dir.path().join("config.toml");
    let log = dir.path().join("watch.log");
    let addr = format!("127.0.0.1:{}", free_port());
    std::fs::write(
        &config,
        format!("[metrics]\nlisten = \"{addr}\"\ntoken_env = \"GPUFLEET_TEST_METRICS_TOKEN\"\n"),
    )
    .expect("config");
    let token = "k9-Wq2-rT7";
    let guarded = Stop(watcher(
        &config,
        &log,
        "",
        &[("GPUFLEET_TEST_METRICS_TOKEN", token)],
    ));
    assert_eq!(wait_for_status(&addr, Some(token), &log), 200);
    assert_eq!(scrape(&addr, None), Some(401), "no token");
    assert_eq!(scrape(&addr, Some("k9-Wq2-rT")), Some(401), "a wrong token");
    // Nothing of the fleet, nor of anything else, for a scrape without the token.
    for path in ["/metrics", "/health", "/nope"] {
        let response = reqwest::blocking::get(format!("http://{addr}{path}")).expect("an answer");
        assert_eq!(response.status().as_u16(), 401, "{path}");
        assert_eq!(response.text().expect("body"), "", "{path}");
    }
    drop(guarded);

    // The token's variable unset: refused at start, naming it.
    let out = Command::new(binary())
        .args(["watch", "--demo", "--config"])
        .arg(&config)
        .env_remove("GPUFLEET_TEST_METRICS_TOKEN")
        .env("GPUFLEET_STATE_DIR", dir.path().join("state"))
        .stdin(Stdio::null())
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("GPUFLEET_TEST_METRICS_TOKEN"), "{err}");

    // Every address, no token, no word that anyone may read: the file's line and key.
    std::fs::write(&config, "[metrics]\nlisten = \"0.0.0.0:9400\"\n").expect("config");
    let out = Command::new(binary())
        .args(["watch", "--demo", "--config"])
        .arg(&config)
        .env("GPUFLEET_STATE_DIR", dir.path().join("state"))
        .stdin(Stdio::null())
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("config.toml:2")
            && err.contains("metrics.listen")
            && err.contains("token_env"),
        "{err}"
    );

    // The same on the command line.
    std::fs::write(&config, "").expect("config");
    let wide = format!("0.0.0.0:{}", free_port());
    let out = Command::new(binary())
        .args(["watch", "--demo", "--metrics", &wide, "--config"])
        .arg(&config)
        .env("GPUFLEET_STATE_DIR", dir.path().join("state"))
        .stdin(Stdio::null())
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&wide) && err.contains("token_env"), "{err}");

    // Said in so many words, it serves every address, with a warning in the log.
    let port = free_port();
    std::fs::write(
        &config,
        format!("[metrics]\nlisten = \"0.0.0.0:{port}\"\nallow_unauthenticated = true\n"),
    )
    .expect("config");
    let open_log = dir.path().join("open.log");
    let _open = Stop(watcher(&config, &open_log, "", &[]));
    assert_eq!(
        wait_for_status(&format!("127.0.0.1:{port}"), None, &open_log),
        200
    );
    let out = std::fs::read_to_string(&open_log).unwrap_or_default();
    assert!(
        out.contains("WARN") && out.contains("WITHOUT authentication"),
        "{out}"
    );
}
