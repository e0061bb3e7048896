//! The fleet benchmark's report: what one run measured, as the lines written to stdout and
//! `target/fleet-ssh-report.txt`.

use std::path::Path;
use std::time::Duration;

use gpufleet::app::model::Model;
use gpufleet::app::runtime::FrameStats;

use crate::all_smi::AllSmiFigures;
use crate::log_writer;
use crate::plan::Plan;
use crate::proc_stats::percentile;

/// How many `nvidia-smi` runs the stand-in hosts logged, by who asked.
#[derive(Debug, Default, Clone, Copy)]
pub struct Calls {
    /// gpufleet's: streams, queries, process lists, versions.
    pub gpufleet: usize,
    /// all-smi's per-tick query (the only one naming `clocks.current.graphics`).
    pub all_smi: usize,
}

impl Calls {
    pub fn read(log: &Path) -> Calls {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let mut calls = Calls::default();
        for line in text.lines() {
            if line.contains("clocks.current.graphics") {
                calls.all_smi += 1;
            } else if !line.contains("--version") {
                calls.gpufleet += 1;
            }
        }
        calls
    }

    pub fn since(self, start: &Calls) -> Calls {
        Calls {
            gpufleet: self.gpufleet.saturating_sub(start.gpufleet),
            all_smi: self.all_smi.saturating_sub(start.all_smi),
        }
    }
}

/// What the measuring thread saw over the window.
pub struct Window {
    /// The console process's CPU seconds over the window.
    pub cpu_s: f64,
    pub threads: Vec<(String, f64)>,
    pub start_ms: u64,
    /// How long after the links started the window opened.
    pub opened_after: Duration,
    /// SSH connections the console held to the sshd at the window's end.
    pub connections: usize,
    pub calls: Calls,
    /// all-smi's figures and last screen, or why it did not run.
    pub all_smi: Result<(AllSmiFigures, String), String>,
    /// Bytes of job logs the links handed to the console over the window.
    pub log_bytes: u64,
    /// The `JobLog` events that carried them.
    pub log_events: u64,
    /// The most threads the console process had before the window (read every 20 ms), when
    /// the hosts connect.
    pub most_threads: u64,
    /// The console's RSS at the window's end.
    pub rss_end_kb: u64,
}

/// What the console made of the training jobs' logs (`--job-logs`), at the run's end.
pub struct JobLogs {
    /// Hosts that read some of their job's log.
    pub followed: usize,
    /// Hosts whose job's log reads as a training run with a step.
    pub with_progress: usize,
    /// Bytes of job logs the links handed to the console over the whole run.
    pub bytes: u64,
}

impl JobLogs {
    pub fn of(model: &Model, bytes: u64) -> JobLogs {
        let hosts = &model.fleet.hosts;
        JobLogs {
            followed: hosts
                .iter()
                .filter(|h| h.jobs.iter().any(|j| j.log_bytes > 0))
                .count(),
            with_progress: hosts
                .iter()
                .filter(|h| {
                    h.jobs.iter().any(|j| {
                        j.report
                            .as_ref()
                            .is_some_and(|r| r.step.is_some() && r.loss.is_some())
                    })
                })
                .count(),
            bytes,
        }
    }
}

pub struct Run<'a> {
    pub plan: &'a Plan,
    pub window: &'a Window,
    pub stats: &'a FrameStats,
    /// Hosts that stream all their GPUs at the end.
    pub streaming: usize,
    pub all_streaming: Option<Duration>,
    pub peak_rss_kb: u64,
    pub rss_before_links_kb: u64,
    /// `None` without `--job-logs`.
    pub job_logs: Option<&'a JobLogs>,
}

/// The machine, in words: cores and CPU model.
fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map_or_else(|| "unknown CPU".to_string(), |(_, m)| m.trim().to_string());
    format!("{cores} cores, {model}")
}

fn mb(kb: u64) -> f64 {
    kb as f64 / 1024.0
}

/// What the run did with job logs, so runs with and without `--job-logs` can be compared:
/// their difference in console CPU is what following the logs costs, and their difference in
/// peak RSS divided by the logs followed is each log's memory.
fn job_logs_line(run: &Run, secs: f64) -> String {
    let Some(jobs) = run.job_logs else {
        return "job logs followed: none (no --job-logs; a run with it, against this one, \
                gives what following them costs)\n"
            .to_string();
    };
    let hosts = run.plan.hosts as f64;
    format!(
        "job logs followed: {}/{} hosts ({} read as a training run with step and loss); one \
         writer process replays {} (a piece every {} ms, {:.2} KB/s, looping) as every \
         host's job, each host following it with its own `tail -f --pid` over its own SSH \
         connection\n\
         job log text read by the console: {:.1} KB over the window ({:.2} KB/s, {:.1} B/s per \
         host) in {} events ({:.2} per host per second), {:.1} KB over the whole run\n",
        jobs.followed,
        run.plan.hosts,
        jobs.with_progress,
        log_writer::FIXTURE,
        log_writer::PIECE_MS,
        log_writer::bytes_per_s() / 1024.0,
        run.window.log_bytes as f64 / 1024.0,
        run.window.log_bytes as f64 / 1024.0 / secs,
        run.window.log_bytes as f64 / secs / hosts,
        run.window.log_events,
        run.window.log_events as f64 / secs / hosts,
        jobs.bytes as f64 / 1024.0,
    )
}

pub fn render(run: &Run) -> String {
    let Run { plan, window, .. } = run;
    let secs = plan.measure.as_secs_f64();
    let hosts = plan.hosts as f64;
    // The window's own thread: an artefact of measuring, not part of the console.
    let harness_cpu: f64 = window
        .threads
        .iter()
        .filter(|(name, _)| name.starts_with("bench-"))
        .map(|(_, cpu)| cpu)
        .sum();
    let cpu = window.cpu_s - harness_cpu;
    let cpu_pct = cpu * 100.0 / secs;
    let mut all = run.stats.sample_to_screen_ms.clone();
    all.sort_unstable();
    // The same, for frames drawn inside the measured window only (start-up left out: a new
    // session holds its first lines until its full query answers).
    let mut steady: Vec<u64> = run
        .stats
        .drawn_at_ms
        .iter()
        .zip(&run.stats.sample_to_screen_ms)
        .filter(|(at, _)| **at >= window.start_ms)
        .map(|(_, ms)| *ms)
        .collect();
    steady.sort_unstable();
    let minutes = secs / 60.0;
    let mut out = format!(
        "fleet over real sshd: {} hosts x {} GPUs, 1 s interval, {} s measured after {:.1} s \
         warm-up (one sshd stands in for every host, each host its own SSH connection; the \
         stand-in nvidia-smi is compiled)\n\
         machine: {}\n\
         hosts streaming all {} GPUs at the end: {}/{}\n\
         SSH connections the console held at the window's end: {}\n\
         all hosts streaming after: {}\n\
         console CPU over the window: {:.2} s = {:.2}% of one core (links, loop, drawing; \
         the benchmark's own threads, {:.2} s, left out)\n\
         console CPU per host: {:.4}% of one core\n\
         peak RSS (VmHWM) of the console process: {:.1} MB\n\
         peak RSS per host: {:.3} MB (RSS before the links started {:.1} MB; the rest per host \
         {:.3} MB)\n\
         RSS at the window's end: {:.1} MB; most threads before the window: {}\n\
         frames drawn: {}\n\
         sample line arrival -> on screen, whole run: p50 {} ms, p99 {} ms, max {} ms ({} frames with new samples)\n\
         sample line arrival -> on screen, measured window: p50 {} ms, p99 {} ms, max {} ms ({} frames)\n\
         nvidia-smi runs started on the hosts for gpufleet over the window: {} ({:.2} per host per minute)\n",
        plan.hosts,
        plan.gpus,
        plan.measure.as_secs(),
        window.opened_after.as_secs_f64(),
        machine(),
        plan.gpus,
        run.streaming,
        plan.hosts,
        window.connections,
        run.all_streaming
            .map_or("never".to_string(), |d| format!("{:.2} s", d.as_secs_f64())),
        cpu,
        cpu_pct,
        harness_cpu,
        cpu_pct / hosts,
        mb(run.peak_rss_kb),
        mb(run.peak_rss_kb) / hosts,
        mb(run.rss_before_links_kb),
        mb(run.peak_rss_kb.saturating_sub(run.rss_before_links_kb)) / hosts,
        mb(window.rss_end_kb),
        window.most_threads,
        run.stats.frames,
        percentile(&all, 0.5),
        percentile(&all, 0.99),
        all.last().copied().unwrap_or(0),
        all.len(),
        percentile(&steady, 0.5),
        percentile(&steady, 0.99),
        steady.last().copied().unwrap_or(0),
        steady.len(),
        window.calls.gpufleet,
        window.calls.gpufleet as f64 / hosts / minutes,
    );
    out.push_str(&job_logs_line(run, secs));
    if run.plan.full_history {
        out.push_str(
            "every host started with a full history (20 minutes of the H200 stream fed \
             before the links started; --full-history)\n",
        );
    }
    if let Some(every) = run.plan.queries_every {
        out.push_str(&format!(
            "periodic queries (process list, full query): every {} s for this run \
             (--queries-every), not the console's own periods\n",
            every.as_secs()
        ));
    }
    match &window.all_smi {
        Ok((figures, _)) => out.push_str(&format!(
            "all-smi view --ssh-hostfile (same hosts, same window): CPU {:.2} s = {:.2}% of one \
             core ({:.4}% per host), peak RSS {:.1} MB ({:.3} MB per host), {} SSH connections \
             at the end, its query ran {} times on the hosts ({:.2} per host per second)\n",
            figures.cpu_s,
            figures.cpu_s * 100.0 / secs,
            figures.cpu_s * 100.0 / secs / hosts,
            mb(figures.peak_rss_kb),
            mb(figures.peak_rss_kb) / hosts,
            figures.connections,
            window.calls.all_smi,
            window.calls.all_smi as f64 / hosts / secs,
        )),
        Err(why) => out.push_str(&format!("all-smi not measured: {why}\n")),
    }
    out.push_str("CPU by thread over the window:\n");
    for (name, cpu) in window.threads.iter().filter(|(_, cpu)| *cpu > 0.0) {
        out.push_str(&format!("  {name}: {cpu:.3} s\n"));
    }
    let listed: f64 = window.threads.iter().map(|(_, cpu)| cpu).sum();
    out.push_str(&format!(
        "  threads that ended during the window (connection attempts): {:.3} s\n",
        (window.cpu_s - listed).max(0.0)
    ));
    out
}
