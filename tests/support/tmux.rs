//! Driving the built binary inside tmux for end-to-end tests: start it, type keys, read the
//! screen back.
// Each test binary that includes this module uses only part of it.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::AtomicUsize;
use std::time::{Duration, Instant};

/// Tests in one binary run in parallel: each session gets a socket of its own.
static NEXT: AtomicUsize = AtomicUsize::new(0);

/// The binary under test: `$GPUFLEET_E2E_BIN` when set (`.ci/run` points it at the release
/// build, what users run), else the one cargo built for this test run (never stale).
pub fn binary() -> PathBuf {
    match std::env::var_os("GPUFLEET_E2E_BIN") {
        Some(path) if !path.is_empty() => PathBuf::from(path),
        _ => PathBuf::from(env!("CARGO_BIN_EXE_gpufleet")),
    }
}

pub struct Tmux {
    socket: String,
}

impl Tmux {
    pub fn start(command: &str, width: u16, height: u16) -> Option<Tmux> {
        if Command::new("tmux").arg("-V").output().is_err() {
            assert!(std::env::var_os("CI").is_none(), "tmux is required in CI");
            eprintln!("tmux not installed: skipping");
            return None;
        }
        let socket = format!(
            "gpufleet-e2e-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        let status = Command::new("tmux")
            .args([
                "-L",
                &socket,
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-s",
                "e2e",
            ])
            .args(["-x", &width.to_string(), "-y", &height.to_string()])
            // The console follows the locale (LC_ALL, LC_MESSAGES, LANG): English unless a
            // test's command says otherwise, whatever the locale of the machine running it.
            .args([
                "-e",
                "LC_ALL=C.UTF-8",
                "-e",
                "LC_MESSAGES=",
                "-e",
                "LANG=C.UTF-8",
            ])
            .arg(command)
            .status()
            .expect("tmux new-session");
        assert!(status.success());
        Some(Tmux { socket })
    }

    pub fn keys(&self, keys: &[&str]) {
        for k in keys {
            let status = Command::new("tmux")
                .args(["-L", &self.socket, "send-keys", "-t", "e2e", k])
                .status()
                .expect("tmux send-keys");
            assert!(status.success());
            std::thread::sleep(Duration::from_millis(150));
        }
    }

    pub fn screen(&self) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "capture-pane", "-p", "-t", "e2e"])
            .output()
            .expect("tmux capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The screen with its attributes and colours as SGR escapes (`capture-pane -e`).
    pub fn screen_with_escapes(&self) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "capture-pane", "-e", "-p", "-t", "e2e"])
            .output()
            .expect("tmux capture-pane -e");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Types `bytes` into the pane as they are (`send-keys -H`), for input no key name
    /// covers, such as a terminal's mouse report.
    pub fn send_bytes(&self, bytes: &[u8]) {
        let hex: Vec<String> = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let status = Command::new("tmux")
            .args(["-L", &self.socket, "send-keys", "-t", "e2e", "-H"])
            .args(&hex)
            .status()
            .expect("tmux send-keys -H");
        assert!(status.success());
        std::thread::sleep(Duration::from_millis(150));
    }

    /// A tmux format evaluated for the pane (`display-message -p`), e.g. `#{pane_pid}`.
    pub fn format(&self, format: &str) -> String {
        let out = Command::new("tmux")
            .args([
                "-L",
                &self.socket,
                "display-message",
                "-p",
                "-t",
                "e2e",
                format,
            ])
            .output()
            .expect("tmux display-message");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Waits until the screen contains `needle`, returning the screen; panics with the last
    /// screen after `timeout`.
    pub fn wait_for(&self, needle: &str, timeout: Duration) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if screen.contains(needle) {
                return screen;
            }
            assert!(
                start.elapsed() < timeout,
                "timed out waiting for {needle:?}; screen was:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits until `ready` holds for the screen, returning the screen; panics saying `what`
    /// was awaited, with the last screen, after `timeout`.
    pub fn wait_until(
        &self,
        what: &str,
        timeout: Duration,
        ready: impl Fn(&str) -> bool,
    ) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if ready(&screen) {
                return screen;
            }
            assert!(
                start.elapsed() < timeout,
                "timed out waiting for {what}; screen was:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}
