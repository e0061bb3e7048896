//! Every published `npu-smi` and `xpu-smi` output of tests/fixtures/accel, printed byte for
//! byte by a stand-in tool on a real sshd's remote `PATH` (tests/fixtures/fake-accel, scenario
//! `sample:FILE`): `snapshot --json` shows the accelerators with their vendor and the values
//! the sample prints, leaves what it does not print unknown, and reports a cut table, a failure
//! text or another command's output as "unsupported output" with its first lines, never as
//! numbers.

use std::path::Path;
use std::time::Duration;

use crate::accel_ssh::{ascend_host, snapshot, vendor_host, write_named_config};
use crate::common::sshd::Sshd;
use crate::tmux::{Tmux, binary};

/// `snapshot --json` of a host whose tool prints the published `file`: exit code and host.
fn host_printing(sshd: &Sshd, file: &str) -> (Option<i32>, serde_json::Value) {
    sshd.set_scenario(&format!("sample:{file}"));
    let dir = tempfile::tempdir().expect("temp");
    let config = write_named_config(sshd, dir.path(), "accel", "");
    let (code, doc) = snapshot(&config, dir.path());
    (code, doc["hosts"][0].clone())
}

fn gpus_of(host: &serde_json::Value) -> Vec<serde_json::Value> {
    host["gpus"].as_array().cloned().unwrap_or_default()
}

/// A host reported with the tool's unsupported output and no GPU figures.
fn assert_unsupported(code: Option<i32>, host: &serde_json::Value, tool: &str, needle: &str) {
    assert_eq!(code, Some(1), "{host:#}");
    assert_eq!(host["status"], "telemetry_failed", "{host:#}");
    let detail = host["status_detail"].as_str().expect("detail");
    assert!(
        detail.starts_with(&format!("unsupported output from {tool}")),
        "{detail}"
    );
    assert!(detail.contains(needle), "{detail}");
    assert_eq!(host["gpus"], serde_json::json!([]), "{host:#}");
}

fn fixture_exists(file: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/accel")
        .join(file);
    assert!(path.exists(), "{}", path.display());
}

#[test]
fn npu_smi_23_0_3_two_910b2c_cards() {
    let Some(sshd) = ascend_host() else { return };
    let (code, host) = host_printing(&sshd, "huawei-npu-smi-info-01.txt");
    assert_eq!(code, Some(0), "{host:#}");
    assert_eq!(host["driver_version"], "23.0.3");
    let gpus = gpus_of(&host);
    assert_eq!(gpus.len(), 2, "{host:#}");
    assert_eq!(gpus[0]["vendor"], "huawei");
    assert_eq!(gpus[0]["name"], "910B2C");
    assert_eq!(gpus[0]["memory_used_mib"], 3317);
    assert_eq!(gpus[1]["power_draw_w"], 93.8);
    assert!(gpus[1]["clock_sm_mhz"].is_null(), "{host:#}");
}

#[test]
fn npu_smi_24_1_rc2_lists_its_processes_on_their_npus() {
    let Some(sshd) = ascend_host() else { return };
    let (code, host) = host_printing(&sshd, "huawei-npu-smi-info-03.txt");
    assert_eq!(code, Some(0), "{host:#}");
    let processes = host["processes"].as_array().cloned().unwrap_or_default();
    assert_eq!(processes.len(), 32, "{host:#}");
    // As printed: PID, the name cut to its column, the memory column; npu-smi prints no UUID,
    // so the process names its NPU by the `index` of `gpus[]`.
    assert_eq!(
        processes[0],
        serde_json::json!({
            "pid": 37656,
            "name": "hlt_host_devmm_",
            "gpu_index": 0,
            "used_memory_mib": 686
        })
    );
    assert_eq!(processes[31]["pid"], 37663);
    assert_eq!(processes[31]["gpu_index"], 7);
    // Four on each of the eight NPUs, each tied to a GPU the host lists.
    let indexes: Vec<_> = gpus_of(&host).iter().map(|g| g["index"].clone()).collect();
    for npu in 0..8 {
        let on = processes.iter().filter(|p| p["gpu_index"] == npu).count();
        assert_eq!(on, 4, "NPU {npu}: {host:#}");
        assert!(indexes.contains(&serde_json::json!(npu)), "{host:#}");
    }
}

/// The cells of the screen row that starts with `pid` (box borders dropped).
fn process_row<'a>(screen: &'a str, pid: &str) -> Option<Vec<&'a str>> {
    screen
        .lines()
        .map(|l| {
            l.split(['│', ' '])
                .filter(|w| !w.is_empty())
                .collect::<Vec<_>>()
        })
        .find(|cells| cells.first() == Some(&pid))
}

#[test]
fn the_host_view_shows_each_npu_process_on_its_npu() {
    let Some(sshd) = ascend_host() else { return };
    sshd.set_scenario("sample:huawei-npu-smi-info-03.txt");
    let dir = tempfile::tempdir().expect("temp");
    let config = write_named_config(&sshd, dir.path(), "atlas", "");
    let wait = Duration::from_secs(20);
    for (lang, width, height) in [("en", 80, 24), ("zh-CN", 100, 30)] {
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
        tmux.wait_for("atlas", wait);
        tmux.keys(&["Enter"]);
        let screen = tmux.wait_for("hlt_host_devmm_", wait);
        let first = process_row(&screen, "37656");
        assert_eq!(
            first,
            Some(vec!["37656", "0", "hlt_host_devmm_", "686"]),
            "{lang}:\n{screen}"
        );
        // The last process of the table runs on NPU 7: its row names GPU 7, not the first.
        tmux.keys(&["Tab", "PageDown", "PageDown", "PageDown", "PageDown"]);
        let screen = tmux.wait_for("37663", wait);
        let last = process_row(&screen, "37663");
        assert_eq!(
            last,
            Some(vec!["37663", "7", "hlt_host_devmm_", "686"]),
            "{lang}:\n{screen}"
        );
        tmux.keys(&["q"]);
        tmux.keys(&["q"]);
    }
}

#[test]
fn npu_smi_1_9_3_without_hugepages_reads_npus_4_to_7() {
    let Some(sshd) = ascend_host() else { return };
    let (code, host) = host_printing(&sshd, "huawei-npu-smi-info-02.txt");
    assert_eq!(code, Some(0), "{host:#}");
    let gpus = gpus_of(&host);
    let indexes: Vec<_> = gpus.iter().map(|g| g["index"].clone()).collect();
    assert_eq!(indexes, [4, 5, 6, 7], "{host:#}");
    assert!(gpus.iter().all(|g| g["vendor"] == "huawei"));
    assert_eq!(gpus[1]["power_draw_w"], 63.8);
    assert_eq!(gpus[1]["memory_total_mib"], 32768);
}

#[test]
fn npu_smi_24_1_rc2_shows_the_two_npus_in_warning() {
    let Some(sshd) = ascend_host() else { return };
    let (code, host) = host_printing(&sshd, "huawei-npu-smi-info-03.txt");
    assert_eq!(code, Some(0), "{host:#}");
    let gpus = gpus_of(&host);
    assert_eq!(gpus.len(), 8, "{host:#}");
    let warned: Vec<_> = gpus
        .iter()
        .filter(|g| g["health"] == "warning")
        .map(|g| g["index"].clone())
        .collect();
    assert_eq!(warned, [3, 7], "{host:#}");
    assert_eq!(gpus[7]["power_draw_w"], 203.2);
}

#[test]
fn npu_smi_20_2_and_21_0_show_four_310_chips_of_one_card() {
    let Some(sshd) = ascend_host() else { return };
    for (file, temperatures) in [
        ("huawei-npu-smi-info-04.txt", [56.0, 57.0, 57.0, 55.0]),
        ("huawei-npu-smi-info-05.txt", [73.0, 74.0, 70.0, 65.0]),
    ] {
        let (code, host) = host_printing(&sshd, file);
        assert_eq!(code, Some(0), "{file}: {host:#}");
        let gpus = gpus_of(&host);
        // Four chips share NPU ID: each gets its own number, in table order.
        let indexes: Vec<_> = gpus.iter().map(|g| g["index"].clone()).collect();
        assert_eq!(indexes, [0, 1, 2, 3], "{file}");
        let read: Vec<f64> = gpus
            .iter()
            .filter_map(|g| g["temperature_c"].as_f64())
            .collect();
        assert_eq!(read, temperatures, "{file}");
        assert!(
            gpus.iter()
                .all(|g| g["name"] == "310" && g["vendor"] == "huawei")
        );
    }
}

#[test]
fn a_cut_npu_smi_table_is_unsupported_not_half_read() {
    let Some(sshd) = ascend_host() else { return };
    let (code, host) = host_printing(&sshd, "huawei-npu-smi-info-06.txt");
    assert_unsupported(code, &host, "npu-smi 26.0.rc2", "closing rule");
}

#[test]
fn npu_smi_failure_texts_reach_the_user_with_their_lines() {
    let Some(sshd) = ascend_host() else { return };
    for (file, line) in [
        (
            "huawei-npu-smi-error-01.txt",
            "dcmi module initialize failed. ret is -8005",
        ),
        (
            "huawei-npu-smi-error-02.txt",
            "dcmi model initialized failed, because the device is used. ret is -8020",
        ),
    ] {
        let (code, host) = host_printing(&sshd, file);
        assert_unsupported(code, &host, "npu-smi", line);
    }
}

#[test]
fn the_chip_map_printed_for_the_table_is_unsupported() {
    let Some(sshd) = ascend_host() else { return };
    for file in [
        "huawei-npu-smi-info-m-01.txt",
        "huawei-npu-smi-info-m-02.txt",
    ] {
        let (code, host) = host_printing(&sshd, file);
        assert_unsupported(code, &host, "npu-smi", "Chip Logic ID");
    }
}

#[test]
fn xpu_smi_dumps_show_intel_gpus_with_blank_cells_unknown() {
    let Some(sshd) = vendor_host("intel") else {
        return;
    };
    let (code, host) = host_printing(&sshd, "intel-xpu-smi-dump-01.txt");
    assert_eq!(code, Some(0), "{host:#}");
    let gpus = gpus_of(&host);
    assert_eq!(gpus.len(), 1, "{host:#}");
    assert_eq!(gpus[0]["vendor"], "intel");
    // The newest of the six lines.
    assert_eq!(gpus[0]["power_draw_w"], 43.70);
    assert!(gpus[0]["utilization_gpu_pct"].is_null(), "{host:#}");
    assert!(gpus[0]["temperature_c"].is_null(), "{host:#}");

    let (code, host) = host_printing(&sshd, "intel-xpu-smi-dump-02.txt");
    assert_eq!(code, Some(0), "{host:#}");
    let gpus = gpus_of(&host);
    assert_eq!(gpus[0]["memory_used_mib"], 82);
    assert_eq!(gpus[0]["utilization_memory_pct"], 2.03);
    assert!(gpus[0]["memory_total_mib"].is_null(), "{host:#}");

    // Cut inside its fifth row: the four complete rows are four GPUs.
    let (code, host) = host_printing(&sshd, "intel-xpu-smi-dump-03.txt");
    assert_eq!(code, Some(0), "{host:#}");
    let gpus = gpus_of(&host);
    assert_eq!(gpus.len(), 4, "{host:#}");
    assert!(gpus.iter().all(|g| g["utilization_gpu_pct"].is_null()));
    assert_eq!(gpus[2]["memory_used_mib"], 49);
}

#[test]
fn xpu_smi_reports_printed_for_the_dump_are_unsupported() {
    let Some(sshd) = vendor_host("intel") else {
        return;
    };
    for (file, needle) in [
        ("intel-xpu-smi-discovery-01.txt", "Device Information"),
        ("intel-xpu-smi-discovery-02.txt", "Device Information"),
        ("intel-xpu-smi-discovery-03.txt", "Device ID,Device Name"),
        ("intel-xpu-smi-discovery-04.txt", "Device ID,Device Name"),
        ("intel-xpu-smi-health-01.txt", "Device ID"),
        ("intel-xpu-smi-stats-01.txt", "Device ID"),
    ] {
        fixture_exists(file);
        let (code, host) = host_printing(&sshd, file);
        assert_unsupported(code, &host, "xpu-smi", needle);
    }
}

#[test]
fn watch_names_the_npu_smi_dcmi_failure_as_a_finding() {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    let Some(sshd) = ascend_host() else { return };
    sshd.set_scenario("sample:huawei-npu-smi-error-01.txt");
    let dir = tempfile::tempdir().expect("temp");
    let config = write_named_config(&sshd, dir.path(), "accel", "");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let log = dir.path().join("watch.log");
    let mut child = Command::new(crate::tmux::binary())
        .args(["watch", "--accept-new-host-keys", "--metrics"])
        .arg(format!("127.0.0.1:{port}"))
        .arg("--config")
        .arg(&config)
        .arg("--known-hosts")
        .arg(dir.path().join("known_hosts"))
        .env("GPUFLEET_STATE_DIR", dir.path().join("state"))
        .env("SSH_AUTH_SOCK", "")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).expect("log"))
        .spawn()
        .expect("watch");
    let url = format!("http://127.0.0.1:{port}/metrics");
    let deadline = Instant::now() + Duration::from_secs(20);
    let page = loop {
        let page = reqwest::blocking::get(&url)
            .and_then(|r| r.text())
            .unwrap_or_default();
        if page.contains("label=\"npu_dcmi_init_failed\"") || Instant::now() > deadline {
            break page;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let _ = child.kill();
    let _ = child.wait();
    let finding = page
        .lines()
        .find(|l| l.contains("label=\"npu_dcmi_init_failed\"") && l.contains("instance=\"accel\""));
    assert!(
        finding.is_some_and(|l| l.ends_with(" 1")),
        "{page}\n{}",
        std::fs::read_to_string(&log).unwrap_or_default()
    );
    // The named finding replaces the generic "unsupported output" one.
    let generic = page.lines().any(|l| {
        l.contains("label=\"accel_unsupported_output\"")
            && l.contains("instance=\"accel\"")
            && l.ends_with(" 1")
    });
    assert!(!generic, "{page}");
}

/// The Arc A310 LP's `xpu-smi discovery --dump 1,2,6,16` and its dump, from the same source.
const A310: &str = "intel-xpu-smi-dump-02.txt discovery:intel-xpu-smi-discovery-04.txt";

#[test]
fn xpu_smi_discovery_names_the_gpus_of_the_dump() {
    let Some(sshd) = vendor_host("intel") else {
        return;
    };
    let (code, host) = host_printing(&sshd, A310);
    assert_eq!(code, Some(0), "{host:#}");
    let gpus = gpus_of(&host);
    assert_eq!(gpus.len(), 1, "{host:#}");
    assert_eq!(gpus[0]["name"], "Intel(R) Arc(TM) A310 LP Graphics");
    // Its Memory Physical Size is N/A: unknown, not 0; the dump's figures are kept.
    assert!(gpus[0]["memory_total_mib"].is_null(), "{host:#}");
    assert_eq!(gpus[0]["memory_used_mib"], 82);
    let calls = sshd.calls("xpu-smi");
    assert_eq!(calls[0], "discovery --dump 1,2,6,16", "{calls:?}");
    // Where discovery fails, the dump is read as before, without a name.
    let (code, host) = host_printing(&sshd, "intel-xpu-smi-dump-02.txt");
    assert_eq!(code, Some(0), "{host:#}");
    assert_eq!(gpus_of(&host)[0]["name"], "", "{host:#}");
}

#[test]
fn xpu_smi_health_gives_a_snapshot_each_gpus_health() {
    let Some(sshd) = vendor_host("intel") else {
        return;
    };
    // The Intel guide's `xpu-smi health -l` of device 0 (six components, all `Ok`), with the
    // Flex 170 dump of device 0.
    let scenario = "intel-xpu-smi-dump-01.txt health:intel-xpu-smi-health-01.txt";
    let (code, host) = host_printing(&sshd, scenario);
    assert_eq!(code, Some(0), "{host:#}");
    let gpus = gpus_of(&host);
    assert_eq!(gpus.len(), 1, "{host:#}");
    assert_eq!(gpus[0]["vendor"], "intel", "{host:#}");
    assert_eq!(gpus[0]["health"], "ok", "{host:#}");
    let calls = sshd.calls("xpu-smi");
    assert_eq!(calls[1], "health -l", "{calls:?}");
    // Where the health report is refused, the health stays unknown.
    let (code, host) = host_printing(&sshd, "intel-xpu-smi-dump-01.txt");
    assert_eq!(code, Some(0), "{host:#}");
    assert!(gpus_of(&host)[0]["health"].is_null(), "{host:#}");
}

#[test]
fn a_followed_intel_host_shows_the_name_discovery_gives() {
    let Some(sshd) = vendor_host("intel") else {
        return;
    };
    sshd.set_scenario(&format!("sample:{A310}"));
    let dir = tempfile::tempdir().expect("temp");
    let config = write_named_config(&sshd, dir.path(), "arc", "");
    let command = format!(
        "SSH_AUTH_SOCK= GPUFLEET_STATE_DIR={} {} --config {} --known-hosts {} --accept-new-host-keys; echo EXIT=$?; sleep 30",
        dir.path().join("state").display(),
        binary().display(),
        config.display(),
        dir.path().join("known_hosts").display()
    );
    let Some(tmux) = Tmux::start(&command, 100, 30) else {
        return;
    };
    tmux.wait_for("arc", Duration::from_secs(20));
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("A310", Duration::from_secs(20));
    assert!(screen.contains("Arc(TM) A310"), "{screen}");
    tmux.keys(&["q"]);
    tmux.keys(&["q"]);
}
