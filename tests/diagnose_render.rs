//! The text and JSON reports and the exit status `gpufleet diagnose` prints them with.

use gpufleet::diagnose::{diagnose_text, exit_code, render_json, render_text};

const XID79: &str = "NVRM: Xid (PCI:0000:02:00): 79, GPU has fallen off the bus.\n";

#[test]
fn healthy_reports() {
    assert_eq!(render_text(&[]), "healthy: no findings\n");
    assert_eq!(render_json(&[]), r#"{"findings":[]}"#);
    assert_eq!(exit_code(&[]), 0);
}

#[test]
fn json_has_the_documented_shape() {
    let findings = diagnose_text(XID79);
    assert_eq!(exit_code(&findings), 1);
    let json: serde_json::Value = serde_json::from_str(&render_json(&findings)).expect("json");
    let list = json["findings"].as_array().expect("findings array");
    assert_eq!(list.len(), 2);
    let first = list[0].as_object().expect("object");
    let mut keys: Vec<&str> = first.keys().map(String::as_str).collect();
    keys.sort_unstable();
    // The order in the text is checked below.
    assert_eq!(
        keys,
        vec![
            "action", "evidence", "label", "runbook", "severity", "summary"
        ]
    );
    assert_eq!(first["label"], "xid_79");
    assert_eq!(first["severity"], "critical");
    assert_eq!(first["runbook"], "gpu-lost");
    assert_eq!(first["evidence"][0], XID79.trim_end());

    let raw = render_json(&findings);
    let order: Vec<usize> = [
        "\"label\"",
        "\"severity\"",
        "\"evidence\"",
        "\"summary\"",
        "\"action\"",
        "\"runbook\"",
    ]
    .iter()
    .map(|k| raw.find(k).expect("key"))
    .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{raw}");
    assert!(
        raw.starts_with(r#"{"findings":[{"label":"xid_79","severity":"critical","evidence":["#)
    );
}

#[test]
fn json_runbook_is_null_and_gpu_appears_when_known() {
    let findings = diagnose_text(
        "ERROR [1514002:1514004] [[Health]] Detected a WARNING in health system Thermal: \
         'Detected clocks event due to thermal violation in GPU 2. Verify that the cooling",
    );
    let json: serde_json::Value = serde_json::from_str(&render_json(&findings)).expect("json");
    assert_eq!(json["findings"][0]["gpu"], 2);
    let oom = diagnose_text("RuntimeError: CUDA error: out of memory");
    let json: serde_json::Value = serde_json::from_str(&render_json(&oom)).expect("json");
    assert!(json["findings"][0]["runbook"].is_null());
    assert!(json["findings"][0].get("gpu").is_none());
}

#[test]
fn text_report_lists_severity_label_action_runbook_and_evidence() {
    let text = render_text(&diagnose_text(XID79));
    let first = text.lines().next().expect("line");
    assert!(
        first.starts_with("CRITICAL xid_79: Xid 79 (ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS)")
    );
    assert!(text.contains("\n  action: Reboot the instance"));
    assert!(text.contains("\n  runbook: gpu-lost\n"));
    assert!(text.contains("\n  evidence:\n    NVRM: Xid (PCI:0000:02:00): 79"));
    assert!(text.contains("\n\nCRITICAL gpu_lost: "));
}
