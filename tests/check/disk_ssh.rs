//! A host's disks and its missing nvidia-smi over a real sshd on 127.0.0.1: the link reads
//! `df -P -k` (a fake `df` first on the remote `PATH` plays back real captures,
//! tests/fixtures/df: an overlay root 97 % full and Docker's 64 MiB `/dev/shm`) and the host gets
//! `disk_nearly_full` and `shm_small` in `snapshot --json`'s `hosts[].findings[]`, on `/metrics`
//! (`gpufleet_filesystem_used_ratio`, linted by the real `promtool`), in the console's host view
//! and as alerts; a host whose shell finds no nvidia-smi is `smi_missing`.

use crate::accel_ssh::{snapshot, write_named_config as write_config};
use crate::common;
use crate::release_server as server;
use crate::tmux;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::sshd::{Sshd, SshdOptions};
use server::{Server, answer};
use tmux::{Tmux, binary};

const WAIT: Duration = Duration::from_secs(40);

/// Puts a `df` into `bin` that prints the captured `df -P -k` output of `root` for `/` and of
/// `shm` for `/dev/shm` (the last argument is the path asked), and `root`'s for anything else.
fn install_df(bin: &Path, root: &str, shm: &str) {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/df");
    std::fs::create_dir_all(bin).expect("bin");
    for name in [root, shm] {
        std::fs::copy(fixtures.join(name), bin.join(name)).expect("fixture");
    }
    let script = format!(
        "#!/bin/sh\n# Plays back captured df -P -k output for the path asked.\nd=$(dirname \"$0\")\nfor last; do :; done\n\
         echo \"$*\" >> \"$d/df.calls\"\n\
         case \"$last\" in\n  /dev/shm) cat \"$d/{shm}\" ;;\n  *) cat \"$d/{root}\" ;;\nesac\n"
    );
    let df = bin.join("df");
    std::fs::write(&df, script).expect("df");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&df, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// An sshd whose fake host has the fake nvidia-smi and a `df` playing back a container whose
/// root is 97 % full and whose `/dev/shm` is Docker's 64 MiB.
fn full_host() -> Option<Sshd> {
    let sshd = Sshd::start()?;
    install_df(
        &sshd.dir().join("bin"),
        "container_root_97.txt",
        "container_shm_64m.txt",
    );
    Some(sshd)
}

fn labels(host: &serde_json::Value) -> Vec<String> {
    host["findings"]
        .as_array()
        .unwrap_or_else(|| panic!("no findings array: {host}"))
        .iter()
        .map(|f| f["label"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn finding<'a>(host: &'a serde_json::Value, label: &str) -> &'a serde_json::Value {
    host["findings"]
        .as_array()
        .and_then(|all| all.iter().find(|f| f["label"] == label))
        .unwrap_or_else(|| panic!("no {label} finding: {host}"))
}

#[test]
fn a_host_without_nvidia_smi_is_smi_missing_in_snapshot_json() {
    for dir in ["/usr/local/bin", "/usr/bin", "/bin"] {
        if Path::new(dir).join("nvidia-smi").exists() {
            eprintln!("skipping: {dir}/nvidia-smi exists, the host would have one");
            return;
        }
    }
    // The remote PATH has a fake `df` and nothing named nvidia-smi.
    let bin = tempfile::tempdir().expect("bin");
    install_df(bin.path(), "host_root.txt", "host_shm.txt");
    let Some(sshd) = Sshd::start_with(&SshdOptions {
        bin_dir: Some(bin.path().to_path_buf()),
        ..SshdOptions::default()
    }) else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp");
    let config = write_config(&sshd, dir.path(), "no-smi", "");
    let (code, doc) = snapshot(&config, dir.path());
    assert_eq!(code, Some(1), "a host not read is not all read: {doc}");
    let host = &doc["hosts"][0];
    assert_eq!(host["status"], "smi_missing", "{host}");
    // The shell's message and the exit status stay apart.
    let detail = host["status_detail"].as_str().unwrap_or_default();
    assert!(detail.contains("not found"), "{detail}");
    assert!(!detail.contains("foundnvidia"), "{detail}");
    let f = finding(host, "smi_missing");
    assert_eq!(f["severity"], "warning", "{f}");
    let summary = f["summary"].as_str().unwrap_or_default();
    assert!(summary.contains("nvidia-smi not found"), "{summary}");
    // Not an NVML failure: nothing says to recreate the container.
    assert!(
        !labels(host).iter().any(|l| l.starts_with("nvml_error")),
        "{host}"
    );
    assert!(
        !f["action"]
            .as_str()
            .unwrap_or_default()
            .contains("recreate the container"),
        "{f}"
    );
}

#[test]
fn a_full_root_and_dockers_shm_raise_both_findings_in_snapshot_json() {
    let Some(sshd) = full_host() else { return };
    let dir = tempfile::tempdir().expect("temp");
    let config = write_config(&sshd, dir.path(), "h200-full", "");
    let (code, doc) = snapshot(&config, dir.path());
    let host = &doc["hosts"][0];
    assert_eq!(code, Some(0), "{doc}");
    assert_eq!(host["status"], "live", "{host}");
    let found = labels(host);
    assert!(found.contains(&"disk_nearly_full".to_string()), "{host}");
    assert!(found.contains(&"shm_small".to_string()), "{host}");
    let full = finding(host, "disk_nearly_full");
    let evidence = full["evidence"].to_string();
    assert!(evidence.contains("/ (overlay) is 97% full"), "{evidence}");
    let shm = finding(host, "shm_small");
    assert!(shm["evidence"].to_string().contains("64 MiB"), "{shm}");
    // The readings themselves, as df gave them.
    let root = host["filesystems"]
        .as_array()
        .and_then(|all| all.iter().find(|f| f["path"] == "root"))
        .unwrap_or_else(|| panic!("no root file system: {host}"));
    assert_eq!(root["total_kib"], 204_800, "{root}");
    assert_eq!(root["avail_kib"], 6_800, "{root}");
    // One df per path, in POSIX format with 1024-byte units.
    let calls = std::fs::read_to_string(sshd.dir().join("bin/df.calls")).unwrap_or_default();
    assert!(calls.lines().any(|c| c == "-P -k -- /"), "{calls}");
    assert!(calls.lines().any(|c| c == "-P -k -- /dev/shm"), "{calls}");
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

fn scrape_until(url: &str, needle: &str) -> String {
    let deadline = Instant::now() + WAIT;
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

/// What `promtool check metrics` says of `page`: whether it passed, and its words.
fn promtool(page: &str) -> (bool, String) {
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool (Debian package prometheus)");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(page.as_bytes()).expect("write page");
    }
    let out = child.wait_with_output().expect("promtool");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// The whole page parses and nothing of gpufleet's own is linted (dcgm-exporter's names keep
/// their camelCase labels); the file system family alone passes outright.
fn promtool_lints_clean(page: &str) {
    let (_, report) = promtool(page);
    assert!(
        !report.contains("error while linting") && !report.contains("parse"),
        "{report}"
    );
    assert!(
        !report.lines().any(|l| l.starts_with("gpufleet_")),
        "{report}"
    );
    let family: String = page
        .lines()
        .filter(|l| l.contains("gpufleet_filesystem_used_ratio"))
        .map(|l| format!("{l}\n"))
        .collect();
    let (clean, report) = promtool(&family);
    assert!(clean && report.trim().is_empty(), "{report}\n{family}");
}

#[test]
fn the_watcher_serves_the_ratio_and_alerts_the_disk_findings() {
    let Some(sshd) = full_host() else { return };
    let dir = tempfile::tempdir().expect("temp");
    let hook = Server::start(vec![answer(200, "{}"), answer(200, "{}")]);
    let config = write_config(
        &sshd,
        dir.path(),
        "h200-full",
        &format!(
            "[[alerts]]\nkind = \"webhook\"\nurl = \"{}/gpu-alerts\"\n",
            hook.base_url
        ),
    );
    let metrics = format!("127.0.0.1:{}", free_port());
    let log = dir.path().join("watch.log");
    let mut child = Command::new(binary())
        .args([
            "watch",
            "--accept-new-host-keys",
            "--metrics",
            &metrics,
            "--config",
        ])
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
    let page = scrape_until(
        &format!("http://{metrics}/metrics"),
        "gpufleet_filesystem_used_ratio{",
    );
    let want_root =
        "gpufleet_filesystem_used_ratio{instance=\"h200-full\",mount=\"/\"} 0.966796875";
    let want_shm = "gpufleet_filesystem_used_ratio{instance=\"h200-full\",mount=\"/dev/shm\"} 0";
    assert!(page.contains(want_root), "{page}");
    assert!(page.contains(want_shm), "{page}");
    promtool_lints_clean(&page);

    let deadline = Instant::now() + WAIT;
    let mut seen: Vec<String> = Vec::new();
    while !(seen.contains(&"disk_nearly_full".into()) && seen.contains(&"shm_small".into())) {
        seen = hook
            .requests()
            .iter()
            .map(|r| r.json())
            .filter(|b| b["host"] == "h200-full" && b["state"] == "firing")
            .map(|b| b["label"].as_str().unwrap_or_default().to_string())
            .collect();
        assert!(
            Instant::now() < deadline,
            "alerts {seen:?}; log:\n{}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn the_host_view_lists_the_disk_findings() {
    let Some(sshd) = full_host() else { return };
    let dir = tempfile::tempdir().expect("temp");
    let config = write_config(&sshd, dir.path(), "h200-full", "");
    for lang in ["en", "zh-CN"] {
        let command = format!(
            "SSH_AUTH_SOCK= GPUFLEET_STATE_DIR={} {} --lang {lang} --config {} --known-hosts {} --accept-new-host-keys; echo EXIT=$?; sleep 30",
            dir.path().join("state").display(),
            binary().display(),
            config.display(),
            dir.path().join("known_hosts").display()
        );
        let Some(tmux) = Tmux::start(&command, 100, 50) else {
            return;
        };
        tmux.wait_for("h200-full", WAIT);
        tmux.keys(&["Enter"]);
        let screen = tmux.wait_for("shm_small", WAIT);
        assert!(screen.contains("disk_nearly_full"), "{lang}:\n{screen}");
        let words = if lang == "en" {
            "/dev/shm is small"
        } else {
            "/dev/shm 太小"
        };
        let deadline = Instant::now() + WAIT;
        let mut screen = screen;
        while !screen.contains(words) {
            assert!(Instant::now() < deadline, "{lang}: no {words:?}:\n{screen}");
            std::thread::sleep(Duration::from_millis(200));
            screen = tmux.screen();
        }
        tmux.keys(&["q"]);
        tmux.keys(&["q"]);
    }
}
