//! `gpufleet diagnose` on Moore Threads' published kernel log (the `mtgpu` driver's GPU debug
//! dump ending in a kernel WARNING, tests/fixtures/accel/mthreads-kernel-dmesg-01.txt): a
//! critical `mtgpu_fault` with the renter's action, in English and Simplified Chinese.

use crate::tmux::binary;

use std::path::Path;
use std::process::Command;

fn diagnose(lang: &str) -> (Option<i32>, serde_json::Value) {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/accel/mthreads-kernel-dmesg-01.txt");
    let out = Command::new(binary())
        .args(["--lang", lang, "diagnose", "--json"])
        .arg(&file)
        .output()
        .expect("gpufleet diagnose");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let doc = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code(), doc)
}

fn fault(doc: &serde_json::Value) -> serde_json::Value {
    let findings = doc["findings"].as_array().cloned().unwrap_or_default();
    let faults: Vec<_> = findings
        .into_iter()
        .filter(|f| f["label"] == "mtgpu_fault")
        .collect();
    assert_eq!(faults.len(), 1, "{doc:#}");
    faults[0].clone()
}

#[test]
fn the_mtgpu_debug_dump_and_warning_are_a_critical_gpu_fault() {
    let (code, doc) = diagnose("en");
    assert_eq!(code, Some(1), "{doc:#}");
    assert_eq!(doc["verdict"], "findings");
    let f = fault(&doc);
    assert_eq!(f["severity"], "critical");
    let action = f["action"].as_str().unwrap_or_default();
    assert!(action.contains("reboot the instance"), "{action}");
    assert!(action.contains("release the host"), "{action}");
    let evidence = f["evidence"].to_string();
    assert!(
        evidence.contains("MTGPU DBG: END") || evidence.contains("[mtgpu]"),
        "{evidence}"
    );
}

#[test]
fn the_mtgpu_fault_reads_in_simplified_chinese() {
    let (code, doc) = diagnose("zh-CN");
    assert_eq!(code, Some(1), "{doc:#}");
    let f = fault(&doc);
    let summary = f["summary"].as_str().unwrap_or_default();
    assert!(summary.contains("摩尔线程"), "{summary}");
    let action = f["action"].as_str().unwrap_or_default();
    assert!(action.contains("重启实例"), "{action}");
}
