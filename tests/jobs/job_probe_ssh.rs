//! A host whose job goes on, over real sshd: once the job is found, each process list carries
//! the job's probe, so listing a host's processes runs one command, not a second channel for the
//! probe after it (what the host pays: a channel, a shell; what the console pays: a channel's
//! round trips), and the job stays known with fresh figures at every list. Its log is read
//! every half minute while nobody has the host open, and at once and every few seconds when
//! someone does.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::sshd::Sshd;
use common::{channel, test_options};
use gpufleet::fleet::{HostEvent, HostId};
use gpufleet::remote::spawn_link;
use gpufleet::telemetry::source::Backlogs;

const WAIT: Duration = Duration::from_secs(15);

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/training-logs")
        .join(name)
}

/// A training job whose stdout is `log`, killed on drop.
struct Job(Child);

impl Drop for Job {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Commands sshd started (its log at `VERBOSE` says `Starting session: command` for each exec).
fn commands_started(sshd: &Sshd) -> usize {
    sshd.log().matches("Starting session: command").count()
}

fn lists_job(pid: u32) -> impl Fn(HostId, &HostEvent) -> bool {
    move |_, e| matches!(e, HostEvent::Jobs { jobs, .. } if jobs.iter().any(|j| j.pid == pid))
}

#[test]
fn a_known_jobs_probe_rides_on_the_process_list() {
    let Some(sshd) = Sshd::start() else { return };
    sshd.set_scenario("healthy");
    let dir = tempfile::tempdir().expect("temp");
    let log = dir.path().join("train.log");
    let out = std::fs::File::create(&log).expect("log");
    let script = format!(
        "cat '{}'; exec sleep 300",
        fixture("hf_plateau.log").display()
    );
    let job = Job(Command::new("sh")
        .args(["-c", &script])
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(Stdio::null())
        .spawn()
        .expect("job"));
    let pid = job.0.id();
    std::fs::write(sshd.dir().join("apps_pids"), pid.to_string()).expect("apps_pids");

    let (sink, mut events) = channel();
    // The process list every second, looked at or not.
    let opts = test_options(&sshd.trusted_known_hosts());
    let link = spawn_link(sshd.remote_host("h200"), 0, sink, opts).expect("spawn");
    events.expect(WAIT, "the job found", lists_job(pid));
    events.expect(
        WAIT,
        "its log read",
        |_, e| matches!(e, HostEvent::JobLog { pid: p, .. } if *p == pid),
    );

    let is_list = |_: HostId, e: &HostEvent| matches!(e, HostEvent::Processes { .. });
    let lists_before = events.count(is_list);
    let jobs_before = events.count(lists_job(pid));
    let commands_before = commands_started(&sshd);
    events.drain_for(Duration::from_secs(5));
    let lists = events.count(is_list) - lists_before;
    let commands = commands_started(&sshd) - commands_before;
    let jobs = events.count(lists_job(pid)) - jobs_before;
    link.stop_and_join();

    assert!(lists >= 3, "a list a second, got {lists} in 5 s");
    // One command a list (a list under way at either end of the window may count once more);
    // a probe of its own after each list would make it two.
    assert!(
        commands <= lists + 1,
        "{commands} commands for {lists} process lists:\n{}",
        sshd.log()
    );
    // Every list still says what the job is: it is probed each time.
    assert!(jobs + 1 >= lists, "{jobs} job listings for {lists} lists");
    let last = events
        .seen
        .iter()
        .rev()
        .find_map(|(_, e, _)| match e {
            HostEvent::Jobs { jobs, .. } => jobs.iter().find(|j| j.pid == pid).cloned(),
            _ => None,
        })
        .expect("a listing of the job");
    assert!(last.elapsed_s.is_some(), "{last:?}");
    assert!(last.command.contains("sleep"), "{last:?}");
    assert!(
        last.log.as_deref().is_some_and(|l| l.contains("train.log")),
        "{last:?}"
    );
    drop(job);
}

/// The text of the job's log reads seen since event `from`, and whether one restarted the log.
fn log_reads(events: &common::Events, from: usize, pid: u32) -> (String, bool) {
    let mut text = String::new();
    let mut restarted = false;
    for (_, e, _) in &events.seen[from..] {
        if let HostEvent::JobLog {
            pid: p,
            restart,
            text: t,
            ..
        } = e
            && *p == pid
        {
            text.push_str(t);
            restarted |= *restart;
        }
    }
    (text, restarted)
}

#[test]
fn a_jobs_log_is_read_at_once_and_often_when_its_host_is_opened() {
    let Some(sshd) = Sshd::start() else { return };
    sshd.set_scenario("healthy");
    let dir = tempfile::tempdir().expect("temp");
    let log = dir.path().join("train.log");
    let out = std::fs::File::create(&log).expect("log");
    // The job prints what it finds in `next`, once a second.
    let next = dir.path().join("next");
    std::fs::write(&next, "").expect("next");
    let script = format!(
        "cat '{}'; while :; do cat '{n}'; : > '{n}'; sleep 1; done",
        fixture("hf_plateau.log").display(),
        n = next.display()
    );
    let job = Job(Command::new("sh")
        .args(["-c", &script])
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(Stdio::null())
        .spawn()
        .expect("job"));
    let pid = job.0.id();
    std::fs::write(sshd.dir().join("apps_pids"), pid.to_string()).expect("apps_pids");
    let (sink, mut events) = channel();
    let link = spawn_link(
        sshd.remote_host("h200"),
        0,
        sink,
        test_options(&sshd.trusted_known_hosts()),
    )
    .expect("spawn");
    let backlogs = Backlogs::arm(std::slice::from_ref(&link));
    events.expect(
        WAIT,
        "its log read",
        |_, e| matches!(e, HostEvent::JobLog { pid: p, .. } if *p == pid),
    );

    // Nobody looks: what the job prints now is not read for half a minute.
    let from = events.seen.len();
    std::fs::write(&next, "step 9001 unwatched\n").expect("next");
    events.drain_for(Duration::from_secs(6));
    let (text, _) = log_reads(&events, from, pid);
    assert!(
        !text.contains("step 9001"),
        "read while nobody looked: {text:?}"
    );

    // The host is opened: its log is read again at once, from its tail, with that line.
    let from = events.seen.len();
    backlogs.look_at(Some(0));
    events.drain_for(Duration::from_secs(4));
    let (text, restarted) = log_reads(&events, from, pid);
    assert!(restarted, "the log read anew when the host was opened");
    assert!(text.contains("step 9001"), "{text:?}");

    // And then every few seconds.
    let from = events.seen.len();
    std::fs::write(&next, "step 9002 watched\n").expect("next");
    events.drain_for(Duration::from_secs(8));
    let (text, _) = log_reads(&events, from, pid);
    assert!(text.contains("step 9002"), "{text:?}");
    link.stop_and_join();
    drop(job);
}
