//! `gpufleet watch` over real sshd: N hosts of 8 GPUs at a 1 s interval, the release binary as a
//! child with no terminal. Measures its CPU (user + system ticks of the whole process, so every
//! link thread counts) and memory over a window once every host streams, then makes one host
//! lose its GPU and times the alert from the moment the fake `nvidia-smi` prints the failure to
//! the moment the webhook (a loopback HTTP server) receives it.
//!
//! `cargo bench --bench watch_ssh` runs 50 hosts (GPUFLEET_BENCH_HOSTS) for 60 s and writes
//! `target/watch-ssh-report.txt`. GPUFLEET_SOAK_MINUTES=N samples RSS once a minute first;
//! GPUFLEET_SOAK_VARIANTS adds watchers with other environments, GPUFLEET_SOAK_CONSOLE=1 the
//! console; GPUFLEET_BENCH_WRAP runs the watcher under a tool.
//! Under `cargo test` it runs a 3-host, 5-second smoke version.
//! Needs `/usr/sbin/sshd` and the release binary (`cargo build --release`).

#[path = "../tests/release_support/server.rs"]
mod server;
#[allow(dead_code)]
#[path = "../tests/common/sshd.rs"]
mod sshd;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Plan {
    hosts: usize,
    measure: Duration,
}

fn ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = after.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of stat: 12 and 13 after the state field.
    Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
}

fn status_kib(pid: u32, key: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Where the resident memory is: anonymous (heap, arenas, stacks) and file-backed, from
/// `smaps_rollup`, and how many anonymous mappings of glibc's 64 MiB arena size exist.
fn memory_breakdown(pid: u32) -> String {
    let rollup = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).unwrap_or_default();
    let kib = |key: &str| {
        rollup
            .lines()
            .find(|l| l.starts_with(key))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap_or_default();
    let arenas = maps
        .lines()
        .filter_map(|l| l.split_whitespace().next()?.split_once('-'))
        .filter_map(|(a, b)| {
            Some(u64::from_str_radix(b, 16).ok()? - u64::from_str_radix(a, 16).ok()?)
        })
        .filter(|size| *size >= 60 << 20 && *size <= 64 << 20)
        .count();
    let threads = status_kib(pid, "Threads:").unwrap_or(0);
    format!(
        "RSS {:.1} MB = anonymous {:.1} MB + file {:.1} MB; {threads} threads; {arenas} arena-sized mappings",
        kib("Rss:") as f64 / 1024.0,
        kib("Anonymous:") as f64 / 1024.0,
        (kib("Rss:").saturating_sub(kib("Anonymous:"))) as f64 / 1024.0,
    )
}

/// The console in a detached tmux session (160x48) on the bench's config.
struct Console {
    socket: String,
}

impl Console {
    fn start(binary: &std::path::Path, dir: &std::path::Path) -> Self {
        let socket = format!("gpufleet-soak-{}", std::process::id());
        let command = format!(
            "GPUFLEET_STATE_DIR={} SSH_AUTH_SOCK= exec {} --config {} --known-hosts {}",
            dir.join("state-console").display(),
            binary.display(),
            dir.join("config.toml").display(),
            dir.join("known_hosts").display()
        );
        let status = Command::new("tmux")
            .args([
                "-L",
                &socket,
                "new-session",
                "-d",
                "-x",
                "160",
                "-y",
                "48",
                &command,
            ])
            .status()
            .expect("tmux");
        assert!(status.success(), "tmux new-session failed");
        Self { socket }
    }

    fn pid(&self) -> Option<u32> {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "display", "-p", "#{pane_pid}"])
            .output()
            .ok()?;
        String::from_utf8_lossy(&out.stdout).trim().parse().ok()
    }
}

impl Drop for Console {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}

fn scrape(addr: &str) -> String {
    reqwest::blocking::get(format!("http://{addr}/metrics"))
        .and_then(|r| r.text())
        .unwrap_or_default()
}

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let plan = if bench {
        Plan {
            hosts: std::env::var("GPUFLEET_BENCH_HOSTS")
                .ok()
                .and_then(|n| n.parse().ok())
                .unwrap_or(50),
            measure: Duration::from_secs(60),
        }
    } else {
        Plan {
            hosts: 3,
            measure: Duration::from_secs(5),
        }
    };
    let binary = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/release/gpufleet");
    if !sshd::available() {
        return;
    }
    if !binary.exists() {
        let why = format!(
            "watch_ssh: needs {} (cargo build --release)",
            binary.display()
        );
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{why}");
        eprintln!("skipping: {why}");
        return;
    }
    let servers: Vec<sshd::Sshd> = (0..plan.hosts)
        .filter_map(|_| sshd::Sshd::start())
        .collect();
    let dir = tempfile::tempdir().expect("temp");
    let mut config = String::from("interval_ms = 1000\n\n");
    let mut known = String::new();
    for (i, s) in servers.iter().enumerate() {
        std::fs::write(s.dir().join("gpus"), "8").expect("gpus");
        // The simulated hosts share this machine's cores; at nice 10 they yield to the watcher.
        if let Ok(pid) = std::fs::read_to_string(s.dir().join("sshd.pid")) {
            let _ = Command::new("renice")
                .args(["-n", "10", "-p", pid.trim()])
                .output();
        }
        config.push_str(&format!(
            "[[hosts]]\nname = \"h{i:02}\"\nssh = \"{}@127.0.0.1:{}\"\nidentity_file = \"{}\"\n\n",
            s.user,
            s.port,
            s.client_key().display()
        ));
        known.push_str(&s.known_hosts_line("ed25519"));
        known.push('\n');
    }
    let hook = server::Server::start(vec![server::answer(200, "{}")]);
    config.push_str(&format!(
        "[[alerts]]\nkind = \"webhook\"\nurl = \"{}/hook\"\n",
        hook.base_url
    ));
    std::fs::write(dir.path().join("config.toml"), config).expect("config");
    std::fs::write(dir.path().join("known_hosts"), known).expect("known_hosts");
    let spawn = |name: &str, env: &[(String, String)]| {
        let metrics = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
            l.local_addr().expect("addr").to_string()
        };
        // GPUFLEET_BENCH_WRAP runs the watchers under a tool, e.g. "heaptrack -o /tmp/w".
        let wrap: Vec<String> = std::env::var("GPUFLEET_BENCH_WRAP")
            .unwrap_or_default()
            .split_whitespace()
            .map(str::to_string)
            .collect();
        let mut command = match wrap.split_first() {
            Some((tool, args)) => {
                let mut command = Command::new(tool);
                command.args(args).arg(&binary);
                command
            }
            None => Command::new(&binary),
        };
        let child = command
            .args(["watch", "-q", "--metrics", &metrics, "--config"])
            .arg(dir.path().join("config.toml"))
            .arg("--known-hosts")
            .arg(dir.path().join("known_hosts"))
            .env(
                "GPUFLEET_STATE_DIR",
                dir.path().join(format!("state-{name}")),
            )
            .env("SSH_AUTH_SOCK", "")
            .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("watch");
        (child, metrics)
    };
    let (mut child, metrics) = spawn("main", &[]);
    // More watchers on the same hosts, each with its own environment (`;` between watchers,
    // spaces between `KEY=VALUE`s): the soak compares their memory under the same load, e.g.
    // GPUFLEET_SOAK_VARIANTS="MALLOC_ARENA_MAX=2;MALLOC_ARENA_MAX=1".
    let variants: Vec<(String, Child)> = std::env::var("GPUFLEET_SOAK_VARIANTS")
        .unwrap_or_default()
        .split(';')
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .enumerate()
        .map(|(i, v)| {
            let env: Vec<(String, String)> = v
                .split_whitespace()
                .filter_map(|kv| kv.split_once('='))
                .map(|(k, val)| (k.to_string(), val.to_string()))
                .collect();
            (v.to_string(), spawn(&format!("v{i}"), &env).0)
        })
        .collect();
    let pid = child.id();
    // GPUFLEET_SOAK_CONSOLE=1: the console too, in a tmux session of its own, on the same hosts,
    // its RSS in the soak's table (a two-hour soak covers console and watcher).
    let console = (std::env::var("GPUFLEET_SOAK_CONSOLE").as_deref() == Ok("1"))
        .then(|| Console::start(&binary, dir.path()));
    let started = Instant::now();
    let all_streaming = loop {
        let page = scrape(&metrics);
        let live = page
            .lines()
            .filter(|l| l.starts_with("gpufleet_host_streaming{") && l.ends_with(" 1"))
            .count();
        if live == servers.len() {
            break Some(started.elapsed());
        }
        if started.elapsed() > Duration::from_secs(60) {
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    // A soak: RSS once a minute for GPUFLEET_SOAK_MINUTES minutes, before the measured window.
    let soak_minutes: u64 = std::env::var("GPUFLEET_SOAK_MINUTES")
        .ok()
        .and_then(|m| m.parse().ok())
        .unwrap_or(0);
    let mut soak = String::new();
    for minute in 0..=soak_minutes {
        if soak_minutes == 0 {
            break;
        }
        let rss = status_kib(pid, "VmRSS:").unwrap_or(0) as f64 / 1024.0;
        let mut line = format!("soak minute {minute:3}: RSS {rss:.1} MB");
        for (name, v) in &variants {
            let rss = status_kib(v.id(), "VmRSS:").unwrap_or(0) as f64 / 1024.0;
            line.push_str(&format!(" | {name}: {rss:.1} MB"));
        }
        if let Some(pid) = console.as_ref().and_then(Console::pid) {
            let rss = status_kib(pid, "VmRSS:").unwrap_or(0) as f64 / 1024.0;
            line.push_str(&format!(" | console: {rss:.1} MB"));
        }
        // How busy the machine was: RSS barely moves with it, CPU figures do.
        if let Ok(load) = std::fs::read_to_string("/proc/loadavg") {
            let load: Vec<&str> = load.split_whitespace().take(3).collect();
            line.push_str(&format!(" | load {}", load.join(" ")));
        }
        line.push('\n');
        eprint!("{line}");
        soak.push_str(&line);
        if minute < soak_minutes {
            std::thread::sleep(Duration::from_secs(60));
        }
    }
    let ticks_per_s = 100.0; // USER_HZ on Linux
    let before = ticks(pid).unwrap_or(0);
    let rss_before = status_kib(pid, "VmRSS:").unwrap_or(0);
    let window = Instant::now();
    std::thread::sleep(plan.measure);
    let cpu_s = (ticks(pid).unwrap_or(0) - before) as f64 / ticks_per_s;
    let seconds = window.elapsed().as_secs_f64();
    let rss_after = status_kib(pid, "VmRSS:").unwrap_or(0);
    let hwm = status_kib(pid, "VmHWM:").unwrap_or(0);

    // One host loses its GPU: from now on its nvidia-smi prints the failure text at once, and
    // its running stream is ended so that the link's next one does.
    let lost = &servers[0];
    lost.set_scenario("gpu-lost");
    let _ = std::fs::write(lost.dir().join("lost"), "");
    for pid in lost.host_processes() {
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        // The stream's shell and the awk replaying its lines.
        if (cmdline.contains("nvidia-smi") && cmdline.contains("-lms"))
            || cmdline.contains("pause=")
        {
            let _ = Command::new("kill").arg(pid.to_string()).status();
        }
    }
    let failed_at = Instant::now();
    let mut alert_after = None;
    while failed_at.elapsed() < Duration::from_secs(30) {
        if hook
            .requests()
            .iter()
            .any(|r| r.json()["host"] == "h00" && r.json()["label"] == "gpu_lost")
        {
            alert_after = Some(failed_at.elapsed());
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut heaps = String::new();
    for (name, id) in std::iter::once(("default".to_string(), pid))
        .chain(variants.iter().map(|(n, c)| (n.clone(), c.id())))
    {
        heaps.push_str(&format!("{name}: {}\n", memory_breakdown(id)));
    }
    if let Some(pid) = console.as_ref().and_then(Console::pid) {
        heaps.push_str(&format!("console: {}\n", memory_breakdown(pid)));
    }
    drop(console);
    let _ = child.kill();
    let _ = child.wait();
    for (_, mut v) in variants {
        let _ = v.kill();
        let _ = v.wait();
    }
    let report = format!(
        "gpufleet watch over real sshd: {} hosts x 8 GPUs, 1 s interval\n\
         all hosts streaming after: {}\n\
         CPU over {seconds:.0} s: {cpu_s:.2} s ({:.2}% of a core)\n\
         RSS: {:.1} MB at the start of the window, {:.1} MB at its end, peak {:.1} MB\n\
         GPU lost -> webhook: {}\n",
        servers.len(),
        all_streaming.map_or("never".to_string(), |d| format!("{:.2} s", d.as_secs_f64())),
        cpu_s / seconds * 100.0,
        rss_before as f64 / 1024.0,
        rss_after as f64 / 1024.0,
        hwm as f64 / 1024.0,
        alert_after.map_or("no alert within 30 s".to_string(), |d| format!(
            "{:.2} s from ending the host's stream (its next nvidia-smi prints the GPU-lost text) to the webhook",
            d.as_secs_f64()
        )),
    );
    let report = format!("{report}{soak}{heaps}");
    print!("{report}");
    if bench {
        let _ = std::fs::write(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/watch-ssh-report.txt"),
            &report,
        );
    }
}
