//! The periodic queries over real sshd: a followed link runs the full query and the process
//! list through one long-lived shell each, not a channel (and a command started by sshd) per
//! run; a shell that dies is replaced, and a session whose shells keep dying goes back to a
//! channel per run.

use crate::common;

use std::time::{Duration, Instant};

use common::sshd::{Sshd, signal};
use common::{channel, test_options};
use gpufleet::fleet::HostEvent;
use gpufleet::remote::spawn_link;
use gpufleet::telemetry::source::SourceHandle;

const WAIT: Duration = Duration::from_secs(10);

/// The commands sshd started for the links so far (one per exec'd channel).
fn sessions_started(sshd: &Sshd) -> usize {
    sshd.log().matches("Starting session: command").count()
}

/// Runs of the fake nvidia-smi asking for the process list so far.
fn process_runs(sshd: &Sshd) -> usize {
    sshd.calls("nvidia-smi")
        .iter()
        .filter(|c| c.contains("--query-compute-apps"))
        .count()
}

/// Runs of the full query (every field, not the stream's few) so far.
fn detail_runs(sshd: &Sshd) -> usize {
    sshd.calls("nvidia-smi")
        .iter()
        .filter(|c| c.contains("--query-gpu") && !c.contains("-lms"))
        .count()
}

/// The host's long-lived query shells (their end marker is on their command line; the
/// subshell a run is in has the same, and its parent is a shell).
fn shells(sshd: &Sshd) -> Vec<u32> {
    let marked: Vec<u32> = sshd
        .host_processes()
        .into_iter()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| c.windows(13).any(|w| w == b"gpufleet-end-"))
        })
        .collect();
    let parent = |pid: &u32| {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // The fields after the command name's closing parenthesis: state, then the parent.
        let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
        after
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse::<u32>().ok())
    };
    marked
        .iter()
        .copied()
        .filter(|pid| parent(pid).is_none_or(|p| !marked.contains(&p)))
        .collect()
}

/// The full query, the process list and the probe of the GPU processes it names.
const SHELLS: usize = 3;

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let until = Instant::now() + Duration::from_secs(20);
    while !done() {
        assert!(Instant::now() < until, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn options(sshd: &Sshd) -> gpufleet::remote::LinkOptions {
    let mut opts = test_options(&sshd.trusted_known_hosts());
    opts.processes_interval_ms = 300;
    opts.processes_unwatched_interval_ms = 300;
    opts.detail_interval_ms = 1_000;
    opts
}

/// A followed link to `sshd`, once its first process list has come.
fn follow(sshd: &Sshd) -> (SourceHandle, common::Events) {
    let (sink, mut events) = channel();
    let link = spawn_link(sshd.remote_host("h200"), 0, sink, options(sshd)).expect("spawn");
    events.expect(WAIT, "Processes", |_, e| {
        matches!(e, HostEvent::Processes { .. })
    });
    (link, events)
}

#[test]
fn the_periodic_queries_run_through_one_shell_each_without_a_channel_per_run() {
    let Some(sshd) = Sshd::start() else { return };
    let (link, mut events) = follow(&sshd);
    wait_until(
        "two process lists, two full queries and a shell for each query",
        || process_runs(&sshd) >= 2 && detail_runs(&sshd) >= 2 && shells(&sshd).len() == SHELLS,
    );
    let sessions = sessions_started(&sshd);
    let (processes, details) = (process_runs(&sshd), detail_runs(&sshd));

    wait_until(
        "eight more process lists and three more full queries",
        || process_runs(&sshd) >= processes + 8 && detail_runs(&sshd) >= details + 3,
    );
    // Each of those runs' answer reached the link as a process list of its own (the last may
    // still be on its way).
    let runs = process_runs(&sshd);
    events.drain_for(Duration::from_millis(500));
    let lists = events.count(|_, e| matches!(e, HostEvent::Processes { .. }));
    assert!(lists + 1 >= runs, "{lists} lists for {runs} runs");
    assert_eq!(
        sessions_started(&sshd),
        sessions,
        "no command was started for those runs:\n{}",
        sshd.log()
    );
    link.stop_and_join();
    wait_until("the shells to end with the link", || {
        shells(&sshd).is_empty()
    });
}

#[test]
fn a_shell_that_dies_is_replaced_and_a_session_whose_shells_keep_dying_runs_a_channel_each() {
    let Some(sshd) = Sshd::start() else { return };
    let (link, mut events) = follow(&sshd);
    wait_until("the shells", || shells(&sshd).len() == SHELLS);

    // One killed on the host: the next run of its query starts a new one.
    let first = shells(&sshd);
    signal(&first[..1], "KILL");
    wait_until("a new shell in its place", || {
        let now = shells(&sshd);
        now.len() == SHELLS && !now.contains(&first[0])
    });

    // A second one ends unasked: the session gives up on shells and runs a channel each.
    signal(&shells(&sshd)[..1], "KILL");
    wait_until("the shells gone", || shells(&sshd).is_empty());
    let runs = process_runs(&sshd);
    let sessions = sessions_started(&sshd);
    events.drain_for(Duration::from_millis(100));
    let seen = events.count(|_, e| matches!(e, HostEvent::Processes { .. }));
    wait_until("four more process lists", || {
        events.drain_for(Duration::from_millis(100));
        events.count(|_, e| matches!(e, HostEvent::Processes { .. })) >= seen + 4
    });
    assert!(process_runs(&sshd) >= runs + 4);
    assert!(shells(&sshd).is_empty(), "no shell was started again");
    assert!(
        sessions_started(&sshd) >= sessions + 4,
        "each run now has a channel and a command of its own"
    );
    assert_eq!(
        events.count(|_, e| matches!(e, HostEvent::Disconnected { .. })),
        0,
        "the link itself stayed up: {:#?}",
        events.kinds()
    );
    link.stop_and_join();
}
