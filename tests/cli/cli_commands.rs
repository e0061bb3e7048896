//! The one-shot commands as a user runs them: the binary, its arguments, its exit status.

use crate::tmux;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use tmux::binary;

fn run(args: &[&str], state: &Path, stdin: &[u8]) -> Output {
    let mut child = Command::new(binary())
        .args(args)
        .env("GPUFLEET_STATE_DIR", state)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    if let Some(mut input) = child.stdin.take() {
        // A command that refuses early (read-only, bad input) may exit before it reads its
        // input; a closed pipe then is the behaviour under test, not a harness failure.
        if let Err(err) = std::io::Write::write_all(&mut input, stdin) {
            assert_eq!(err.kind(), std::io::ErrorKind::BrokenPipe, "stdin: {err}");
        }
    }
    child.wait_with_output().expect("wait")
}

#[test]
fn diagnose_exit_codes_follow_the_findings() {
    let state = tempfile::tempdir().expect("temp");
    let healthy = run(
        &[
            "diagnose",
            "tests/fixtures/nvidia-smi/h200-driver-580/smi.txt",
        ],
        state.path(),
        b"",
    );
    assert_eq!(healthy.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&healthy.stdout).contains("healthy"));

    let lost = run(
        &["diagnose", "--json", "-"],
        state.path(),
        b"Unable to determine the device handle for GPU 0000:00:06.0: GPU is lost. Reboot the system to recover this GPU\n",
    );
    assert_eq!(lost.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&lost.stdout).expect("JSON");
    assert_eq!(doc["findings"][0]["label"], "gpu_lost");

    let empty = run(&["diagnose"], state.path(), b"  \n");
    assert_eq!(empty.status.code(), Some(2));
    let missing = run(&["diagnose", "/nonexistent/file"], state.path(), b"");
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/nonexistent/file"));
}

fn config_with_vast_host(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("config.toml");
    std::fs::write(
        &path,
        "[[hosts]]\nname = \"a100-1\"\nssh = \"root@127.0.0.1:1\"\nprice_per_hour = 30.0\ncurrency = \"CNY\"\n\
         [hosts.release]\nprovider = \"vast\"\ninstance_id = \"12345\"\ntoken_env = \"GPUFLEET_TEST_TOKEN\"\nbase_url = \"http://127.0.0.1:9\"\n",
    )
    .expect("config");
    path
}

#[test]
fn read_only_refuses_a_release_before_or_after_the_subcommand() {
    let state = tempfile::tempdir().expect("temp");
    let config = config_with_vast_host(state.path());
    let config = config.to_str().expect("utf-8 path");
    for args in [
        vec!["--read-only", "release", "a100-1", "--config", config],
        vec!["release", "a100-1", "--read-only", "--config", config],
    ] {
        let out = run(&args, state.path(), b"a100-1\n");
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        let text = String::from_utf8_lossy(&out.stdout).to_lowercase();
        assert!(text.contains("read-only"), "{text}");
    }
}

#[test]
fn a_release_without_the_typed_name_is_cancelled() {
    let state = tempfile::tempdir().expect("temp");
    let config = config_with_vast_host(state.path());
    let out = Command::new(binary())
        .args(["release", "a100-1", "--config"])
        .arg(&config)
        .env("GPUFLEET_STATE_DIR", state.path())
        .env("GPUFLEET_TEST_TOKEN", "tok-very-secret")
        .stdin(Stdio::null())
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(130), "{text}");
    assert!(text.contains("PUT"), "the request is shown first: {text}");
    assert!(!text.contains("tok-very-secret"), "{text}");
}

#[test]
fn cost_with_no_history_prints_the_fleet_and_exits_0() {
    let state = tempfile::tempdir().expect("temp");
    let config = config_with_vast_host(state.path());
    let out = run(
        &[
            "cost",
            "--json",
            "--config",
            config.to_str().expect("utf-8"),
        ],
        state.path(),
        b"",
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert!(doc.to_string().contains("a100-1"), "{doc}");
}
