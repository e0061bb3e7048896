//! `gpufleet diagnose` on input too big to hold: the real binary reading a pipe and
//! `/dev/zero`, its peak memory read from `/proc/<pid>/status` while it runs.

use crate::tmux;

use std::io::Write;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tmux::binary;

const MIB: usize = 1024 * 1024;
/// The peak resident memory allowed while diagnosing any amount of input.
const MAX_PEAK_KIB: u64 = 64 * 1024;

/// `VmHWM` (peak resident set) of a running process, in KiB.
fn peak_kib(child: &Child) -> u64 {
    let status =
        std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn diagnose(stdin: Stdio, json: bool) -> Child {
    let mut cmd = Command::new(binary());
    cmd.arg("diagnose");
    if json {
        cmd.arg("--json");
    }
    cmd.stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn gpufleet")
}

#[test]
fn a_stream_larger_than_memory_allows_is_read_in_bounded_memory() {
    let mut child = diagnose(Stdio::piped(), true);
    let mut stdin = child.stdin.take().expect("stdin");
    // 256 MiB: lines of 1 MiB with no text worth keeping, a bad UTF-8 byte in each, then a
    // real Xid line at the very end, which must still be found.
    let mut long = vec![b'a'; MIB];
    long[10] = 0xff;
    *long.last_mut().expect("not empty") = b'\n';
    let mut peak = 0;
    for _ in 0..256 {
        stdin.write_all(&long).expect("write");
        peak = peak.max(peak_kib(&child));
        assert!(peak < MAX_PEAK_KIB, "peak {peak} KiB while reading");
    }
    stdin
        .write_all(b"NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.\n")
        .expect("write");
    stdin.flush().expect("flush");
    // Still reading (it waits for the end of the input): its peak so far is its peak.
    peak = peak.max(peak_kib(&child));
    drop(stdin);
    let out = child.wait_with_output().expect("wait");
    assert!(peak > 0, "the peak was read");
    assert!(peak < MAX_PEAK_KIB, "peak {peak} KiB");
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let labels: Vec<&str> = doc["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter_map(|f| f["label"].as_str())
        .collect();
    assert!(labels.contains(&"xid_79"), "{labels:?}");
    // Each long line was cut to its first 64 KiB, and the report says so.
    let notes = doc["notes"].to_string();
    assert!(notes.contains("256 line(s) longer than 64 KiB"), "{notes}");
}

#[test]
fn dev_zero_ends_with_a_note_in_bounded_memory() {
    let zero = std::fs::File::open("/dev/zero").expect("/dev/zero");
    let mut child = diagnose(Stdio::from(zero), false);
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut peak = 0;
    while child.try_wait().expect("wait").is_none() {
        peak = peak.max(peak_kib(&child));
        if peak >= MAX_PEAK_KIB || Instant::now() > deadline {
            child.kill().expect("kill");
            let _ = child.wait();
            panic!("still reading /dev/zero: peak {peak} KiB");
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let out = child.wait_with_output().expect("output");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Zero bytes are no GPU output: nothing recognised (exit 3), not healthy.
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stdout.contains("nothing recognised"), "{stdout}");
    assert!(
        stdout.contains("note: input truncated after 1024 MiB"),
        "{stdout}"
    );
    assert!(
        stderr.contains("input truncated after 1024 MiB"),
        "{stderr}"
    );
}

#[test]
fn one_bad_byte_does_not_reject_the_log() {
    let mut child = diagnose(Stdio::piped(), false);
    let mut stdin = child.stdin.take().expect("stdin");
    stdin
        .write_all(b"epoch 1 loss \xff\xfe 0.3\nRuntimeError: CUDA error: out of memory\n")
        .expect("write");
    drop(stdin);
    let out = child.wait_with_output().expect("wait");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("oom"), "{stdout}");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `gpufleet diagnose` in a terminal, in `lang`, kept on screen after it ends.
fn diagnose_on_a_terminal(lang: &str) -> Option<tmux::Tmux> {
    let command = format!(
        "{} --lang {lang} diagnose; sleep 60",
        binary().to_str().expect("utf-8 path")
    );
    tmux::Tmux::start(&command, 80, 24)
}

#[test]
fn on_a_terminal_it_says_what_it_waits_for_then_reads_the_paste() {
    let Some(term) = diagnose_on_a_terminal("en") else {
        return;
    };
    let screen = term.wait_for("Ctrl-D", Duration::from_secs(10));
    assert!(
        screen.contains("paste the text") && screen.contains("then press Ctrl-D"),
        "{screen}"
    );
    // A real kernel line (tests/fixtures/diagnose/kernel/xid79_no_pid.txt), then end of input.
    let line = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/diagnose/kernel/xid79_no_pid.txt"
    ))
    .expect("fixture");
    term.keys(&[line.lines().next().expect("a line"), "Enter", "C-d"]);
    term.wait_for("gpu_lost", Duration::from_secs(10));

    let Some(zh) = diagnose_on_a_terminal("zh-CN") else {
        return;
    };
    let screen = zh.wait_for("Ctrl-D", Duration::from_secs(10));
    assert!(screen.contains("粘贴文本"), "{screen}");

    // Read from a pipe, nothing is said: the text is already coming.
    let mut child = diagnose(Stdio::piped(), false);
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(line.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("Ctrl-D"), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("gpu_lost"));
}
