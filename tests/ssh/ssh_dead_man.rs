//! The dead-man switch over a real sshd, in a home of its own: a followed link arms it at
//! connect, a second link (a reconnect, or another gpufleet on the same host) finds it armed
//! and starts no second one, a one-shot reading only asks how it stands, disarming stops it and
//! leaves nothing behind, and a home that cannot be written says so: not armed. A switch left
//! on a host whose config dropped it is disarmed by the gpufleet that armed it, and left to
//! another's (a teammate's).

use crate::common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::sshd::{Sshd, SshdOptions};
use common::{channel, test_options};
use gpufleet::config::DeadManPlan;
use gpufleet::fleet::HostEvent;
use gpufleet::fleet::dead_man::DeadManState;
use gpufleet::remote::{
    DeadManAnswer, DeadManStep, ExecRequest, RemoteHost, dead_man_command, dead_man_owner, exec,
    read_dead_man_answer, read_once, spawn_link,
};
use gpufleet::telemetry::source::{StopFlag, now_ms};

const WAIT: Duration = Duration::from_secs(20);

/// An sshd whose logins have `home` as `$HOME`.
fn sshd_at(home: &Path) -> Option<Sshd> {
    Sshd::start_with(&SshdOptions {
        home: Some(home.to_path_buf()),
        ..Default::default()
    })
}

/// The host with a switch that would `touch marker` after one minute.
fn host(sshd: &Sshd, marker: &Path) -> RemoteHost {
    let mut host = sshd.remote_host("h");
    host.dead_man = Some(DeadManPlan {
        after_minutes: 1,
        command: vec!["touch".into(), marker.display().to_string()],
    });
    host
}

/// An sshd of `home` whose host has a switch this gpufleet armed for ten minutes, and the
/// marker the switch's firing would touch.
fn armed_host(home: &Path) -> Option<(Sshd, RemoteHost, PathBuf)> {
    let sshd = sshd_at(home)?;
    let marker = home.join("stopped");
    let host = host(&sshd, &marker);
    assert!(matches!(
        run_step(&sshd, &host, DeadManStep::Arm { after_s: 600 }),
        DeadManAnswer::Armed { .. }
    ));
    Some((sshd, host, marker))
}

/// The switch of `home` stops, leaves no files on the host, and did not fire.
fn assert_disarmed_without_firing(home: &Path, marker: &Path) {
    wait_until("the switch to stop", || switches(home).is_empty());
    assert!(!home.join(".gpufleet").exists(), "files left on the host");
    assert!(!marker.exists(), "disarming must not stop the host");
}

/// The switch processes running on this machine for `home`.
fn switches(home: &Path) -> Vec<u32> {
    let wanted = home.join(".gpufleet/dead_man").display().to_string();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| {
                let words: Vec<&[u8]> = c.split(|b| *b == 0).collect();
                words.contains(&b"gpufleet-dead-man-switch".as_slice())
                    && words.contains(&wanted.as_bytes())
            })
        })
        .collect()
}

/// The first `DeadMan` state the link sends.
fn state(events: &mut common::Events) -> DeadManState {
    match events.expect(WAIT, "DeadMan", |_, e| {
        matches!(e, HostEvent::DeadMan { .. })
    }) {
        HostEvent::DeadMan { state, .. } => state,
        other => panic!("{other:?}"),
    }
}

/// The notice of a link to the host whose config has no `[hosts.dead_man]` (now).
fn stray_notice(sshd: &Sshd) -> gpufleet::words::Words {
    let mut without = sshd.remote_host("h");
    without.disarm_stray_switch = true;
    let (sink, mut events) = channel();
    let link =
        spawn_link(without, 0, sink, test_options(&sshd.trusted_known_hosts())).expect("spawn");
    let notice = events.expect(WAIT, "the notice", |_, e| {
        matches!(e, HostEvent::Notice { .. })
    });
    link.stop_and_join();
    match notice {
        HostEvent::Notice { text, .. } => text,
        other => panic!("{other:?}"),
    }
}

fn run_step(sshd: &Sshd, host: &RemoteHost, step: DeadManStep) -> DeadManAnswer {
    let argv = dead_man_command(step, host.dead_man.as_ref())
        .expect("command")
        .argv();
    let mut lines = Vec::new();
    let outcome = exec(
        host,
        &test_options(&sshd.trusted_known_hosts()),
        &ExecRequest {
            argv: &argv,
            stdin: None,
            timeout: Duration::from_secs(20),
        },
        &StopFlag::default(),
        &mut |l| lines.push(l.to_string()),
    )
    .expect("exec");
    read_dead_man_answer(&lines, outcome.exit_status)
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let until = Instant::now() + WAIT;
    while !done() {
        assert!(Instant::now() < until, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_link_arms_the_switch_once_however_many_connect_and_disarming_leaves_nothing() {
    let home = tempfile::tempdir().expect("home");
    let Some(sshd) = sshd_at(home.path()) else {
        return;
    };
    let marker: PathBuf = home.path().join("stopped");
    let host = host(&sshd, &marker);
    let opts = test_options(&sshd.trusted_known_hosts());

    let (sink, mut events) = channel();
    let before = now_ms();
    let first = spawn_link(host.clone(), 0, sink, opts.clone()).expect("spawn");
    let armed = state(&mut events);
    assert!(armed.armed, "{armed:?}");
    let deadline = armed.deadline_ms.expect("deadline");
    assert!(
        deadline >= before + 55_000 && deadline <= now_ms() + 65_000,
        "fires a minute from now: {armed:?}"
    );
    let dir = home.path().join(".gpufleet/dead_man");
    assert!(dir.join("deadline").is_file());
    let running = switches(home.path());
    assert_eq!(running.len(), 1, "{running:?}");

    // Another gpufleet on the same host, and then a reconnect: the same switch.
    let (sink, mut more) = channel();
    let second = spawn_link(host.clone(), 1, sink, opts.clone()).expect("spawn");
    assert!(state(&mut more).armed);
    first.stop_and_join();
    second.stop_and_join();
    let (sink, mut again) = channel();
    let third = spawn_link(host.clone(), 0, sink, opts.clone()).expect("spawn");
    assert!(state(&mut again).armed);
    third.stop_and_join();
    assert_eq!(
        switches(home.path()),
        running,
        "one switch, still the first"
    );

    // A one-shot reading asks how it stands and changes nothing.
    let (sink, mut once) = channel();
    read_once(&host, 0, &sink, &opts).expect("read once");
    let asked = state(&mut once);
    assert!(asked.armed, "{asked:?}");
    assert_eq!(switches(home.path()), running);

    assert_eq!(
        run_step(&sshd, &host, DeadManStep::Disarm),
        DeadManAnswer::Disarmed
    );
    assert_disarmed_without_firing(home.path(), &marker);
}

#[test]
fn a_home_that_cannot_be_written_shows_the_switch_not_armed() {
    // Not even root makes a directory in /proc.
    let Some(sshd) = sshd_at(Path::new("/proc")) else {
        return;
    };
    let scratch = tempfile::tempdir().expect("scratch");
    let host = host(&sshd, &scratch.path().join("stopped"));
    let (sink, mut events) = channel();
    let link = spawn_link(host, 0, sink, test_options(&sshd.trusted_known_hosts())).expect("spawn");
    let state = state(&mut events);
    link.stop_and_join();
    assert!(!state.armed, "{state:?}");
    let why = state.why_not.clone().expect("why");
    assert_eq!(why.key(), Some("dead_man.why_not_writable"));
    assert!(
        state.words().english().contains("NOT armed"),
        "{}",
        state.words().english()
    );
}

/// Runs what `gpufleet hold` asks on the sshd host, as its SSH runner does.
struct ExecRunner {
    host: RemoteHost,
    options: gpufleet::remote::LinkOptions,
}

impl gpufleet::release::HostRunner for ExecRunner {
    fn run(
        &self,
        _: &str,
        argv: &[String],
        on_line: &mut dyn FnMut(&str),
    ) -> Result<Option<i32>, String> {
        exec(
            &self.host,
            &self.options,
            &ExecRequest {
                argv,
                stdin: None,
                timeout: Duration::from_secs(20),
            },
            &StopFlag::default(),
            on_line,
        )
        .map(|outcome| outcome.exit_status)
        .map_err(|e| e.to_string())
    }
}

#[test]
fn hold_pushes_and_disarms_the_switch_with_an_audit_line_for_each() {
    use gpufleet::audit::{AuditKind, AuditLog};
    use gpufleet::commands::hold::{EXIT_HELD, Request, run_logged};
    let home = tempfile::tempdir().expect("home");
    let Some(sshd) = sshd_at(home.path()) else {
        return;
    };
    let marker = home.path().join("stopped");
    let text = format!(
        "[[hosts]]\nname = \"h\"\nssh = \"{}@127.0.0.1:{}\"\n[hosts.dead_man]\n\
         after_minutes = 1\ncommand = [\"touch\", \"{}\"]\n",
        sshd.user,
        sshd.port,
        marker.display()
    );
    let config = gpufleet::config::parse(&text, Path::new("c.toml")).expect("config");
    let runner = ExecRunner {
        host: sshd.remote_host("h"),
        options: test_options(&sshd.trusted_known_hosts()),
    };
    let state = tempfile::tempdir().expect("state");
    let log = AuditLog::at(state.path().join("audit.jsonl"));
    let audit = Ok(log.clone());
    let mut out = Vec::new();

    let push = Request {
        hours: 2,
        disarm: false,
    };
    let code = run_logged(&config, "h", push, &runner, &audit, &mut out);
    let said = String::from_utf8_lossy(&out).into_owned();
    assert_eq!(code, EXIT_HELD, "{said}");
    assert_eq!(switches(home.path()).len(), 1, "{said}");
    let entries = log.read_all().expect("audit");
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0].kind, AuditKind::DeadMan);
    assert_eq!(entries[0].host, "h");
    assert_eq!(entries[0].command, "gpufleet hold h --hours 2");
    assert_eq!(entries[0].outcome, "ok");

    let disarm = Request {
        hours: 2,
        disarm: true,
    };
    let code = run_logged(&config, "h", disarm, &runner, &audit, &mut out);
    assert_eq!(code, EXIT_HELD, "{}", String::from_utf8_lossy(&out));
    wait_until("the switch to stop", || switches(home.path()).is_empty());
    let entries = log.read_all().expect("audit");
    assert_eq!(entries.len(), 2, "{entries:?}");
    assert_eq!(entries[1].kind, AuditKind::DeadMan);
    assert_eq!(entries[1].command, "gpufleet hold h --disarm");
    assert_eq!(entries[1].outcome, "ok");
    assert!(!marker.exists(), "disarming must not stop the host");
}

#[test]
fn a_switch_left_on_a_host_whose_config_dropped_it_is_disarmed_on_connect() {
    let home = tempfile::tempdir().expect("home");
    let Some((sshd, _armed, marker)) = armed_host(home.path()) else {
        return;
    };
    assert_eq!(switches(home.path()).len(), 1);

    // The same host, its config without [hosts.dead_man] now.
    let text = stray_notice(&sshd);
    assert_eq!(text.key(), Some("dead_man_stray.disarmed"));
    assert_eq!(
        std::fs::read_to_string(home.path().join(".gpufleet/dead_man/owner")).ok(),
        None,
        "the owner's file goes with the switch"
    );
    assert!(text.english().contains("disarmed"), "{}", text.english());
    assert_disarmed_without_firing(home.path(), &marker);
}

#[test]
fn a_switch_another_gpufleet_armed_is_left_armed_on_a_host_whose_config_has_none() {
    let home = tempfile::tempdir().expect("home");
    let Some((sshd, with_switch, marker)) = armed_host(home.path()) else {
        return;
    };
    let owner = home.path().join(".gpufleet/dead_man/owner");
    assert_eq!(
        std::fs::read_to_string(&owner).expect("owner"),
        format!("{}\n", dead_man_owner()),
        "arming names who armed"
    );
    // A teammate armed it: their gpufleet wrote its own name (and a hostile host's bytes are
    // shown escaped).
    std::fs::write(&owner, "alice@laptop\u{1b}[2J\n").expect("owner");

    let text = stray_notice(&sshd);
    assert_eq!(text.key(), Some("dead_man_stray.kept"));
    let said = text.english();
    assert!(said.contains("alice@laptop"), "{said}");
    assert!(!said.contains('\u{1b}'), "{said:?}");
    assert_eq!(
        switches(home.path()).len(),
        1,
        "the teammate's switch runs on"
    );

    // Disarmed on purpose, it goes, whoever armed it.
    assert_eq!(
        run_step(&sshd, &with_switch, DeadManStep::Disarm),
        DeadManAnswer::Disarmed
    );
    assert_disarmed_without_firing(home.path(), &marker);
}
