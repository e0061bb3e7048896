//! End to end: the built binary runs `--demo` inside tmux; keys go in, the screen is read back,
//! and the program must exit cleanly with the terminal restored.

use crate::tmux;

use std::process::Command;
use std::time::Duration;

use tmux::{Tmux, binary};

#[test]
fn demo_runs_navigates_and_exits_cleanly() {
    let command = format!(
        "{} --demo --speed 20; echo EXIT=$?; sleep 30",
        binary().display()
    );
    let Some(tmux) = Tmux::start(&command, 100, 30) else {
        return;
    };
    let wait = Duration::from_secs(15);
    let fleet = tmux.wait_for("train-h100x8", wait);
    assert!(fleet.contains("unreachable-box"), "{fleet}");

    // At 20x the flaky H200 falls off the bus within a few seconds.
    tmux.wait_for("GPU lost", wait);

    // Open the second host (the idle A100) and check its card.
    tmux.keys(&["j", "Enter"]);
    let host = tmux.wait_for("A100", wait);
    assert!(host.contains("idle-a100"), "{host}");
    assert!(host.contains("VRAM"), "{host}");
    assert!(host.contains("Processes"), "{host}");

    tmux.keys(&["?"]);
    tmux.wait_for("Keys", wait);
    tmux.keys(&["Escape", "Escape"]);
    let back = tmux.wait_for("Fleet", wait);
    assert!(back.contains("hot-4090"), "{back}");

    tmux.keys(&["/", "t", "4"]);
    let filtered = tmux.wait_for("filter: /t4", wait);
    assert!(filtered.contains("leaky-t4"), "{filtered}");
    // The table (the red-line banner above it may still name train-h100x8).
    let rows: Vec<&str> = filtered.lines().filter(|l| l.starts_with('│')).collect();
    assert!(
        !rows.iter().any(|row| row.contains("train-h100x8")),
        "{filtered}"
    );

    tmux.keys(&["Enter", "q"]);
    let after = tmux.wait_for("EXIT=", wait);
    assert!(after.contains("EXIT=0"), "clean exit:\n{after}");
    assert!(
        !after.contains("Fleet ·"),
        "the alternate screen was left, so the console is gone:\n{after}"
    );
}

#[test]
fn snapshot_of_the_demo_prints_every_host_and_fails_for_the_unreachable_one() {
    let out = Command::new(binary())
        .args(["--demo", "snapshot", "--json"])
        .output()
        .expect("run snapshot");
    assert_eq!(out.status.code(), Some(1), "one demo host is unreachable");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let hosts = doc["hosts"].as_array().expect("hosts list");
    assert_eq!(hosts.len(), 11);
    // The AMD host as `amd-smi monitor` reads it: what its table lacks (name, limit) is null.
    let amd = &hosts[10];
    assert_eq!(amd["name"], "mi300x-amd");
    assert_eq!(amd["status"], "live");
    assert_eq!(amd["gpus"][0]["vendor"], "amd");
    assert_eq!(amd["gpus"][0]["memory_used_mib"], 3072);
    assert!(amd["gpus"][0]["power_limit_w"].is_null());
    // Its process, tied to its GPU by number as `amd-smi process --csv` lists it.
    assert_eq!(amd["processes"][0]["gpu_index"], 0, "{amd:#}");
    assert_eq!(amd["processes"][0]["name"], "pt_main_thread");
    assert_eq!(amd["processes_known"], true);
    // The mixed fleet: the Ascend host's NPUs are in `gpus` with their vendor, and what
    // npu-smi does not report is null, not 0.
    let ascend = &hosts[6];
    assert_eq!(ascend["name"], "ascend-910b");
    assert_eq!(ascend["status"], "live");
    assert_eq!(ascend["gpus"].as_array().map(Vec::len), Some(8));
    assert_eq!(ascend["gpus"][0]["vendor"], "huawei");
    assert!(ascend["gpus"][0]["power_limit_w"].is_null());
    assert!(ascend["cuda_version"].is_null());
    // The Intel host shows what its published `xpu-smi dump` prints: power and clock.
    let intel = &hosts[7];
    assert_eq!(intel["name"], "xpu-flex170");
    assert_eq!(intel["gpus"][0]["vendor"], "intel");
    assert_eq!(intel["gpus"][0]["clock_sm_mhz"], 2050);
    assert!(intel["gpus"][0]["temperature_c"].is_null());
    // The Moore Threads and Cambricon hosts, as mthreads-gmi and cnmon report them: no power
    // in mthreads-gmi's table, a power cap in cnmon's.
    let s80 = &hosts[8];
    assert_eq!(s80["name"], "mthreads-s80");
    assert_eq!(s80["status"], "live");
    assert_eq!(s80["gpus"][0]["vendor"], "mthreads");
    assert_eq!(s80["gpus"][0]["name"], "MTT S80");
    assert!(s80["gpus"][0]["power_draw_w"].is_null());
    let mlu = &hosts[9];
    assert_eq!(mlu["name"], "cambricon-mlu");
    assert_eq!(mlu["status"], "live");
    assert_eq!(mlu["gpus"].as_array().map(Vec::len), Some(2));
    assert_eq!(mlu["gpus"][1]["vendor"], "cambricon");
    assert_eq!(mlu["gpus"][1]["power_limit_w"], 250.0);
    // cnmon lists no processes: unknown, not none.
    assert_eq!(mlu["processes_known"], false, "{mlu:#}");
    let train = &hosts[0];
    assert_eq!(train["gpus"][0]["vendor"], "nvidia");
    assert_eq!(train["status"], "live");
    assert_eq!(train["gpus"].as_array().map(Vec::len), Some(8));
    let gpu = &train["gpus"][0];
    for field in [
        "memory_used_mib",
        "memory_total_mib",
        "utilization_gpu_pct",
        "temperature_c",
        "power_draw_w",
        "power_limit_w",
        "clock_sm_mhz",
        "name",
        "uuid",
        "index",
        "bus_id",
    ] {
        assert!(!gpu[field].is_null(), "{field} present");
    }
    assert_eq!(
        gpu["clock_event_reasons"],
        serde_json::json!(["sw_power_cap"])
    );
    let unreachable = &hosts[5];
    assert_eq!(unreachable["status"], "unreachable");
    assert!(
        unreachable["status_detail"]
            .as_str()
            .is_some_and(|d| d.contains("timed out"))
    );
}

#[test]
fn without_a_driver_local_says_so_in_one_line() {
    if std::path::Path::new("/proc/driver/nvidia/version").exists() {
        eprintln!("this machine has an NVIDIA driver: skipping");
        return;
    }
    let out = Command::new(binary())
        .args(["--local", "snapshot"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--demo"), "suggests the demo: {err}");
}
