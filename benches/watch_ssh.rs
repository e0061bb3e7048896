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
//!
//! GPUFLEET_BENCH_ATTACH=1: what one attached console costs the watcher. The watcher also
//! serves (`watch --serve`, `GPUFLEET_SERVE_TOKEN`), and instead of the one window its CPU is
//! read over windows of equal length taken in turn without and with one `gpufleet attach` console
//! (tmux, 160x48; started before its window, which opens once the console counts every host
//! live, and killed after it): GPUFLEET_BENCH_ATTACH_WINDOWS windows with it (default 2), one
//! more without, so that without, with, without, ... ends as it began and a steady drift of the
//! machine's load weighs the same on both sides.
//!
//! GPUFLEET_BENCH_SECS sets a window's length (default 60 s, 30 s with the console);
//! GPUFLEET_BENCH_BIN the `gpufleet` binary (default `target/release/gpufleet` of this checkout,
//! else of the current directory), GPUFLEET_BENCH_REPORT the report file,
//! GPUFLEET_BENCH_WATCH_LOG a folder where each watcher's warnings go (`watch-NAME.log`).
//! Under `cargo test` it runs a 3-host, 5-second smoke version.
//! Needs `/usr/sbin/sshd` and the release binary (`cargo build --release`); tmux for the console.

#[path = "../tests/release_support/server.rs"]
mod server;
#[allow(dead_code)]
#[path = "../tests/common/sshd.rs"]
mod sshd;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The token the serving watcher takes and the attached console gives.
const SERVE_TOKEN: &str = "bench-attach-token";
/// How long the watcher is left after a console showed every host, and after it was killed,
/// before a window opens.
const SETTLE: Duration = Duration::from_secs(3);
/// How long a console may take to show every host live.
const SHOW_WAIT: Duration = Duration::from_secs(120);
const TICKS_PER_S: f64 = 100.0; // USER_HZ on Linux

struct Plan {
    hosts: usize,
    measure: Duration,
    /// With GPUFLEET_BENCH_ATTACH=1: the number of windows with an attached console.
    attach: Option<usize>,
}

fn env_num<T: std::str::FromStr>(key: &str) -> Option<T> {
    std::env::var(key).ok().and_then(|v| v.trim().parse().ok())
}

/// The `gpufleet` binary: GPUFLEET_BENCH_BIN, else the release build of this checkout, else
/// `target/release/gpufleet` under the current directory (a copy of the tree elsewhere); made
/// absolute, as the tmux sessions start it from their own directory.
fn gpufleet_binary() -> PathBuf {
    let binary = match std::env::var_os("GPUFLEET_BENCH_BIN") {
        Some(path) if !path.is_empty() => PathBuf::from(path),
        _ => {
            let built = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/release/gpufleet");
            if built.exists() {
                built
            } else {
                PathBuf::from("target/release/gpufleet")
            }
        }
    };
    std::fs::canonicalize(&binary).unwrap_or(binary)
}

/// The stand-in `nvidia-smi` and `dmesg` for the hosts' `PATH`, copied from the current
/// directory's `tests/fixtures` when this checkout's are not here (a copy of the tree run
/// elsewhere); `None` when they are, and each host gets its copy as in the tests.
fn fakes_elsewhere() -> Option<tempfile::TempDir> {
    let fixtures = "tests/fixtures/fake-nvidia-smi";
    if Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(fixtures)
        .is_dir()
    {
        return None;
    }
    let bin = tempfile::tempdir().expect("temp");
    for entry in std::fs::read_dir(fixtures)
        .expect("tests/fixtures/fake-nvidia-smi under the current directory")
        .flatten()
    {
        let target = bin.path().join(entry.file_name());
        std::fs::copy(entry.path(), &target).expect("copy fixture");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    Some(bin)
}

/// The report file: GPUFLEET_BENCH_REPORT, else `target/watch-ssh-report.txt` of this checkout
/// (of the current directory when the checkout is not here).
fn report_path() -> PathBuf {
    match std::env::var_os("GPUFLEET_BENCH_REPORT") {
        Some(path) if !path.is_empty() => PathBuf::from(path),
        _ => {
            let checkout = Path::new(env!("CARGO_MANIFEST_DIR"));
            if checkout.join("target").is_dir() {
                checkout.join("target/watch-ssh-report.txt")
            } else {
                PathBuf::from("target/watch-ssh-report.txt")
            }
        }
    }
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

/// A console in a detached tmux session (160x48): on the bench's config, or attached.
struct Console {
    socket: String,
}

impl Console {
    fn start(binary: &std::path::Path, dir: &std::path::Path) -> Self {
        let command = format!(
            "GPUFLEET_STATE_DIR={} SSH_AUTH_SOCK= exec {} --config {} --known-hosts {}",
            dir.join("state-console").display(),
            binary.display(),
            dir.join("config.toml").display(),
            dir.join("known_hosts").display()
        );
        Self::run(&format!("gpufleet-soak-{}", std::process::id()), &command)
    }

    /// `gpufleet attach URL` with the token, in a session named after `n`.
    fn attach(binary: &std::path::Path, dir: &std::path::Path, url: &str, n: usize) -> Self {
        let command = format!(
            "GPUFLEET_STATE_DIR={} GPUFLEET_TOKEN={SERVE_TOKEN} SSH_AUTH_SOCK= exec {} attach {url}",
            dir.join(format!("state-attach-{n}")).display(),
            binary.display(),
        );
        Self::run(
            &format!("gpufleet-attach-{}-{n}", std::process::id()),
            &command,
        )
    }

    fn run(socket: &str, command: &str) -> Self {
        let status = Command::new("tmux")
            .args([
                "-L",
                socket,
                "new-session",
                "-d",
                "-x",
                "160",
                "-y",
                "48",
                command,
            ])
            .status()
            .expect("tmux");
        assert!(status.success(), "tmux new-session failed");
        Self {
            socket: socket.to_string(),
        }
    }

    fn pid(&self) -> Option<u32> {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "display", "-p", "#{pane_pid}"])
            .output()
            .ok()?;
        String::from_utf8_lossy(&out.stdout).trim().parse().ok()
    }

    fn screen(&self) -> String {
        Command::new("tmux")
            .args(["-L", &self.socket, "capture-pane", "-p"])
            .output()
            .map(|out| String::from_utf8_lossy(&out.stdout).into_owned())
            .unwrap_or_default()
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
    let attach = (std::env::var("GPUFLEET_BENCH_ATTACH").as_deref() == Ok("1"))
        .then(|| env_num("GPUFLEET_BENCH_ATTACH_WINDOWS").unwrap_or(2).max(1));
    let plan = if bench {
        let secs = if attach.is_some() { 30 } else { 60 };
        Plan {
            hosts: env_num("GPUFLEET_BENCH_HOSTS").unwrap_or(50),
            measure: Duration::from_secs(env_num("GPUFLEET_BENCH_SECS").unwrap_or(secs)),
            attach,
        }
    } else {
        Plan {
            hosts: 3,
            measure: Duration::from_secs(5),
            attach,
        }
    };
    let binary = gpufleet_binary();
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
    let fakes = fakes_elsewhere();
    let options = sshd::SshdOptions {
        bin_dir: fakes.as_ref().map(|d| d.path().to_path_buf()),
        ..Default::default()
    };
    let servers: Vec<sshd::Sshd> = (0..plan.hosts)
        .filter_map(|_| sshd::Sshd::start_with(&options))
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
    // With the console: the watcher serves on this address too.
    let serve = plan.attach.map(|_| {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").to_string()
    });
    let spawn = |name: &str, env: &[(String, String)], serve: Option<&str>| {
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
            .args(serve.into_iter().flat_map(|addr| ["--serve", addr]))
            .env("GPUFLEET_SERVE_TOKEN", SERVE_TOKEN)
            .env(
                "GPUFLEET_STATE_DIR",
                dir.path().join(format!("state-{name}")),
            )
            .env("SSH_AUTH_SOCK", "")
            .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(watcher_log(name))
            .spawn()
            .expect("watch");
        (child, metrics)
    };
    let (mut child, metrics) = spawn("main", &[], serve.as_deref());
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
            (v.to_string(), spawn(&format!("v{i}"), &env, None).0)
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
            say_who_is_not_streaming(&page, &servers);
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
    let rss_before = status_kib(pid, "VmRSS:").unwrap_or(0);
    let (cpu_s, seconds, attached) = match (plan.attach, &serve) {
        (Some(with), Some(addr)) => {
            let windows = attached_windows(&AttachRun {
                binary: &binary,
                dir: dir.path(),
                url: &format!("http://{addr}"),
                watcher: pid,
                hosts: servers.len(),
                window: plan.measure,
                with,
            });
            // The watcher's own line reads the windows without a console.
            let without = windows.iter().filter(|w| w.console.is_none());
            let cpu_s = without.clone().map(|w| w.cpu_s).sum();
            let seconds = without.map(|w| w.seconds).sum();
            (cpu_s, seconds, attached_report(&windows))
        }
        _ => {
            let window = measure(pid, plan.measure, None);
            (window.cpu_s, window.seconds, String::new())
        }
    };
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
    let report = format!("{report}{attached}{soak}{heaps}");
    print!("{report}");
    if bench {
        let path = report_path();
        if let Err(e) = std::fs::write(&path, &report) {
            eprintln!("watch_ssh: cannot write {}: {e}", path.display());
        }
    }
}

/// Where a watcher's stderr goes: `watch-NAME.log` in GPUFLEET_BENCH_WATCH_LOG, else nowhere.
fn watcher_log(name: &str) -> Stdio {
    std::env::var("GPUFLEET_BENCH_WATCH_LOG")
        .ok()
        .and_then(|dir| {
            std::fs::File::create(PathBuf::from(dir).join(format!("watch-{name}.log"))).ok()
        })
        .map_or_else(Stdio::null, Stdio::from)
}

/// After a minute without every host streaming: which hosts are not (from `/metrics`), and the
/// end of the first few of their sshd logs, on stderr.
fn say_who_is_not_streaming(page: &str, servers: &[sshd::Sshd]) {
    let not: Vec<usize> = page
        .lines()
        .filter(|l| l.starts_with("gpufleet_host_streaming{") && !l.ends_with(" 1"))
        .filter_map(|l| {
            let name = l.split("host=\"h").nth(1)?.split('"').next()?;
            name.parse().ok()
        })
        .collect();
    eprintln!(
        "watch_ssh: {} of {} hosts not streaming after 60 s: {not:?}",
        not.len(),
        servers.len()
    );
    for &i in not.iter().take(3) {
        if let Some(server) = servers.get(i) {
            let log = server.log();
            let tail: Vec<&str> = log.lines().rev().take(15).collect();
            eprintln!("--- h{i:02}'s sshd (port {}), its last lines:", server.port);
            for line in tail.iter().rev() {
                eprintln!("{line}");
            }
        }
    }
}

/// One measured window: the watcher's CPU over it, its RSS at the end, and the attached
/// console's figures when one was attached.
struct Window {
    cpu_s: f64,
    seconds: f64,
    rss_kib: u64,
    console: Option<Attached>,
}

impl Window {
    fn percent(&self) -> f64 {
        self.cpu_s / self.seconds * 100.0
    }
}

/// The attached console over its window.
struct Attached {
    /// From its start to every host live on its screen; `None` when that never came.
    shown_after: Option<Duration>,
    /// Its own CPU, as a share of one core; `None` when its process was gone.
    cpu_percent: Option<f64>,
    hwm_kib: u64,
}

/// The watcher's CPU over `length` from now; with the console's process `console`, its CPU too.
fn measure(pid: u32, length: Duration, console: Option<u32>) -> Window {
    let before = ticks(pid).unwrap_or(0);
    let console_before = console.and_then(ticks);
    let start = Instant::now();
    std::thread::sleep(length);
    let cpu_s = ticks(pid).unwrap_or(0).saturating_sub(before) as f64 / TICKS_PER_S;
    let seconds = start.elapsed().as_secs_f64();
    let console_cpu = console.zip(console_before).and_then(|(pid, before)| {
        Some(ticks(pid)?.saturating_sub(before) as f64 / TICKS_PER_S / seconds * 100.0)
    });
    Window {
        cpu_s,
        seconds,
        rss_kib: status_kib(pid, "VmRSS:").unwrap_or(0),
        console: console.map(|pid| Attached {
            shown_after: None,
            cpu_percent: console_cpu,
            hwm_kib: status_kib(pid, "VmHWM:").unwrap_or(0),
        }),
    }
}

/// What the windows with and without a console run against.
struct AttachRun<'a> {
    binary: &'a Path,
    dir: &'a Path,
    url: &'a str,
    watcher: u32,
    hosts: usize,
    window: Duration,
    /// Windows with the console; one more without.
    with: usize,
}

/// Windows in turn without and with one attached console, beginning and ending without: the
/// console is started before its window and counted in once its header says every host is
/// live, and killed after it.
fn attached_windows(run: &AttachRun) -> Vec<Window> {
    let mut windows = Vec::new();
    for n in 0..=2 * run.with {
        if n % 2 == 0 {
            eprintln!("window {}: without a console", n + 1);
            windows.push(measure(run.watcher, run.window, None));
            continue;
        }
        let console = Console::attach(run.binary, run.dir, run.url, n);
        let shown_after = wait_every_host_live(&console, run.hosts);
        std::thread::sleep(SETTLE);
        eprintln!(
            "window {}: with a console (every host live after {})",
            n + 1,
            shown_after.map_or("never".to_string(), |d| format!("{:.1} s", d.as_secs_f64()))
        );
        let pid = console.pid();
        let mut window = measure(run.watcher, run.window, pid);
        let attached = window.console.get_or_insert(Attached {
            shown_after: None,
            cpu_percent: None,
            hwm_kib: 0,
        });
        attached.shown_after = shown_after;
        drop(console);
        std::thread::sleep(SETTLE);
        windows.push(window);
    }
    windows
}

/// How long until the console's header counts `hosts` hosts live (" · N live").
fn wait_every_host_live(console: &Console, hosts: usize) -> Option<Duration> {
    let needle = format!("· {hosts} live");
    let start = Instant::now();
    while start.elapsed() < SHOW_WAIT {
        let screen = console.screen();
        let top = screen.lines().next().unwrap_or_default();
        if top.contains(&needle) {
            eprintln!("the console's top line: {}", top.trim());
            return Some(start.elapsed());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    eprintln!(
        "the console never showed every host live:\n{}",
        console.screen()
    );
    None
}

/// The windows' figures as the report's lines.
fn attached_report(windows: &[Window]) -> String {
    let (with, without): (Vec<&Window>, Vec<&Window>) =
        windows.iter().partition(|w| w.console.is_some());
    let mean = |values: &[f64]| values.iter().sum::<f64>() / values.len().max(1) as f64;
    let list = |values: &[f64]| {
        values
            .iter()
            .map(|v| format!("{v:.2}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let percents = |ws: &[&Window]| ws.iter().map(|w| w.percent()).collect::<Vec<f64>>();
    let rss = |ws: &[&Window]| mean(&ws.iter().map(|w| w.rss_kib as f64).collect::<Vec<_>>());
    let consoles: Vec<&Attached> = with.iter().filter_map(|w| w.console.as_ref()).collect();
    let console_cpu: Vec<f64> = consoles.iter().filter_map(|c| c.cpu_percent).collect();
    let shown: Vec<String> = consoles
        .iter()
        .map(|c| {
            c.shown_after
                .map_or("never".to_string(), |d| format!("{:.1} s", d.as_secs_f64()))
        })
        .collect();
    let (cpu_without, cpu_with) = (percents(&without), percents(&with));
    let cost = mean(&cpu_with) - mean(&cpu_without);
    let every_host = consoles.iter().all(|c| c.shown_after.is_some());
    format!(
        "one attached console (gpufleet attach, tmux 160x48), windows of {:.0} s in turn: {} without, {} with\n\
         watcher CPU without a console: {:.2}% of a core (windows {} %)\n\
         watcher CPU with one attached: {:.2}% of a core (windows {} %)\n\
         the console's cost to the watcher: {cost:+.2}% of a core; goal <= 1% of a core: {}\n\
         attached console itself: CPU {:.2}% of a core (windows {} %), peak RSS {:.1} MB; every host live on its screen after {}\n\
         watcher RSS at the windows' ends: {:.1} MB without, {:.1} MB with\n",
        windows.first().map_or(0.0, |w| w.seconds),
        without.len(),
        with.len(),
        mean(&cpu_without),
        list(&cpu_without),
        mean(&cpu_with),
        list(&cpu_with),
        match (every_host, cost <= 1.0) {
            (false, _) => "not measured (a console never showed every host)",
            (true, true) => "met",
            (true, false) => "NOT met",
        },
        mean(&console_cpu),
        list(&console_cpu),
        consoles.iter().map(|c| c.hwm_kib).max().unwrap_or(0) as f64 / 1024.0,
        shown.join(", "),
        rss(&without) / 1024.0,
        rss(&with) / 1024.0,
    )
}
