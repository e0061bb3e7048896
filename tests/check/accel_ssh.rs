//! A host with Huawei Ascend NPUs and no nvidia-smi, over a real sshd: the link probes which
//! tool the host has, reads `npu-smi info` (a fake on the remote `PATH` replaying a real
//! published output, tests/fixtures/fake-accel) and the host shows its NPUs with vendor
//! `huawei` in `snapshot --json`, in the console's fleet row and on `/metrics`; output that is
//! not the table is reported as unsupported, never read as numbers.

use crate::common;
use crate::tmux;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::sshd::{Sshd, SshdOptions};
use tmux::{Tmux, binary};

/// An sshd whose remote `PATH` has the fake `npu-smi` and no `nvidia-smi`; `None` when sshd
/// tests cannot run here, or when this machine has an nvidia-smi of its own on that `PATH`.
pub(crate) fn ascend_host() -> Option<Sshd> {
    let fakes = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake-accel");
    for dir in ["/usr/local/bin", "/usr/bin", "/bin"] {
        if Path::new(dir).join("nvidia-smi").exists() {
            eprintln!("skipping: {dir}/nvidia-smi exists, the host would not look like Ascend");
            return None;
        }
    }
    Sshd::start_with(&SshdOptions {
        bin_dir: Some(fakes),
        ..SshdOptions::default()
    })
}

/// An sshd whose remote `PATH` has the fake `rocm-smi` only (an AMD host).
fn amd_host() -> Option<Sshd> {
    vendor_host("amd")
}

/// An sshd whose remote `PATH` has one vendor's fake tool from tests/fixtures/fake-accel/`dir`.
pub(crate) fn vendor_host(dir: &str) -> Option<Sshd> {
    let fakes = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/fake-accel")
        .join(dir);
    if ["/usr/local/bin", "/usr/bin", "/bin"].iter().any(|dir| {
        Path::new(dir).join("nvidia-smi").exists() || Path::new(dir).join("npu-smi").exists()
    }) {
        eprintln!("skipping: a real nvidia-smi or npu-smi is on the remote PATH");
        return None;
    }
    Sshd::start_with(&SshdOptions {
        bin_dir: Some(fakes),
        ..SshdOptions::default()
    })
}

fn write_config(sshd: &Sshd, dir: &Path, extra: &str) -> PathBuf {
    write_named_config(sshd, dir, "ascend-910b", extra)
}

pub(crate) fn write_named_config(sshd: &Sshd, dir: &Path, name: &str, extra: &str) -> PathBuf {
    let path = dir.join("config.toml");
    let text = format!(
        "interval_ms = 500\n{extra}\n[[hosts]]\nname = \"{name}\"\nssh = \"{}@127.0.0.1:{}\"\nidentity_file = \"{}\"\n",
        sshd.user,
        sshd.port,
        sshd.client_key().display()
    );
    std::fs::write(&path, text).expect("config");
    path
}

pub(crate) fn snapshot(config: &Path, dir: &Path) -> (Option<i32>, serde_json::Value) {
    let out = Command::new(binary())
        .env("SSH_AUTH_SOCK", "")
        .args(["snapshot", "--json", "--accept-new-host-keys", "--config"])
        .arg(config)
        .arg("--known-hosts")
        .arg(dir.join("known_hosts"))
        .output()
        .expect("snapshot");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let doc = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code(), doc)
}

#[test]
fn snapshot_shows_the_ascend_npus_with_vendor_huawei() {
    let Some(sshd) = ascend_host() else { return };
    let dir = tempfile::tempdir().expect("temp");
    let config = write_config(&sshd, dir.path(), "");
    let (code, doc) = snapshot(&config, dir.path());
    let host = &doc["hosts"][0];
    assert_eq!(code, Some(0), "{doc:#}");
    assert_eq!(host["status"], "live", "{doc:#}");
    assert_eq!(host["driver_version"], "23.0.rc2");
    let gpus = host["gpus"].as_array().expect("gpus");
    // The published table shows cards 0, 1 and 7 (the author elided 2 to 6).
    let indexes: Vec<_> = gpus.iter().map(|g| g["index"].clone()).collect();
    assert_eq!(indexes, [0, 1, 7]);
    for gpu in gpus {
        assert_eq!(gpu["vendor"], "huawei", "{gpu:#}");
        assert_eq!(gpu["name"], "910B1");
        assert_eq!(gpu["health"], "ok");
        // What npu-smi does not print is unknown, not zero.
        assert!(gpu["power_limit_w"].is_null(), "{gpu:#}");
        assert!(gpu["clock_sm_mhz"].is_null(), "{gpu:#}");
    }
    assert_eq!(gpus[0]["memory_used_mib"], 4175);
    assert_eq!(gpus[0]["memory_total_mib"], 65536);
    assert_eq!(gpus[1]["power_draw_w"], 92.1);
    assert_eq!(gpus[2]["temperature_c"], 48.0);
    assert_eq!(sshd.calls("npu-smi"), ["info"]);
}

#[test]
fn output_that_is_not_the_table_is_unsupported_not_numbers() {
    let Some(sshd) = ascend_host() else { return };
    sshd.set_scenario("other-output");
    let dir = tempfile::tempdir().expect("temp");
    let config = write_config(&sshd, dir.path(), "");
    let (code, doc) = snapshot(&config, dir.path());
    let host = &doc["hosts"][0];
    assert_eq!(code, Some(1), "{doc:#}");
    assert_eq!(host["status"], "telemetry_failed", "{doc:#}");
    let detail = host["status_detail"].as_str().expect("detail");
    assert!(
        detail.starts_with("unsupported output from npu-smi"),
        "{detail}"
    );
    assert!(
        detail.contains("NPU ID"),
        "the first lines are shown: {detail}"
    );
    assert_eq!(host["gpus"], serde_json::json!([]), "{doc:#}");
}

/// The real `promtool check metrics` (Debian's `prometheus`) parses the page and its linter
/// has nothing to say about the vendor-neutral series.
fn promtool_lints_clean(page: &str) {
    use std::io::Write;
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("promtool (Debian package prometheus; .ci/run installs it)");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(page.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("promtool");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "promtool: {text}\n{page}");
    assert!(!text.contains("gpufleet_gpu_"), "promtool lints: {text}");
}

/// The page `url` serves once it has `needle`.
fn scrape_until(url: &str, needle: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let page = reqwest::blocking::get(url)
            .and_then(|r| r.text())
            .unwrap_or_default();
        if page.contains(needle) {
            return page;
        }
        assert!(Instant::now() < deadline, "no {needle} on the page: {page}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn the_console_row_and_metrics_show_the_npus() {
    let Some(sshd) = ascend_host() else { return };
    let dir = tempfile::tempdir().expect("temp");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let config = write_config(
        &sshd,
        dir.path(),
        &format!("[metrics]\nlisten = \"127.0.0.1:{port}\"\n"),
    );
    let command = format!(
        "SSH_AUTH_SOCK= GPUFLEET_STATE_DIR={} {} --config {} --known-hosts {} --accept-new-host-keys; echo EXIT=$?; sleep 30",
        dir.path().join("state").display(),
        binary().display(),
        config.display(),
        dir.path().join("known_hosts").display()
    );
    let Some(tmux) = Tmux::start(&command, 120, 30) else {
        return;
    };
    let screen = tmux.wait_for("3x 910B1", Duration::from_secs(20));
    let row = screen
        .lines()
        .find(|l| l.contains("ascend-910b"))
        .unwrap_or_else(|| panic!("no row for the host:\n{screen}"));
    assert!(row.contains("live"), "{row}");
    assert!(row.contains("3x 910B1"), "{row}");
    // HBM used/total of the three NPUs (4175+4175+4174 of 3 x 65536 MB) and their summed draw
    // (88.4 + 92.1 + 92.7 W): npu-smi prints no power limit, so the draw stands alone.
    assert!(row.contains("12.2/192"), "{row}");
    assert!(row.contains(" 273 "), "{row}");

    let page = scrape_until(
        &format!("http://127.0.0.1:{port}/metrics"),
        "gpufleet_gpu_power_watts{",
    );
    assert!(
        page.contains(
            "gpufleet_gpu_memory_used_bytes{gpu=\"0\",vendor=\"huawei\",model=\"910B1\",pci_bus_id=\"0000:C1:00.0\",instance=\"ascend-910b\"} 4377804800"
        ),
        "{page}"
    );
    assert!(
        page.contains("gpufleet_gpu_health{gpu=\"7\",vendor=\"huawei\",model=\"910B1\",pci_bus_id=\"0000:42:00.0\",state=\"ok\",instance=\"ascend-910b\"} 1"),
        "{page}"
    );
    // dcgm-exporter's names mean NVIDIA's counters: an NPU has none of them.
    assert!(!page.contains("DCGM_FI_DEV_"), "{page}");
    // npu-smi prints no clock: no series, rather than a 0.
    assert!(!page.contains("gpufleet_gpu_core_clock_hertz"), "{page}");
    promtool_lints_clean(&page);

    tmux.keys(&["q"]);
    let after = tmux.wait_for("EXIT=", Duration::from_secs(20));
    assert!(after.contains("EXIT=0"), "{after}");
}

#[test]
fn snapshot_reads_an_amd_host_through_rocm_smi_json() {
    let Some(sshd) = amd_host() else { return };
    let dir = tempfile::tempdir().expect("temp");
    let config = write_config(&sshd, dir.path(), "");
    let (code, doc) = snapshot(&config, dir.path());
    let host = &doc["hosts"][0];
    assert_eq!(code, Some(0), "{doc:#}");
    assert_eq!(host["status"], "live", "{doc:#}");
    let gpus = host["gpus"].as_array().expect("gpus");
    assert_eq!(gpus.len(), 4, "{doc:#}");
    let gpu = &gpus[0];
    assert_eq!(gpu["vendor"], "amd");
    assert_eq!(gpu["bus_id"], "0000:83:00.0");
    // 34342961152 bytes of VRAM, 6750208 used, as MiB.
    assert_eq!(gpu["memory_total_mib"], 32752);
    assert_eq!(gpu["memory_used_mib"], 6);
    assert_eq!(gpu["temperature_c"], 53.0);
    assert_eq!(gpu["power_draw_w"], 36.0);
    assert_eq!(gpu["power_limit_w"], 290.0);
    // rocm-smi has no health word and no clock-event reasons: absent, not invented.
    assert!(gpu.get("health").is_none(), "{gpu:#}");
    assert!(gpu["clock_event_reasons"].is_null(), "{gpu:#}");
    let calls = sshd.calls("rocm-smi");
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert!(calls[0].ends_with("--json"), "{calls:?}");
}

#[test]
fn an_intel_host_streams_xpu_smi_dump_into_the_console_and_metrics() {
    let Some(sshd) = vendor_host("intel") else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp");
    // One reading first (`snapshot`: `-n 1`): six GPUs, N/A cells unknown, not 0.
    let config = write_named_config(&sshd, dir.path(), "xpu-max1550", "");
    let (code, doc) = snapshot(&config, dir.path());
    assert_eq!(code, Some(0), "{doc:#}");
    let gpus = doc["hosts"][0]["gpus"].as_array().expect("gpus").clone();
    assert_eq!(gpus.len(), 6, "{doc:#}");
    assert_eq!(gpus[0]["vendor"], "intel");
    assert_eq!(gpus[0]["power_draw_w"], 281.13);
    assert_eq!(gpus[0]["clock_sm_mhz"], 1600);
    assert!(gpus[0]["utilization_gpu_pct"].is_null(), "{doc:#}");
    assert!(gpus[0]["utilization_memory_pct"].is_null(), "{doc:#}");

    // Then followed: the dump loops by itself and is read as a stream.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let config = write_named_config(
        &sshd,
        dir.path(),
        "xpu-max1550",
        &format!("[metrics]\nlisten = \"127.0.0.1:{port}\"\n"),
    );
    let command = format!(
        "SSH_AUTH_SOCK= GPUFLEET_STATE_DIR={} {} --config {} --known-hosts {}; echo EXIT=$?; sleep 30",
        dir.path().join("state").display(),
        binary().display(),
        config.display(),
        dir.path().join("known_hosts").display()
    );
    let Some(tmux) = Tmux::start(&command, 120, 30) else {
        return;
    };
    // xpu-smi's dump names no model: the row says whose GPUs they are instead.
    let screen = tmux.wait_for("6x Intel", Duration::from_secs(20));
    let row = screen
        .lines()
        .find(|l| l.contains("xpu-max1550"))
        .unwrap_or_else(|| panic!("no row for the host:\n{screen}"));
    assert!(row.contains("live"), "{row}");
    // The next second's readings arrive on the same stream, line by line: GPU 1 draws
    // 287.05 W in them (286.48 W in the first).
    let page = scrape_until(
        &format!("http://127.0.0.1:{port}/metrics"),
        "gpufleet_gpu_power_watts{gpu=\"1\",vendor=\"intel\",model=\"\",pci_bus_id=\"\",instance=\"xpu-max1550\"} 287.05",
    );
    assert!(!page.contains("DCGM_FI_DEV_"), "{page}");
    assert!(
        !page.contains("gpufleet_gpu_utilization_ratio"),
        "N/A utilization is left out: {page}"
    );
    let calls = sshd.calls("xpu-smi");
    assert!(
        calls.iter().any(|c| c == "dump -d -1 -m 0,1,2,3,4,5 -i 1"),
        "{calls:?}"
    );
    tmux.keys(&["q"]);
    let after = tmux.wait_for("EXIT=", Duration::from_secs(20));
    assert!(after.contains("EXIT=0"), "{after}");
}

/// `gpufleet check` on `config`'s host with `expect` flags and no load; the exit code and the
/// JSON report.
fn check(config: &Path, dir: &Path, expect: &[&str]) -> (Option<i32>, serde_json::Value) {
    let out = Command::new(binary())
        .env("SSH_AUTH_SOCK", "")
        .env("GPUFLEET_STATE_DIR", dir.join("state"))
        .args(["--accept-new-host-keys", "--config"])
        .arg(config)
        .arg("--known-hosts")
        .arg(dir.join("known_hosts"))
        .args(["check", "ascend-910b", "--json", "--sustain-s", "0"])
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
    (out.status.code(), doc)
}

/// The check result `id` of `doc` for card `gpu` (`None`: the host-wide one).
fn result<'a>(doc: &'a serde_json::Value, id: &str, gpu: Option<u32>) -> &'a serde_json::Value {
    doc["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["id"] == id && c["gpu"].as_u64() == gpu.map(u64::from))
        .unwrap_or_else(|| panic!("no {id} for {gpu:?}: {doc:#}"))
}

#[test]
fn check_on_ascend_checks_identity_memory_and_count_and_says_what_it_skips() {
    let Some(sshd) = ascend_host() else { return };
    let dir = tempfile::tempdir().expect("temp");
    let config = write_config(&sshd, dir.path(), "");
    let expect = [
        "--expect-gpu",
        "910B1",
        "--expect-count",
        "3",
        "--expect-memory-gib",
        "64",
    ];
    let (code, doc) = check(&config, dir.path(), &expect);
    // Exit 0: every check made passed, and the rest is skipped (the overall word says so).
    assert_eq!(code, Some(0), "{doc:#}");
    assert_eq!(doc["status"], "skip", "{doc:#}");
    assert_eq!(result(&doc, "identity.count", None)["status"], "pass");
    for gpu in [0, 1, 7] {
        let model = result(&doc, "identity.model", Some(gpu));
        assert_eq!(model["status"], "pass", "{model:#}");
        assert_eq!(model["measured"], "910B1");
        let memory = result(&doc, "identity.memory", Some(gpu));
        assert_eq!(memory["status"], "pass", "{memory:#}");
        assert_eq!(memory["measured"], "64.0 GiB (65536 MiB)");
    }
    // What cannot be checked on Ascend is listed as skipped, with the vendor and the reason.
    for id in [
        "identity.cuda",
        "identity.torch",
        "health.xid",
        "health.ecc",
        "power.limit",
        "pcie.link",
        "vram.usable",
        "throughput.matmul",
        "sustained.load",
    ] {
        let skipped = result(&doc, id, None);
        assert_eq!(skipped["status"], "skip", "{skipped:#}");
        let message = skipped["message"].as_str().expect("message");
        assert!(
            message.starts_with("Not checked on Huawei Ascend: "),
            "{message}"
        );
    }
    assert!(
        result(&doc, "throughput.matmul", None)["message"]
            .as_str()
            .is_some_and(|m| m.contains("PyTorch/CUDA probe runs on NVIDIA GPUs only")),
        "{doc:#}"
    );
    let gpus = doc["gpus"].as_array().expect("gpus");
    assert_eq!(gpus.len(), 3, "{doc:#}");
    assert_eq!(gpus[0]["memory_total_mib"], 65536);
    // Only the fixed commands ran: the tool's table, never the PyTorch probe.
    assert_eq!(sshd.calls("npu-smi"), ["info"]);
}

#[test]
fn check_on_ascend_fails_a_wrong_count_or_model() {
    let Some(sshd) = ascend_host() else { return };
    let dir = tempfile::tempdir().expect("temp");
    let config = write_config(&sshd, dir.path(), "");
    let (code, doc) = check(&config, dir.path(), &["--expect-count", "8"]);
    assert_eq!(code, Some(2), "{doc:#}");
    let count = result(&doc, "identity.count", None);
    assert_eq!(count["status"], "fail", "{count:#}");
    assert_eq!(count["expected"], "8");
    assert!(
        count["measured"]
            .as_str()
            .is_some_and(|m| m.starts_with("3 ")),
        "{count:#}"
    );
    let (code, doc) = check(&config, dir.path(), &["--expect-gpu", "910B4"]);
    assert_eq!(code, Some(2), "{doc:#}");
    assert_eq!(result(&doc, "identity.model", Some(0))["status"], "fail");
}

#[test]
fn check_on_ascend_with_unreadable_output_fails_without_numbers() {
    let Some(sshd) = ascend_host() else { return };
    sshd.set_scenario("other-output");
    let dir = tempfile::tempdir().expect("temp");
    let config = write_config(&sshd, dir.path(), "");
    let (code, doc) = check(&config, dir.path(), &["--expect-count", "3"]);
    assert_eq!(code, Some(2), "{doc:#}");
    let count = result(&doc, "identity.count", None);
    assert_eq!(count["status"], "fail", "{count:#}");
    let message = count["message"].as_str().expect("message");
    assert!(
        message.contains("unsupported output from npu-smi"),
        "{message}"
    );
    assert_eq!(doc["gpus"], serde_json::json!([]), "{doc:#}");
}

#[test]
fn check_text_on_ascend_names_what_is_skipped_in_both_languages() {
    let Some(sshd) = ascend_host() else { return };
    let dir = tempfile::tempdir().expect("temp");
    let config = write_config(&sshd, dir.path(), "");
    let text = |lang: &str| {
        let out = Command::new(binary())
            .env("SSH_AUTH_SOCK", "")
            .env("GPUFLEET_STATE_DIR", dir.path().join("state"))
            .args(["--accept-new-host-keys", "--lang", lang, "--config"])
            .arg(&config)
            .arg("--known-hosts")
            .arg(dir.path().join("known_hosts"))
            .args([
                "check",
                "ascend-910b",
                "--sustain-s",
                "0",
                "--expect-count",
                "3",
            ])
            .output()
            .expect("check");
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let en = text("en");
    for needle in [
        "910B1",
        "Not checked on Huawei Ascend: the PyTorch/CUDA probe runs on NVIDIA GPUs only",
        "from nvidia-smi only, not from npu-smi",
    ] {
        assert!(en.contains(needle), "{needle:?} missing:\n{en}");
    }
    let zh = text("zh-CN");
    for needle in [
        "Huawei Ascend 上不检查：PyTorch/CUDA 探针只在 NVIDIA GPU 上运行",
        "不从 npu-smi 读取",
    ] {
        assert!(zh.contains(needle), "{needle:?} missing:\n{zh}");
    }
}

#[test]
fn check_on_intel_skips_what_xpu_smi_dump_does_not_report() {
    let Some(sshd) = vendor_host("intel") else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp");
    let config = write_config(&sshd, dir.path(), "");
    let (code, doc) = check(&config, dir.path(), &["--expect-count", "2"]);
    assert_eq!(code, Some(0), "{doc:#}");
    assert_eq!(result(&doc, "identity.count", None)["status"], "pass");
    // `xpu-smi dump` prints neither a model name nor a memory size: skipped, not passed.
    for id in ["identity.model", "identity.memory"] {
        let skipped = result(&doc, id, Some(1));
        assert_eq!(skipped["status"], "skip", "{skipped:#}");
        assert_eq!(
            skipped["message"],
            "Not checked on Intel: xpu-smi does not report it."
        );
    }
}
