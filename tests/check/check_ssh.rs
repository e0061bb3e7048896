//! `gpufleet check` over a real sshd with fake `nvidia-smi`, `python3` and `dmesg` per scenario
//! (tests/fixtures/check/README.md): the probe goes over the SSH channel's standard input and
//! each fault shows up as the check it should fail.

use crate::common;

use std::path::Path;

use common::sshd::Sshd;
use common::test_options;
use gpufleet::check::{
    CheckOptions, CheckPhase, CheckProgress, CheckReport, CheckResult, CheckTarget, PROBE_SCRIPT,
    Status, exit_code, render_text, run_check,
};
use gpufleet::config::{CudaVersion, Expect};
use gpufleet::telemetry::source::StopFlag;

const CAPTURES: &str = "tests/fixtures/nvidia-smi/h200-driver-580";
const FAKES: &str = "tests/fixtures/check";

/// Puts the check fakes and the captures they replay first on the sshd's remote PATH.
fn install_fakes(sshd: &Sshd) {
    use std::os::unix::fs::PermissionsExt;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bin = sshd.dir().join("bin");
    for program in ["nvidia-smi", "python3", "dmesg"] {
        let target = bin.join(program);
        std::fs::copy(root.join(FAKES).join(program), &target).expect("copy fake");
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    for (from, to) in [
        ("smi_qx.txt", "h200_smi_qx.txt"),
        ("query_idle_nounits.txt", "h200_query_idle_nounits.txt"),
        ("smi.txt", "h200_smi.txt"),
    ] {
        std::fs::copy(root.join(CAPTURES).join(from), bin.join(to)).expect("copy capture");
    }
    std::fs::create_dir_all(bin.join("probe")).expect("probe dir");
    for entry in std::fs::read_dir(root.join(FAKES).join("probe"))
        .expect("probe outputs")
        .flatten()
    {
        std::fs::copy(entry.path(), bin.join("probe").join(entry.file_name())).expect("copy");
    }
}

fn rented_h200() -> Expect {
    Expect {
        gpu: Some("H200".to_string()),
        count: Some(1),
        memory_gib: Some(141.0),
        min_cuda: Some(CudaVersion {
            major: 12,
            minor: 1,
        }),
    }
}

/// Short enough for a test; the fakes print a recorded run whatever the durations.
fn quick() -> CheckOptions {
    CheckOptions {
        sustain_s: 3.0,
        bench_s: 0.5,
        ..CheckOptions::default()
    }
}

struct Run {
    sshd: Sshd,
    report: CheckReport,
    progress: Vec<CheckProgress>,
}

fn check(scenario: &str, expect: &Expect) -> Option<Run> {
    let sshd = Sshd::start()?;
    install_fakes(&sshd);
    sshd.set_scenario(scenario);
    let target = CheckTarget::Remote(
        sshd.remote_host("h200"),
        test_options(&sshd.trusted_known_hosts()),
    );
    let mut progress = Vec::new();
    let report = match run_check(
        target,
        expect,
        &quick(),
        &mut |p| progress.push(p),
        &StopFlag::default(),
    ) {
        Ok(report) => report,
        Err(e) => panic!("{scenario}: {e}\n{}", sshd.log()),
    };
    Some(Run {
        sshd,
        report,
        progress,
    })
}

fn get<'a>(report: &'a CheckReport, id: &str) -> &'a CheckResult {
    report
        .checks
        .iter()
        .find(|c| c.id == id)
        .unwrap_or_else(|| panic!("no {id} in\n{}", render_text(report, None)))
}

/// Every check except `failing` passed; `failing` has `status`.
fn only(report: &CheckReport, failing: &str, status: Status) {
    for c in &report.checks {
        let want = if c.id == failing {
            status
        } else {
            Status::Pass
        };
        assert_eq!(
            c.status,
            want,
            "{}: {}\n{}",
            c.id,
            c.message,
            render_text(report, None)
        );
    }
}

#[test]
fn a_card_that_matches_passes() {
    let Some(run) = check("match", &rented_h200()) else {
        return;
    };
    let report = &run.report;
    only(report, "", Status::Pass);
    assert_eq!(exit_code(report), 0);
    assert_eq!(report.driver_version.as_deref(), Some("580.159.04"));
    assert_eq!(report.cuda_version.as_deref(), Some("13.0"));
    assert_eq!(report.torch_version.as_deref(), Some("2.5.1+cu124"));
    let g = &report.gpus[0];
    assert_eq!(g.matmul_tflops, Some(790.3));
    assert_eq!(g.copy_gb_per_s, Some(4301.2));
    assert!(g.pcie_under_load);
    assert!(g.usable_vram_gib.is_some_and(|v| v > 130.0), "{g:?}");
    assert_eq!(
        report.target,
        format!("ssh {}", run.sshd.remote_host("h200").target)
    );

    // The real script went over standard input, with the durations asked for.
    let sent = std::fs::read_to_string(run.sshd.dir().join("python3.stdin")).expect("stdin kept");
    assert_eq!(sent, PROBE_SCRIPT);
    let calls = run.sshd.calls("python3");
    assert_eq!(calls.len(), 1);
    assert!(
        calls[0].starts_with("- --sustain-s 3 --bench-s 0.5 "),
        "{calls:?}"
    );
    // Nothing was left on the host but the fakes' own bookkeeping.
    let smi = run.sshd.calls("nvidia-smi");
    assert!(smi.iter().any(|c| c == "-q -x"), "{smi:?}");
    assert!(
        smi.iter()
            .all(|c| !c.contains("-pl") && !c.contains("-lgc"))
    );

    // Progress went through the phases to the end, with live readings under load.
    let phases: Vec<CheckPhase> = run.progress.iter().map(|p| p.phase).collect();
    for phase in [
        CheckPhase::Inventory,
        CheckPhase::Probe,
        CheckPhase::Matmul { gpu: 0 },
        CheckPhase::Vram { gpu: 0 },
        CheckPhase::Sustain,
        CheckPhase::Done,
    ] {
        assert!(phases.contains(&phase), "{phase:?} in {phases:?}");
    }
    assert!(
        run.progress
            .windows(2)
            .all(|w| w[0].fraction <= w[1].fraction)
    );
    assert_eq!(run.progress.last().map(|p| p.fraction), Some(1.0));
    assert!(
        run.progress
            .iter()
            .any(|p| p.reading.is_some_and(|r| r.tflops.is_some()))
    );
    assert!(
        run.progress
            .iter()
            .any(|p| p.reading.is_some_and(|r| r.power_w.is_some()))
    );
}

#[test]
fn a_different_model_than_expected_fails() {
    let expect = Expect {
        gpu: Some("RTX 4090".to_string()),
        count: Some(1),
        memory_gib: Some(24.0),
        min_cuda: None,
    };
    let Some(run) = check("match", &expect) else {
        return;
    };
    let model = get(&run.report, "identity.model");
    assert_eq!(model.status, Status::Fail);
    assert_eq!(model.measured, "NVIDIA H200");
    assert_eq!(model.expected, "RTX 4090");
    assert!(
        model.message.contains("not the RTX 4090"),
        "{}",
        model.message
    );
    only(&run.report, "identity.model", Status::Fail);
    assert_eq!(exit_code(&run.report), 2);
}

#[test]
fn a_lowered_power_cap_fails() {
    let Some(run) = check("power-cap", &rented_h200()) else {
        return;
    };
    let power = get(&run.report, "power.limit");
    assert_eq!(power.measured, "450 W");
    assert_eq!(power.expected, "700 W (default, max 700 W)");
    only(&run.report, "power.limit", Status::Fail);
    assert_eq!(exit_code(&run.report), 2);
    assert_eq!(run.report.gpus[0].power_limit_w, Some(450.0));
}

#[test]
fn a_pcie_link_at_x8_of_x16_fails() {
    let Some(run) = check("pcie-x8", &rented_h200()) else {
        return;
    };
    let link = get(&run.report, "pcie.link");
    assert_eq!(link.measured, "Gen5 x8 (under load)");
    assert_eq!(link.expected, "Gen5 x16");
    only(&run.report, "pcie.link", Status::Fail);
    assert_eq!(run.report.gpus[0].pcie_width, Some(8));
}

#[test]
fn vram_short_of_the_label_fails() {
    let Some(run) = check("vram-short", &rented_h200()) else {
        return;
    };
    let vram = get(&run.report, "vram.usable");
    assert!(
        vram.measured.contains("70.5 GiB already in use"),
        "{}",
        vram.measured
    );
    only(&run.report, "vram.usable", Status::Fail);
    let usable = run.report.gpus[0].usable_vram_gib.expect("measured");
    assert!((60.0..70.0).contains(&usable), "{usable}");
}

#[test]
fn thermal_slowdown_under_sustained_load_fails() {
    let Some(run) = check("thermal", &rented_h200()) else {
        return;
    };
    let load = get(&run.report, "sustained.load");
    assert!(load.message.contains("thermal"), "{}", load.message);
    assert!(
        load.measured.contains("hw thermal slowdown"),
        "{}",
        load.measured
    );
    only(&run.report, "sustained.load", Status::Fail);
    assert_eq!(run.report.gpus[0].load_temperature_max_c, Some(92.0));
}

#[test]
fn no_pytorch_skips_the_compute_checks_and_runs_the_rest() {
    let Some(run) = check("no-torch", &rented_h200()) else {
        return;
    };
    let report = &run.report;
    for id in [
        "identity.torch",
        "vram.usable",
        "throughput.matmul",
        "throughput.copy",
        "sustained.load",
    ] {
        let c = get(report, id);
        assert_eq!(c.status, Status::Skip, "{id}");
        assert!(
            c.message.contains("No module named 'torch'"),
            "{id}: {}",
            c.message
        );
    }
    let link = get(report, "pcie.link");
    assert_eq!(link.status, Status::Pass);
    assert!(link.measured.ends_with("(at rest)"), "{}", link.measured);
    for c in report.checks.iter().filter(|c| c.status != Status::Skip) {
        assert_eq!(c.status, Status::Pass, "{}: {}", c.id, c.message);
    }
    assert_eq!(exit_code(report), 0);
    assert!(render_text(report, None).contains("No module named 'torch'"));
}
