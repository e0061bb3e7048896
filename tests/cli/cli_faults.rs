//! How the binary behaves where it cannot do its job: no terminal for the console, errors with
//! a cause, hostile characters in pasted text.

use crate::tmux;

use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use tmux::binary;

/// The binary with a private state and config home, stdin, stdout and stderr all pipes.
fn spawn(args: &[&str], home: &Path) -> Child {
    Command::new(binary())
        .args(args)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env_remove("GPUFLEET_STATE_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn gpufleet")
}

/// Waits up to 20 s (a console that did start would run for ever), then collects the output.
fn finish(mut child: Child) -> Output {
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().expect("wait").is_none() {
        if Instant::now() > deadline {
            child.kill().expect("kill");
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

fn run_with_input(args: &[&str], home: &Path, input: &[u8]) -> Output {
    let mut child = spawn(args, home);
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(input);
    }
    finish(child)
}

#[test]
fn the_console_without_a_terminal_says_so_in_one_line() {
    let home = tempfile::tempdir().expect("temp");
    for args in [&["--demo"][..], &[][..]] {
        let out = finish(spawn(args, home.path()));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}: stdout {:?}", out.stdout);
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains("gpufleet snapshot --json"), "{stderr}");
    }
}

#[test]
fn one_shot_commands_still_run_without_a_terminal() {
    let home = tempfile::tempdir().expect("temp");
    let out = finish(spawn(&["--demo", "snapshot", "--json"], home.path()));
    // The demo fleet has a lost GPU, so 1 ("a host could not be read") is its normal status.
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert!(doc.is_object(), "{doc}");
}

#[test]
fn an_unreadable_config_names_its_cause_once() {
    let home = tempfile::tempdir().expect("temp");
    let dir = home.path().join("a-directory");
    std::fs::create_dir(&dir).expect("dir");
    let cause = std::io::Error::from_raw_os_error(21).to_string();
    let out = finish(spawn(
        &["--config", dir.to_str().expect("utf-8"), "snapshot"],
        home.path(),
    ));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.matches(&cause).count(), 1, "{stderr}");
}

#[test]
fn a_state_dir_that_is_a_file_names_its_cause_once() {
    let home = tempfile::tempdir().expect("temp");
    let file = home.path().join("a-file");
    std::fs::write(&file, "not a directory").expect("file");
    let cause = std::io::Error::from_raw_os_error(20).to_string();
    let out = Command::new(binary())
        .arg("cost")
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env("GPUFLEET_STATE_DIR", &file)
        .stdin(Stdio::null())
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.matches(&cause).count(), 1, "{stderr}");
}

#[test]
fn diagnose_strips_bidi_controls_from_its_report() {
    let home = tempfile::tempdir().expect("temp");
    // A process name that a right-to-left override would show reversed, and an isolate.
    let line = "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=\u{202E}nohtyp\u{202C}, GPU has \
                fallen off the bus. \u{2066}x\u{2069}\u{200F}\n";
    for json in [false, true] {
        let args: &[&str] = if json {
            &["diagnose", "--json"]
        } else {
            &["diagnose"]
        };
        let out = run_with_input(args, home.path(), line.as_bytes());
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{stdout}");
        assert!(stdout.contains("xid_79"), "{stdout}");
        assert!(stdout.contains("nohtyp"), "the name is kept: {stdout}");
        for c in ['\u{202E}', '\u{202C}', '\u{2066}', '\u{2069}', '\u{200F}'] {
            assert!(!stdout.contains(c), "{:?} passed through: {stdout}", c);
        }
    }
}
