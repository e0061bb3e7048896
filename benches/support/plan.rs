//! What one run of the fleet benchmark measures: host count, GPUs per host and the measured
//! window, from the command line (`-- --hosts 1000 --gpus 8 --secs 60`) or the environment
//! (`GPUFLEET_BENCH_HOSTS`, `GPUFLEET_BENCH_GPUS`, `GPUFLEET_BENCH_SECS`); the command line wins.
//! Defaults: 50 hosts x 8 GPUs for 60 s under `--bench`, a 3-host 5-second smoke otherwise.
//! `--job-logs` (or `GPUFLEET_BENCH_JOB_LOGS=1`) gives every host a training job whose log
//! grows, for the console to follow (`log_writer.rs`); the smoke version always has it, so it
//! checks that the logs are followed. `--queries-every S` (or `GPUFLEET_BENCH_QUERIES_EVERY_S`)
//! runs both periodic queries (the process list and the full query) every S seconds instead of
//! the console's own periods: against a run without it, what those queries cost the console.
//! `--full-history` (or `GPUFLEET_BENCH_FULL_HISTORY=1`) starts every host with the history
//! of 20 minutes watched (`history_bytes::fill`), so a short run measures the full state.

use std::time::Duration;

#[derive(Debug, Clone)]
pub struct Plan {
    pub hosts: usize,
    pub gpus: usize,
    pub measure: Duration,
    /// The least time between start and the measured window.
    pub warmup: Duration,
    /// Under `cargo bench` (`--bench`): the full run and its report file.
    pub bench: bool,
    /// Every host has a training job whose log the console follows.
    pub job_logs: bool,
    /// Both periodic queries' period, where the run sets one instead of the console's own.
    pub queries_every: Option<Duration>,
    /// Every host starts with a full history.
    pub full_history: bool,
}

/// The most hosts one run takes: all-smi reads at most 1,000 lines of a hostfile, and one
/// machine's loopback sshd is the limit of a stand-in fleet.
const MAX_HOSTS: usize = 5_000;
const MAX_GPUS: usize = 64;
const MAX_SECS: u64 = 3_600;
const MAX_QUERIES_EVERY_S: u64 = 86_400;

/// `--name value` or `--name=value` among `args`.
fn flag(args: &[String], name: &str) -> Option<String> {
    let long = format!("--{name}");
    let with_eq = format!("--{name}=");
    args.iter().enumerate().find_map(|(i, a)| {
        if *a == long {
            Some(args.get(i + 1).cloned().unwrap_or_default())
        } else {
            a.strip_prefix(&with_eq).map(str::to_string)
        }
    })
}

fn number(
    args: &[String],
    name: &str,
    env: &str,
    default: u64,
    range: (u64, u64),
) -> Result<u64, String> {
    let (text, from) = match flag(args, name) {
        Some(v) => (v, format!("--{name}")),
        None => match std::env::var(env) {
            Ok(v) => (v, env.to_string()),
            Err(_) => return Ok(default),
        },
    };
    let value: u64 = text
        .trim()
        .parse()
        .map_err(|_| format!("{from} must be a whole number, not {text:?}"))?;
    if value < range.0 || value > range.1 {
        return Err(format!(
            "{from} must be between {} and {}, not {value}",
            range.0, range.1
        ));
    }
    Ok(value)
}

impl Plan {
    /// The plan from this process's arguments and environment, or why they are wrong.
    pub fn from_env() -> Result<Plan, String> {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let bench = args.iter().any(|a| a == "--bench");
        let (hosts, secs) = if bench { (50, 60) } else { (3, 5) };
        let hosts = number(
            &args,
            "hosts",
            "GPUFLEET_BENCH_HOSTS",
            hosts,
            (1, MAX_HOSTS as u64),
        )?;
        let gpus = number(
            &args,
            "gpus",
            "GPUFLEET_BENCH_GPUS",
            8,
            (1, MAX_GPUS as u64),
        )?;
        let secs = number(&args, "secs", "GPUFLEET_BENCH_SECS", secs, (1, MAX_SECS))?;
        let job_logs = !bench
            || args.iter().any(|a| a == "--job-logs")
            || std::env::var("GPUFLEET_BENCH_JOB_LOGS").is_ok_and(|v| v.trim() == "1");
        let full_history = args.iter().any(|a| a == "--full-history")
            || std::env::var("GPUFLEET_BENCH_FULL_HISTORY").is_ok_and(|v| v.trim() == "1");
        let queries_every = match number(
            &args,
            "queries-every",
            "GPUFLEET_BENCH_QUERIES_EVERY_S",
            0,
            (0, MAX_QUERIES_EVERY_S),
        )? {
            0 => None,
            secs => Some(Duration::from_secs(secs)),
        };
        Ok(Plan {
            hosts: hosts as usize,
            gpus: gpus as usize,
            measure: Duration::from_secs(secs),
            warmup: Duration::from_secs(if bench { 10 } else { 2 }),
            bench,
            job_logs,
            queries_every,
            full_history,
        })
    }
}
