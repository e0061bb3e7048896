//! A token in a provider's `base_url` (`https://TOKEN@host/?key=TOKEN`) never reaches the
//! screen, an error or the audit log: the real binary against a real loopback server.

use crate::release_server as server;
use crate::tmux;

use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use server::{Server, answer};
use tmux::binary;

const USER_SECRET: &str = "SECRETTOKEN";
const QUERY_SECRET: &str = "SECRET2";

fn config(dir: &Path, base_url: &str) -> std::path::PathBuf {
    let path = dir.join("config.toml");
    std::fs::write(
        &path,
        format!(
            "[[hosts]]\nname = \"a100-1\"\nssh = \"root@127.0.0.1:1\"\nprice_per_hour = 3.0\n\
             [hosts.release]\nprovider = \"vast\"\ninstance_id = \"12345\"\n\
             token_env = \"GPUFLEET_TEST_TOKEN\"\nbase_url = \"{base_url}\"\n"
        ),
    )
    .expect("config");
    path
}

fn gpufleet(args: &[&str], state: &Path) -> Output {
    Command::new(binary())
        .args(args)
        .env("GPUFLEET_STATE_DIR", state)
        .env("GPUFLEET_TEST_TOKEN", "header-token")
        .stdin(Stdio::null())
        .output()
        .expect("run gpufleet")
}

/// Everything the run left for a person to read: stdout, stderr and every file of the state
/// directory (the audit log among them).
fn everything_shown(out: &Output, state: &Path) -> String {
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    for entry in std::fs::read_dir(state).expect("state dir").flatten() {
        if entry.path().is_file() && entry.file_name() != "config.toml" {
            text.push_str(&std::fs::read_to_string(entry.path()).unwrap_or_default());
        }
    }
    text
}

fn assert_no_secret(text: &str) {
    assert!(!text.contains(USER_SECRET), "userinfo leaked: {text}");
    assert!(!text.contains(QUERY_SECRET), "query leaked: {text}");
}

fn secret_url(host_port: &str) -> String {
    format!("http://{USER_SECRET}@{host_port}/?key={QUERY_SECRET}")
}

#[test]
fn a_dry_run_shows_the_request_without_the_url_secrets() {
    let state = tempfile::tempdir().expect("temp");
    let config = config(state.path(), &secret_url("127.0.0.1:9"));
    let out = gpufleet(
        &[
            "release",
            "a100-1",
            "--dry-run",
            "--config",
            config.to_str().expect("utf-8"),
        ],
        state.path(),
    );
    let text = everything_shown(&out, state.path());
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("PUT http://***@127.0.0.1:9/api/v0/instances/12345/?***"),
        "the request line is still shown, redacted: {text}"
    );
    assert_no_secret(&text);
}

#[test]
fn a_refused_connection_names_the_url_without_its_secrets() {
    // A port nobody listens on: bound, then let go.
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    let state = tempfile::tempdir().expect("temp");
    let config = config(state.path(), &secret_url(&format!("127.0.0.1:{port}")));
    let out = gpufleet(
        &[
            "release",
            "a100-1",
            "--yes",
            "--config",
            config.to_str().expect("utf-8"),
        ],
        state.path(),
    );
    let text = everything_shown(&out, state.path());
    assert_ne!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains(&format!(
            "could not reach http://***@127.0.0.1:{port}/api/v0/instances/12345/?***"
        )),
        "{text}"
    );
    assert_no_secret(&text);
}

#[test]
fn a_failing_provider_that_echoes_the_url_is_scrubbed() {
    let server = Server::start(vec![answer(
        500,
        &format!("{{\"error\":\"no route for /?key={QUERY_SECRET} (user {USER_SECRET})\"}}"),
    )]);
    let host_port = server.base_url.trim_start_matches("http://").to_string();
    let state = tempfile::tempdir().expect("temp");
    let config = config(state.path(), &secret_url(&host_port));
    let out = gpufleet(
        &[
            "release",
            "a100-1",
            "--yes",
            "--config",
            config.to_str().expect("utf-8"),
        ],
        state.path(),
    );
    let text = everything_shown(&out, state.path());
    let sent = server.requests();
    assert_eq!(sent.len(), 1, "the request was sent: {text}");
    // The query of base_url stays a query, after the request's own path.
    assert_eq!(
        sent[0].path,
        format!("/api/v0/instances/12345/?key={QUERY_SECRET}")
    );
    assert!(text.contains("HTTP 500"), "{text}");
    assert_no_secret(&text);
}

#[test]
fn a_rejected_base_url_is_quoted_without_its_secrets() {
    let state = tempfile::tempdir().expect("temp");
    let config = config(
        state.path(),
        &format!("ftp://{USER_SECRET}@127.0.0.1/?key={QUERY_SECRET}"),
    );
    let out = gpufleet(
        &["cost", "--config", config.to_str().expect("utf-8")],
        state.path(),
    );
    let text = everything_shown(&out, state.path());
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("base_url"), "{text}");
    assert!(text.contains("found a ftp:// address"), "{text}");
    assert_no_secret(&text);
}
