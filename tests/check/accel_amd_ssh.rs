//! A host with AMD GPUs read through `amd-smi monitor`, over a real sshd: the fake `amd-smi`
//! (tests/fixtures/fake-accel/amd-smi) prints one published sample byte for byte, the host also
//! has `rocm-smi`, and the link prefers amd-smi. Each complete monitor sample gives the numbers
//! it prints with vendor `amd` in `snapshot --json`, what it does not print stays null; a table
//! gpufleet does not read and the published failure texts are reported as such, never as
//! numbers. `amd-smi static` gives each GPU its model, bus id and driver, and
//! `amd-smi process --csv` (or, where amd-smi refuses the CSV, the `amd-smi process` report) its
//! processes; an amd-smi without `monitor` is read through `amd-smi metric`; each replayed from
//! its published sample.

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
    // One reading: `amd-smi static` first, then the monitor table and the process list (the
    // report where the fake has no CSV, as an amd-smi that refuses it).
    let mut expected = vec!["static", "monitor", "process --csv"];
    if !scenario.contains("process-csv-") {
        expected.push("process");
    }
    assert_eq!(calls, expected, "{scenario}");
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
    // The kernel lines may come before the first reading or after it.
    events.expect(Duration::from_secs(30), "Sample", |_, e| is_sample(e));
    let kernel = |e: &HostEvent| matches!(e, HostEvent::Kernel { .. });
    if !events.seen.iter().any(|(_, e, _)| kernel(e)) {
        events.expect(Duration::from_secs(30), "Kernel", |_, e| kernel(e));
    }
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
    // Each amd-smi run starts Python on the host: the process report comes at the process
    // lists' pace (1 s here), not with every reading (200 ms here).
    let calls = sshd.calls("amd-smi");
    let count = |name: &str| calls.iter().filter(|c| c.as_str() == name).count();
    assert!(count("process --csv") >= 1, "{calls:?}");
    assert!(count("monitor") > count("process --csv"), "{calls:?}");
}

/// The kernel lines a followed AMD host forwards while its fake `dmesg --follow-new` prints
/// the published log `scenario` names (its first reading and one more seen).
fn followed_kernel_lines(scenario: &str) -> Option<Vec<String>> {
    use common::{channel, is_sample, test_options};
    use gpufleet::fleet::HostEvent;
    use gpufleet::remote::spawn_link;
    use std::time::Duration;

    let sshd = amd_smi_host(scenario)?;
    let (sink, mut events) = channel();
    let opts = test_options(&sshd.trusted_known_hosts());
    let link = spawn_link(sshd.remote_host("radeon"), 0, sink, opts).expect("spawn");
    events.expect(Duration::from_secs(30), "Sample", |_, e| is_sample(e));
    let kernel = |e: &HostEvent| matches!(e, HostEvent::Kernel { .. });
    if !events.seen.iter().any(|(_, e, _)| kernel(e)) {
        events.expect(Duration::from_secs(30), "Kernel", |_, e| kernel(e));
    }
    std::thread::sleep(Duration::from_millis(500));
    events.expect(Duration::from_secs(10), "Sample", |_, e| is_sample(e));
    link.stop_and_join();
    assert_eq!(sshd.calls("dmesg"), ["--follow-new"], "{scenario}");
    Some(
        events
            .seen
            .iter()
            .filter_map(|(_, e, _)| match e {
                HostEvent::Kernel { line, .. } => Some(line.clone()),
                _ => None,
            })
            .collect(),
    )
}

/// The published plain `dmesg` ring timeouts (a Radeon RX 5700 XT, an RDNA3 APU) reach a
/// followed host and give the findings `gpufleet diagnose` gives for the same file.
#[test]
fn a_followed_host_forwards_each_published_ring_timeout_log() {
    for (scenario, pci) in [
        ("dmesg-ringtimeout-01", "0000:28:00"),
        ("dmesg-ringtimeout-03", "0000:c5:00"),
    ] {
        let Some(lines) = followed_kernel_lines(scenario) else {
            return;
        };
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("tests/fixtures/accel/amd-kernel-{scenario}.txt"));
        let published = std::fs::read_to_string(file).expect("fixture");
        let labels = |text: &str| {
            let d = gpufleet::diagnose::diagnose(text);
            let mut labels: Vec<(String, Option<String>)> = d
                .findings
                .iter()
                .map(|f| (f.label.clone(), f.pci.clone()))
                .collect();
            labels.sort();
            labels.dedup();
            labels
        };
        let forwarded = labels(&lines.join("\n"));
        assert!(
            forwarded
                .iter()
                .any(|(l, p)| l == "amdgpu_ring_timeout" && p.as_deref() == Some(pci)),
            "{scenario}: {forwarded:?}\n{lines:#?}"
        );
        assert_eq!(forwarded, labels(&published), "{scenario}: {lines:#?}");
    }
}

#[test]
fn static_names_each_apu_with_its_bus_id_and_the_driver() {
    // The MI300A documentation samples: four APUs in `monitor` and in `static`.
    let Some(gpus) = live_gpus("monitor-07 static-01") else {
        return;
    };
    assert_eq!(gpus.len(), 4);
    for (i, gpu) in gpus.iter().enumerate() {
        assert_eq!(gpu["name"], "MI300A", "{gpu:#}");
        assert_eq!(gpu["bus_id"], format!("000{i}:01:00.0"), "{gpu:#}");
    }
    // The monitor's memory (GTT on an APU) is the live one; static's VRAM size does not
    // replace it.
    assert_eq!(gpus[0]["memory_total_mib"], 385741);
    let (_, host, _) = snapshot("monitor-07 static-01").expect("host");
    assert_eq!(host["driver_version"], "6.9.0-rc5+", "{host:#}");
}

#[test]
fn a_radeon_report_gives_its_bus_id_but_a_device_id_is_no_model() {
    let Some(gpus) = live_gpus("monitor-01 static-02") else {
        return;
    };
    assert_eq!(gpus.len(), 1);
    // MARKET_NAME is the raw id 0x73bf: no model shown, never the id as a name.
    assert_eq!(gpus[0]["name"], "", "{:#}", gpus[0]);
    assert_eq!(gpus[0]["bus_id"], "0000:23:00.0");
    let (_, host, _) = snapshot("monitor-01 static-02").expect("host");
    assert_eq!(host["driver_version"], "6.1.10", "{host:#}");
}

#[test]
fn a_static_report_of_limits_only_names_nothing() {
    // `amd-smi static --limit`'s two GPUs: no model, bus id or driver to read.
    let Some(gpus) = live_gpus("monitor-05 static-04") else {
        return;
    };
    assert_eq!(gpus[0]["name"], "", "{:#}", gpus[0]);
    assert_eq!(gpus[0]["bus_id"], "", "{:#}", gpus[0]);
    assert_eq!(gpus[0]["power_draw_w"], 305.0);
}

#[test]
fn the_process_csv_shows_each_process_on_its_gpu() {
    // The blog's eight MI300X, in `monitor -putm` and in `process --csv`.
    let Some((code, host, _)) = snapshot("monitor-04 process-csv-01") else {
        return;
    };
    assert_eq!(code, Some(0), "{host:#}");
    let processes = host["processes"].as_array().expect("processes");
    assert_eq!(processes.len(), 8, "{host:#}");
    assert_eq!(host["processes_known"], true, "{host:#}");
    let on: Vec<(u64, u64)> = processes
        .iter()
        .map(|p| {
            (
                p["gpu_index"].as_u64().expect("index"),
                p["pid"].as_u64().expect("pid"),
            )
        })
        .collect();
    assert_eq!(on[0], (0, 207590));
    assert_eq!(on[3], (3, 207588));
    assert_eq!(on[7], (7, 207593));
    assert_eq!(processes[0]["name"], "pt_main_thread");
    // 7889485824 bytes of VRAM.
    assert_eq!(processes[0]["used_memory_mib"], 7524);
}

#[test]
fn a_process_list_amd_smi_refuses_lists_none() {
    let Some((code, host, calls)) = snapshot("monitor-05") else {
        return;
    };
    assert_eq!(code, Some(0), "{host:#}");
    // The CSV refused, the report is asked for, and refused too.
    assert_eq!(calls, ["static", "monitor", "process --csv", "process"]);
    assert_eq!(host["processes"], serde_json::json!([]), "{host:#}");
    // Unknown, not "no processes".
    assert_eq!(host["processes_known"], false, "{host:#}");
    assert_eq!(host["gpus"][0]["name"], "", "{host:#}");
}

#[test]
fn an_amd_smi_without_monitor_is_read_through_metric() {
    // ROCm 6.0's amd-smi has no `monitor` (it came with ROCm 6.1): the fake refuses it and
    // prints the AMD blog's `amd-smi metric` of an MI300X for `amd-smi metric`.
    let Some((code, host, calls)) = snapshot("metric-07") else {
        return;
    };
    assert_eq!(code, Some(0), "{host:#}");
    assert_eq!(host["status"], "live", "{host:#}");
    assert_eq!(
        calls,
        ["static", "monitor", "metric", "process --csv", "process"]
    );
    let gpus = host["gpus"].as_array().expect("gpus");
    assert_eq!(gpus.len(), 1, "{host:#}");
    let gpu = &gpus[0];
    assert_eq!(gpu["vendor"], "amd", "{gpu:#}");
    assert_eq!(gpu["utilization_gpu_pct"], 100.0, "{gpu:#}");
    assert_eq!(gpu["utilization_memory_pct"], 0.0, "{gpu:#}");
    assert_eq!(gpu["power_draw_w"], 234.0, "{gpu:#}");
    assert_eq!(gpu["clock_sm_mhz"], 2102, "{gpu:#}");
    // The part of the report the blog shows prints no memory: unknown, not 0.
    assert!(gpu["memory_total_mib"].is_null(), "{gpu:#}");
    // A consumer Radeon's report (cut inside CLOCK where it was published) reads the same way.
    let Some((code, host, _)) = snapshot("metric-08") else {
        return;
    };
    assert_eq!(code, Some(0), "{host:#}");
    assert_eq!(host["gpus"][0]["utilization_memory_pct"], 1.0, "{host:#}");
}

#[test]
fn a_refused_monitor_and_metric_report_the_refusal_not_numbers() {
    // Neither command answered (the fake has no sample for either): no numbers, the tool's
    // output reported as unsupported.
    let Some((code, host, calls)) = snapshot("static-01") else {
        return;
    };
    assert_eq!(code, Some(1), "{host:#}");
    assert_eq!(host["status"], "telemetry_failed", "{host:#}");
    assert!(calls.iter().any(|c| c == "metric"), "{calls:?}");
    let detail = host["status_detail"].as_str().expect("detail");
    assert!(
        detail.starts_with("unsupported output from amd-smi"),
        "{detail}"
    );
    assert_eq!(host["gpus"], serde_json::json!([]));
}

#[test]
fn the_process_report_lists_processes_where_the_csv_is_refused() {
    // Each published `amd-smi process` report, after the current monitor table: the PID, the
    // name as printed (`N/A` for another user's process read without root) and the VRAM.
    for (scenario, pid, name, vram_mib) in [
        ("monitor-05 process-01", 1693982, "N/A", 10342),
        ("monitor-05 process-02", 1693982, "TransferBench", 10342),
        ("monitor-05 process-04", 2266127, "N/A", 1946),
    ] {
        let Some((code, host, calls)) = snapshot(scenario) else {
            return;
        };
        assert_eq!(code, Some(0), "{scenario}: {host:#}");
        assert_eq!(calls, ["static", "monitor", "process --csv", "process"]);
        assert_eq!(host["processes_known"], true, "{scenario}: {host:#}");
        let processes = host["processes"].as_array().expect("processes");
        assert_eq!(processes.len(), 1, "{scenario}: {host:#}");
        let p = &processes[0];
        assert_eq!(p["gpu_index"], 0, "{scenario}: {p:#}");
        assert_eq!(p["pid"], pid, "{scenario}: {p:#}");
        assert_eq!(p["name"], name, "{scenario}: {p:#}");
        assert_eq!(p["used_memory_mib"], vram_mib, "{scenario}: {p:#}");
    }
    // The blog's report of two MI300X (the author cut GPU 1's usage lines), over its monitor.
    let Some((_, host, _)) = snapshot("monitor-04 process-03") else {
        return;
    };
    let on: Vec<(u64, u64)> = host["processes"]
        .as_array()
        .expect("processes")
        .iter()
        .map(|p| {
            (
                p["gpu_index"].as_u64().unwrap_or(99),
                p["pid"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(on, [(0, 207590), (1, 207591)], "{host:#}");
}

/// `gpufleet check` on the AMD host replaying `scenario`: exit code and JSON report.
fn check(scenario: &str, expect: &[&str]) -> Option<(Option<i32>, serde_json::Value)> {
    let sshd = amd_smi_host(scenario)?;
    let dir = tempfile::tempdir().expect("temp");
    let config = write_named_config(&sshd, dir.path(), "mi300a", "");
    let out = std::process::Command::new(crate::tmux::binary())
        .env("SSH_AUTH_SOCK", "")
        .env("GPUFLEET_STATE_DIR", dir.path().join("state"))
        .args(["--accept-new-host-keys", "--config"])
        .arg(&config)
        .arg("--known-hosts")
        .arg(dir.path().join("known_hosts"))
        .args(["check", "mi300a", "--json", "--sustain-s", "0"])
        .args(expect)
        .output()
        .expect("check");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let doc = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    Some((out.status.code(), doc))
}

#[test]
fn check_on_amd_checks_the_model_that_static_reports() {
    let Some((code, doc)) = check(
        "monitor-07 static-01",
        &["--expect-gpu", "MI300A", "--expect-count", "4"],
    ) else {
        return;
    };
    assert_eq!(code, Some(0), "{doc:#}");
    let checks = doc["checks"].as_array().expect("checks");
    let models: Vec<&serde_json::Value> = checks
        .iter()
        .filter(|c| c["id"] == "identity.model")
        .collect();
    assert_eq!(models.len(), 4, "{doc:#}");
    for model in models {
        assert_eq!(model["status"], "pass", "{model:#}");
        assert_eq!(model["measured"], "MI300A", "{model:#}");
    }
    // Another model is a failure, not a skip.
    let Some((code, doc)) = check("monitor-07 static-01", &["--expect-gpu", "MI300X"]) else {
        return;
    };
    assert_ne!(code, Some(0), "{doc:#}");
    let failed = doc["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .any(|c| c["id"] == "identity.model" && c["status"] == "fail");
    assert!(failed, "{doc:#}");
}

#[test]
fn check_counts_the_gpus_an_amd_smi_without_monitor_reports() {
    // The blog's `amd-smi metric` of one MI300X, where `monitor` is refused.
    let Some((code, doc)) = check("metric-07", &["--expect-count", "1"]) else {
        return;
    };
    assert_eq!(code, Some(0), "{doc:#}");
    let checks = doc["checks"].as_array().expect("checks");
    let count = checks
        .iter()
        .find(|c| c["id"] == "identity.count")
        .expect("count check");
    assert_eq!(count["status"], "pass", "{count:#}");
    // Another count is a failure, not a skip.
    let Some((code, doc)) = check("metric-07", &["--expect-count", "8"]) else {
        return;
    };
    assert_ne!(code, Some(0), "{doc:#}");
}
