//! Coverage and verdicts: the errors renters paste, on real texts from public
//! reports (sources in `tests/fixtures/diagnose/README.md`), the verdict each text gets, and
//! the order of several findings.

use std::path::{Path, PathBuf};

use gpufleet::diagnose::{Cause, Diagnosis, Finding, Severity, Verdict, diagnose};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn read(rel: &str) -> String {
    let path = fixtures().join("diagnose").join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn labels(d: &Diagnosis) -> Vec<&str> {
    d.findings.iter().map(|f| f.label.as_str()).collect()
}

fn find<'a>(d: &'a Diagnosis, label: &str) -> &'a Finding {
    d.findings
        .iter()
        .find(|f| f.label == label)
        .unwrap_or_else(|| panic!("no {label} in {:?}", labels(d)))
}

/// `rel` gives findings with exactly these labels, in this order.
fn expect(rel: &str, want: &[&str]) -> Diagnosis {
    let d = diagnose(&read(rel));
    assert_eq!(labels(&d), want, "{rel}: {:#?}", d.findings);
    assert_eq!(d.verdict, Verdict::Findings, "{rel}");
    assert_eq!(d.exit_code(), 1);
    d
}

#[test]
fn driver_bring_up_failures_per_gpu() {
    let d = expect(
        "kernel/rminitadapter_gsp_gfw_3090.txt",
        &[
            "gpu_init_failed_gsp",
            "gpu_init_failed",
            "gpu_init_failed_gfw_boot",
        ],
    );
    assert_eq!(
        find(&d, "gpu_init_failed").pci.as_deref(),
        Some("0000:98:00")
    );
    for f in &d.findings {
        assert_eq!(f.severity, Severity::Critical);
        assert_eq!(f.runbook.as_deref(), Some("gpu-lost"));
        assert!(f.action.contains("rent another"), "{}", f.action);
    }
    let d = expect("kernel/rminitadapter_two_gpus.txt", &["gpu_init_failed"; 2]);
    let pcis: Vec<_> = d.findings.iter().map(|f| f.pci.as_deref()).collect();
    assert_eq!(pcis, [Some("0000:04:01"), Some("0000:04:02")]);
    assert_eq!(d.findings[0].evidence.len(), 4);
    expect(
        "kernel/rminitadapter_journal_vmware.txt",
        &["gpu_init_failed"],
    );
    let d = expect("kernel/rminitadapter_old_no_pci.txt", &["gpu_init_failed"]);
    assert_eq!(d.findings[0].pci, None);
    expect(
        "kernel/gsp_wpr2_already_up.txt",
        &["gpu_init_failed_gsp", "gpu_init_failed"],
    );
}

#[test]
fn gsp_heartbeat_and_rpc_timeouts() {
    let d = expect("kernel/gsp_timeout_heartbeat.txt", &["gsp_timeout"]);
    assert_eq!(d.findings[0].evidence.len(), 3);
    assert_eq!(d.findings[0].runbook.as_deref(), Some("gpu-lost"));
}

#[test]
fn a_double_bit_ecc_error_comes_before_the_bring_up_failure_it_explains() {
    // Xid 48 with the failed page retirement (Xid 64) and RmInitAdapter failing: the memory
    // fault is the headline, with the memory runbook, ahead of the bring-up failure.
    let d = expect(
        "kernel/xid48_dbe_rminitadapter.txt",
        &["ecc_uncorrectable", "xid_48", "xid_64", "gpu_init_failed"],
    );
    let ecc = &d.findings[0];
    assert_eq!(ecc.pci.as_deref(), Some("0000:07:00"));
    assert_eq!(ecc.runbook.as_deref(), Some("ecc-remap"));
    assert_eq!(ecc.evidence.len(), 2, "{:#?}", ecc.evidence);
    assert!(ecc.action.contains("rent another"), "{}", ecc.action);
    assert_eq!(find(&d, "xid_48").runbook.as_deref(), Some("ecc-remap"));
    assert!(
        find(&d, "xid_48").summary.contains("WORKFLOW_XID_48"),
        "{}",
        find(&d, "xid_48").summary
    );
}

#[test]
fn gsp_xids_are_gsp_faults() {
    // Xid 119: the GSP stopped answering RPCs.
    let d = expect(
        "kernel/xid119_gsp_rpc_timeout.txt",
        &["gsp_timeout", "xid_119"],
    );
    assert_eq!(d.findings[0].pci.as_deref(), Some("0000:61:00"));
    assert_eq!(d.findings[0].evidence.len(), 5);
    // Xid 120 while the driver loads: a GSP error, not the bring-up's GFW_BOOT wait.
    let d = expect(
        "kernel/xid120_gsp_task_exception_init.txt",
        &["gsp_error", "xid_120"],
    );
    let f = &d.findings[0];
    assert_eq!(f.severity, Severity::Critical);
    assert_eq!(f.runbook.as_deref(), Some("gpu-lost"));
    assert!(f.summary.contains("Xid 120"), "{}", f.summary);
    assert!(f.action.contains("reboot the instance"), "{}", f.action);
}

#[test]
fn nouveau_and_probe_failures() {
    let d = expect("kernel/nouveau_probe_not_called.txt", &["nouveau_conflict"]);
    assert!(d.findings[0].action.contains("blacklist nouveau"));
    expect("kernel/nouveau_lspci_in_use.txt", &["nouveau_conflict"]);
    expect("kernel/probe_failed_bar0.txt", &["driver_probe_failed"]);
    // A probe that failed because the GPU fell off the bus: the lost GPU says it all.
    expect("kernel/fallen_off_multiline.txt", &["gpu_lost"]);
}

#[test]
fn pcie_aer_on_a_gpu_but_not_on_other_devices() {
    let d = expect("kernel/aer_nvidia_correctable.txt", &["pcie_aer"]);
    assert_eq!(d.findings[0].pci.as_deref(), Some("0000:07:00"));
    assert_eq!(d.findings[0].severity, Severity::Warning);
    let d = expect("kernel/aer_cant_recover.txt", &["pcie_aer_fatal"]);
    assert_eq!(d.findings[0].pci.as_deref(), Some("0000:03:00"));
    // Errors of the root port alone name no GPU: the lost GPU is the finding.
    let d = expect("kernel/aer_port_then_xid79.txt", &["xid_79", "gpu_lost"]);
    assert_eq!(
        find(&d, "xid_79").uuid.as_deref(),
        Some("GPU-660d987e-5b28-3bf6-2a2d-1d5ecae7f6df")
    );
    let d = expect("smi/handle_unknown_error_bus.txt", &["gpu_lost"]);
    assert_eq!(d.findings[0].pci.as_deref(), Some("0000:0b:00"));
}

#[test]
fn cuda_runtime_errors_blame_the_code_unless_the_gpu_failed() {
    for rel in [
        "traceback/cuda_illegal_address.txt",
        "traceback/cuda_illegal_address_minerU.txt",
    ] {
        let d = expect(rel, &["cuda_illegal_address"]);
        assert_eq!(d.findings[0].severity, Severity::Warning);
        assert!(d.findings[0].action.starts_with("Your code"));
    }
    let d = expect("traceback/cuda_device_assert.txt", &["cuda_device_assert"]);
    assert!(d.findings[0].action.contains("not the host"));
    expect("traceback/cuda_busy_unavailable.txt", &["cuda_device_busy"]);
    expect("traceback/cuda_busy_thc_46.txt", &["cuda_device_busy"]);
    expect(
        "traceback/cuda_launch_failure.txt",
        &["cuda_launch_failure"],
    );
    expect(
        "traceback/cuda_802_bandwidth_test.txt",
        &["fabric_manager_not_ready"],
    );
    expect("traceback/fabric_manager_failed.txt", &["fabric_manager"]);

    // The same traceback with the GPU falling off the bus at the time: the host's fault, and
    // the lost GPU comes first.
    let text = format!(
        "{}{}",
        read("traceback/cuda_illegal_address.txt"),
        read("kernel/xid79_no_pid.txt")
    );
    let d = diagnose(&text);
    assert_eq!(labels(&d), ["xid_79", "gpu_lost", "cuda_illegal_address"]);
    let cuda = find(&d, "cuda_illegal_address");
    assert_eq!(cuda.severity, Severity::Critical);
    assert!(
        cuda.summary.contains("host is to blame"),
        "{}",
        cuda.summary
    );
}

#[test]
fn nccl_failures_with_rank_host_and_likely_cause() {
    let d = expect("traceback/nccl_watchdog_timeout.txt", &["nccl_timeout"]);
    assert_eq!(d.findings[0].rank, Some(0));
    assert_eq!(d.findings[0].cause, Some(Cause::Code));
    let d = expect("traceback/nccl_socket_closed.txt", &["nccl_network"]);
    let f = &d.findings[0];
    assert_eq!(f.host.as_deref(), Some("gpu004"));
    assert_eq!(f.peer.as_deref(), Some("gpu004.ds-a4-r02.abc.com"));
    assert_eq!(f.cause, Some(Cause::Network));
    let d = expect("traceback/nccl_ib_completion_error.txt", &["nccl_network"]);
    assert_eq!(d.findings[0].peer.as_deref(), Some("10.0.35.1"));
    expect("traceback/nccl_remote_error.txt", &["nccl_network"]);
    expect(
        "traceback/nccl_unhandled_system_error.txt",
        &["nccl_system"],
    );
    // The family label stays for NCCL errors no finer label explains.
    expect("traceback/nccl_unhandled_cuda_error.txt", &["nccl_error"]);
}

#[test]
fn a_lost_gpu_comes_before_the_nccl_timeout_it_caused() {
    let text = format!(
        "{}{}",
        read("traceback/nccl_watchdog_timeout.txt"),
        read("kernel/aer_port_then_xid79.txt")
    );
    let d = diagnose(&text);
    assert_eq!(labels(&d), ["xid_79", "gpu_lost", "nccl_timeout"]);
    let nccl = find(&d, "nccl_timeout");
    assert_eq!(nccl.cause, Some(Cause::PeerGpu));
    assert_eq!(d.findings[0].pci.as_deref(), Some("0000:02:00"));
}

#[test]
fn nvidia_smi_and_container_failures() {
    expect(
        "smi/docker_could_not_select_driver.txt",
        &["container_no_gpu_runtime"],
    );
    let d = expect("smi/nvml_init_unknown_error.txt", &["nvml_error_unknown"]);
    assert!(d.findings[0].summary.contains("container"));
    expect("smi/no_devices.txt", &["no_devices"]);
    // One ERR! cell on a working GPU is not a lost GPU.
    let d = diagnose(&read("smi/table_fan_err_one_gpu.txt"));
    assert!(d.findings.is_empty(), "{:#?}", d.findings);
    let d = diagnose(&read("smi/table_power_err.txt"));
    assert!(d.findings.is_empty(), "{:#?}", d.findings);
}

#[test]
fn healthy_needs_positive_evidence() {
    let healthy = [
        "other_drivers/smi_440_grid_t4.txt",
        "other_drivers/smi_455_rtx3090.txt",
        "other_drivers/smi_510_geforce.txt",
        "healthy/smi.txt",
        "healthy/smi_load.txt",
        "healthy/smi_q.txt",
        "healthy/smi_qx.txt",
        "healthy/query_idle.txt",
        "healthy/stream_load.txt",
        "healthy/smi_L.txt",
        "smi/table_power_err.txt",
        "smi/table_fan_err_one_gpu.txt",
    ];
    for rel in healthy {
        let d = diagnose(&read(rel));
        assert_eq!(d.verdict, Verdict::Healthy, "{rel}: {:#?}", d.findings);
        assert_eq!(d.exit_code(), 0);
    }
    // Training logs of runs that learn: recognised, and healthy.
    let logs = fixtures().join("training-logs");
    for name in ["lightning.log", "plain.log", "hf_full.log"] {
        let text = std::fs::read_to_string(logs.join(name)).expect("training log");
        let d = diagnose(&text);
        assert_eq!(d.verdict, Verdict::Healthy, "{name}: {:#?}", d.findings);
        assert!(d.training.is_some(), "{name}");
    }
}

#[test]
fn unrelated_text_is_unrecognised() {
    let texts = [
        "hello world".to_string(),
        read("unrelated/module_not_found.txt"),
        read("healthy/help.txt"),
    ];
    for text in &texts {
        let d = diagnose(text);
        assert_eq!(d.verdict, Verdict::Unrecognised, "{text:.80}");
        assert_eq!(d.exit_code(), 3);
    }
}

#[test]
fn out_of_memory_says_who_holds_the_memory_when_the_process_list_is_there() {
    let text = format!(
        "{}{}",
        read("traceback/torch_oom_new.txt"),
        read("healthy/smi_load.txt")
    );
    let d = diagnose(&text);
    let oom = find(&d, "oom");
    assert!(
        oom.evidence
            .iter()
            .any(|l| l == "GPU 0: pid 549 python3 holds 58352MiB"),
        "{:#?}",
        oom.evidence
    );
}

#[test]
fn nvswitch_sxids_by_their_own_fatal_or_non_fatal_word() {
    let d = expect("kernel/nvswitch_sxid_nonfatal.txt", &["nvswitch_sxid"]);
    let f = &d.findings[0];
    assert_eq!(f.severity, Severity::Info);
    // Only the lines that say Non-fatal are its evidence; the Data and Severity lines of the
    // same event are not.
    assert_eq!(f.evidence.len(), 2);
    assert!(f.evidence.iter().all(|l| l.contains("Non-fatal")));
}
