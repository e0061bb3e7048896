//! Tests of `channel_run.rs`: lines, budgets, floods and passed bytes.

use super::*;

const ROOMY: Budget = Budget {
    window: Duration::from_secs(60),
    lines: 1_000,
    bytes: 1 << 30,
};

#[test]
fn splits_lines_across_reads_and_drops_an_overlong_one() {
    let mut job = ChannelRun::new(String::new(), ROOMY);
    let mut out = Vec::new();
    job.take(b"0, GPU-a\r\n1, G", &mut out);
    job.take(b"PU-b\n\npartial", &mut out);
    assert_eq!(
        out,
        vec![
            RunEvent::Line("0, GPU-a".into()),
            RunEvent::Line("1, GPU-b".into())
        ]
    );
    job.flush(&mut out);
    assert_eq!(out.last(), Some(&RunEvent::Line("partial".into())));
    out.clear();
    // A line that never ends keeps no more than the cap, and is not passed on cut short.
    for _ in 0..40 {
        job.take(&[b'x'; 4096], &mut out);
        assert!(job.partial.len() <= MAX_LINE_BYTES);
    }
    job.take(b"\nnext\n", &mut out);
    assert_eq!(out, vec![RunEvent::Line("next".into())]);
}

#[test]
fn more_lines_than_the_budget_is_a_flood_and_nothing_after_it_passes() {
    let budget = Budget { lines: 3, ..ROOMY };
    let mut job = ChannelRun::new(String::new(), budget);
    let mut out = Vec::new();
    job.take(b"a\nb\nc\nd\ne\n", &mut out);
    assert_eq!(out.len(), 4, "{out:?}");
    assert_eq!(out[2], RunEvent::Line("c".into()));
    assert_eq!(
        out[3],
        RunEvent::Flooded(Flood {
            lines: 4,
            bytes: 10,
            window: budget.window
        })
    );
    assert!(job.flooded);
}

#[test]
fn more_bytes_than_the_budget_is_a_flood_even_without_a_newline() {
    let budget = Budget {
        bytes: 10_000,
        ..ROOMY
    };
    let mut job = ChannelRun::new(String::new(), budget);
    let mut out = Vec::new();
    for _ in 0..3 {
        job.take(&[b'x'; 4096], &mut out);
    }
    assert!(matches!(&out[..], [RunEvent::Flooded(f)] if f.bytes == 12_288 && f.lines == 0));
}

#[test]
fn a_new_window_starts_the_count_again() {
    let budget = Budget {
        window: Duration::from_millis(30),
        lines: 2,
        ..ROOMY
    };
    let mut job = ChannelRun::new(String::new(), budget);
    let mut out = Vec::new();
    job.take(b"a\nb\n", &mut out);
    std::thread::sleep(Duration::from_millis(40));
    job.take(b"c\nd\n", &mut out);
    assert_eq!(out.len(), 4, "{out:?}");
    assert!(!job.flooded);
}

#[test]
fn passed_bytes_arrive_as_they_came_and_their_line_ends_count_against_the_budget() {
    let mut job = ChannelRun::new(String::new(), ROOMY);
    job.pass_bytes();
    let mut out = Vec::new();
    job.take(b" 10%|\xe2\x96", &mut out);
    job.take(b"\x88| 1/10 [00:01<00:09]\r 20%", &mut out);
    assert_eq!(
        out,
        vec![
            RunEvent::Bytes(b" 10%|\xe2\x96".to_vec()),
            RunEvent::Bytes(b"\x88| 1/10 [00:01<00:09]\r 20%".to_vec()),
        ]
    );
    job.flush(&mut out);
    assert_eq!(out.len(), 2, "nothing is held back as a line");

    let budget = Budget { lines: 3, ..ROOMY };
    let mut job = ChannelRun::new(String::new(), budget);
    job.pass_bytes();
    let mut out = Vec::new();
    job.take(b"a\rb\nc\r", &mut out);
    assert!(!job.flooded);
    job.take(b"d\r", &mut out);
    assert!(job.flooded, "four updates are over a budget of three");
    assert!(matches!(out.last(), Some(RunEvent::Flooded(f)) if f.lines == 4));
}

#[test]
fn a_line_with_bytes_that_are_not_utf8_keeps_the_rest() {
    let mut job = ChannelRun::new(String::new(), ROOMY);
    let mut out = Vec::new();
    job.take(b"GPU \xff 0\n", &mut out);
    assert_eq!(out, vec![RunEvent::Line("GPU \u{fffd} 0".into())]);
}

#[test]
fn a_stopped_job_reports_nothing_more() {
    let mut job = ChannelRun::new(String::new(), ROOMY);
    job.stop();
    assert!(job.is_done(), "no channel yet: nothing to close");
    assert!(job.is_quiet());
    let mut out = Vec::new();
    job.exited(Some(0), &mut out);
    assert!(out.is_empty());
}
