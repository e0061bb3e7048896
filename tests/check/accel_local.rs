//! Local mode on an AMD machine: no NVML here, and `rocm-smi` on the `PATH` (the fake in
//! tests/fixtures/fake-accel/amd replaying the real `rocm-smi --json` output of four Instinct
//! MI100, ROCm 6.0.2). `snapshot --local` and `watch --local` read it through the same parser
//! as an AMD host over SSH, at the interval.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The folder with the fake `rocm-smi`; `None` (the test is skipped) where this machine has
/// NVML, which local mode reads first.
fn fake_amd() -> Option<PathBuf> {
    let nvml = [
        "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
        "/usr/lib64/libnvidia-ml.so.1",
        "/usr/lib/libnvidia-ml.so.1",
    ];
    if nvml.iter().any(|p| Path::new(p).exists()) {
        eprintln!("skipping: this machine has NVML, which local mode reads before rocm-smi");
        return None;
    }
    Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake-accel/amd"))
}

/// gpufleet with a private home, the fake first on `PATH`, its calls recorded in `dir`.
fn gpufleet(dir: &Path, fakes: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_gpufleet"));
    command
        .env("HOME", dir)
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("GPUFLEET_STATE_DIR", dir.join("state"))
        .env("GPUFLEET_FAKE_DIR", dir)
        .env("PATH", format!("{}:/usr/bin:/bin", fakes.display()));
    command
}

fn calls(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("rocm-smi.calls"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn snapshot_local_reads_the_amd_gpus_through_rocm_smi() {
    let Some(fakes) = fake_amd() else { return };
    let dir = tempfile::tempdir().expect("temp");
    let out = gpufleet(dir.path(), &fakes)
        .args(["--local", "snapshot", "--json"])
        .output()
        .expect("snapshot");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(out.status.code(), Some(0), "{doc:#}");
    let host = &doc["hosts"][0];
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
    assert_eq!(gpu["power_limit_w"], 290.0);
    // The same fixed flags as over SSH, run without a shell.
    let calls = calls(dir.path());
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert!(calls[0].starts_with("-o -l -m"), "{calls:?}");
    assert!(calls[0].ends_with("--json"), "{calls:?}");
}

/// Ends the watcher when the test ends, passed or not.
struct Watcher(Child);

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn watch_local_polls_rocm_smi_at_the_interval() {
    let Some(fakes) = fake_amd() else { return };
    let dir = tempfile::tempdir().expect("temp");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let _watcher = Watcher(
        gpufleet(dir.path(), &fakes)
            .args(["--local", "--interval-ms", "300", "watch", "--metrics"])
            .arg(format!("127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("watch"),
    );
    let url = format!("http://127.0.0.1:{port}/metrics");
    let needle = "gpufleet_gpu_memory_total_bytes{gpu=\"0\",vendor=\"amd\"";
    let deadline = Instant::now() + Duration::from_secs(20);
    let page = loop {
        let page = reqwest::blocking::get(&url)
            .and_then(|r| r.text())
            .unwrap_or_default();
        if page.contains(needle) {
            break page;
        }
        assert!(Instant::now() < deadline, "no {needle} on the page: {page}");
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(!page.contains("DCGM_FI_DEV_"), "{page}");
    // Read again at the interval, not once.
    let deadline = Instant::now() + Duration::from_secs(20);
    while calls(dir.path()).len() < 3 {
        assert!(Instant::now() < deadline, "{:?}", calls(dir.path()));
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn check_local_on_amd_counts_the_cards_from_rocm_smi_and_skips_the_cuda_probe() {
    let Some(fakes) = fake_amd() else { return };
    let dir = tempfile::tempdir().expect("temp");
    let run = |count: &str| {
        let out = gpufleet(dir.path(), &fakes)
            .args(["check", "--local", "--json", "--sustain-s", "0"])
            .args(["--expect-count", count, "--expect-memory-gib", "32"])
            .output()
            .expect("check");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
            panic!(
                "not JSON ({e}): {stdout}\n{}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        (out.status.code(), doc)
    };
    let find = |doc: &serde_json::Value, id: &str, gpu: Option<u64>| {
        doc["checks"]
            .as_array()
            .expect("checks")
            .iter()
            .find(|c| c["id"] == id && c["gpu"].as_u64() == gpu)
            .cloned()
            .unwrap_or_else(|| panic!("no {id}: {doc:#}"))
    };
    let (code, doc) = run("4");
    assert_eq!(code, Some(0), "{doc:#}");
    assert_eq!(find(&doc, "identity.count", None)["status"], "pass");
    let memory = find(&doc, "identity.memory", Some(0));
    assert_eq!(memory["status"], "pass", "{memory:#}");
    assert_eq!(memory["measured"], "32.0 GiB (32752 MiB)");
    let probe = find(&doc, "throughput.matmul", None);
    assert_eq!(probe["status"], "skip", "{probe:#}");
    assert!(
        probe["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("Not checked on AMD: ")),
        "{probe:#}"
    );
    let (code, doc) = run("8");
    assert_eq!(code, Some(2), "{doc:#}");
    assert_eq!(find(&doc, "identity.count", None)["status"], "fail");
}
