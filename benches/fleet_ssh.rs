//! The console watching a fleet over real sshd: N hosts of G GPUs at a 1 s interval. Measures
//! how soon every host streams, the console's CPU and peak memory (in all and per host), CPU by
//! thread group, and how long each sample waits between its line arriving and the frame that
//! shows it; beside it, when an `all-smi` binary is found, all-smi's SSH mode on the same hosts
//! over the same window.
//!
//! `cargo bench --bench fleet_ssh` runs 50 hosts x 8 GPUs for 60 s and writes
//! `target/fleet-ssh-report.txt` (or `$GPUFLEET_BENCH_REPORT`); `-- --hosts 1000 --gpus 8
//! --secs 60` (or `GPUFLEET_BENCH_HOSTS` / `_GPUS` / `_SECS`) sets the size. Under `cargo test`
//! (no `--bench`) it runs a 3-host, 5-second smoke version and checks the stand-in below
//! against the shell fake. Needs `/usr/sbin/sshd` and `ssh-keygen` (`.ci/run` installs them).
//!
//! The stand-in fleet is cheap enough for 1,000 hosts on one machine: ONE real sshd serves
//! every host (each host is still its own SSH connection, under its own name), and the remote
//! `nvidia-smi` and `dmesg` are this very binary under those names (`support/fake_smi.rs`),
//! replaying the captured H200 output as the shell fake does. The binary runs on its own,
//! without cargo or a checkout: copy it with `target/*/deps/fleet_ssh-*` and run it with
//! `--bench`.
//!
//! With `--job-logs` (or `GPUFLEET_BENCH_JOB_LOGS=1`; the smoke version always) every host
//! also has a training job on its GPUs whose log grows: ONE writer process, this binary again
//! (`support/log_writer.rs`), replays a real `Trainer` log into a file as its stdout, the
//! stand-in `nvidia-smi` lists its PID on every host, and each host's link finds it and follows
//! its log over its own SSH connection (`tail -f --pid` of `/proc/PID/fd/1`), so the console
//! reads and judges one log per host. The report then says how many logs were followed and how
//! much of them was read; against a run without, the difference in CPU and peak RSS is what
//! following them costs.
//!
//! With `--full-history` every host starts with 20 minutes of the real H200 stream in its
//! history, fed through `HostState::apply` before the links start, so that a 60 s run measures
//! the console holding a full history (the report says so).
//!
//! With `--history-bytes` it only measures what a host's engine state holds once its history
//! is full (`support/history_bytes.rs`): no sshd, no links, nothing drawn.

// Only part of the test harness is needed here.
#[path = "support/all_smi.rs"]
mod all_smi;
#[path = "support/fake_smi.rs"]
mod fake_smi;
#[path = "support/history_bytes.rs"]
mod history_bytes;
#[path = "support/log_writer.rs"]
mod log_writer;
#[path = "support/plan.rs"]
mod plan;
#[path = "support/proc_stats.rs"]
mod proc_stats;
#[path = "support/report.rs"]
mod report;
#[allow(dead_code)]
#[path = "../tests/common/sshd.rs"]
mod sshd;
#[path = "support/stand_in_check.rs"]
mod stand_in_check;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use gpufleet::app::event::Event;
use gpufleet::app::model::{Model, ModelOptions};
use gpufleet::app::prompt_bridge::PendingPrompts;
use gpufleet::app::release_bridge::{BridgeSetup, ReleaseBridge, SshHostRunner};
use gpufleet::app::runtime::{FrameStats, event_loop};
use gpufleet::config::Config;
use gpufleet::fleet::{HostEvent, HostSink};
use gpufleet::release::SendOptions;
use gpufleet::remote::{LinkOptions, SshSettings, spawn_link};
use gpufleet::telemetry::source::{Backlogs, now_ms};
use gpufleet::theme::Theme;

use all_smi::AllSmi;
use log_writer::LogWriter;
use plan::Plan;
use proc_stats::{connections_to, cpu_between, cpu_by_thread, cpu_seconds, status_kb};
use report::{Calls, JobLogs, Window};

/// all-smi reads at most this many lines of a hostfile.
const ALL_SMI_MAX_HOSTS: usize = 1_000;

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

fn fail(why: &str) -> ! {
    eprintln!("fleet_ssh: {why}");
    std::process::exit(2)
}

/// `(major, minor)` of the local OpenSSH server.
fn sshd_version() -> Option<(u32, u32)> {
    let out = std::process::Command::new("/usr/sbin/sshd")
        .arg("-V")
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stderr).to_string();
    let version = text.split("OpenSSH_").nth(1)?;
    let mut parts = version.split(|c: char| !c.is_ascii_digit());
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

/// One sshd for every stand-in host (and all-smi's connections beside them), with the
/// stand-in first on its remote PATH and room for every login at once: on a real fleet each
/// host's sshd has its own `MaxStartups`.
fn start_sshd(plan: &Plan, bin: &Path) -> Option<sshd::Sshd> {
    let logins = 2 * plan.hosts + 20;
    // OpenSSH 9.8 and later penalise a source address whose connections misbehave; every
    // stand-in host's client comes from 127.0.0.1, so one penalty would block them all.
    let penalties = match sshd_version() {
        Some(v) if v >= (9, 8) => "PerSourcePenalties no\n",
        _ => "",
    };
    let sshd = sshd::Sshd::start_with(&sshd::SshdOptions {
        bin_dir: Some(bin.to_path_buf()),
        max_startups: Some(format!("{logins}:30:{}", 2 * logins)),
        extra_config: penalties.to_string(),
        ..Default::default()
    })?;
    std::fs::write(sshd.dir().join("gpus"), plan.gpus.to_string()).expect("gpus");
    // The simulated hosts share this machine's cores with the console; on a real fleet their
    // sshd and nvidia-smi run elsewhere. At nice 10 (inherited by every session and command)
    // they yield to the console instead of holding up its frames; the console's own CPU is
    // counted the same either way.
    if let Ok(pid) = std::fs::read_to_string(sshd.dir().join("sshd.pid")) {
        let _ = std::process::Command::new("renice")
            .args(["-n", "10", "-p", pid.trim()])
            .output();
    }
    Some(sshd)
}

/// all-smi on the same hosts, when asked for by a full run and one is found; else why not.
fn start_all_smi(plan: &Plan, sshd: &sshd::Sshd, dir: &Path) -> Result<AllSmi, String> {
    if !plan.bench {
        return Err("not run by the smoke version".to_string());
    }
    if plan.hosts > ALL_SMI_MAX_HOSTS {
        return Err(format!(
            "all-smi reads at most {ALL_SMI_MAX_HOSTS} hosts from a hostfile"
        ));
    }
    let bin = all_smi::find()?;
    AllSmi::start(&bin, sshd, plan.hosts, dir)
}

/// When the last host first streamed, once every host has (`first_us`: microseconds after
/// start plus one, zero while a host has not streamed).
fn all_streaming_after(first_us: &[AtomicU64]) -> Option<Duration> {
    let mut last = 0u64;
    for slot in first_us {
        match slot.load(Ordering::Relaxed) {
            0 => return None,
            us => last = last.max(us - 1),
        }
    }
    Some(Duration::from_micros(last))
}

fn report_path() -> PathBuf {
    std::env::var_os("GPUFLEET_BENCH_REPORT").map_or_else(
        || {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/target/fleet-ssh-report.txt"
            ))
        },
        PathBuf::from,
    )
}

fn main() {
    if let Some(status) = fake_smi::run_if_called_as_stand_in() {
        std::process::exit(status);
    }
    if let Some(status) = log_writer::run_if_called_as_writer() {
        std::process::exit(status);
    }
    // The console here allocates as the `gpufleet` binary does (this process is the console).
    gpufleet::commands::allocator::limit_malloc_arenas();
    let plan = Plan::from_env().unwrap_or_else(|why| fail(&why));
    if std::env::args().any(|a| a == "--history-bytes") {
        print!("{}", history_bytes::measure(plan.hosts, plan.gpus));
        return;
    }
    if !sshd::available() {
        return;
    }
    // A socket per host, and a few files each for the links and the loop.
    let needed = plan.hosts as u64 * 2 + 256;
    if let Some(limit) = proc_stats::open_files_limit()
        && limit < needed
    {
        fail(&format!(
            "{} hosts need about {needed} open files, this process may open {limit}: \
             raise it first (ulimit -n {needed})",
            plan.hosts
        ));
    }
    let work = tempfile::Builder::new()
        .prefix("gpufleet-bench-")
        .tempdir()
        .expect("temp dir");
    let bin = work.path().join("bin");
    fake_smi::install(&bin).unwrap_or_else(|e| fail(&format!("stand-in programs: {e}")));
    let Some(sshd) = start_sshd(&plan, &bin) else {
        return;
    };
    let all_smi = start_all_smi(&plan, &sshd, work.path());
    // The training job every host runs, started before the links so its log is growing when
    // they first list the GPU processes; it lives until the report is written.
    let writer = plan.job_logs.then(|| {
        let writer = LogWriter::start(&bin, &work.path().join("train.log"))
            .unwrap_or_else(|e| fail(&format!("the training job's log writer: {e}")));
        std::fs::write(sshd.dir().join("apps_pids"), writer.pid().to_string())
            .unwrap_or_else(|e| fail(&format!("apps_pids: {e}")));
        writer
    });

    let width = plan.hosts.saturating_sub(1).to_string().len().max(2);
    let names: Vec<String> = (0..plan.hosts).map(|i| format!("h{i:0width$}")).collect();
    let mut model = Model::new(names.clone(), ModelOptions::default(), now_ms());
    if plan.full_history {
        history_bytes::fill(&mut model.fleet.hosts, plan.gpus, now_ms());
    }

    // Every host is the one sshd under its own name: its own SSH connection, its host key
    // checked against the same known_hosts line.
    let known_hosts = sshd.trusted_known_hosts();
    let rss_before_links_kb = status_kb("self", "VmRSS");
    // Links send straight into the loop's channel, as the console's `host_sink` does; the
    // sink notes when each host first streams (microseconds after start, plus one, in an
    // atomic: no thread of its own, so the links wake nobody the console would not wake).
    let (sink, events) = mpsc::channel::<Event>();
    let first_sample_us: Arc<Vec<AtomicU64>> =
        Arc::new((0..plan.hosts).map(|_| AtomicU64::new(0)).collect());
    // Bytes of job logs the links handed to the loop, and in how many events.
    let log_bytes = Arc::new(AtomicU64::new(0));
    let log_events = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let link_sink = {
        let first = Arc::clone(&first_sample_us);
        let log_bytes = Arc::clone(&log_bytes);
        let log_events = Arc::clone(&log_events);
        // What the sink notes of each event, whether it comes alone or in a burst.
        let note = move |host: usize, event: &HostEvent| {
            if let HostEvent::JobLog { text, .. } = event {
                log_bytes.fetch_add(text.len() as u64, Ordering::Relaxed);
                log_events.fetch_add(1, Ordering::Relaxed);
            }
            if matches!(event, HostEvent::Sample { .. })
                && let Some(slot) = first.get(host)
                && slot.load(Ordering::Relaxed) == 0
            {
                let us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
                slot.store(us.saturating_add(1), Ordering::Relaxed);
            }
        };
        let note = Arc::new(note);
        let (note_one, tx_one) = (Arc::clone(&note), sink.clone());
        let tx = sink.clone();
        HostSink::new(move |host, event| {
            note_one(host, &event);
            tx_one.send(Event::Host { host, event }).is_ok()
        })
        .with_bursts(move |host, events| {
            events.iter().for_each(|event| note(host, event));
            tx.send(Event::Hosts { host, events }).is_ok()
        })
    };
    let handles: Vec<_> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let mut opts = LinkOptions {
                interval_ms: 1000,
                known_hosts: Some(known_hosts.clone()),
                use_agent: false,
                ..LinkOptions::default()
            };
            if let Some(every) = plan.queries_every {
                let every_ms = u64::try_from(every.as_millis()).unwrap_or(u64::MAX);
                opts.processes_unwatched_interval_ms = every_ms;
                opts.detail_interval_ms = every_ms;
            }
            spawn_link(sshd.remote_host(name), i, link_sink.clone(), opts).expect("link")
        })
        .collect();
    drop(link_sink);
    // The window opens after the warm-up and once every host streams (or after a wait that
    // grows with the fleet); then quit after the measured window. CPU is counted over the
    // window only.
    let measure = plan.measure;
    let warmup = plan.warmup;
    let longest_wait = warmup + Duration::from_secs(60 + plan.hosts as u64 / 10);
    let quitter = sink.clone();
    let port = sshd.port;
    let calls_log = sshd.dir().join("nvidia-smi.calls");
    let first = Arc::clone(&first_sample_us);
    let window_log_bytes = Arc::clone(&log_bytes);
    let window_log_events = Arc::clone(&log_events);
    let window = spawn_named("bench-window", move || {
        let mut all_smi = all_smi;
        let mut most_threads = 0;
        while started.elapsed() < warmup
            || (all_streaming_after(&first).is_none() && started.elapsed() < longest_wait)
        {
            most_threads = most_threads.max(status_kb("self", "Threads"));
            std::thread::sleep(Duration::from_millis(20));
        }
        let opened_after = started.elapsed();
        let start_ms = now_ms();
        let calls_start = Calls::read(&calls_log);
        let log_bytes_start = window_log_bytes.load(Ordering::Relaxed);
        let log_events_start = window_log_events.load(Ordering::Relaxed);
        let cpu_start = cpu_seconds("self");
        let threads_start = cpu_by_thread();
        if let Ok(a) = all_smi.as_mut() {
            a.start_window();
        }
        std::thread::sleep(measure);
        let cpu = cpu_seconds("self") - cpu_start;
        let log_bytes = window_log_bytes.load(Ordering::Relaxed) - log_bytes_start;
        let log_events = window_log_events.load(Ordering::Relaxed) - log_events_start;
        let threads = cpu_between(&threads_start, cpu_by_thread());
        let rss_end_kb = status_kb("self", "VmRSS");
        let connections = connections_to("self", port);
        let calls = Calls::read(&calls_log).since(&calls_start);
        let all_smi = all_smi.map(|a| (a.figures(), a.screen()));
        let _ = quitter.send(Event::Key(KeyEvent::new(
            KeyCode::Char('q'),
            KeyModifiers::NONE,
        )));
        Window {
            cpu_s: cpu,
            threads,
            start_ms,
            opened_after,
            connections,
            calls,
            all_smi,
            log_bytes,
            log_events,
            most_threads,
            rss_end_kb,
        }
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
            sync_soon: Default::default(),
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
    let window = window.join().expect("window thread");
    drop(handles);
    let all_streaming = all_streaming_after(&first_sample_us);

    let streaming = model
        .fleet
        .hosts
        .iter()
        .filter(|h| h.gpus.len() == plan.gpus)
        .count();
    let job_logs = plan
        .job_logs
        .then(|| JobLogs::of(&model, log_bytes.load(Ordering::Relaxed)));
    let text = report::render(&report::Run {
        plan: &plan,
        window: &window,
        stats: &stats,
        streaming,
        all_streaming,
        peak_rss_kb: status_kb("self", "VmHWM"),
        rss_before_links_kb,
        job_logs: job_logs.as_ref(),
    });
    print!("{text}");
    if plan.bench {
        let path = report_path();
        match std::fs::write(&path, &text) {
            Ok(()) => println!("report written to {}", path.display()),
            Err(e) => eprintln!("could not write {}: {e}", path.display()),
        }
        if let Ok((_, screen)) = &window.all_smi {
            let _ = std::fs::write(path.with_extension("all-smi-screen.txt"), screen);
        }
    }
    assert_eq!(streaming, plan.hosts, "every host streamed all its GPUs");
    // With job logs, every host's job was found and its log followed and read as a training
    // run: otherwise the figures above would be those of a bench that followed nothing.
    if let Some(jobs) = &job_logs {
        assert_eq!(
            jobs.followed, plan.hosts,
            "every host followed its job's log"
        );
        assert_eq!(
            jobs.with_progress, plan.hosts,
            "every host read its job's step and loss from the log"
        );
    }
    let apps_pids = writer.as_ref().map(|w| w.pid().to_string());
    drop(writer);
    if !plan.bench {
        let log = sshd.dir().join("nvidia-smi.calls");
        let stand_in = bin.join("nvidia-smi");
        if let Some(checked) =
            stand_in_check::compare(&stand_in, &log, plan.gpus, apps_pids.as_deref())
        {
            let checked = checked.unwrap_or_else(|why| panic!("stand-in differs: {why}"));
            println!("stand-in nvidia-smi matches the shell fake on {checked} command lines");
        }
    }
}
