//! The console watching a fleet over real sshd: N hosts of 8 GPUs at a 1 s interval. Measures
//! how soon every host streams, the console's CPU and peak memory, and how long each sample
//! waits between its line arriving and the frame that shows it.
//!
//! `cargo bench --bench fleet_ssh` runs 50 hosts for 60 s and writes
//! `target/fleet-ssh-report.txt`; under `cargo test` (no `--bench`) it runs a 3-host, 5-second
//! smoke version. Needs `/usr/sbin/sshd` (`.ci/run` installs it).

// Only part of the test harness is needed here.
#[allow(dead_code)]
#[path = "../tests/common/sshd.rs"]
mod sshd;

use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use gpufleet::app::event::{Event, host_sink};
use gpufleet::app::model::{Model, ModelOptions};
use gpufleet::app::prompt_bridge::PendingPrompts;
use gpufleet::app::release_bridge::{BridgeSetup, ReleaseBridge, SshHostRunner};
use gpufleet::app::runtime::{FrameStats, event_loop};
use gpufleet::config::Config;
use gpufleet::fleet::HostEvent;
use gpufleet::release::SendOptions;
use gpufleet::remote::{LinkOptions, SshSettings, spawn_link};
use gpufleet::telemetry::source::{Backlogs, now_ms};
use gpufleet::theme::Theme;

struct Plan {
    hosts: usize,
    gpus: usize,
    measure: Duration,
}

fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which may hold spaces) start after the last ')'.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = fields.get(11..13).map_or(0.0, |f| {
        f.iter().filter_map(|v| v.parse::<f64>().ok()).sum()
    });
    ticks / 100.0
}

/// CPU seconds per thread-name prefix (`ssh-` links; the loop and drawing run on the thread
/// named after the binary), from the nanosecond run time in `/proc/self/task/*/schedstat`
/// (the tick counts in `stat` round each short-lived burst of a link thread away).
fn cpu_by_thread() -> Vec<(String, f64)> {
    let mut sums: std::collections::BTreeMap<String, f64> = Default::default();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    for task in tasks.flatten() {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        let schedstat = std::fs::read_to_string(task.path().join("schedstat")).unwrap_or_default();
        let ns: f64 = schedstat
            .split_whitespace()
            .next()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0);
        let group = if comm.starts_with("ssh-") {
            "ssh links"
        } else {
            comm.trim()
        };
        *sums.entry(group.to_string()).or_default() += ns / 1e9;
    }
    sums.into_iter().collect()
}

/// The benchmark's own threads are named `bench-*`, so their CPU is told apart from the
/// console's.
fn spawn_named<T: Send + 'static>(
    name: &str,
    run: impl FnOnce() -> T + Send + 'static,
) -> std::thread::JoinHandle<T> {
    std::thread::Builder::new()
        .name(name.to_string())
        .spawn(run)
        .expect("spawn")
}

fn peak_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("VmHWM"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0)
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let plan = if bench {
        Plan {
            hosts: 50,
            gpus: 8,
            measure: Duration::from_secs(60),
        }
    } else {
        Plan {
            hosts: 3,
            gpus: 8,
            measure: Duration::from_secs(5),
        }
    };
    if !sshd::available() {
        return;
    }
    let servers: Vec<sshd::Sshd> = (0..plan.hosts)
        .filter_map(|_| sshd::Sshd::start())
        .collect();
    for s in &servers {
        std::fs::write(s.dir().join("gpus"), plan.gpus.to_string()).expect("gpus");
        // The simulated hosts share this machine's cores with the console; on a real fleet
        // their sshd and nvidia-smi run elsewhere. At nice 10 (inherited by every session and
        // command) they yield to the console instead of holding up its frames; the console's
        // own CPU is counted the same either way.
        if let Ok(pid) = std::fs::read_to_string(s.dir().join("sshd.pid")) {
            let _ = std::process::Command::new("renice")
                .args(["-n", "10", "-p", pid.trim()])
                .output();
        }
    }
    let names: Vec<String> = (0..plan.hosts).map(|i| format!("h{i:02}")).collect();
    let mut model = Model::new(names.clone(), ModelOptions::default(), now_ms());

    // Links send into `tap`; a forwarder notes when each host first streams, then passes every
    // event on to the loop unchanged.
    let (tap, tapped) = mpsc::channel::<Event>();
    let (sink, events) = mpsc::channel::<Event>();
    let started = Instant::now();
    let started_ms = now_ms();
    let handles: Vec<_> = servers
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let opts = LinkOptions {
                interval_ms: 1000,
                known_hosts: Some(s.trusted_known_hosts()),
                use_agent: false,
                ..LinkOptions::default()
            };
            spawn_link(s.remote_host(&names[i]), i, host_sink(tap.clone()), opts).expect("link")
        })
        .collect();
    drop(tap);
    let forward_sink = sink.clone();
    let hosts = plan.hosts;
    let forwarder = spawn_named("bench-forward", move || {
        let mut first = vec![None; hosts];
        let mut all_streaming = None;
        for event in tapped.iter() {
            if let Event::Host {
                host,
                event: HostEvent::Sample { .. },
            } = &event
                && first[*host].is_none()
            {
                first[*host] = Some(started.elapsed());
                if all_streaming.is_none() && first.iter().all(Option::is_some) {
                    all_streaming = Some(started.elapsed());
                }
            }
            if forward_sink.send(event).is_err() {
                break;
            }
        }
        all_streaming
    });

    // Quit after warm-up plus the measured window; CPU is counted over the window only.
    let warmup = Duration::from_secs(if bench { 10 } else { 2 });
    let measure = plan.measure;
    let quitter = sink.clone();
    let window = spawn_named("bench-window", move || {
        std::thread::sleep(warmup);
        let cpu_start = cpu_seconds();
        let threads_start = cpu_by_thread();
        std::thread::sleep(measure);
        let cpu = cpu_seconds() - cpu_start;
        let threads: Vec<(String, f64)> = cpu_by_thread()
            .into_iter()
            .map(|(name, end)| {
                let start = threads_start
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map_or(0.0, |(_, s)| *s);
                (name, end - start)
            })
            .collect();
        let _ = quitter.send(Event::Key(KeyEvent::new(
            KeyCode::Char('q'),
            KeyModifiers::NONE,
        )));
        (cpu, threads)
    });
    let bridge_sink = sink.clone();
    drop(sink);

    let theme = Theme::default_theme();
    let mut terminal = Terminal::new(TestBackend::new(160, 48)).expect("backend");
    let mut stats = FrameStats::recording();
    // Nothing to release in a benchmark: no state directory, read-only, no runner needed.
    let mut bridge = ReleaseBridge::new(
        BridgeSetup {
            config: Config::default(),
            read_only: true,
            store: None,
            audit: None,
            runner: Arc::new(SshHostRunner {
                ssh: SshSettings::default(),
                config: Config::default(),
                interval_ms: 1000,
            }),
            env: Arc::new(|_: &str| None),
            send: SendOptions::default(),
            holds: None,
            simulated: false,
        },
        bridge_sink,
    );
    // The links count what they have queued for the loop, as in the console.
    let backlogs = Backlogs::arm(&handles);
    let _ = event_loop(
        &mut terminal,
        &mut model,
        &theme,
        (&events, &backlogs),
        &PendingPrompts::default(),
        &mut bridge,
        &mut stats,
    );
    let (process_cpu, threads) = window.join().unwrap_or((f64::NAN, Vec::new()));
    // The forwarder re-sends every event: an artefact of measuring, not part of the console.
    let harness_cpu: f64 = threads
        .iter()
        .filter(|(name, _)| name.starts_with("bench-"))
        .map(|(_, cpu)| cpu)
        .sum();
    let cpu = process_cpu - harness_cpu;
    drop(handles);
    let all_streaming = forwarder.join().ok().flatten();

    let streaming = model
        .fleet
        .hosts
        .iter()
        .filter(|h| h.gpus.len() == plan.gpus)
        .count();
    let mut latencies = stats.sample_to_screen_ms.clone();
    latencies.sort_unstable();
    // The same, for frames drawn inside the measured window only (start-up left out: a new
    // session holds its first lines until its full query answers).
    let window_start_ms = started_ms + warmup.as_millis() as u64;
    let mut steady: Vec<u64> = stats
        .drawn_at_ms
        .iter()
        .zip(&stats.sample_to_screen_ms)
        .filter(|(at, _)| **at >= window_start_ms)
        .map(|(_, ms)| *ms)
        .collect();
    steady.sort_unstable();
    let report = format!(
        "fleet over real sshd: {} hosts x {} GPUs, 1 s interval, {} s measured after {} s warm-up\n\
         hosts streaming all {} GPUs at the end: {}/{}\n\
         all hosts streaming after: {}\n\
         console CPU over the window: {:.2} s = {:.2}% of one core (links, loop, drawing; \
         the benchmark's own threads, {:.2} s, left out)\n\
         peak RSS (VmHWM) of the console process: {:.1} MB\n\
         frames drawn: {}\n\
         sample line arrival -> on screen, whole run: p50 {} ms, p99 {} ms, max {} ms ({} frames with new samples)\n\
         sample line arrival -> on screen, measured window: p50 {} ms, p99 {} ms, max {} ms ({} frames)\n",
        plan.hosts,
        plan.gpus,
        measure.as_secs(),
        warmup.as_secs(),
        plan.gpus,
        streaming,
        plan.hosts,
        all_streaming.map_or("never".to_string(), |d| format!("{:.2} s", d.as_secs_f64())),
        cpu,
        cpu * 100.0 / measure.as_secs_f64(),
        harness_cpu,
        peak_rss_kb() as f64 / 1024.0,
        stats.frames,
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.99),
        latencies.last().copied().unwrap_or(0),
        latencies.len(),
        percentile(&steady, 0.5),
        percentile(&steady, 0.99),
        steady.last().copied().unwrap_or(0),
        steady.len(),
    );
    let threads: String = threads
        .iter()
        .filter(|(_, cpu)| *cpu > 0.0)
        .map(|(name, cpu)| format!("  {name}: {cpu:.3} s\n"))
        .collect();
    let report = format!("{report}CPU by thread over the window:\n{threads}");
    print!("{report}");
    if bench {
        let _ = std::fs::write(
            concat!(env!("CARGO_MANIFEST_DIR"), "/target/fleet-ssh-report.txt"),
            &report,
        );
    }
    assert_eq!(streaming, plan.hosts, "every host streamed all its GPUs");
}
