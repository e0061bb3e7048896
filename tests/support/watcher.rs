//! `gpufleet watch` as a child process for end-to-end tests: started on a config and a state
//! directory with its log in a file, killed on drop; and waiting for what its log or a server
//! shows.
// Each test binary that includes this module uses only part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Watcher {
    child: Child,
    log: PathBuf,
}

impl Watcher {
    /// `gpufleet watch` (the binary under test) on `config`, trusting `known_hosts`, keeping
    /// its state in `state` and writing its log to `log`.
    pub fn start(
        binary: &Path,
        config: &Path,
        known_hosts: &Path,
        state: &Path,
        log: &Path,
    ) -> Self {
        let child = Command::new(binary)
            .args(["watch", "--known-hosts"])
            .arg(known_hosts)
            .arg("--config")
            .arg(config)
            .env("GPUFLEET_STATE_DIR", state)
            .env("SSH_AUTH_SOCK", "")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(log).expect("log"))
            .spawn()
            .expect("spawn gpufleet watch");
        Self {
            child,
            log: log.to_path_buf(),
        }
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Polls `ok` until it holds, failing after `within` with `what` and `why()` (a log).
pub fn wait_until(
    what: &str,
    within: Duration,
    why: &dyn Fn() -> String,
    mut ok: impl FnMut() -> bool,
) {
    let deadline = Instant::now() + within;
    while !ok() {
        assert!(Instant::now() < deadline, "never {what}:\n{}", why());
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// `billing_started` for a host rented `hours` ago, as the config takes it (RFC 3339, UTC).
pub fn hours_ago(hours: u64) -> String {
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs()
        - hours * 3600;
    let out = Command::new("date")
        .args(["-u", "-d", &format!("@{started}"), "+%Y-%m-%dT%H:%M:%SZ"])
        .output()
        .expect("date");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}
