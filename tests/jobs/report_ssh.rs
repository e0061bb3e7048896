//! The incident report's `nvidia-smi -q` from the time of the fault, for real: `gpufleet watch`
//! (the release binary, no terminal) on three hosts behind real OpenSSH servers running the
//! fake `nvidia-smi` (captured H200 output): one logs an Xid, one loses its GPU, one stays
//! healthy. The link runs `nvidia-smi -q` once on each faulty host's first fault, the black box
//! keeps it, and `gpufleet report` puts it in the bundle's `nvidia-smi-q.txt`.

use crate::common;
use crate::tmux;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::sshd::Sshd;
use tmux::binary;

const WAIT: Duration = Duration::from_secs(40);

fn host_block(name: &str, sshd: &Sshd) -> String {
    format!(
        "[[hosts]]\nname = \"{name}\"\nssh = \"{}@127.0.0.1:{}\"\nidentity_file = \"{}\"\n",
        sshd.user,
        sshd.port,
        sshd.client_key().display()
    )
}

struct Watcher(Child);

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.0.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn report(state: &Path, config: &Path, host: &str, out: &Path) -> PathBuf {
    let output = Command::new(binary())
        .arg("--config")
        .arg(config)
        .args(["report", host, "--since", "1h", "--out"])
        .arg(out)
        .env("GPUFLEET_STATE_DIR", state)
        .output()
        .expect("gpufleet report");
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    assert!(
        output.status.success(),
        "report {host}: {stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    std::fs::read_dir(out)
        .expect("out")
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name().is_some_and(|n| {
                n.to_string_lossy()
                    .starts_with(&format!("gpufleet-report-{host}-"))
            })
        })
        .unwrap_or_else(|| panic!("no bundle for {host}: {stdout}"))
}

#[test]
fn the_bundle_has_nvidia_smi_q_taken_at_the_first_fault_and_healthy_hosts_are_not_asked() {
    let Some(xid) = Sshd::start() else { return };
    let Some(lost) = Sshd::start() else { return };
    let Some(healthy) = Sshd::start() else { return };
    xid.set_scenario("xid");
    lost.set_scenario("gpu-lost");
    let dir = tempfile::tempdir().expect("temp");
    let state = dir.path().join("state");
    let known_hosts = dir.path().join("known_hosts");
    let lines: String = [&xid, &lost, &healthy]
        .iter()
        .map(|s| format!("{}\n", s.known_hosts_line("ed25519")))
        .collect();
    std::fs::write(&known_hosts, lines).expect("known_hosts");
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "interval_ms = 500\n\n{}\n{}\n{}",
            host_block("h200-xid", &xid),
            host_block("h200-lost", &lost),
            host_block("h200-ok", &healthy)
        ),
    )
    .expect("config");
    let log = dir.path().join("watch.log");
    let watcher = Watcher(
        Command::new(binary())
            .args(["watch", "--config"])
            .arg(&config)
            .arg("--known-hosts")
            .arg(&known_hosts)
            .env("GPUFLEET_STATE_DIR", &state)
            .env("SSH_AUTH_SOCK", "")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).expect("log"))
            .spawn()
            .expect("spawn gpufleet watch"),
    );
    let deadline = Instant::now() + WAIT;
    loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let taken = text
            .lines()
            .filter(|l| l.contains("evidence taken"))
            .count();
        // Both faulty hosts, and a few healthy seconds more for a wrong third.
        if taken >= 2 {
            std::thread::sleep(Duration::from_secs(3));
            break;
        }
        assert!(Instant::now() < deadline, "no evidence taken:\n{text}");
        std::thread::sleep(Duration::from_millis(200));
    }
    drop(watcher);

    let asked = |s: &Sshd| {
        s.calls("nvidia-smi")
            .iter()
            .filter(|c| c.trim() == "-q")
            .count()
    };
    assert_eq!(
        asked(&xid),
        1,
        "once per session: {:?}",
        xid.calls("nvidia-smi")
    );
    assert_eq!(asked(&lost), 1, "{:?}", lost.calls("nvidia-smi"));
    assert_eq!(asked(&healthy), 0, "a healthy host is never asked");

    let out = dir.path().join("out");
    std::fs::create_dir(&out).expect("out");
    // An Xid with the GPU still readable: the whole report of the card, as the host printed it.
    let bundle = report(&state, &config, "h200-xid", &out);
    let smi_q = std::fs::read_to_string(bundle.join("nvidia-smi-q.txt")).expect("smi q");
    assert!(
        smi_q.starts_with("# `nvidia-smi -q` on h200-xid, taken by gpufleet at "),
        "{smi_q}"
    );
    assert!(
        smi_q.contains("==============NVSMI LOG=============="),
        "{smi_q}"
    );
    assert!(
        smi_q.contains("Product Name") && smi_q.contains("NVIDIA H200"),
        "{smi_q}"
    );
    let md = std::fs::read_to_string(bundle.join("report.md")).expect("md");
    assert!(
        md.contains("`nvidia-smi -q` taken"),
        "the timeline says when: {md}"
    );
    assert!(!md.contains("no `nvidia-smi -q` in this window"), "{md}");
    // A lost GPU: what nvidia-smi -q printed then, its exit status with it.
    let bundle = report(&state, &config, "h200-lost", &out);
    let smi_q = std::fs::read_to_string(bundle.join("nvidia-smi-q.txt")).expect("smi q");
    assert!(smi_q.contains("GPU is lost"), "{smi_q}");
    assert!(smi_q.contains("[exit 15]"), "{smi_q}");
    // The healthy host's bundle says there is none and why.
    let bundle = report(&state, &config, "h200-ok", &out);
    let smi_q = std::fs::read_to_string(bundle.join("nvidia-smi-q.txt")).expect("smi q");
    assert!(
        smi_q.starts_with("# no `nvidia-smi -q` in this window"),
        "{smi_q}"
    );
}
