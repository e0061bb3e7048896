//! The pasted-text classifier on real texts from public issues and docs (sources in
//! `tests/fixtures/diagnose/README.md`) and on the real healthy H200 captures.

use std::path::{Path, PathBuf};

use gpufleet::diagnose::{Finding, Severity, Verdict, decode_input, diagnose, diagnose_text};

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn read(rel: &str) -> String {
    let path = fixture_dir().join("diagnose").join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn labels(findings: &[Finding]) -> Vec<&str> {
    findings.iter().map(|f| f.label.as_str()).collect()
}

fn find<'a>(findings: &'a [Finding], label: &str) -> &'a Finding {
    findings
        .iter()
        .find(|f| f.label == label)
        .unwrap_or_else(|| panic!("no {label} in {:?}", labels(findings)))
}

/// Asserts that `rel` gives exactly the labels `expected` (in any order; a label raised for
/// several GPUs counts once).
fn assert_labels(rel: &str, expected: &[&str]) -> Vec<Finding> {
    let findings = diagnose_text(&read(rel));
    let mut got = labels(&findings);
    got.sort_unstable();
    got.dedup();
    let mut want = expected.to_vec();
    want.sort_unstable();
    assert_eq!(got, want, "{rel}: {findings:#?}");
    findings
}

#[test]
fn every_healthy_h200_capture_gives_no_findings() {
    let dirs = vec![
        fixture_dir().join("diagnose/healthy"),
        fixture_dir().join("nvidia-smi/h200-driver-580"),
    ];
    let mut seen = 0;
    for dir in dirs {
        for entry in std::fs::read_dir(&dir).expect("fixture dir") {
            let path = entry.expect("entry").path();
            let text = std::fs::read_to_string(&path).expect("utf-8 capture");
            let d = diagnose(&text);
            assert!(
                d.findings.is_empty(),
                "{}: {:#?}",
                path.display(),
                d.findings
            );
            assert_ne!(d.verdict, Verdict::Findings);
            seen += 1;
        }
    }
    assert!(seen >= 29, "only {seen} captures read");
}

#[test]
fn the_loaded_h200_with_its_power_cap_active_is_healthy_all_at_once() {
    let mut all = String::new();
    for name in [
        "stream_load.txt",
        "query_load.txt",
        "smi_qx_load.txt",
        "smi_load.txt",
        "dmon.txt",
    ] {
        all.push_str(&read(&format!("healthy/{name}")));
    }
    assert_eq!(diagnose_text(&all), Vec::<Finding>::new());
}

#[test]
fn xid_79_in_every_era_is_a_lost_gpu() {
    for rel in ["kernel/xid79_no_pid.txt", "kernel/xid79_pid_name.txt"] {
        let findings = assert_labels(rel, &["xid_79", "gpu_lost"]);
        let xid = find(&findings, "xid_79");
        assert_eq!(xid.severity, Severity::Critical);
        assert_eq!(xid.runbook.as_deref(), Some("gpu-lost"));
        assert!(xid.action.contains("Reboot the instance"), "{}", xid.action);
        assert!(xid.action.contains("rent another"), "{}", xid.action);
        assert_eq!(xid.evidence.len(), 1);
    }
    let findings = assert_labels("kernel/xid79_rtx5090_journal.txt", &["xid_79", "gpu_lost"]);
    // The Xid line and the driver's own "GPU ... has fallen off the bus" line.
    assert_eq!(find(&findings, "gpu_lost").evidence.len(), 2);
}

#[test]
fn lost_gpu_lines_without_an_xid_number() {
    assert_labels("kernel/fallen_off_no_xid.txt", &["gpu_lost"]);
    assert_labels("kernel/fallen_off_old_driver.txt", &["gpu_lost"]);
    assert_labels("kernel/gsp_gpu_lost_assert.txt", &["gpu_lost"]);
    let findings = assert_labels("kernel/fallen_off_multiline.txt", &["gpu_lost"]);
    assert!(find(&findings, "gpu_lost").evidence[0].contains("fallen off the bus"));
}

#[test]
fn older_and_newer_xid_layouts() {
    assert_labels("kernel/xid31_old_no_pci_prefix.txt", &["xid_31"]);
    assert_labels("kernel/xid31_channel_hex.txt", &["xid_31"]);
    assert_labels("kernel/xid69_31_journal.txt", &["xid_69", "xid_31"]);
    assert_labels("kernel/xid46_bare_code.txt", &["xid_46"]);
    assert_labels("kernel/xid74_nvlink.txt", &["xid_74"]);
    assert_labels("kernel/xid145_nvlink5.txt", &["xid_145"]);
    let findings = assert_labels("kernel/xid43_pid_only.txt", &["xid_43"]);
    assert_eq!(find(&findings, "xid_43").severity, Severity::Info);
}

#[test]
fn unknown_pid_lines_dedupe_into_one_finding_per_xid() {
    let findings = assert_labels("kernel/xid13_109_dmesg_ctime.txt", &["xid_13", "xid_109"]);
    let xid13 = find(&findings, "xid_13");
    assert_eq!(xid13.evidence.len(), 3);
    assert!(xid13.evidence[0].starts_with("[Fri Aug 30 11:43:09 2024] NVRM: Xid"));
    assert_eq!(find(&findings, "xid_109").severity, Severity::Critical);
    // Most severe first.
    assert_eq!(findings[0].label, "xid_109");
}

#[test]
fn caused_by_previous_xid_raises_the_cause_too() {
    let findings = assert_labels(
        "kernel/xid45_caused_by_journal.txt",
        &["xid_45", "xid_145", "xid_149"],
    );
    // One finding per GPU, each with its PCI address and its own lines.
    let xid45: Vec<&Finding> = findings.iter().filter(|f| f.label == "xid_45").collect();
    let mut pcis: Vec<&str> = xid45.iter().filter_map(|f| f.pci.as_deref()).collect();
    pcis.sort_unstable();
    assert_eq!(
        pcis,
        ["0000:97:00", "0000:ba:00", "0000:dc:00", "0000:ed:00"]
    );
    for f in &xid45 {
        let pci = f.pci.as_deref().expect("pci");
        assert!(f.evidence.iter().all(|l| l.contains(&pci[5..])), "{f:#?}");
    }
}

#[test]
fn mig_attribution_and_memory_xids() {
    let findings = assert_labels("kernel/xid94_mig_gpu_instance.txt", &["xid_94"]);
    assert_eq!(
        find(&findings, "xid_94").runbook.as_deref(),
        Some("ecc-remap")
    );
    assert_labels("kernel/xid63_row_remapper.txt", &["xid_63"]);
    assert_labels(
        "kernel/dmesg_T_43_31_94.txt",
        &["xid_43", "xid_31", "xid_94"],
    );
}

#[test]
fn xid_154_recovery_action_is_the_verdict() {
    let findings = assert_labels("kernel/xid154_gpu_reset.txt", &["xid_154"]);
    let f = find(&findings, "xid_154");
    assert_eq!(f.severity, Severity::Critical);
    assert!(f.action.contains("needs a reset"), "{}", f.action);
    assert!(f.summary.contains("GPU Reset Required"), "{}", f.summary);

    // The latest transition wins: back to None means nothing to do.
    let findings = assert_labels("kernel/xid154_reset_then_none.txt", &["xid_154"]);
    assert_eq!(find(&findings, "xid_154").severity, Severity::Info);
}

#[test]
fn nvidia_smi_failure_texts() {
    assert_labels("smi/gpu_lost.txt", &["gpu_lost"]);
    assert_labels("smi/handle_unknown_error.txt", &["gpu_lost"]);
    assert_labels("smi/no_devices.txt", &["no_devices"]);
    // The finer label keeps its family's name as its prefix.
    assert_labels("smi/nvml_init_unknown_error.txt", &["nvml_error_unknown"]);
    assert_labels("smi/nvml_insufficient_permissions.txt", &["nvml_error"]);
    assert_labels("smi/nvlink_inactive.txt", &[]);
    let f = assert_labels("smi/driver_not_loaded.txt", &["driver_not_loaded"]);
    assert_eq!(f[0].runbook.as_deref(), Some("driver-lost"));
    let f = assert_labels("smi/driver_library_mismatch.txt", &["driver_lib_mismatch"]);
    assert_eq!(
        f[0].evidence,
        vec!["Failed to initialize NVML: Driver/library version mismatch"]
    );
}

#[test]
fn a_single_unreadable_field_is_not_a_lost_gpu() {
    assert_labels("smi/table_power_err.txt", &[]);
    assert_labels("smi/csv_unknown_error_field.txt", &[]);
    assert_labels("smi/table_v100s_rows.txt", &[]);
}

#[test]
fn remapped_rows_pending_in_q_output() {
    let findings = assert_labels("smi/q_remapped_rows_pending.txt", &["row_remap_pending"]);
    assert_eq!(
        find(&findings, "row_remap_pending").runbook.as_deref(),
        Some("ecc-remap")
    );
}

#[test]
fn tracebacks_and_application_errors() {
    assert_labels("traceback/torch_oom_new.txt", &["oom"]);
    assert_labels("traceback/torch_cuda_oom.txt", &["oom"]);
    assert_labels("traceback/runtime_cuda_error_oom.txt", &["oom"]);
    let f = assert_labels("traceback/no_kernel_image.txt", &["cuda_arch_mismatch"]);
    assert_eq!(f[0].runbook.as_deref(), Some("cuda-mismatch"));
    assert_labels(
        "traceback/sm120_not_compatible.txt",
        &["cuda_arch_mismatch"],
    );
    assert_labels("traceback/driver_too_old.txt", &["driver_too_old"]);
    assert_labels(
        "traceback/driver_too_old_assertion.txt",
        &["driver_too_old"],
    );
    assert_labels("traceback/nccl_unhandled_cuda_error.txt", &["nccl_error"]);
    assert_labels(
        "traceback/nccl_unhandled_cuda_error_title.txt",
        &["nccl_error"],
    );
    assert_labels("traceback/nccl_warn_oom.txt", &["nccl_error", "oom"]);
    assert_labels(
        "traceback/pynvml_driver_not_loaded.txt",
        &["driver_not_loaded"],
    );
    assert_labels(
        "traceback/rust_nvml_driver_not_loaded.txt",
        &["driver_not_loaded"],
    );
    assert_labels(
        "traceback/pynvml_lib_rm_mismatch.txt",
        &["driver_lib_mismatch"],
    );
    assert_labels("traceback/pynvml_gpu_is_lost.txt", &["gpu_lost"]);
    assert_labels(
        "traceback/cuda_ecc_uncorrectable.txt",
        &["ecc_uncorrectable"],
    );
    let f = assert_labels(
        "traceback/dcgm_thermal_violation.txt",
        &["thermal_throttle"],
    );
    assert_eq!(f[0].gpu, Some(2));
}

#[test]
fn a_paste_of_many_sources_gives_each_finding_once() {
    let mut all = String::new();
    for rel in [
        "traceback/pynvml_gpu_is_lost.txt",
        "kernel/xid79_no_pid.txt",
        "smi/gpu_lost.txt",
        "healthy/smi.txt",
        "traceback/torch_oom_new.txt",
    ] {
        all.push_str(&read(rel));
    }
    let findings = diagnose_text(&all);
    let mut got = labels(&findings);
    got.sort_unstable();
    got.dedup();
    assert_eq!(got, vec!["gpu_lost", "oom", "xid_79"]);
    // The three texts name the lost GPU differently: pynvml names none, the kernel line and
    // nvidia-smi each name their own bus address; every line is kept, per GPU.
    let lost: usize = findings
        .iter()
        .filter(|f| f.label == "gpu_lost")
        .map(|f| f.evidence.len())
        .sum();
    assert_eq!(lost, 3);
}

#[test]
fn evidence_is_free_of_terminal_escapes() {
    let text = format!("\u{1b}]0;pwned\u{7}{}", read("kernel/xid79_no_pid.txt"));
    let findings = diagnose_text(&text);
    for f in &findings {
        for line in &f.evidence {
            assert!(!line.chars().any(char::is_control), "{line:?}");
        }
    }
}

#[test]
fn input_checks_for_the_cli() {
    assert!(decode_input(b"  \n").is_err());
    // A log with a bad byte is still a log: the byte shows as U+FFFD.
    assert_eq!(
        decode_input(b"No devices \xff were found\n").as_deref(),
        Ok("No devices \u{FFFD} were found\n")
    );
    assert_eq!(
        decode_input(b"No devices were found\n").as_deref(),
        Ok("No devices were found\n")
    );
}

#[test]
fn a_gpu_lost_in_the_table_and_in_the_kernel_log_is_one_finding() {
    // The table of NVIDIA/gpu-operator#559: GPU 0 reads ERR! in most cells.
    let table = read("smi/table_err_lost_gpu0.txt");
    let findings = assert_labels("smi/table_err_lost_gpu0.txt", &["gpu_lost"]);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert_eq!(findings[0].gpu, Some(0));
    assert_eq!(findings[0].pci.as_deref(), Some("0000:19:00"));
    // Pasted with the kernel's word for the same GPU: a real Xid 79 line (xid79_no_pid.txt)
    // naming the lost GPU's address, as the host's dmesg would.
    let kernel = read("kernel/xid79_no_pid.txt").replace("PCI:0000:02:00", "PCI:0000:19:00");
    assert!(kernel.contains("PCI:0000:19:00"), "{kernel}");
    let findings = diagnose_text(&format!("{table}{kernel}"));
    let lost: Vec<&Finding> = findings.iter().filter(|f| f.label == "gpu_lost").collect();
    assert_eq!(lost.len(), 1, "one GPU, one gpu_lost: {findings:#?}");
    assert_eq!(lost[0].gpu, Some(0), "the table's index is kept");
    assert_eq!(lost[0].pci.as_deref(), Some("0000:19:00"));
    assert!(
        lost[0].evidence.iter().any(|e| e.contains("ERR!"))
            && lost[0].evidence.iter().any(|e| e.contains("Xid")),
        "both lines are its evidence: {:?}",
        lost[0].evidence
    );
}
