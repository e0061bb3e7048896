//! AMD's failure texts, as published (tests/fixtures/accel/README.md names each source): the
//! amdgpu kernel driver's lines (ring timeouts, GPU resets, uncorrectable RAS errors, the SMU
//! not answering) and amd-smi's failure texts each give their finding, on the GPU the line
//! names, with a renter's action, in English and Simplified Chinese.

use std::path::Path;
use std::process::Command;

use gpufleet::diagnose::{Diagnosis, Severity, Verdict, diagnose};

use crate::tmux::binary;

fn fixture_path(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/accel")
        .join(name)
}

fn read(name: &str) -> String {
    std::fs::read_to_string(fixture_path(name)).expect("fixture")
}

/// The distinct labels of the text's findings, sorted, and the diagnosis.
fn labels(name: &str) -> (Vec<String>, Diagnosis) {
    let d = diagnose(&read(name));
    let mut labels: Vec<String> = d.findings.iter().map(|f| f.label.clone()).collect();
    labels.sort();
    labels.dedup();
    (labels, d)
}

/// The PCI addresses the findings of `label` name, sorted.
fn pcis(d: &Diagnosis, label: &str) -> Vec<String> {
    let mut out: Vec<String> = d
        .findings
        .iter()
        .filter(|f| f.label == label)
        .filter_map(|f| f.pci.clone())
        .collect();
    out.sort();
    out
}

#[test]
fn a_ring_timeout_then_reset_on_a_radeon() {
    let (found, d) = labels("amd-kernel-dmesg-ringtimeout-01.txt");
    assert_eq!(found, ["amdgpu_gpu_reset", "amdgpu_ring_timeout"], "{d:#?}");
    assert_eq!(pcis(&d, "amdgpu_ring_timeout"), ["0000:28:00"]);
    assert_eq!(pcis(&d, "amdgpu_gpu_reset"), ["0000:28:00"]);
    assert_eq!(d.verdict, Verdict::Findings);
    assert!(d.findings.iter().all(|f| f.severity == Severity::Critical));
}

#[test]
fn the_older_journal_wording_of_a_ring_timeout() {
    let (found, d) = labels("amd-kernel-dmesg-ringtimeout-02.txt");
    assert_eq!(found, ["amdgpu_gpu_reset", "amdgpu_ring_timeout"], "{d:#?}");
    assert_eq!(pcis(&d, "amdgpu_gpu_reset"), ["0000:08:00"]);
}

#[test]
fn a_scheduler_firmware_that_stops_answering_on_an_apu() {
    let (found, d) = labels("amd-kernel-dmesg-ringtimeout-03.txt");
    assert_eq!(found, ["amdgpu_gpu_reset", "amdgpu_ring_timeout"], "{d:#?}");
    assert_eq!(pcis(&d, "amdgpu_ring_timeout"), ["0000:c5:00"]);
}

#[test]
fn an_uncorrectable_error_on_an_mi300x_names_its_gpu() {
    let (found, d) = labels("amd-kernel-dmesg-ras-01.txt");
    assert_eq!(found, ["amdgpu_ras_uncorrectable"], "{d:#?}");
    assert_eq!(pcis(&d, "amdgpu_ras_uncorrectable"), ["0000:68:00"]);
    let f = &d.findings[0];
    assert!(f.action.contains("rent another"), "{}", f.action);
}

#[test]
fn an_uncorrectable_error_then_reset_then_a_silent_smu_on_an_mi50() {
    let (found, d) = labels("amd-kernel-dmesg-ras-02.txt");
    assert_eq!(
        found,
        [
            "amdgpu_gpu_reset",
            "amdgpu_ras_uncorrectable",
            "amdgpu_smu_failed"
        ],
        "{d:#?}"
    );
    assert_eq!(pcis(&d, "amdgpu_smu_failed"), ["0000:e3:00"]);
}

#[test]
fn amd_smi_without_its_driver_or_without_gpus() {
    for name in ["amd-amd-smi-error-02.txt", "amd-amd-smi-error-03.txt"] {
        let (found, d) = labels(name);
        assert_eq!(
            found,
            ["driver_not_loaded_amdgpu", "no_devices_amdgpu"],
            "{name}: {d:#?}"
        );
        assert!(d.findings[0].action.contains("modprobe amdgpu"));
    }
    let (found, _) = labels("amd-amd-smi-error-04.txt");
    assert_eq!(found, ["no_devices_amdgpu"]);
}

#[test]
fn the_command_names_the_finding_in_both_languages() {
    for (lang, says) in [
        ("en", "uncorrectable hardware error"),
        ("zh-CN", "不可纠正"),
    ] {
        let out = Command::new(binary())
            .args(["--lang", lang, "diagnose"])
            .arg(fixture_path("amd-kernel-dmesg-ras-01.txt"))
            .output()
            .expect("diagnose");
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{text}");
        assert!(text.contains("amdgpu_ras_uncorrectable"), "{text}");
        assert!(text.contains(says), "{lang}: {text}");
    }
}

#[test]
fn a_pasted_default_view_shows_working_gpus() {
    // amd-smi's default view of AMD-SMI 27 (four MI300A) and 26 (two Radeon AI PRO R9700,
    // with processes): no finding, and the GPU lines are evidence the GPUs work.
    for name in ["amd-amd-smi-default-01.txt", "amd-amd-smi-default-02.txt"] {
        let (found, d) = labels(name);
        assert!(found.is_empty(), "{name}: {d:#?}");
        assert_eq!(d.verdict, Verdict::Healthy, "{name}: {d:#?}");
    }
    // The same view with its GPU lines cut away is no evidence.
    let text = read("amd-amd-smi-default-01.txt");
    let title_only: String = text.lines().take(4).collect::<Vec<_>>().join("\n");
    assert_eq!(diagnose(&title_only).verdict, Verdict::Unrecognised);
}
