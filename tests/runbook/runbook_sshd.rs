//! Runbooks end to end over a real sshd, against the fake `nvidia-smi`, `sudo`, `reboot`, `dmesg`
//! and friends of `tests/fixtures/playbook`: a power limit applied, verified and undone; a
//! container's refusal explained; a lost GPU brought back by a reboot; dry runs and read-only
//! runs that change nothing; one audit line per step that ran.

use crate::common;
use crate::runbook_common;

use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::sshd::Sshd;
use gpufleet::audit::AuditLog;
use gpufleet::commands::runbook::{RunRequest, UndoRequest, run_command, undo_command};
use gpufleet::runbook::{
    AssumeYes, Catalog, Confirmer, EXIT_CANCELLED, EXIT_FAILED, EXIT_OK, EXIT_REFUSED, EXIT_USAGE,
    RebootOptions, Target, UndoStore,
};
use gpufleet::telemetry::source::StopFlag;
use runbook_common::{FakeDir, Scripted, audit_steps, install_fakes, steps};

struct Host {
    sshd: Sshd,
    fake: FakeDir,
    audit: AuditLog,
    _state: tempfile::TempDir,
}

/// A test sshd whose remote PATH starts with the playbook fakes; `None` when sshd tests
/// cannot run here.
fn host() -> Option<Host> {
    let sshd = Sshd::start()?;
    // The harness puts its own bin first on the remote PATH; the playbook fakes go there too.
    install_fakes(&sshd.dir().join("bin"));
    let state = tempfile::tempdir().unwrap();
    Some(Host {
        fake: FakeDir::at(sshd.dir()),
        audit: AuditLog::at(state.path().join("audit.jsonl")),
        sshd,
        _state: state,
    })
}

impl Host {
    fn target(&self) -> Target {
        let options = common::test_options(&self.sshd.trusted_known_hosts());
        Target::Remote(self.sshd.remote_host("h200"), options)
    }

    fn request(&self, runbook: &str, params: &[&str]) -> RunRequest {
        RunRequest {
            runbook: runbook.to_string(),
            target: self.target(),
            params: params.iter().map(|p| p.to_string()).collect(),
            gpu: None,
            dry_run: false,
            read_only: false,
            reboot: RebootOptions::default(),
            restart: gpufleet::runbook::Restart::Reboot,
        }
    }

    fn run(&self, request: RunRequest, confirmer: &mut dyn Confirmer) -> (u8, String) {
        let catalog = Catalog::curated().unwrap();
        let mut out = Vec::new();
        let code = run_command(
            &catalog,
            request,
            confirmer,
            &mut out,
            &self.audit,
            &StopFlag::default(),
        );
        (code, String::from_utf8(out).unwrap())
    }

    fn undo(&self) -> (u8, String) {
        let catalog = Catalog::curated().unwrap();
        let mut out = Vec::new();
        let request = UndoRequest {
            target: self.target(),
            dry_run: false,
            read_only: false,
        };
        let code = undo_command(
            &catalog,
            request,
            &mut AssumeYes,
            &mut out,
            &self.audit,
            &StopFlag::default(),
        );
        (code, String::from_utf8(out).unwrap())
    }
}

#[test]
fn a_power_limit_is_applied_verified_and_undone() {
    let Some(host) = host() else { return };
    let started = Instant::now();
    let (code, text) = host.run(host.request("power-limit", &["watts=250"]), &mut AssumeYes);
    assert_eq!(code, EXIT_OK, "{text}");
    assert!(text.contains("$ nvidia-smi -i 0 -pl 250"), "{text}");
    assert!(
        text.contains("| Power limit for GPU 00000000:00:06.0 was set to 250.00 W from 700.00 W."),
        "{text}"
    );
    assert!(text.contains("| 250.00"), "{text}");
    assert_eq!(host.fake.power_limit(), "250.00");
    assert_eq!(
        audit_steps(&host.audit),
        steps(&[
            ("read-limits", "ok"),
            ("whoami", "ok"),
            ("apply", "ok"),
            ("verify", "ok")
        ])
    );
    let entries = host.audit.read_all().unwrap();
    assert_eq!(entries[2].command, "nvidia-smi -i 0 -pl 250");
    assert_eq!(entries[2].host, "h200");
    assert_eq!(entries[2].exit_status, Some(0));

    let (code, text) = host.undo();
    assert_eq!(code, EXIT_OK, "{text}");
    assert!(
        text.contains("Restore GPU 0's power limit to 700.00 W"),
        "{text}"
    );
    assert!(text.contains("$ nvidia-smi -i 0 -pl 700.00"), "{text}");
    assert_eq!(host.fake.power_limit(), "700.00");
    let pl_calls: Vec<String> = host
        .fake
        .calls("nvidia-smi")
        .into_iter()
        .filter(|c| c.contains("-pl"))
        .collect();
    assert_eq!(pl_calls, vec!["-i 0 -pl 250", "-i 0 -pl 700.00"]);
    assert_eq!(audit_steps(&host.audit).len(), 6);
    assert_eq!(
        audit_steps(&host.audit)[4..],
        steps(&[("undo", "ok"), ("undo-verify", "ok")])[..]
    );
    assert!(
        UndoStore::beside(host.audit.path())
            .latest("h200")
            .unwrap()
            .is_none()
    );
    let (code, text) = host.undo();
    assert_eq!(code, EXIT_OK);
    assert!(text.contains("nothing to undo"), "{text}");
    eprintln!("apply + undo over sshd: {:?}", started.elapsed());
}

#[test]
fn a_containers_refusal_is_explained_and_nothing_else_runs() {
    let Some(host) = host() else { return };
    host.fake.set_scenario("container");
    let (code, text) = host.run(host.request("power-limit", &["watts=250"]), &mut AssumeYes);
    assert_eq!(code, EXIT_FAILED, "{text}");
    assert!(
        text.contains(
            "| Failed to set power management limit for GPU 00000000:00:06.0: Insufficient Permissions"
        ),
        "{text}"
    );
    assert!(text.contains("CAP_SYS_ADMIN"), "{text}");
    assert!(text.contains("== stopped at apply"), "{text}");
    assert_eq!(host.fake.power_limit(), "700.00");
    assert_eq!(
        audit_steps(&host.audit),
        steps(&[("read-limits", "ok"), ("whoami", "ok"), ("apply", "failed")])
    );
    assert_eq!(host.audit.read_all().unwrap()[2].exit_status, Some(4));
    assert!(
        UndoStore::beside(host.audit.path())
            .latest("h200")
            .unwrap()
            .is_none()
    );
}

#[test]
fn without_root_the_change_goes_through_sudo_which_never_waits_for_a_password() {
    let Some(host) = host() else { return };
    host.fake.set_scenario("sudo-password");
    let (code, text) = host.run(host.request("power-limit", &["watts=250"]), &mut AssumeYes);
    assert_eq!(code, EXIT_FAILED, "{text}");
    assert!(text.contains("$ sudo -n nvidia-smi -i 0 -pl 250"), "{text}");
    assert!(text.contains("| sudo: a password is required"), "{text}");
    assert!(text.contains("gpufleet never types one"), "{text}");
    assert_eq!(host.fake.calls("sudo"), vec!["-n nvidia-smi -i 0 -pl 250"]);
    assert_eq!(host.fake.power_limit(), "700.00");
}

#[test]
fn a_value_outside_the_range_is_refused_before_anything_changes() {
    let Some(host) = host() else { return };
    let (code, text) = host.run(host.request("power-limit", &["watts=50"]), &mut AssumeYes);
    assert_eq!(code, EXIT_USAGE, "{text}");
    assert!(
        text.contains("watts=50 W is outside GPU 0's range 200..700 W"),
        "{text}"
    );
    assert_eq!(
        host.fake.calls("nvidia-smi"),
        vec![
            "--query-gpu=index,power.min_limit,power.max_limit,power.default_limit,enforced.power.limit --format=csv,noheader,nounits"
        ]
    );
    assert_eq!(audit_steps(&host.audit), steps(&[("read-limits", "ok")]));
}

#[test]
fn a_dry_run_changes_nothing() {
    let Some(host) = host() else { return };
    let mut request = host.request("power-limit", &["watts=250"]);
    request.dry_run = true;
    let (code, text) = host.run(request, &mut AssumeYes);
    assert_eq!(code, EXIT_OK, "{text}");
    assert!(text.contains("$ nvidia-smi -i 0 -pl 250"), "{text}");
    assert!(
        text.contains("$ nvidia-smi -i 0 --query-gpu=enforced.power.limit"),
        "{text}"
    );
    let calls = host.fake.calls("nvidia-smi");
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert!(calls.iter().all(|c| !c.contains("-pl")), "{calls:?}");
    assert_eq!(host.fake.power_limit(), "700.00");
    let entries = host.audit.read_all().unwrap();
    assert_eq!(entries.len(), 2);
    assert!(entries.iter().all(|e| e.dry_run));
}

#[test]
fn read_only_refuses_changes() {
    let Some(host) = host() else { return };
    let mut request = host.request("power-limit", &["watts=250"]);
    request.read_only = true;
    let (code, text) = host.run(request, &mut AssumeYes);
    assert_eq!(code, EXIT_REFUSED, "{text}");
    assert!(host.fake.calls("nvidia-smi").is_empty(), "{text}");
    assert!(audit_steps(&host.audit).is_empty());

    // A runbook whose disruptive steps are conditional reads until it reaches one.
    host.fake.set_scenario("gpu-lost");
    let mut request = host.request("gpu-lost", &[]);
    request.read_only = true;
    let (code, text) = host.run(request, &mut AssumeYes);
    assert_eq!(code, EXIT_REFUSED, "{text}");
    assert!(text.contains("== refused reboot: --read-only"), "{text}");
    assert!(host.fake.calls("reboot").is_empty());
    assert_eq!(
        audit_steps(&host.audit),
        steps(&[
            ("whoami", "ok"),
            ("kernel-lines", "ok"),
            ("smi", "failed"),
            ("bug-report", "failed"),
        ])
    );
}

#[test]
fn a_lost_gpu_comes_back_after_a_reboot_and_the_recheck_passes() {
    let Some(host) = host() else { return };
    host.fake.set_scenario("gpu-lost");
    let Host {
        mut sshd,
        fake,
        audit,
        _state,
    } = host;
    let target = {
        let options = common::test_options(&sshd.trusted_known_hosts());
        Target::Remote(sshd.remote_host("h200"), options)
    };
    // Plays the host going down and coming back: once the fake reboot has run, the sshd and
    // every session it serves are killed, and after a pause it listens again on the same port.
    let calls = fake.dir.join("reboot.calls");
    let (done_tx, done_rx) = mpsc::channel();
    let watcher = std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !calls.exists() && Instant::now() < deadline {
            if done_rx.try_recv().is_ok() {
                return sshd;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
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
        restart: gpufleet::runbook::Restart::Reboot,
    };
    let mut answers = Scripted::new(&[("bug-report", false), ("reboot", true)]);
    let catalog = Catalog::curated().unwrap();
    let mut out = Vec::new();
    let started = Instant::now();
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
    assert!(
        text.contains("| NVRM: Xid (PCI:0000:5a:00): 79, GPU has fallen off the bus."),
        "{text}"
    );
    assert!(text.contains("the driver can no longer reach it"), "{text}");
    assert!(text.contains("Reset the GPU skipped"), "{text}");
    assert!(text.contains("is down"), "{text}");
    assert!(text.contains("answered again"), "{text}");
    assert!(
        text.contains("| 0, 00000000:00:06.0, NVIDIA H200"),
        "{text}"
    );
    assert_eq!(answers.asked, vec!["bug-report", "reboot"]);
    assert_eq!(fake.calls("reboot").len(), 1);
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
    eprintln!(
        "gpu-lost with reboot over sshd: {:?}\n{text}",
        started.elapsed()
    );
}

#[test]
fn a_driver_that_is_not_loaded_in_a_container_is_explained() {
    let Some(host) = host() else { return };
    host.fake.set_scenario("driver-not-loaded");
    let mut answers = Scripted::new(&[]);
    let (code, text) = host.run(host.request("driver-lost", &[]), &mut answers);
    // The reboot is proposed last and declined at its prompt.
    assert_eq!(code, EXIT_CANCELLED, "{text}");
    assert_eq!(answers.asked, vec!["reboot"]);
    assert!(
        text.contains("lsmod is not installed on h200 (exit 127)"),
        "{text}"
    );
    assert!(
        text.contains("the NVIDIA kernel module is not loaded"),
        "{text}"
    );
    assert!(
        text.contains("usually a kernel update without a DKMS rebuild"),
        "{text}"
    );
    assert!(text.contains("Unload the NVIDIA modules skipped"), "{text}");
    assert_eq!(
        audit_steps(&host.audit),
        steps(&[
            ("whoami", "ok"),
            ("lsmod", "failed"),
            ("kernel-module", "failed"),
            ("nvml", "failed"),
            ("dkms", "failed"),
        ])
    );
    assert!(host.fake.calls("modprobe").is_empty());
}
