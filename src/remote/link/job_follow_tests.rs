//! Tests of `job_follow`: reading a followed log's bytes, and the scripts that follow it.

use super::*;

#[test]
fn a_character_cut_between_two_reads_is_kept_for_the_next() {
    let bar = "loss 0.5 |███| 3/9\r".as_bytes();
    for cut in 0..=bar.len() {
        let mut pending = bar[..cut].to_vec();
        let mut text = utf8_chunk(&mut pending).unwrap_or_default();
        pending.extend_from_slice(&bar[cut..]);
        text.push_str(&utf8_chunk(&mut pending).unwrap_or_default());
        assert_eq!(text.as_bytes(), bar, "cut at {cut}");
        assert!(pending.is_empty());
    }
    let mut bad = b"a\xff\xfeb".to_vec();
    assert_eq!(utf8_chunk(&mut bad).as_deref(), Some("a\u{fffd}\u{fffd}b"));
}

#[test]
fn half_a_character_alone_is_no_text_to_send_until_the_rest_comes() {
    let mut pending = "█".as_bytes()[..2].to_vec();
    for _ in 0..3 {
        assert_eq!(utf8_chunk(&mut pending), None, "nothing whole yet");
        assert_eq!(pending.len(), 2, "the start waits");
    }
    pending.push("█".as_bytes()[2]);
    assert_eq!(utf8_chunk(&mut pending).as_deref(), Some("█"));
    assert!(pending.is_empty());
}

#[test]
fn a_configured_log_is_an_argument_of_the_script_never_part_of_it() {
    let command =
        configured_tail_command("/root/run/*.log'; rm -rf ~; '", 12, Some(5)).expect("command");
    // The script is one quoted word, `sh` the next, the pattern the last, quoted whole.
    assert!(
        command.ends_with(" sh '/root/run/*.log'\\''; rm -rf ~; '\\'''"),
        "{command}"
    );
    assert!(
        command.contains("tail ---disable-inotify -s 5 -c 4194304 -f --pid=12 --"),
        "{command}"
    );
}

#[test]
fn the_tail_names_the_descriptor_by_its_pid_only() {
    let follow = tail_command(1307, LogFd::Stdout, Some(FOLLOW_UNWATCHED_S)).expect("command");
    assert!(
        follow.ends_with(" sh /proc/1307/fd/1"),
        "the file is the script's argument: {follow}"
    );
    assert!(
        follow.contains("exec tail -s 30 -c 4194304 -f --pid=1307 \"$1\""),
        "{follow}"
    );
    assert_eq!(
        tail_command(7, LogFd::Stderr, None).expect("command"),
        "tail -c 4194304 /proc/7/fd/2"
    );
}

/// The followed log reaches the link every few seconds, not at each of the progress bar's
/// ten rewrites a second (run through this machine's own `sh` and `tail`).
#[test]
fn a_followed_log_is_read_once_a_second_not_at_every_write() {
    use std::io::{Read, Write};
    use std::time::Instant;
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("train.log");
    std::fs::write(&path, "start\n").expect("log");
    let script = follow_script(&format!("-c {TAIL_BYTES} -f \"$1\""), FOLLOW_LOOKED_AT_S);
    let mut tail = std::process::Command::new("sh")
        .args(["-c", script.as_str(), "sh"])
        .arg(&path)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("sh");
    let mut out = tail.stdout.take().expect("stdout");
    let writer_path = path.clone();
    let writer = std::thread::spawn(move || {
        let mut log = std::fs::OpenOptions::new()
            .append(true)
            .open(writer_path)
            .expect("open");
        for step in 0..30 {
            write!(log, "step {step}\r").expect("write");
            std::thread::sleep(Duration::from_millis(100));
        }
    });
    // Count the reads that bring something, until the last write is seen.
    let started = Instant::now();
    let mut reads = 0;
    let mut seen = String::new();
    let mut buf = [0u8; 4096];
    while started.elapsed() < Duration::from_secs(15) && !seen.contains("step 29") {
        let n = out.read(&mut buf).expect("read");
        if n == 0 {
            break;
        }
        reads += 1;
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    let _ = tail.kill();
    let _ = tail.wait();
    writer.join().expect("writer");
    assert!(seen.contains("start"), "{seen:?}");
    assert!(seen.contains("step 29"), "{seen:?}");
    // Thirty writes over three seconds: read at every write they would be about thirty.
    assert!(reads <= 4, "{reads} reads for 30 writes");
}
