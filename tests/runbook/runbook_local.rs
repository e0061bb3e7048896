//! The runner on this machine with the fake programs of `tests/fixtures/playbook` first on the
//! PATH: dry runs, range checks before anything changes, read-only, declined confirmations,
//! timeouts and cancels of the local executor.

use crate::runbook_common;

use std::time::{Duration, Instant};

use gpufleet::audit::AuditLog;
use gpufleet::runbook::{
    AssumeYes, Catalog, EXIT_CANCELLED, EXIT_OK, EXIT_REFUSED, EXIT_USAGE, ExecError, Executor,
    LocalExecutor, RunOptions, RunOutcome, TextObserver, Tools, UndoStore, parse_runbook, run,
};
use gpufleet::telemetry::source::StopFlag;
use runbook_common::{FakeDir, Scripted, audit_steps, install_fakes, steps};

struct Local {
    _tmp: tempfile::TempDir,
    fake: FakeDir,
    exec: LocalExecutor,
    audit: AuditLog,
    undo: UndoStore,
}

fn local() -> Local {
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    install_fakes(&bin);
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let exec = LocalExecutor::new("local")
        .with_env("PATH", path)
        .with_env("GPUFLEET_FAKE_DIR", tmp.path().display().to_string());
    let audit = AuditLog::at(tmp.path().join("state/audit.jsonl"));
    let undo = UndoStore::beside(audit.path());
    Local {
        fake: FakeDir::at(tmp.path()),
        _tmp: tmp,
        exec,
        audit,
        undo,
    }
}

/// Runs a curated runbook locally; returns the outcome and the text shown.
fn run_local(
    host: &mut Local,
    id: &str,
    params: &[(&str, &str)],
    options: &RunOptions,
    confirmer: &mut dyn gpufleet::runbook::Confirmer,
) -> (RunOutcome, String) {
    let catalog = Catalog::curated().unwrap();
    let book = catalog.get(id).unwrap();
    let given: Vec<(String, String)> = params
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let mut observer = TextObserver::new(Vec::new());
    let report = run(
        book,
        &given,
        options,
        Tools {
            exec: &mut host.exec,
            confirmer,
            observer: &mut observer,
            audit: &host.audit,
            undo: &host.undo,
            stop: &StopFlag::default(),
        },
    );
    let text = String::from_utf8(observer.into_inner()).unwrap();
    (report.outcome, text)
}

#[test]
fn a_dry_run_reads_the_limits_and_changes_nothing() {
    let mut host = local();
    let options = RunOptions {
        dry_run: true,
        ..RunOptions::default()
    };
    let (outcome, text) = run_local(&mut host, "power-limit", &[], &options, &mut AssumeYes);
    assert_eq!(outcome, RunOutcome::Completed, "{text}");
    assert!(
        text.contains("| 0, 200.00, 700.00, 700.00, 700.00"),
        "{text}"
    );
    assert!(text.contains("proposed watts=700"), "{text}");
    assert!(text.contains("$ nvidia-smi -i 0 -pl 700"), "{text}");
    assert!(text.contains("dry run: not run: change step"), "{text}");
    let calls = host.fake.calls("nvidia-smi");
    assert!(calls.iter().all(|c| !c.contains("-pl")), "{calls:?}");
    assert_eq!(
        audit_steps(&host.audit),
        steps(&[("read-limits", "ok"), ("whoami", "ok")])
    );
    assert!(host.audit.read_all().unwrap().iter().all(|e| e.dry_run));
}

#[test]
fn a_value_outside_the_cards_range_is_refused_before_any_change() {
    let mut host = local();
    for watts in ["900", "199.5"] {
        let (outcome, text) = run_local(
            &mut host,
            "power-limit",
            &[("watts", watts)],
            &RunOptions::default(),
            &mut AssumeYes,
        );
        assert_eq!(outcome.exit_code(), EXIT_USAGE, "{text}");
        assert!(text.contains("outside GPU 0's range 200..700 W"), "{text}");
        // Refused as soon as the range was read: not even the root check ran.
        assert!(!text.contains("id -u"), "{text}");
    }
    let calls = host.fake.calls("nvidia-smi");
    assert!(calls.iter().all(|c| !c.contains("-pl")), "{calls:?}");
    assert_eq!(host.fake.power_limit(), "700.00");
    assert_eq!(
        audit_steps(&host.audit),
        steps(&[("read-limits", "ok"), ("read-limits", "ok")])
    );
}

#[test]
fn bad_parameters_are_refused_before_anything_runs() {
    let mut host = local();
    for (params, says) in [
        (&[("watts", "lots")][..], "positive number"),
        (&[("wats", "250")][..], "no parameter \"wats\""),
        (&[("gpu", "3")][..], "GPU 3 is not on this host"),
    ] {
        let (outcome, text) = run_local(
            &mut host,
            "power-limit",
            params,
            &RunOptions::default(),
            &mut AssumeYes,
        );
        assert_eq!(outcome.exit_code(), EXIT_USAGE, "{text}");
        assert!(text.contains(says), "{text}");
    }
    // Only the GPU index needed the host's answer.
    assert_eq!(audit_steps(&host.audit), steps(&[("read-limits", "ok")]));
}

#[test]
fn read_only_refuses_before_anything_runs() {
    let mut host = local();
    let options = RunOptions {
        read_only: true,
        ..RunOptions::default()
    };
    let (outcome, text) = run_local(
        &mut host,
        "power-limit",
        &[("watts", "250")],
        &options,
        &mut AssumeYes,
    );
    assert_eq!(outcome.exit_code(), EXIT_REFUSED, "{text}");
    assert!(text.contains("--read-only"), "{text}");
    assert!(host.fake.calls("nvidia-smi").is_empty());
    assert!(host.fake.calls("id").is_empty());
    assert!(audit_steps(&host.audit).is_empty());
}

#[test]
fn an_unconfirmed_change_does_not_run() {
    let mut host = local();
    let mut nobody = Scripted::new(&[]);
    let (outcome, text) = run_local(
        &mut host,
        "power-limit",
        &[("watts", "250")],
        &RunOptions::default(),
        &mut nobody,
    );
    assert_eq!(outcome.exit_code(), EXIT_CANCELLED, "{text}");
    assert_eq!(nobody.asked, vec!["apply"]);
    assert_eq!(host.fake.power_limit(), "700.00");
    assert_eq!(
        audit_steps(&host.audit),
        steps(&[("read-limits", "ok"), ("whoami", "ok")])
    );
}

#[test]
fn a_local_reboot_is_refused() {
    let mut host = local();
    host.fake.set_scenario("gpu-lost");
    let (outcome, text) = run_local(
        &mut host,
        "gpu-lost",
        &[],
        &RunOptions::default(),
        &mut AssumeYes,
    );
    assert!(
        matches!(outcome, RunOutcome::Refused { ref step, .. } if step == "reboot"),
        "{text}"
    );
    assert!(text.contains("GPU is lost"), "{text}");
    assert!(
        text.contains("does not reboot the machine it runs on"),
        "{text}"
    );
    assert!(host.fake.calls("reboot").is_empty());
}

#[test]
fn the_throttle_runbook_reads_and_explains_an_idle_h200() {
    let mut host = local();
    let (outcome, text) = run_local(
        &mut host,
        "throttle",
        &[],
        &RunOptions::default(),
        &mut AssumeYes,
    );
    assert_eq!(outcome.exit_code(), EXIT_OK, "{text}");
    assert!(text.contains("Clocks Event Reasons"), "{text}");
    // Idle, nothing throttling: no explanation applies.
    assert!(!text.contains("=> "), "{text}");
    assert_eq!(audit_steps(&host.audit).len(), 3);
}

#[test]
fn a_missing_tool_is_explained() {
    let mut host = local();
    let book = parse_runbook(
        r#"
id = "missing"
title = "Missing"
summary = "Runs a tool that is not there."
[[steps]]
id = "run"
title = "Run it"
why = "To see."
danger = "read"
command = ["gpufleet-no-such-tool"]
"#,
        "test",
    )
    .unwrap();
    let mut observer = TextObserver::new(Vec::new());
    let report = run(
        &book,
        &[],
        &RunOptions::default(),
        Tools {
            exec: &mut host.exec,
            confirmer: &mut AssumeYes,
            observer: &mut observer,
            audit: &host.audit,
            undo: &host.undo,
            stop: &StopFlag::default(),
        },
    );
    let text = String::from_utf8(observer.into_inner()).unwrap();
    assert!(
        matches!(report.outcome, RunOutcome::Failed { .. }),
        "{text}"
    );
    assert!(
        text.contains("is not installed on local (exit 127)"),
        "{text}"
    );
    assert_eq!(audit_steps(&host.audit), steps(&[("run", "failed")]));
}

#[test]
fn a_timeout_kills_everything_the_command_started() {
    let mut exec = LocalExecutor::default();
    let started = Instant::now();
    let argv: Vec<String> = ["sh", "-c", "sleep 30 & sleep 30"]
        .map(String::from)
        .to_vec();
    let result = exec
        .run(
            &argv,
            Duration::from_millis(500),
            &StopFlag::default(),
            &mut |_| {},
        )
        .unwrap();
    assert!(result.timed_out);
    // The backgrounded sleep holds the output pipe: without the group kill this takes 30 s.
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_cancel_stops_a_running_command() {
    let mut exec = LocalExecutor::default();
    let stop = StopFlag::default();
    let setter = stop.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        setter.set();
    });
    let started = Instant::now();
    let mut lines = Vec::new();
    let argv: Vec<String> = ["sh", "-c", "echo first; sleep 30"]
        .map(String::from)
        .to_vec();
    let result = exec.run(&argv, Duration::from_secs(60), &stop, &mut |l| {
        lines.push(l.to_string())
    });
    assert!(matches!(result, Err(ExecError::Stopped)), "{result:?}");
    assert_eq!(lines, vec!["first"]);
    assert!(started.elapsed() < Duration::from_secs(5));
}

/// The output lines and exit status of a capture file (`$ command`, output, `[exit N]`).
fn capture(name: &str) -> (Vec<String>, Vec<String>, i32) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/playbook")
        .join(name);
    let text = std::fs::read_to_string(path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let argv = lines[0]
        .trim_start_matches("$ ")
        .split_whitespace()
        .map(String::from)
        .collect();
    let exit = lines[lines.len() - 1]
        .trim_start_matches("[exit ")
        .trim_end_matches(']')
        .parse()
        .unwrap();
    let output = lines[1..lines.len() - 1]
        .iter()
        .map(|l| l.to_string())
        .collect();
    (argv, output, exit)
}

#[test]
fn the_fakes_answer_as_the_h200_did() {
    let mut host = local();
    for name in [
        "h200_limits.txt",
        "h200_enforced.txt",
        "h200_compute_cap.txt",
        "h200_gpus.txt",
        "h200_apps_idle.txt",
        "h200_remap.txt",
    ] {
        let (argv, want, exit) = capture(name);
        let mut got = Vec::new();
        let result = host
            .exec
            .run(
                &argv,
                Duration::from_secs(10),
                &StopFlag::default(),
                &mut |l| got.push(l.to_string()),
            )
            .unwrap();
        assert_eq!(got, want, "{name}");
        assert_eq!(result.exit_status, Some(exit), "{name}");
    }
    // The H200's range refusal, from an unprivileged login (the range check comes first).
    let (_, want, exit) = capture("h200_pl_out_of_range.txt");
    let argv: Vec<String> = ["nvidia-smi", "-i", "0", "-pl", "99999"]
        .map(String::from)
        .to_vec();
    let mut got = Vec::new();
    let result = host
        .exec
        .run(
            &argv,
            Duration::from_secs(10),
            &StopFlag::default(),
            &mut |l| got.push(l.to_string()),
        )
        .unwrap();
    assert_eq!((got, result.exit_status), (want, Some(exit)));
    assert_eq!(host.fake.power_limit(), "700.00");
}

#[test]
fn cuda_mismatch_on_the_h200_needs_no_reinstall() {
    let mut host = local();
    let (outcome, text) = run_local(
        &mut host,
        "cuda-mismatch",
        &[],
        &RunOptions::default(),
        &mut AssumeYes,
    );
    assert_eq!(outcome, RunOutcome::Completed, "{text}");
    assert!(
        text.contains("Driver supports CUDA up to 13.0; the GPU is sm_90"),
        "{text}"
    );
    assert!(
        text.contains("PyTorch 2.11.0+cu130 is built for CUDA 13.0"),
        "{text}"
    );
    assert!(text.contains("They match: no reinstall needed."), "{text}");
    assert_eq!(host.fake.calls("python3").len(), 1);
}

#[test]
fn a_fault_that_needed_a_fix_before_is_called_recurring() {
    let mut host = local();
    let book = parse_runbook(
        r#"
id = "fixer"
title = "Fixer"
summary = "Changes something."
recurred = "It came back: release the host."
[[steps]]
id = "fix"
title = "Fix it"
why = "Because."
danger = "change"
command = ["true"]
"#,
        "test",
    )
    .unwrap();
    let mut texts = Vec::new();
    for _ in 0..2 {
        let mut observer = TextObserver::new(Vec::new());
        let report = run(
            &book,
            &[],
            &RunOptions::default(),
            Tools {
                exec: &mut host.exec,
                confirmer: &mut AssumeYes,
                observer: &mut observer,
                audit: &host.audit,
                undo: &host.undo,
                stop: &StopFlag::default(),
            },
        );
        assert_eq!(report.outcome, RunOutcome::Completed);
        texts.push(String::from_utf8(observer.into_inner()).unwrap());
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(!texts[0].contains("It came back"), "{}", texts[0]);
    assert!(
        texts[1].contains("advice: It came back: release the host."),
        "{}",
        texts[1]
    );
}
