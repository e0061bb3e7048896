//! `remote::exec` over a real sshd: output streamed line by line, exit status, stdin, timeout,
//! cancellation (the command stopped on the host, not only its channel closed), and hostile
//! output sanitized.

use crate::common;

use std::time::{Duration, Instant};

use common::sshd::Sshd;
use common::test_options;
use gpufleet::remote::{ExecRequest, exec};
use gpufleet::telemetry::source::StopFlag;

fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

#[test]
fn streams_lines_and_returns_the_exit_status() {
    let Some(sshd) = Sshd::start() else { return };
    let opts = test_options(&sshd.trusted_known_hosts());
    let host = sshd.remote_host("h");
    let cmd = argv(&[
        "sh",
        "-c",
        "echo one; echo two >&2; printf 'x\\033[2Jy\\n'; exit 3",
    ]);
    let mut lines = Vec::new();
    let outcome = exec(
        &host,
        &opts,
        &ExecRequest {
            argv: &cmd,
            stdin: None,
            timeout: Duration::from_secs(10),
        },
        &StopFlag::default(),
        &mut |l| lines.push(l.to_string()),
    )
    .expect("exec");
    assert_eq!(outcome.exit_status, Some(3));
    assert!(!outcome.timed_out);
    // stdout and stderr travel as separate SSH streams: their relative order is not kept.
    lines.sort();
    assert_eq!(
        lines,
        vec!["one", "two", "xy"],
        "stderr merged, escapes stripped"
    );
}

#[test]
fn arguments_are_quoted_not_interpreted_by_the_remote_shell() {
    let Some(sshd) = Sshd::start() else { return };
    let opts = test_options(&sshd.trusted_known_hosts());
    let marker = sshd.dir().join("pwned");
    let hostile = format!("; touch {}", marker.display());
    let cmd = vec!["echo".to_string(), hostile.clone()];
    let mut lines = Vec::new();
    exec(
        &sshd.remote_host("h"),
        &opts,
        &ExecRequest {
            argv: &cmd,
            stdin: None,
            timeout: Duration::from_secs(10),
        },
        &StopFlag::default(),
        &mut |l| lines.push(l.to_string()),
    )
    .expect("exec");
    assert_eq!(lines, vec![hostile]);
    assert!(!marker.exists(), "the argument was data, not a command");
}

#[test]
fn stdin_is_delivered_and_closed() {
    let Some(sshd) = Sshd::start() else { return };
    let opts = test_options(&sshd.trusted_known_hosts());
    let cmd = argv(&["cat"]);
    let mut lines = Vec::new();
    let outcome = exec(
        &sshd.remote_host("h"),
        &opts,
        &ExecRequest {
            argv: &cmd,
            stdin: Some(b"print('hi')\nsecond line\n"),
            timeout: Duration::from_secs(10),
        },
        &StopFlag::default(),
        &mut |l| lines.push(l.to_string()),
    )
    .expect("exec");
    assert_eq!(outcome.exit_status, Some(0));
    assert_eq!(lines, vec!["print('hi')", "second line"]);
}

#[test]
fn a_command_past_its_timeout_is_cut_short() {
    let Some(sshd) = Sshd::start() else { return };
    let opts = test_options(&sshd.trusted_known_hosts());
    let cmd = argv(&["sh", "-c", "echo started; sleep 30.5"]);
    let started = Instant::now();
    let mut lines = Vec::new();
    let outcome = exec(
        &sshd.remote_host("h"),
        &opts,
        &ExecRequest {
            argv: &cmd,
            stdin: None,
            timeout: Duration::from_millis(1500),
        },
        &StopFlag::default(),
        &mut |l| lines.push(l.to_string()),
    )
    .expect("exec");
    assert!(outcome.timed_out);
    assert_eq!(outcome.exit_status, None);
    assert_eq!(
        lines,
        vec!["started"],
        "output before the timeout was delivered"
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_gone("sleep 30.5");
}

/// The hosts are local, so the remote processes can be looked at in `/proc`: waits up to 5 s
/// for every process whose command line is `cmdline` to be gone.
fn assert_gone(cmdline: &str) {
    let running = || {
        std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
            .map(|raw| String::from_utf8_lossy(&raw).replace('\0', " "))
            .filter(|line| line.trim_end() == cmdline)
            .count()
    };
    let until = Instant::now() + Duration::from_secs(5);
    while running() > 0 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(running(), 0, "`{cmdline}` still runs on the host");
}

#[test]
fn a_stop_request_cancels_a_running_command() {
    let Some(sshd) = Sshd::start() else { return };
    let opts = test_options(&sshd.trusted_known_hosts());
    let cmd = argv(&["sh", "-c", "echo started; sleep 31.5"]);
    let stop = StopFlag::default();
    let stopper = stop.clone();
    let started = Instant::now();
    let outcome = exec(
        &sshd.remote_host("h"),
        &opts,
        &ExecRequest {
            argv: &cmd,
            stdin: None,
            timeout: Duration::from_secs(60),
        },
        &stop,
        &mut |_| stopper.set(),
    )
    .expect("exec");
    assert!(!outcome.timed_out);
    assert_eq!(outcome.exit_status, None);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    // Closing the channel alone would leave the sleep running on the host.
    assert_gone("sleep 31.5");
}
