//! `gpufleet check --local` and what does not need SSH: the real probe script run by a
//! PyTorch-less python3 (its skip path), a real H200 run replayed through the whole grading,
//! reports kept and compared, and stopping.

use std::path::{Path, PathBuf};
use std::time::Duration;

use gpufleet::check::storage::{load_latest_under, save_under};
use gpufleet::check::{
    CheckError, CheckOptions, CheckReport, CheckTarget, PROBE_SCRIPT, RunEnd, Runner, Status,
    exit_code, render_json, render_text, run_check, run_check_with,
};
use gpufleet::config::{CudaVersion, Expect};
use gpufleet::telemetry::source::StopFlag;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn no_expectation() -> Expect {
    Expect {
        gpu: None,
        count: None,
        memory_gib: None,
        min_cuda: None,
    }
}

/// The check fakes in a temp dir, with the scenario in a file beside them.
fn fakes(scenario: &str) -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("temp dir");
    for program in ["nvidia-smi", "dmesg"] {
        let target = dir.path().join(program);
        std::fs::copy(root().join("tests/fixtures/check").join(program), &target).expect("copy");
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let captures = root().join("tests/fixtures/nvidia-smi/h200-driver-580");
    for (from, to) in [
        ("smi_qx.txt", "h200_smi_qx.txt"),
        ("query_idle_nounits.txt", "h200_query_idle_nounits.txt"),
        ("smi.txt", "h200_smi.txt"),
    ] {
        std::fs::copy(captures.join(from), dir.path().join(to)).expect("copy capture");
    }
    std::fs::write(dir.path().join("scenario"), scenario).expect("scenario");
    dir
}

fn local_options(dir: &Path, python: &str) -> CheckOptions {
    CheckOptions {
        sustain_s: 2.0,
        bench_s: 0.5,
        python: python.to_string(),
        nvidia_smi: dir.join("nvidia-smi").display().to_string(),
        dmesg: dir.join("dmesg").display().to_string(),
        ..CheckOptions::default()
    }
}

/// A python3 that lacks PyTorch, when this machine has one.
fn torchless_python() -> Option<&'static str> {
    let out = std::process::Command::new("python3")
        .args(["-c", "import torch"])
        .output()
        .ok()?;
    if out.status.success() {
        eprintln!("skipping: this python3 has PyTorch, so the skip path cannot be exercised");
        return None;
    }
    Some("python3")
}

fn get<'a>(report: &'a CheckReport, id: &str) -> &'a gpufleet::check::CheckResult {
    report
        .checks
        .iter()
        .find(|c| c.id == id)
        .unwrap_or_else(|| panic!("no {id}"))
}

#[test]
fn the_probe_script_is_valid_python() {
    let Ok(out) = std::process::Command::new("python3")
        .args([
            "-c",
            "import ast, sys; ast.parse(open(sys.argv[1]).read())",
            &root().join("src/check/probe.py").display().to_string(),
        ])
        .output()
    else {
        eprintln!("skipping: no python3");
        return;
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn local_mode_without_pytorch_skips_the_compute_checks() {
    let Some(python) = torchless_python() else {
        return;
    };
    let dir = fakes("match");
    let mut phases = Vec::new();
    let report = run_check(
        CheckTarget::Local,
        &no_expectation(),
        &local_options(dir.path(), python),
        &mut |p| phases.push(p.phase),
        &StopFlag::default(),
    )
    .expect("runs");
    assert_eq!(report.host, "local");
    let torch = get(&report, "identity.torch");
    assert_eq!(torch.status, Status::Skip);
    assert!(
        torch.message.starts_with("PyTorch is not importable by ")
            && torch.message.contains("No module named 'torch'"),
        "{}",
        torch.message
    );
    for c in &report.checks {
        let compute = ["identity.torch", "vram.", "throughput.", "sustained."]
            .iter()
            .any(|p| c.id.starts_with(p));
        let want = if compute { Status::Skip } else { Status::Pass };
        assert_eq!(c.status, want, "{}: {}", c.id, c.message);
    }
    assert_eq!(exit_code(&report), 0);
    assert_eq!(
        get(&report, "health.xid").measured,
        "none",
        "real H200 dmesg lines"
    );
}

#[test]
fn a_missing_python_or_driver_is_reported_not_an_error() {
    let dir = fakes("match");
    let opts = local_options(dir.path(), "/nonexistent/python3");
    let stop = StopFlag::default();
    let report = run_check(
        CheckTarget::Local,
        &no_expectation(),
        &opts,
        &mut |_| {},
        &stop,
    )
    .expect("runs");
    let vram = get(&report, "vram.usable");
    assert_eq!(vram.status, Status::Skip);
    assert_eq!(
        vram.message,
        "/nonexistent/python3 is not installed on the host"
    );

    let dir = fakes("driver-missing");
    let opts = local_options(dir.path(), "/nonexistent/python3");
    let report = run_check(
        CheckTarget::Local,
        &no_expectation(),
        &opts,
        &mut |_| {},
        &stop,
    )
    .expect("runs");
    let count = get(&report, "identity.count");
    assert_eq!(count.status, Status::Fail);
    assert!(
        count.message.contains("driver not loaded") && count.message.contains("exit 9"),
        "{}",
        count.message
    );
    assert_eq!(exit_code(&report), 2);
}

#[test]
fn bad_options_and_stopping_are_errors() {
    let dir = fakes("match");
    let mut opts = local_options(dir.path(), "/nonexistent/python3");
    opts.vram_fraction = 1.5;
    let err = run_check(
        CheckTarget::Local,
        &no_expectation(),
        &opts,
        &mut |_| {},
        &StopFlag::default(),
    )
    .expect_err("refused");
    assert!(matches!(err, CheckError::Options { .. }), "{err}");

    let stop = StopFlag::default();
    stop.set();
    let opts = local_options(dir.path(), "/nonexistent/python3");
    let err = run_check(
        CheckTarget::Local,
        &no_expectation(),
        &opts,
        &mut |_| {},
        &stop,
    )
    .expect_err("stopped");
    assert!(matches!(err, CheckError::Stopped), "{err}");
}

/// Answers every command from the files a real H200 produced (tests/fixtures/check/real-h200).
struct Replay {
    dir: PathBuf,
    stdin_seen: bool,
}

impl Runner for Replay {
    fn run(
        &mut self,
        argv: &[String],
        stdin: Option<&[u8]>,
        _timeout: Duration,
        _stop: &StopFlag,
        on_line: &mut dyn FnMut(&str),
    ) -> Result<RunEnd, CheckError> {
        let file = match (argv[0].as_str(), argv.get(1).map(String::as_str)) {
            ("nvidia-smi", Some("-q")) => "smi_qx.xml",
            ("nvidia-smi", _) => "query.csv",
            ("dmesg", _) => "dmesg.txt",
            ("python3", Some("-")) => {
                self.stdin_seen = stdin == Some(PROBE_SCRIPT.as_bytes());
                "probe.jsonl"
            }
            other => panic!("unexpected command {other:?}"),
        };
        let text = std::fs::read_to_string(self.dir.join(file)).expect("recording");
        for line in text.lines() {
            on_line(line);
        }
        Ok(RunEnd {
            exit_status: Some(0),
            timed_out: false,
            missing: false,
        })
    }
}

#[test]
fn a_real_h200_run_passes_within_fifteen_percent_of_the_independent_figures() {
    let mut replay = Replay {
        dir: root().join("tests/fixtures/check/real-h200"),
        stdin_seen: false,
    };
    let expect = Expect {
        gpu: Some("H200".to_string()),
        count: Some(1),
        memory_gib: Some(141.0),
        min_cuda: Some(CudaVersion {
            major: 12,
            minor: 1,
        }),
    };
    let report = run_check_with(
        &mut replay,
        "h200",
        "local",
        &expect,
        &CheckOptions::default(),
        &mut |_| {},
        &StopFlag::default(),
    )
    .expect("grades");
    assert!(replay.stdin_seen, "the probe was sent on stdin");
    for c in &report.checks {
        assert_eq!(c.status, Status::Pass, "{}: {}", c.id, c.message);
    }
    let g = &report.gpus[0];
    let matmul = g.matmul_tflops.expect("matmul");
    let copy = g.copy_gb_per_s.expect("copy");
    assert!((matmul / 790.0 - 1.0).abs() <= 0.15, "{matmul} TFLOP/s");
    assert!((copy / 4300.0 - 1.0).abs() <= 0.15, "{copy} GB/s");
    assert!(g.sustained_tflops.is_some_and(|t| t > 600.0), "{g:?}");
    assert!(g.load_power_mean_w.is_some_and(|p| p > 650.0), "{g:?}");
    assert_eq!(
        (g.pcie_gen, g.pcie_width, g.pcie_under_load),
        (Some(5), Some(16), true)
    );
    assert_eq!(report.torch_version.as_deref(), Some("2.11.0+cu130"));
    let text = render_text(&report, None);
    assert!(text.contains("PASS (exit 0)"), "{text}");
}

#[test]
fn reports_are_kept_and_compared_with_the_previous_one() {
    let mut replay = Replay {
        dir: root().join("tests/fixtures/check/real-h200"),
        stdin_seen: false,
    };
    let run = |replay: &mut Replay| {
        run_check_with(
            replay,
            "h200/a",
            "local",
            &no_expectation(),
            &CheckOptions::default(),
            &mut |_| {},
            &StopFlag::default(),
        )
        .expect("grades")
    };
    let state = tempfile::tempdir().expect("state dir");
    assert!(
        load_latest_under(state.path(), "h200/a")
            .expect("reads")
            .is_none()
    );
    let mut first = run(&mut replay);
    first.started_at_ms -= 86_400_000;
    let mut second = run(&mut replay);
    second.gpus[0].matmul_tflops = Some(701.5);
    let first_path = save_under(state.path(), &first).expect("saved");
    let second_path = save_under(state.path(), &second).expect("saved");
    assert_eq!(first_path.parent(), second_path.parent());
    assert!(first_path.parent().is_some_and(|p| p.ends_with("h200%2Fa")));
    std::fs::write(first_path.with_file_name("zzz-damaged.json"), "{").expect("junk");

    let latest = load_latest_under(state.path(), "h200/a")
        .expect("reads")
        .expect("one");
    assert_eq!(latest, second);
    let json: serde_json::Value = serde_json::from_str(&render_json(&second)).expect("json");
    assert_eq!(json["checks"][0]["status"], "pass");
    assert_eq!(json["exit_code"], 0);

    let text = render_text(&second, Some(&first));
    assert!(text.contains("Compared with the check of"), "{text}");
    let matmul_row = text
        .lines()
        .find(|l| l.trim_start().starts_with("matmul"))
        .expect("matmul row");
    assert!(
        matmul_row.contains("702 TFLOP/s") && matmul_row.contains("777 TFLOP/s"),
        "{matmul_row}"
    );
}
