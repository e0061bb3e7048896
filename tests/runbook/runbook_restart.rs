//! The gpu-lost runbook on a container host, over a real sshd: the reboot step restarts the
//! instance through the provider (vast.ai's reboot on a loopback server, the token never
//! shown) instead of running `reboot`, then waits for the host, reconnects and re-checks; a
//! container without a provider table is told plainly that `reboot` restarts nothing there.

use crate::common;
use crate::release_server as server;
use crate::runbook_common;

use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::sshd::Sshd;
use gpufleet::audit::AuditLog;
use gpufleet::commands::runbook::{RunRequest, run_command};
use gpufleet::config;
use gpufleet::release::SendOptions;
use gpufleet::remote::HostKind;
use gpufleet::runbook::restart::decide;
use gpufleet::runbook::{Catalog, EXIT_OK, EXIT_REFUSED, RebootOptions, Restart, Target};
use gpufleet::telemetry::source::StopFlag;
use runbook_common::{FakeDir, Scripted, audit_steps, install_fakes, steps};
use server::{Server, answer};

const TOKEN: &str = "vast-key-0c4e7b21-SECRET";

/// The `[hosts.release]` table of a vast.ai host whose API is `base_url`.
fn vast_table(base_url: &str, extra: &str) -> config::ReleaseConfig {
    let text = format!(
        "[[hosts]]\nname = \"h200\"\nssh = \"root@h.example.com:22\"\n[hosts.release]\n\
         provider = \"vast\"\ninstance_id = \"12345\"\ntoken_env = \"VAST_KEY\"\n\
         base_url = \"{base_url}\"\n{extra}"
    );
    let config = config::parse(&text, Path::new("c.toml")).unwrap();
    config.hosts[0].release.clone().unwrap()
}

fn env(name: &str) -> Option<String> {
    (name == "VAST_KEY").then(|| TOKEN.to_string())
}

fn quick() -> SendOptions {
    SendOptions {
        connect_timeout_ms: 2_000,
        total_timeout_ms: 2_000,
    }
}

#[test]
fn a_lost_gpu_on_a_container_is_restarted_through_the_provider_and_rechecked() {
    let Some(mut sshd) = Sshd::start() else {
        return;
    };
    install_fakes(&sshd.dir().join("bin"));
    let fake = FakeDir::at(sshd.dir());
    fake.set_scenario("gpu-lost");
    let state = tempfile::tempdir().unwrap();
    let audit = AuditLog::at(state.path().join("audit.jsonl"));
    let target = Target::Remote(
        sshd.remote_host("h200"),
        common::test_options(&sshd.trusted_known_hosts()),
    );
    let server = Server::start(vec![answer(200, r#"{"success": true}"#)]);
    let table = vast_table(&server.base_url, "");
    let restart = decide(
        "h200",
        Some(&table),
        Some(HostKind::Container),
        &env,
        quick(),
    );
    assert!(matches!(restart, Restart::Provider { .. }), "{restart:?}");

    // Plays the provider restarting the container: once the reboot request arrived, the host
    // is marked restarted (the fakes answer as a healthy host from then on), the sshd and its
    // sessions are killed, and after a pause it listens again on the same port.
    let seen = server.requests_handle();
    let rebooted = fake.dir.join("rebooted");
    let (done_tx, done_rx) = mpsc::channel();
    let watcher = std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(60);
        while seen.lock().unwrap().is_empty() && Instant::now() < deadline {
            if done_rx.try_recv().is_ok() {
                return sshd;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        std::fs::write(&rebooted, "").unwrap();
        sshd.kill();
        std::thread::sleep(Duration::from_millis(1_500));
        sshd.restart();
        sshd
    });
    let request = RunRequest {
        runbook: "gpu-lost".to_string(),
        target,
        params: Vec::new(),
        gpu: None,
        dry_run: false,
        read_only: false,
        reboot: RebootOptions {
            probe_timeout: Duration::from_secs(5),
            down_within: Duration::from_secs(30),
            up_within: Duration::from_secs(30),
            backoff_first: Duration::from_millis(200),
            backoff_max: Duration::from_secs(1),
            ..RebootOptions::default()
        },
        restart,
    };
    let mut answers = Scripted::new(&[("bug-report", false), ("reboot", true)]);
    let catalog = Catalog::curated().unwrap();
    let mut out = Vec::new();
    let code = run_command(
        &catalog,
        request,
        &mut answers,
        &mut out,
        &audit,
        &StopFlag::default(),
    );
    let _ = done_tx.send(());
    let _sshd = watcher.join().unwrap();
    let text = String::from_utf8(out).unwrap();
    assert_eq!(code, EXIT_OK, "{text}");

    let requests = server.requests();
    assert_eq!(requests.len(), 1, "{text}");
    assert_eq!(requests[0].method, "PUT");
    assert_eq!(requests[0].path, "/api/v0/instances/reboot/12345/");
    assert_eq!(
        requests[0].header("authorization"),
        Some(format!("Bearer {TOKEN}").as_str())
    );
    assert!(
        fake.calls("reboot").is_empty(),
        "reboot never ran on the host"
    );
    assert!(
        text.contains("restart through the provider: PUT http://127.0.0.1:"),
        "{text}"
    );
    assert!(text.contains("answered again"), "{text}");
    assert!(
        text.contains("| 0, 00000000:00:06.0, NVIDIA H200"),
        "the re-check ran after the restart: {text}"
    );
    assert!(!text.contains(TOKEN), "{text}");
    let log = std::fs::read_to_string(audit.path()).unwrap();
    assert!(!log.contains(TOKEN), "{log}");
    assert_eq!(
        audit_steps(&audit),
        steps(&[
            ("whoami", "ok"),
            ("kernel-lines", "ok"),
            ("smi", "failed"),
            ("reboot", "ok"),
            ("smi", "ok"),
        ])
    );
}

#[test]
fn a_container_without_a_provider_table_is_told_reboot_restarts_nothing() {
    let Some(sshd) = Sshd::start() else {
        return;
    };
    install_fakes(&sshd.dir().join("bin"));
    let fake = FakeDir::at(sshd.dir());
    fake.set_scenario("gpu-lost");
    let state = tempfile::tempdir().unwrap();
    let audit = AuditLog::at(state.path().join("audit.jsonl"));
    let restart = decide("h200", None, Some(HostKind::Container), &env, quick());
    let request = RunRequest {
        runbook: "gpu-lost".to_string(),
        target: Target::Remote(
            sshd.remote_host("h200"),
            common::test_options(&sshd.trusted_known_hosts()),
        ),
        params: Vec::new(),
        gpu: None,
        dry_run: false,
        read_only: false,
        reboot: RebootOptions::default(),
        restart,
    };
    let mut answers = Scripted::new(&[("bug-report", false), ("reboot", true)]);
    let mut out = Vec::new();
    let code = run_command(
        &Catalog::curated().unwrap(),
        request,
        &mut answers,
        &mut out,
        &audit,
        &StopFlag::default(),
    );
    let text = String::from_utf8(out).unwrap();
    assert_eq!(code, EXIT_REFUSED, "{text}");
    assert!(
        text.contains("h200 is a container: reboot inside it restarts nothing"),
        "{text}"
    );
    assert!(text.contains("provider's site"), "{text}");
    assert!(fake.calls("reboot").is_empty());
    assert!(
        !answers.asked.contains(&"reboot".to_string()),
        "not even asked"
    );
}

/// `restart = "reboot"` forces a reboot, `restart = "provider"` the provider, whatever the host
/// said; a machine reboots; AutoDL, which documents no restart, is a refusal naming why.
#[test]
fn the_table_decides_over_what_the_host_says() {
    let url = "http://127.0.0.1:9";
    let forced = vast_table(url, "restart = \"reboot\"\n");
    let restart = decide(
        "h200",
        Some(&forced),
        Some(HostKind::Container),
        &env,
        quick(),
    );
    assert_eq!(restart, Restart::Reboot);

    let provider = vast_table(url, "restart = \"provider\"\n");
    let restart = decide(
        "h200",
        Some(&provider),
        Some(HostKind::Machine),
        &env,
        quick(),
    );
    assert!(matches!(restart, Restart::Provider { .. }), "{restart:?}");

    let plain = vast_table(url, "");
    let restart = decide("h200", Some(&plain), Some(HostKind::Machine), &env, quick());
    assert_eq!(restart, Restart::Reboot);
    // No answer from the host: vast.ai rents containers.
    let restart = decide("h200", Some(&plain), None, &env, quick());
    assert!(matches!(restart, Restart::Provider { .. }), "{restart:?}");

    let text = format!(
        "[[hosts]]\nname = \"a\"\nssh = \"root@h.example.com:22\"\n[hosts.release]\n\
         provider = \"autodl\"\ninstance_id = \"u-1\"\ntoken_env = \"VAST_KEY\"\n\
         base_url = \"{url}\"\n"
    );
    let config = config::parse(&text, Path::new("c.toml")).unwrap();
    let autodl = config.hosts[0].release.clone().unwrap();
    let Restart::Nothing { why } = decide("a", Some(&autodl), None, &env, quick()) else {
        panic!("AutoDL has no restart");
    };
    assert!(why.contains("AutoDL's API documents no restart"), "{why}");
}

/// Before a run, the host is asked what it is over SSH: this machine's real answer (a container
/// marker, else systemd-detect-virt) decides between the refusal and `reboot` when the host has
/// no provider table.
#[test]
fn the_host_is_asked_what_it_is_before_the_run() {
    let container = Path::new("/.dockerenv").exists() || Path::new("/run/.containerenv").exists();
    let machine = std::process::Command::new("systemd-detect-virt")
        .arg("-c")
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "none");
    if !container && !machine {
        eprintln!("skipping: this machine does not say what it is");
        return;
    }
    let Some(sshd) = Sshd::start() else {
        return;
    };
    let target = Target::Remote(
        sshd.remote_host("h200"),
        common::test_options(&sshd.trusted_known_hosts()),
    );
    let restart = gpufleet::runbook::restart::for_target(&target, None, &env, &StopFlag::default());
    if container {
        let Restart::Nothing { why } = restart else {
            panic!("a container without a table: {restart:?}");
        };
        assert!(why.contains("reboot inside it restarts nothing"), "{why}");
    } else {
        assert_eq!(restart, Restart::Reboot);
    }
    // A table that says `reboot` is taken at its word, without asking.
    let table = vast_table("http://127.0.0.1:9", "restart = \"reboot\"\n");
    let restart =
        gpufleet::runbook::restart::for_target(&target, Some(&table), &env, &StopFlag::default());
    assert_eq!(restart, Restart::Reboot);
}
