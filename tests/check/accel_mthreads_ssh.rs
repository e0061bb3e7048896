//! Moore Threads and Cambricon hosts over a real sshd: the remote `PATH` holds a stand-in
//! `mthreads-gmi` or `cnmon` (tests/fixtures/fake-accel) that prints one published sample of
//! tests/fixtures/accel byte for byte, and `snapshot --json` shows what the sample says, with
//! the vendor on every GPU; a cut-off sample is reported as unsupported output, never as
//! numbers.

use crate::common;
use crate::tmux;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::sshd::{Sshd, SshdOptions};
use std::time::Duration;
use tmux::{Tmux, binary};

/// An sshd whose remote `PATH` has the stand-in in tests/fixtures/fake-accel/`dir`, set to
/// print the sample `scenario`; `None` when sshd tests cannot run here or a real vendor tool
/// is on the remote `PATH`.
fn host(dir: &str, scenario: &str) -> Option<Sshd> {
    let fakes = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/fake-accel")
        .join(dir);
    let real = ["nvidia-smi", "npu-smi", "rocm-smi", "amd-smi", "xpu-smi"];
    if ["/usr/local/bin", "/usr/bin", "/bin"]
        .iter()
        .any(|d| real.iter().any(|t| Path::new(d).join(t).exists()))
    {
        eprintln!("skipping: a real vendor tool is on the remote PATH");
        return None;
    }
    let sshd = Sshd::start_with(&SshdOptions {
        bin_dir: Some(fakes),
        ..SshdOptions::default()
    })?;
    sshd.set_scenario(scenario);
    Some(sshd)
}

fn write_config(sshd: &Sshd, dir: &Path) -> PathBuf {
    let path = dir.join("config.toml");
    let text = format!(
        "interval_ms = 500\n[[hosts]]\nname = \"accel\"\nssh = \"{}@127.0.0.1:{}\"\nidentity_file = \"{}\"\n",
        sshd.user,
        sshd.port,
        sshd.client_key().display()
    );
    std::fs::write(&path, text).expect("config");
    path
}

/// `snapshot --json` of the one host: its exit code and the host's object.
fn snapshot(sshd: &Sshd) -> (Option<i32>, serde_json::Value) {
    let dir = tempfile::tempdir().expect("temp");
    let config = write_config(sshd, dir.path());
    let out = Command::new(binary())
        .env("SSH_AUTH_SOCK", "")
        .args(["snapshot", "--json", "--accept-new-host-keys", "--config"])
        .arg(&config)
        .arg("--known-hosts")
        .arg(dir.path().join("known_hosts"))
        .output()
        .expect("snapshot");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code(), doc["hosts"][0].clone())
}

fn gpus(host: &serde_json::Value) -> Vec<serde_json::Value> {
    host["gpus"].as_array().cloned().unwrap_or_default()
}

/// The host is reported with "unsupported output from ..." and no GPU figures.
fn assert_unsupported(code: Option<i32>, host: &serde_json::Value, starts: &str) {
    assert_eq!(code, Some(1), "{host:#}");
    assert_eq!(host["status"], "telemetry_failed", "{host:#}");
    let detail = host["status_detail"].as_str().unwrap_or_default();
    assert!(detail.starts_with(starts), "{detail}");
    assert!(detail.contains("first lines:"), "{detail}");
    assert_eq!(host["gpus"], serde_json::json!([]), "{host:#}");
}

#[test]
fn mthreads_gmi_1_14_table_shows_the_s80_with_vendor_mthreads() {
    let Some(sshd) = host("mthreads", "table-01") else {
        return;
    };
    let (code, host) = snapshot(&sshd);
    assert_eq!(code, Some(0), "{host:#}");
    assert_eq!(host["status"], "live", "{host:#}");
    assert_eq!(host["driver_version"], "2.7.0");
    let gpus = gpus(&host);
    assert_eq!(gpus.len(), 1, "{host:#}");
    let gpu = &gpus[0];
    assert_eq!(gpu["vendor"], "mthreads");
    assert_eq!(gpu["name"], "MTT S80");
    assert_eq!(gpu["bus_id"], "00000000:01:00.0");
    assert_eq!(gpu["utilization_gpu_pct"], 98.0);
    assert_eq!(gpu["memory_used_mib"], 1339);
    assert_eq!(gpu["memory_total_mib"], 16384);
    assert_eq!(gpu["temperature_c"], 56.0);
    // The table prints no power: unknown, not zero.
    assert!(gpu["power_draw_w"].is_null(), "{gpu:#}");
    // The JSON report first; this tool refuses it, so the table.
    assert_eq!(sshd.calls("mthreads-gmi")[..2], ["--query --json", ""]);
}

#[test]
fn mthreads_gmi_1_14_table_lists_its_processes_on_the_s80() {
    let Some(sshd) = host("mthreads", "table-01") else {
        return;
    };
    let (code, host) = snapshot(&sshd);
    assert_eq!(code, Some(0), "{host:#}");
    // As printed (the tool cuts the path), tied to GPU 0 by its ID; no UUID is printed.
    assert_eq!(
        host["processes"],
        serde_json::json!([
            {
                "pid": 120,
                "name": "...ird_party/bin/llama-box/llama-box",
                "gpu_index": 0,
                "used_memory_mib": 2
            },
            {
                "pid": 2022,
                "name": "...ird_party/bin/llama-box/llama-box",
                "gpu_index": 0,
                "used_memory_mib": 1333
            }
        ]),
        "{host:#}"
    );
    assert_eq!(gpus(&host)[0]["index"], 0);
}

#[test]
fn the_host_view_lists_the_s80_processes_on_gpu_0() {
    let Some(sshd) = host("mthreads", "table-01") else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp");
    let config = write_config(&sshd, dir.path());
    for (lang, width, height, header) in
        [("en", 80, 24, "VRAM MiB"), ("zh-CN", 100, 30, "显存 MiB")]
    {
        let command = format!(
            "SSH_AUTH_SOCK= GPUFLEET_STATE_DIR={} {} --lang {lang} --config {} --known-hosts {} --accept-new-host-keys; echo EXIT=$?; sleep 30",
            dir.path().join("state").display(),
            binary().display(),
            config.display(),
            dir.path().join("known_hosts").display()
        );
        let Some(tmux) = Tmux::start(&command, width, height) else {
            return;
        };
        tmux.wait_for("MTT S80", Duration::from_secs(20));
        tmux.keys(&["Enter"]);
        let screen = tmux.wait_for("llama-box", Duration::from_secs(20));
        assert!(screen.contains(header), "{lang}:\n{screen}");
        // Each row: PID, the GPU by the index mthreads-gmi printed, the name as printed, memory.
        for (pid, mib) in [("120", "2"), ("2022", "1333")] {
            let row: Vec<&str> = screen
                .lines()
                .map(|l| {
                    l.split(['│', ' '])
                        .filter(|w| !w.is_empty())
                        .collect::<Vec<_>>()
                })
                .find(|cells| cells.first() == Some(&pid))
                .unwrap_or_else(|| panic!("{lang}: no row for {pid}:\n{screen}"));
            assert_eq!(
                row,
                [pid, "0", "...ird_party/bin/llama-box/llama-box", mib],
                "{lang}:\n{screen}"
            );
        }
        tmux.keys(&["q"]);
        tmux.keys(&["q"]);
    }
}

#[test]
fn mthreads_gmi_2_0_table_lists_xorg_and_the_greeter() {
    let Some(sshd) = host("mthreads", "table-02") else {
        return;
    };
    let (code, host) = snapshot(&sshd);
    assert_eq!(code, Some(0), "{host:#}");
    assert_eq!(
        host["processes"],
        serde_json::json!([
            { "pid": 1123, "name": "/usr/lib/xorg/Xorg", "gpu_index": 0, "used_memory_mib": 134 },
            { "pid": 1361, "name": "/usr/sbin/unity-greeter", "gpu_index": 0, "used_memory_mib": 1 }
        ]),
        "{host:#}"
    );
}

#[test]
fn mthreads_gmi_2_0_table_reads_through_its_trailing_spaces() {
    let Some(sshd) = host("mthreads", "table-02") else {
        return;
    };
    let (code, host) = snapshot(&sshd);
    assert_eq!(code, Some(0), "{host:#}");
    assert_eq!(host["driver_version"], "3.0.0");
    let gpus = gpus(&host);
    assert_eq!(gpus.len(), 1, "{host:#}");
    assert_eq!(gpus[0]["vendor"], "mthreads");
    assert_eq!(gpus[0]["utilization_gpu_pct"], 0.0);
    assert_eq!(gpus[0]["memory_used_mib"], 662);
    assert_eq!(gpus[0]["temperature_c"], 41.0);
}

#[test]
fn an_s4000_table_without_its_closing_rule_is_unsupported() {
    let Some(sshd) = host("mthreads", "table-03") else {
        return;
    };
    let (code, host) = snapshot(&sshd);
    assert_unsupported(
        code,
        &host,
        "unsupported output from mthreads-gmi 1.12.2: the GPU table is cut off after 1 GPU(s)",
    );
}

#[test]
fn a_cut_off_eight_gpu_s4000_table_is_unsupported() {
    let Some(sshd) = host("mthreads", "table-04") else {
        return;
    };
    let (code, host) = snapshot(&sshd);
    assert_unsupported(
        code,
        &host,
        "unsupported output from mthreads-gmi 2.2.0: the GPU table is cut off after 2 GPU(s)",
    );
}

#[test]
fn a_cut_off_s5000_table_is_unsupported() {
    let Some(sshd) = host("mthreads", "table-05") else {
        return;
    };
    let (code, host) = snapshot(&sshd);
    assert_unsupported(
        code,
        &host,
        "unsupported output from mthreads-gmi 2.3.2: the GPU table is cut off after 2 GPU(s)",
    );
}

#[test]
fn a_json_report_listing_two_of_eight_gpus_is_unsupported() {
    let Some(sshd) = host("mthreads", "query-json-01") else {
        return;
    };
    let (code, host) = snapshot(&sshd);
    assert_unsupported(
        code,
        &host,
        "unsupported output from mthreads-gmi: the report lists 2 of the 8 attached GPUs",
    );
    // The report answered, so the table was not asked for.
    assert!(
        sshd.calls("mthreads-gmi")
            .iter()
            .all(|c| c == "--query --json"),
        "{:?}",
        sshd.calls("mthreads-gmi")
    );
}

#[test]
fn cnmon_v4_table_shows_three_mlu370_with_vendor_cambricon() {
    let Some(sshd) = host("cambricon", "table-01") else {
        return;
    };
    let (code, host) = snapshot(&sshd);
    assert_eq!(code, Some(0), "{host:#}");
    assert_eq!(host["driver_version"], "v4.20.11");
    let gpus = gpus(&host);
    let indexes: Vec<_> = gpus.iter().map(|g| g["index"].clone()).collect();
    assert_eq!(indexes, [0, 1, 2], "{host:#}");
    for gpu in &gpus {
        assert_eq!(gpu["vendor"], "cambricon", "{gpu:#}");
        assert_eq!(gpu["name"], "MLU370-X4");
        assert_eq!(gpu["power_limit_w"], 150.0);
        assert_eq!(gpu["memory_total_mib"], 23308);
        // cnmon's Ecc-Error is N/A and it has no health word: absent.
        assert!(gpu.get("health").is_none(), "{gpu:#}");
    }
    assert_eq!(gpus[0]["temperature_c"], 32.0);
    assert_eq!(gpus[0]["power_draw_w"], 30.0);
    assert_eq!(gpus[2]["power_draw_w"], 26.0);
    assert_eq!(sshd.calls("cnmon"), [""]);
}

#[test]
fn cnmon_v5_10_10_table_reads_bus_ids() {
    let Some(sshd) = host("cambricon", "table-02") else {
        return;
    };
    let (code, host) = snapshot(&sshd);
    assert_eq!(code, Some(0), "{host:#}");
    assert_eq!(host["driver_version"], "v5.10.10");
    let gpus = gpus(&host);
    assert_eq!(gpus.len(), 2, "{host:#}");
    assert_eq!(gpus[0]["bus_id"], "0000:1B:00.0");
    assert_eq!(gpus[1]["bus_id"], "0000:36:00.0");
    assert_eq!(gpus[1]["vendor"], "cambricon");
    assert_eq!(gpus[1]["temperature_c"], 41.0);
}

#[test]
fn cnmon_v5_10_13_table_reads_the_mlu370_x8() {
    let Some(sshd) = host("cambricon", "table-03") else {
        return;
    };
    let (code, host) = snapshot(&sshd);
    assert_eq!(code, Some(0), "{host:#}");
    let gpus = gpus(&host);
    assert_eq!(gpus.len(), 2, "{host:#}");
    assert_eq!(gpus[1]["name"], "MLU370-X8");
    assert_eq!(gpus[1]["bus_id"], "0000:3D:00.0");
    assert_eq!(gpus[1]["power_draw_w"], 106.0);
    assert_eq!(gpus[1]["power_limit_w"], 250.0);
    assert_eq!(gpus[1]["temperature_c"], 39.0);
    assert_eq!(gpus[1]["vendor"], "cambricon");
}

#[test]
fn cnmon_lists_no_processes_so_they_are_unknown_not_none() {
    let Some(sshd) = host("cambricon", "table-01") else {
        return;
    };
    let (code, host) = snapshot(&sshd);
    assert_eq!(code, Some(0), "{host:#}");
    // Every published cnmon table says "No running processes found" without a list to read:
    // the host's processes are unknown, not an empty list read as "none".
    assert_eq!(host["processes"], serde_json::json!([]));
    assert_eq!(host["processes_known"], false, "{host:#}");
    let Some(sshd) = self::host("mthreads", "table-01") else {
        return;
    };
    let (_, host) = snapshot(&sshd);
    assert_eq!(host["processes_known"], true, "{host:#}");
}

#[test]
fn the_host_view_says_cnmon_does_not_list_processes() {
    let Some(sshd) = host("cambricon", "table-01") else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp");
    let config = write_config(&sshd, dir.path());
    for (lang, width, height, says) in [
        ("en", 80, 24, "this tool does not list processes"),
        ("zh-CN", 100, 30, "此工具不列出进程"),
        ("en", 100, 30, "this tool does not list processes"),
        ("zh-CN", 80, 24, "此工具不列出进程"),
    ] {
        let command = format!(
            "SSH_AUTH_SOCK= GPUFLEET_STATE_DIR={} {} --lang {lang} --config {} --known-hosts {} --accept-new-host-keys; echo EXIT=$?; sleep 30",
            dir.path().join("state").display(),
            binary().display(),
            config.display(),
            dir.path().join("known_hosts").display()
        );
        let Some(tmux) = Tmux::start(&command, width, height) else {
            return;
        };
        tmux.wait_for("MLU370", Duration::from_secs(20));
        tmux.keys(&["Enter"]);
        let screen = tmux.wait_for(says, Duration::from_secs(20));
        assert!(
            screen.contains("MLU370"),
            "{lang} {width}x{height}:\n{screen}"
        );
        tmux.keys(&["q"]);
        tmux.keys(&["q"]);
    }
}
