//! On a machine with a real NVIDIA GPU (first run on an H200, driver 580): the curated runbooks
//! read the real card, and `playbook run power-limit --local --dry-run` shows its real limits.
//! Ignored by default (CI has no GPU); run by hand with
//! `cargo test --test runbook runbook_device -- --ignored`. Nothing here can change the
//! machine: every run is a dry run, read-only, and declines every confirmation.

use crate::runbook_common;

use gpufleet::audit::AuditLog;
use gpufleet::commands::runbook::{RunRequest, run_command};
use gpufleet::runbook::{Catalog, RebootOptions, Target};
use gpufleet::telemetry::source::StopFlag;
use runbook_common::{Scripted, audit_steps};

fn dry_run(runbook: &str) -> (u8, String, AuditLog, tempfile::TempDir) {
    let state = tempfile::tempdir().unwrap();
    let audit = AuditLog::at(state.path().join("audit.jsonl"));
    let request = RunRequest {
        runbook: runbook.to_string(),
        target: Target::Local,
        params: Vec::new(),
        gpu: None,
        dry_run: true,
        read_only: true,
        reboot: RebootOptions::default(),
        restart: gpufleet::runbook::Restart::Reboot,
    };
    let mut out = Vec::new();
    let code = run_command(
        &Catalog::curated().unwrap(),
        request,
        &mut Scripted::new(&[]),
        &mut out,
        &audit,
        &StopFlag::default(),
    );
    let text = String::from_utf8(out).unwrap();
    println!("{text}");
    (code, text, audit, state)
}

#[test]
#[ignore = "needs an NVIDIA GPU; run on the device by hand"]
fn power_limit_dry_run_reads_the_real_limits() {
    let (code, text, audit, _state) = dry_run("power-limit");
    assert_eq!(code, 0, "{text}");
    // The H200: 200 W .. 700 W, default 700 W.
    assert!(text.contains("| 0, 200.00, 700.00, 700.00, "), "{text}");
    assert!(text.contains("proposed watts=700"), "{text}");
    assert!(text.contains("dry run: not run: change step"), "{text}");
    let entries = audit.read_all().unwrap();
    assert!(entries.iter().all(|e| e.dry_run));
    assert_eq!(
        audit_steps(&audit)
            .into_iter()
            .map(|(s, _)| s)
            .collect::<Vec<_>>(),
        vec!["read-limits", "whoami"]
    );
}

#[test]
#[ignore = "needs an NVIDIA GPU; run on the device by hand"]
fn the_other_runbooks_read_the_real_card() {
    let (code, text, _, _state) = dry_run("cuda-mismatch");
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("no reinstall needed"), "{text}");
    for runbook in ["throttle", "ecc-remap", "gpu-lost", "driver-lost"] {
        let (code, text, audit, _state) = dry_run(runbook);
        assert_eq!(code, 0, "{runbook}: {text}");
        assert!(audit.read_all().unwrap().iter().all(|e| e.dry_run));
    }
}
