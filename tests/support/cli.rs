//! Running the built binary as a user would, in a home of its own: `HOME`, the XDG directories
//! and the state directory all point into a temporary directory, stdin is empty.
// Each test binary that includes this module uses only part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A temporary home for one test.
pub struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Where `gpufleet` looks for its config in this home.
    pub fn config_path(&self) -> PathBuf {
        self.path().join("xdg-config/gpufleet/config.toml")
    }

    /// Writes `text` to `name` in this home and returns its path as a string.
    pub fn write(&self, name: &str, text: &str) -> String {
        let path = self.path().join(name);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).expect("mkdir");
        }
        std::fs::write(&path, text).expect("write");
        path.to_str().expect("utf-8 path").to_string()
    }

    /// Runs `gpufleet args...` with nothing on stdin.
    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args)
            .stdin(Stdio::null())
            .output()
            .expect("run gpufleet")
    }

    /// Runs `gpufleet args...` with nothing on stdin and the locale variables removed, so that
    /// only `--lang` (or the config) chooses the language.
    pub fn run_unlocalized(&self, args: &[&str]) -> Output {
        self.command(args)
            .env_remove("LC_ALL")
            .env_remove("LC_MESSAGES")
            .env_remove("LANG")
            .stdin(Stdio::null())
            .output()
            .expect("run gpufleet")
    }

    /// The command, ready to run in this home.
    pub fn command(&self, args: &[&str]) -> Command {
        let home = self.path();
        let mut command = Command::new(binary());
        command
            .args(args)
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", home.join("xdg-config"))
            .env("XDG_STATE_HOME", home.join("xdg-state"))
            .env("XDG_DATA_HOME", home.join("xdg-data"))
            .env("GPUFLEET_STATE_DIR", home.join("state"))
            .env_remove("NO_COLOR")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }
}

/// The binary under test: `$GPUFLEET_E2E_BIN` when set (as in `support/tmux.rs`), else the one
/// cargo built for this test run.
pub fn binary() -> PathBuf {
    match std::env::var_os("GPUFLEET_E2E_BIN") {
        Some(path) if !path.is_empty() => PathBuf::from(path),
        _ => PathBuf::from(env!("CARGO_BIN_EXE_gpufleet")),
    }
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}
