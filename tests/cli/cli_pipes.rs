//! One-shot commands whose reader goes away (`gpufleet man | head`): each ends quietly, as a
//! Unix tool does (killed by SIGPIPE), with no panic and no "Broken pipe" on stderr.

use crate::tmux;

use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, ExitStatus, Stdio};

use tmux::binary;

const SIGPIPE: i32 = 13;

/// Runs `args` with standard output a pipe whose reading end is already closed, so the first
/// write meets a reader that is gone; returns the status and stderr.
fn into_closed_pipe(args: &[&str]) -> (ExitStatus, String) {
    let state = tempfile::tempdir().expect("temp");
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let out = Command::new(binary())
        .args(args)
        .env("GPUFLEET_STATE_DIR", state.path())
        .env("RUST_BACKTRACE", "1")
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .expect("run");
    (
        out.status,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn assert_quiet(args: &[&str], status: ExitStatus, stderr: &str) {
    assert!(
        !stderr.contains("panicked") && !stderr.contains("backtrace"),
        "{args:?} panicked: {stderr}"
    );
    assert!(
        !stderr.to_lowercase().contains("broken pipe") && !stderr.contains("os error 32"),
        "{args:?} said the pipe broke: {stderr}"
    );
    assert_eq!(
        status.signal(),
        Some(SIGPIPE),
        "{args:?} should end as a Unix tool does when its reader leaves: {status:?} {stderr}"
    );
}

#[test]
fn every_printing_command_ends_quietly_when_its_reader_is_gone() {
    let fixture = "tests/fixtures/nvidia-smi/h200-driver-580/smi.txt";
    let commands: &[&[&str]] = &[
        &["completions", "bash"],
        &["completions", "zsh"],
        &["man"],
        &["--demo", "snapshot", "--json"],
        &["--demo", "snapshot"],
        &["--demo", "cost"],
        &["--demo", "cost", "--json"],
        &["diagnose", fixture],
        &["diagnose", "--json", fixture],
        &["playbook", "list"],
        &["fit", "--params", "7b"],
    ];
    for args in commands {
        let (status, stderr) = into_closed_pipe(args);
        assert_quiet(args, status, &stderr);
    }
}

#[test]
fn head_reading_one_line_of_a_long_output_leaves_no_trace() {
    // `gpufleet completions bash | head -1`: one line read, then the pipe closed while the
    // script is still being written.
    let args = ["completions", "bash"];
    let mut child = Command::new(binary())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let stdout = child.stdout.take().expect("stdout");
    let mut first = String::new();
    BufReader::new(stdout)
        .read_line(&mut first)
        .expect("first line");
    // The reader is dropped here, as head exits after its line.
    let out = child.wait_with_output().expect("wait");
    assert!(!first.trim().is_empty(), "a first line: {first:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.success() {
        // The whole script fit in the pipe before head left: nothing to say either way.
        assert!(stderr.is_empty(), "{stderr}");
    } else {
        assert_quiet(&args, out.status, &stderr);
    }
}
