//! Published accelerator outputs that no link command prints, read the way a renter reads them:
//! saved or pasted into `gpufleet diagnose FILE`. amd-smi's default view (`amd-smi` alone; the
//! link reads `amd-smi monitor`), kernel logs in the forms the link does not follow
//! (`dmesg -T`, `journalctl -k`), the CANN runtime's error report and the Ascend device's
//! black-box log each give, through the command, the verdict and findings a user acts on.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::tmux::binary;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/accel")
        .join(name)
}

/// `gpufleet diagnose FILE --json`: exit code, verdict, the distinct finding labels (sorted).
fn diagnose_file(path: &Path) -> (Option<i32>, String, Vec<String>) {
    let out = Command::new(binary())
        .args(["diagnose", "--json"])
        .arg(path)
        .output()
        .expect("diagnose");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let mut labels: Vec<String> = doc["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter_map(|f| f["label"].as_str().map(str::to_string))
        .collect();
    labels.sort();
    labels.dedup();
    let verdict = doc["verdict"].as_str().unwrap_or_default().to_string();
    (out.status.code(), verdict, labels)
}

#[test]
fn a_saved_default_view_is_evidence_of_working_gpus() {
    // AMD-SMI 27 (four MI300A) and 26 (two Radeon AI PRO R9700, with processes).
    for name in ["amd-amd-smi-default-01.txt", "amd-amd-smi-default-02.txt"] {
        let (code, verdict, labels) = diagnose_file(&fixture(name));
        assert_eq!(code, Some(0), "{name}: {verdict} {labels:?}");
        assert_eq!(verdict, "healthy", "{name}");
        assert!(labels.is_empty(), "{name}: {labels:?}");
    }
    // The same view cut to its title box is no evidence: nothing recognised.
    let dir = tempfile::tempdir().expect("temp");
    let cut = dir.path().join("title.txt");
    let text = std::fs::read_to_string(fixture("amd-amd-smi-default-01.txt")).expect("fixture");
    let title: Vec<&str> = text.lines().take(4).collect();
    std::fs::write(&cut, title.join("\n")).expect("write");
    let (code, verdict, _) = diagnose_file(&cut);
    assert_eq!((code, verdict.as_str()), (Some(3), "unrecognised"));
}

#[test]
fn saved_logs_of_forms_the_link_does_not_follow_give_their_findings() {
    for (name, expected) in [
        // `dmesg -T` of a Radeon Instinct MI50.
        (
            "amd-kernel-dmesg-ras-02.txt",
            &[
                "amdgpu_gpu_reset",
                "amdgpu_ras_uncorrectable",
                "amdgpu_smu_failed",
            ][..],
        ),
        // `journalctl -k` of a ring timeout and reset.
        (
            "amd-kernel-dmesg-ringtimeout-02.txt",
            &["amdgpu_gpu_reset", "amdgpu_ring_timeout"][..],
        ),
        // An Atlas 310P's CANN runtime error report: the device lost its heartbeat.
        (
            "huawei-cann-runtime-error-01.txt",
            &["npu_lost_heartbeat"][..],
        ),
        // The Ascend device black-box log of an HBM multi-bit ECC error.
        ("huawei-kernel-kbox-ecc-01.txt", &["npu_hbm_ecc"][..]),
    ] {
        let (code, verdict, labels) = diagnose_file(&fixture(name));
        assert_eq!(code, Some(1), "{name}: {verdict} {labels:?}");
        assert_eq!(verdict, "findings", "{name}");
        assert_eq!(labels, expected, "{name}");
    }
}
