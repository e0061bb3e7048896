//! The text and JSON reports and the exit status `gpufleet diagnose` prints them with.

use gpufleet::diagnose::{Diagnosis, Verdict, diagnose, render_json, render_text};

const XID79: &str = "NVRM: Xid (PCI:0000:02:00): 79, GPU has fallen off the bus.\n";

/// The real nvidia-smi table of a working RTX 3090 (driver 455), from
/// `tests/fixtures/diagnose/other_drivers/`.
fn healthy_table() -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/diagnose/other_drivers/smi_455_rtx3090.txt");
    std::fs::read_to_string(path).expect("fixture")
}

fn json(d: &Diagnosis) -> serde_json::Value {
    serde_json::from_str(&render_json(d, &[])).expect("json")
}

#[test]
fn healthy_needs_evidence_and_exits_0() {
    let d = diagnose(&healthy_table());
    assert_eq!(d.verdict, Verdict::Healthy);
    assert_eq!(d.exit_code(), 0);
    assert!(render_text(&d).starts_with("healthy"));
    assert_eq!(
        render_json(&d, &[]),
        r#"{"verdict":"healthy","findings":[]}"#
    );
}

#[test]
fn unrecognised_text_exits_3_with_a_hint() {
    for text in ["hello world", "epoch 1 loss 0.3\n"] {
        let d = diagnose(text);
        assert_eq!(d.verdict, Verdict::Unrecognised, "{text}");
        assert_eq!(d.exit_code(), 3);
        let out = render_text(&d);
        assert!(out.starts_with("nothing recognised"), "{out}");
        assert!(out.contains("nvidia-smi"), "{out}");
        let doc = json(&d);
        assert_eq!(doc["verdict"], "unrecognised");
        assert!(doc["hint"].as_str().is_some_and(|h| h.contains("dmesg")));
        assert_eq!(doc["findings"].as_array().map(Vec::len), Some(0));
    }
}

#[test]
fn json_has_the_documented_shape() {
    let d = diagnose(XID79);
    assert_eq!(d.exit_code(), 1);
    let doc = json(&d);
    assert_eq!(doc["verdict"], "findings");
    assert!(doc.get("hint").is_none());
    let list = doc["findings"].as_array().expect("findings array");
    assert_eq!(list.len(), 2);
    let first = list[0].as_object().expect("object");
    let mut keys: Vec<&str> = first.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        vec![
            "action", "evidence", "label", "pci", "runbook", "severity", "summary"
        ]
    );
    assert_eq!(first["label"], "xid_79");
    assert_eq!(first["severity"], "critical");
    assert_eq!(first["runbook"], "gpu-lost");
    assert_eq!(first["pci"], "0000:02:00");
    assert_eq!(first["evidence"][0], XID79.trim_end());

    let raw = render_json(&d, &[]);
    let order: Vec<usize> = [
        "\"verdict\"",
        "\"findings\"",
        "\"label\"",
        "\"severity\"",
        "\"evidence\"",
        "\"summary\"",
        "\"action\"",
        "\"runbook\"",
        "\"pci\"",
    ]
    .iter()
    .map(|k| raw.find(k).expect("key"))
    .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{raw}");
    assert!(raw.starts_with(
        r#"{"verdict":"findings","findings":[{"label":"xid_79","severity":"critical","evidence":["#
    ));
}

#[test]
fn json_runbook_is_null_and_gpu_appears_when_known() {
    let d = diagnose(
        "ERROR [1514002:1514004] [[Health]] Detected a WARNING in health system Thermal: \
         'Detected clocks event due to thermal violation in GPU 2. Verify that the cooling",
    );
    assert_eq!(json(&d)["findings"][0]["gpu"], 2);
    let oom = json(&diagnose("RuntimeError: CUDA error: out of memory"));
    assert!(oom["findings"][0]["runbook"].is_null());
    assert!(oom["findings"][0].get("gpu").is_none());
    assert!(oom["findings"][0].get("pci").is_none());
}

#[test]
fn text_report_lists_verdict_severity_label_gpu_action_runbook_and_evidence() {
    let text = render_text(&diagnose(XID79));
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("findings: 2"));
    assert_eq!(lines.next(), Some(""));
    let first = lines.next().expect("line");
    assert!(
        first.starts_with(
            "CRITICAL xid_79 (GPU 0000:02:00): Xid 79 (ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS)"
        ),
        "{first}"
    );
    assert!(text.contains("\n  action: Reboot the instance"));
    assert!(text.contains("\n  runbook: gpu-lost\n"));
    assert!(text.contains("\n  evidence:\n    NVRM: Xid (PCI:0000:02:00): 79"));
    assert!(text.contains("\n\nCRITICAL gpu_lost (GPU 0000:02:00): "));
}
