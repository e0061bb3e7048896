//! all-smi beside gpufleet in the fleet benchmark: `all-smi view --ssh-hostfile FILE
//! --interval 1` against the same stand-in hosts over the same window, in a real terminal
//! (a private tmux server), its CPU and peak memory read from `/proc`.
//!
//! all-smi keys each host by `user@host:port`, so the N hosts need N spellings of the one
//! sshd's address: `127.0.0.1` with leading zeros in its last three parts (`127.00.0.01`, ...),
//! each of which the system resolver reads as 127.0.0.1 (octal, as `inet_aton` does). Its
//! known_hosts file names every spelling with the sshd's keys, so host keys verify under
//! all-smi's default `--ssh-strict-host-key yes`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::proc_stats::{connections_to, cpu_seconds, status_kb};
use crate::sshd::Sshd;

/// The all-smi binary: `GPUFLEET_BENCH_ALLSMI`, else `all-smi` on `PATH`; `None` (with the
/// reason) when there is none.
pub fn find() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os("GPUFLEET_BENCH_ALLSMI") {
        let path = PathBuf::from(path);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(format!(
                "GPUFLEET_BENCH_ALLSMI={} is not a file",
                path.display()
            ))
        };
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join("all-smi"))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            "no all-smi on PATH (cargo install all-smi, or set GPUFLEET_BENCH_ALLSMI)".to_string()
        })
}

/// The `i`-th spelling of 127.0.0.1 (0 is `127.0.0.1` itself); 1,331 distinct ones.
pub fn address_spelling(i: usize) -> String {
    let zeros = |n: usize| "0".repeat(n);
    let (a, b, c) = (i % 11, (i / 11) % 11, i / 121);
    format!("127.{}0.{}0.{}1", zeros(c), zeros(b), zeros(a))
}

/// The directories after the stand-in's on the hosts' PATH (`tests/common/sshd.rs`).
const REMOTE_PATH: [&str; 3] = ["/usr/local/bin", "/usr/bin", "/bin"];

pub struct AllSmi {
    socket: String,
    pid: String,
    port: u16,
    cpu_start: f64,
}

pub struct AllSmiFigures {
    pub cpu_s: f64,
    pub peak_rss_kb: u64,
    pub connections: usize,
}

fn tmux(socket: &str) -> Command {
    let mut cmd = Command::new("tmux");
    cmd.args(["-L", socket, "-f", "/dev/null"]);
    cmd
}

/// Single quotes for the shell that tmux runs the command with.
fn quoted(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', r"'\''"))
}

impl AllSmi {
    /// Starts all-smi on `hosts` spellings of `sshd`'s address, its files in `dir`.
    pub fn start(bin: &Path, sshd: &Sshd, hosts: usize, dir: &Path) -> Result<AllSmi, String> {
        // all-smi first asks each host for `all-smi --version`; one on the stand-in hosts'
        // PATH would answer and all-smi would read the real GPUs with it, not the stand-in.
        if let Some(found) = REMOTE_PATH
            .iter()
            .map(|d| Path::new(d).join("all-smi"))
            .find(|p| p.exists())
        {
            return Err(format!(
                "{} is on the stand-in hosts' PATH, so all-smi would not read the stand-in: \
                 keep all-smi elsewhere and name it in GPUFLEET_BENCH_ALLSMI",
                found.display()
            ));
        }
        let home = dir.join("home");
        std::fs::create_dir_all(&home).map_err(|e| format!("{}: {e}", home.display()))?;
        let mut hostfile = String::new();
        let mut known = String::new();
        for i in 0..hosts {
            let host = address_spelling(i);
            hostfile.push_str(&format!("{}@{host}:{}\n", sshd.user, sshd.port));
            for kind in ["ed25519", "ecdsa"] {
                let key = std::fs::read_to_string(sshd.host_key_pub(kind)).unwrap_or_default();
                let key: Vec<&str> = key.split_whitespace().take(2).collect();
                known.push_str(&format!("[{host}]:{} {}\n", sshd.port, key.join(" ")));
            }
        }
        let hostfile_path = dir.join("hosts-ssh.txt");
        let known_path = dir.join("known_hosts");
        std::fs::write(&hostfile_path, hostfile).map_err(|e| format!("hostfile: {e}"))?;
        std::fs::write(&known_path, known).map_err(|e| format!("known_hosts: {e}"))?;
        let socket = format!("gpufleet-bench-{}", std::process::id());
        let command = format!(
            "exec env -u SSH_AUTH_SOCK HOME={home} {bin} view --ssh-hostfile {hosts} \
             --interval 1 --ssh-key {key} --ssh-known-hosts {known} 2>{log}",
            home = quoted(&home),
            bin = quoted(bin),
            hosts = quoted(&hostfile_path),
            key = quoted(&sshd.client_key()),
            known = quoted(&known_path),
            log = quoted(&dir.join("all-smi.stderr")),
        );
        let started = tmux(&socket)
            .args(["new-session", "-d", "-x", "200", "-y", "50", "-s", "allsmi"])
            .arg(command)
            .status()
            .map_err(|e| format!("tmux: {e}"))?;
        if !started.success() {
            return Err(format!("tmux new-session exited with {started}"));
        }
        let out = tmux(&socket)
            .args(["display-message", "-p", "-t", "allsmi", "#{pane_pid}"])
            .output()
            .map_err(|e| format!("tmux: {e}"))?;
        let pid = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if pid.is_empty() {
            return Err("tmux named no pane process for all-smi".to_string());
        }
        Ok(AllSmi {
            socket,
            cpu_start: cpu_seconds(&pid),
            pid,
            port: sshd.port,
        })
    }

    /// Starts counting its CPU from now.
    pub fn start_window(&mut self) {
        self.cpu_start = cpu_seconds(&self.pid);
    }

    /// Its CPU since [`AllSmi::start_window`], its peak memory and connections, now.
    pub fn figures(&self) -> AllSmiFigures {
        AllSmiFigures {
            cpu_s: cpu_seconds(&self.pid) - self.cpu_start,
            peak_rss_kb: status_kb(&self.pid, "VmHWM"),
            connections: connections_to(&self.pid, self.port),
        }
    }

    /// What its terminal shows now.
    pub fn screen(&self) -> String {
        tmux(&self.socket)
            .args(["capture-pane", "-p", "-t", "allsmi"])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).to_string())
            .unwrap_or_default()
    }
}

impl Drop for AllSmi {
    fn drop(&mut self) {
        // Our own tmux server (its private socket) and the all-smi in it.
        let _ = tmux(&self.socket).arg("kill-server").status();
    }
}
