//! Huawei Ascend failure texts as published (tests/fixtures/accel/README.md names each
//! source): npu-smi's dcmi errors, an NPU's black-box HBM ECC log and CANN's lost heartbeat,
//! each a finding with a renter's action, in English and Simplified Chinese.

use std::path::{Path, PathBuf};
use std::process::Command;

use gpufleet::diagnose::{Diagnosis, Verdict, diagnose};

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/accel")
        .join(name)
}

fn expect(name: &str, want: &[&str]) -> Diagnosis {
    let text = std::fs::read_to_string(sample(name)).expect("fixture");
    let d = diagnose(&text);
    let labels: Vec<&str> = d.findings.iter().map(|f| f.label.as_str()).collect();
    assert_eq!(labels, want, "{name}: {:#?}", d.findings);
    assert_eq!(d.verdict, Verdict::Findings, "{name}");
    d
}

#[test]
fn npu_smi_dcmi_failure_is_named_with_its_line() {
    let d = expect("huawei-npu-smi-error-01.txt", &["npu_dcmi_init_failed"]);
    let f = &d.findings[0];
    assert!(
        f.evidence.iter().any(|e| e.contains("ret is -8005")),
        "{f:#?}"
    );
    assert!(f.action.contains("npu-smi info"), "{}", f.action);
    assert!(f.summary.contains("-8005"), "{}", f.summary);
}

#[test]
fn npu_smi_device_in_use_is_its_own_finding() {
    let d = expect("huawei-npu-smi-error-02.txt", &["npu_device_in_use"]);
    assert!(d.findings[0].summary.contains("-8020"));
    assert!(d.findings[0].action.contains("container"));
}

#[test]
fn a_multi_bit_hbm_ecc_in_the_kbox_log_names_the_npu() {
    let d = expect("huawei-kernel-kbox-ecc-01.txt", &["npu_hbm_ecc"]);
    let f = &d.findings[0];
    assert_eq!(f.gpu, Some(2), "{f:#?}");
    assert!(f.evidence.iter().any(|e| e.contains("multi-bit ECC")));
}

#[test]
fn the_same_words_in_a_host_log_are_not_an_npu() {
    // The kbox lines without their black-box file prefix, as a host's own APEI report.
    let text = std::fs::read_to_string(sample("huawei-kernel-kbox-ecc-01.txt")).expect("fixture");
    let host: String = text
        .lines()
        .filter_map(|l| l.split_once(".txt:").map(|(_, rest)| format!("{rest}\n")))
        .collect();
    let d = diagnose(&host);
    assert!(
        d.findings.iter().all(|f| f.label != "npu_hbm_ecc"),
        "{:#?}",
        d.findings
    );
}

#[test]
fn cann_lost_heartbeat_is_a_lost_npu() {
    let d = expect("huawei-cann-runtime-error-01.txt", &["npu_lost_heartbeat"]);
    assert!(
        d.findings[0]
            .evidence
            .iter()
            .any(|e| e.contains("lost heartbeat"))
    );
}

#[test]
fn the_cli_reads_each_failure_file_in_both_languages() {
    for (name, label, en, zh) in [
        (
            "huawei-npu-smi-error-01.txt",
            "npu_dcmi_init_failed",
            "management interface",
            "管理接口",
        ),
        (
            "huawei-npu-smi-error-02.txt",
            "npu_device_in_use",
            "in use",
            "占用",
        ),
        (
            "huawei-kernel-kbox-ecc-01.txt",
            "npu_hbm_ecc",
            "HBM ECC",
            "HBM ECC",
        ),
        (
            "huawei-cann-runtime-error-01.txt",
            "npu_lost_heartbeat",
            "lost heartbeat",
            "不再响应",
        ),
    ] {
        for (lang, words) in [("en", en), ("zh-CN", zh)] {
            let out = Command::new(env!("CARGO_BIN_EXE_gpufleet"))
                .args(["--lang", lang, "diagnose"])
                .arg(sample(name))
                .output()
                .expect("gpufleet");
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(text.contains(label), "{name} {lang}: {text}");
            assert!(text.contains(words), "{name} {lang}: {text}");
        }
    }
}
