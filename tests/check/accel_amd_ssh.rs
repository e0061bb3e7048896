//! A host with AMD GPUs read through `amd-smi monitor`, over a real sshd: the fake `amd-smi`
//! (tests/fixtures/fake-accel/amd-smi) prints one published sample byte for byte, the host also
//! has `rocm-smi`, and the link prefers amd-smi. Each complete monitor sample gives the numbers
//! it prints with vendor `amd` in `snapshot --json`, what it does not print stays null; a table
//! gpufleet does not read and the published failure texts are reported as such, never as
//! numbers.

use crate::accel_ssh::{self, vendor_host, write_named_config};
use crate::common;

use common::sshd::Sshd;

/// An sshd whose remote `PATH` has the fake `amd-smi` and `rocm-smi` (no `nvidia-smi`) and
/// replays the sample `scenario`; `None` when sshd tests cannot run here.
fn amd_smi_host(scenario: &str) -> Option<Sshd> {
    let sshd = vendor_host("amd-smi")?;
    sshd.set_scenario(scenario);
    Some(sshd)
}

/// `snapshot --json` of the host replaying `scenario`: exit code, the host, the fake's calls.
fn snapshot(scenario: &str) -> Option<(Option<i32>, serde_json::Value, Vec<String>)> {
    let sshd = amd_smi_host(scenario)?;
    let dir = tempfile::tempdir().expect("temp");
    let config = write_named_config(&sshd, dir.path(), "mi300x", "");
    let (code, doc) = accel_ssh::snapshot(&config, dir.path());
    assert!(sshd.calls("rocm-smi").is_empty(), "amd-smi is preferred");
    Some((code, doc["hosts"][0].clone(), sshd.calls("amd-smi")))
}

/// The live host's GPUs, each checked to be AMD's.
fn live_gpus(scenario: &str) -> Option<Vec<serde_json::Value>> {
    let (code, host, calls) = snapshot(scenario)?;
    assert_eq!(code, Some(0), "{scenario}: {host:#}");
    assert_eq!(host["status"], "live", "{scenario}: {host:#}");
    assert_eq!(calls, ["monitor"], "{scenario}");
    let gpus = host["gpus"].as_array().expect("gpus").clone();
    for gpu in &gpus {
        assert_eq!(gpu["vendor"], "amd", "{gpu:#}");
    }
    Some(gpus)
}

#[test]
fn the_current_monitor_layout_reads_power_heat_load_clock_and_memory() {
    let Some(gpus) = live_gpus("monitor-05") else {
        return;
    };
    assert_eq!(gpus.len(), 1);
    let gpu = &gpus[0];
    assert_eq!(gpu["power_draw_w"], 305.0);
    assert_eq!(gpu["temperature_c"], 49.0);
    assert_eq!(gpu["temperature_memory_c"], 43.0);
    assert_eq!(gpu["clock_sm_mhz"], 2106);
    assert_eq!(gpu["utilization_gpu_pct"], 97.0);
    assert_eq!(gpu["utilization_memory_pct"], 1.0);
    // 3.0 of 191.7 GB (binary), as MiB.
    assert_eq!(gpu["memory_used_mib"], 3072);
    assert_eq!(gpu["memory_total_mib"], 196301);
    // Not in the table: unknown, not 0.
    assert!(gpu["power_limit_w"].is_null(), "{gpu:#}");
    assert!(gpu["clock_mem_mhz"].is_null(), "{gpu:#}");
}

#[test]
fn the_same_layout_before_a_process_table_reads_the_gpu_row_only() {
    let Some(gpus) = live_gpus("monitor-06") else {
        return;
    };
    assert_eq!(gpus.len(), 1);
    assert_eq!(gpus[0]["power_draw_w"], 293.0);
    assert_eq!(gpus[0]["memory_used_mib"], 3174);
}

#[test]
fn the_wide_layout_reads_ecc_and_exact_memory() {
    let Some(gpus) = live_gpus("monitor-01") else {
        return;
    };
    assert_eq!(gpus.len(), 1);
    let gpu = &gpus[0];
    assert_eq!(gpu["temperature_c"], 103.0);
    assert_eq!(gpu["clock_mem_mhz"], 1000);
    assert_eq!(gpu["memory_used_mib"], 1235);
    assert_eq!(gpu["memory_total_mib"], 16335);
    assert_eq!(gpu["ecc_uncorrected_volatile"], 0);
}

#[test]
fn thirty_two_partitions_each_read_power_heat_and_memory() {
    let Some(gpus) = live_gpus("monitor-02") else {
        return;
    };
    assert_eq!(gpus.len(), 32);
    assert_eq!(gpus[31]["index"], 31);
    assert_eq!(gpus[4]["power_draw_w"], 221.0);
    assert_eq!(gpus[0]["memory_total_mib"], 196300);
    assert!(gpus[0]["utilization_gpu_pct"].is_null(), "{:#}", gpus[0]);
}

#[test]
fn the_blog_layout_reads_load_and_clocks_without_memory() {
    let Some(gpus) = live_gpus("monitor-04") else {
        return;
    };
    assert_eq!(gpus.len(), 8);
    assert_eq!(gpus[0]["utilization_gpu_pct"], 83.0);
    assert_eq!(gpus[0]["clock_sm_mhz"], 1613);
    assert_eq!(gpus[1]["clock_mem_mhz"], 1173);
    assert!(gpus[0]["memory_total_mib"].is_null(), "{:#}", gpus[0]);
}

#[test]
fn an_apu_reads_its_gtt_memory() {
    let Some(gpus) = live_gpus("monitor-07") else {
        return;
    };
    assert_eq!(gpus.len(), 4);
    assert_eq!(gpus[2]["power_draw_w"], 33.0);
    assert_eq!(gpus[0]["memory_total_mib"], 385741);
}

#[test]
fn secondary_partitions_show_unknowns_not_zeros() {
    let Some(gpus) = live_gpus("monitor-08") else {
        return;
    };
    assert_eq!(gpus.len(), 8);
    assert_eq!(gpus[0]["power_draw_w"], 183.0);
    assert!(gpus[1]["power_draw_w"].is_null(), "{:#}", gpus[1]);
    assert!(gpus[1]["temperature_c"].is_null(), "{:#}", gpus[1]);
    assert_eq!(gpus[1]["memory_total_mib"], 49152);
}

#[test]
fn a_table_gpufleet_does_not_read_is_unsupported_not_numbers() {
    let Some((code, host, _)) = snapshot("monitor-03") else {
        return;
    };
    assert_eq!(code, Some(1), "{host:#}");
    assert_eq!(host["status"], "telemetry_failed", "{host:#}");
    let detail = host["status_detail"].as_str().expect("detail");
    assert!(
        detail.starts_with("unsupported output from amd-smi"),
        "{detail}"
    );
    assert!(
        detail.contains("PVIOL"),
        "the first lines are shown: {detail}"
    );
    assert_eq!(host["gpus"], serde_json::json!([]));
}

#[test]
fn the_failure_texts_report_the_driver_or_the_missing_devices() {
    for (scenario, status, says) in [
        (
            "error-02",
            "driver_not_loaded",
            "amdgpu not found in modules",
        ),
        ("error-03", "driver_not_loaded", "driver not initialized"),
        ("error-04", "no_devices", "Unable to detect any GPU devices"),
    ] {
        let Some((code, host, _)) = snapshot(scenario) else {
            return;
        };
        assert_eq!(code, Some(1), "{scenario}: {host:#}");
        assert_eq!(host["status"], status, "{scenario}: {host:#}");
        let detail = host["status_detail"].as_str().expect("detail");
        assert!(detail.contains(says), "{scenario}: {detail}");
        assert_eq!(host["gpus"], serde_json::json!([]));
    }
}

/// A followed AMD host forwards the amdgpu driver's kernel lines, and they give the finding
/// `gpufleet diagnose` gives for the same text.
#[test]
fn a_followed_amd_host_forwards_its_amdgpu_kernel_lines() {
    use common::{channel, is_sample, test_options};
    use gpufleet::fleet::HostEvent;
    use gpufleet::remote::spawn_link;
    use std::time::Duration;

    let Some(sshd) = amd_smi_host("dmesg-ras-01") else {
        return;
    };
    let (sink, mut events) = channel();
    let opts = test_options(&sshd.trusted_known_hosts());
    let link = spawn_link(sshd.remote_host("mi300x"), 0, sink, opts).expect("spawn");
    // Generous waits: the kernel log is followed once the probe has chosen amd-smi, and the
    // whole check area runs its sshd hosts at once.
    events.expect(Duration::from_secs(30), "Sample", |_, e| is_sample(e));
    events.expect(Duration::from_secs(30), "Kernel", |_, e| {
        matches!(e, HostEvent::Kernel { .. })
    });
    std::thread::sleep(Duration::from_millis(500));
    events.expect(Duration::from_secs(10), "Sample", |_, e| is_sample(e));
    link.stop_and_join();
    let lines: Vec<String> = events
        .seen
        .iter()
        .filter_map(|(_, e, _)| match e {
            HostEvent::Kernel { line, .. } => Some(line.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(lines.len(), 12, "{lines:#?}");
    assert!(
        lines[0].contains("uncorrectable hardware error"),
        "{lines:#?}"
    );
    let d = gpufleet::diagnose::diagnose(&lines.join("\n"));
    let labels: Vec<&str> = d.findings.iter().map(|f| f.label.as_str()).collect();
    assert_eq!(labels, ["amdgpu_ras_uncorrectable"]);
    assert_eq!(sshd.calls("dmesg"), ["--follow-new"]);
}
