//! A compiled stand-in for the shell fakes in `tests/fixtures/fake-nvidia-smi/` (`nvidia-smi`
//! and `dmesg`), cheap enough for a thousand simulated hosts: one small process per call
//! instead of `sh` + `awk` (+ `sleep` per reading).
//!
//! It is the fleet benchmark's own binary, run under another name: the bench puts links named
//! `nvidia-smi` and `dmesg` to itself first on the remote `PATH`, and `main` hands over to
//! [`run_if_called_as_stand_in`] before anything else. So there is nothing extra to build or
//! carry to another machine, and the captured output is compiled in (`include_str!`): the
//! binary needs no checkout to run.
//!
//! It replays the same captures as the shell fake, the same way, for the healthy scenario
//! (the only one the benchmark uses): the requested `--query-gpu` columns in the requested
//! order from `query_idle_nounits.txt` (one reading) or `stream_load.txt` (one reading per
//! `-lms` interval, cycling), printed once per GPU with only `index` changed (the GPU count is
//! the number in `$GPUFLEET_FAKE_DIR/gpus`, 1 without it); `--query-compute-apps` prints
//! `apps_load.txt` without its header, or, when `$GPUFLEET_FAKE_DIR/apps_pids` lists processes
//! (real ones, such as the benchmark's training job, `log_writer.rs`), its first line once per
//! PID with only the PID changed; `-q` prints `smi_q.txt`; anything else prints
//! `smi.txt`. A stream's first reading comes at once; the next waits a part of the interval
//! drawn at random before the stream keeps its pace, so the hosts' readings spread over the
//! second as a real fleet's do, whose hosts came up and reconnected at other times: when they
//! all started within the same few hundred milliseconds (a fast machine connects fifty hosts
//! in a third of a second), their readings came in one burst a second, the console drew a
//! third fewer frames than with the readings spread, and how many depended on each run's
//! start, which made runs of one build differ by a fifth. A field the capture does not have is
//! refused in the form of
//! `query_badfield.txt` (exit 2). Each call is appended to `$GPUFLEET_FAKE_DIR/<name>.calls`.
//!
//! One addition, for all-smi's query only (gpufleet never asks for it): nvidia-smi's long and
//! short spellings of the clock fields are the same field (`help_gpu.txt` in the shared
//! captures), and `clocks.current.graphics` / `clocks.gr` answer with the captured SM clock,
//! which equals the graphics clock on this H200 (`smi_clock.txt`: Graphics 345 MHz, SM 345 MHz;
//! both 1980 MHz max). Without it all-smi's every tick would be refused.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

const STREAM_LOAD: &str = include_str!("../../tests/fixtures/fake-nvidia-smi/stream_load.txt");
const QUERY_IDLE: &str =
    include_str!("../../tests/fixtures/fake-nvidia-smi/query_idle_nounits.txt");
const APPS_LOAD: &str = include_str!("../../tests/fixtures/fake-nvidia-smi/apps_load.txt");
const SMI: &str = include_str!("../../tests/fixtures/fake-nvidia-smi/smi.txt");
const SMI_Q: &str = include_str!("../../tests/fixtures/fake-nvidia-smi/smi_q.txt");

/// Other spellings nvidia-smi accepts for a captured field (see the module doc).
const ALIASES: [(&str, &str); 4] = [
    ("clocks.current.sm", "clocks.sm"),
    ("clocks.current.memory", "clocks.mem"),
    ("clocks.current.graphics", "clocks.sm"),
    ("clocks.gr", "clocks.sm"),
];

/// How long the quiet `dmesg --follow-new` follower lives, as the shell fake's `sleep 120`.
const DMESG_FOLLOW_S: u64 = 120;

/// The exit status after the reader went away (what a shell reports for SIGPIPE).
const EXIT_READER_GONE: i32 = 141;

/// The names under which the stand-in answers.
pub const PROGRAMS: [&str; 2] = ["nvidia-smi", "dmesg"];

/// Runs the stand-in when this binary was started as `nvidia-smi` or `dmesg`, returning the
/// exit status; `None` when it was started as the benchmark.
pub fn run_if_called_as_stand_in() -> Option<i32> {
    let mut args = std::env::args();
    let argv0 = args.next()?;
    let name = Path::new(&argv0).file_name()?.to_str()?.to_string();
    let args: Vec<String> = args.collect();
    let state = std::env::var_os("GPUFLEET_FAKE_DIR").map(PathBuf::from);
    match name.as_str() {
        "nvidia-smi" => Some(nvidia_smi(&args, state.as_deref())),
        "dmesg" => Some(dmesg(&args, state.as_deref())),
        _ => None,
    }
}

/// A directory holding `nvidia-smi` and `dmesg` as links to this binary, for the remote PATH.
pub fn install(bin_dir: &Path) -> std::io::Result<()> {
    let exe = std::env::current_exe()?;
    std::fs::create_dir_all(bin_dir)?;
    for program in PROGRAMS {
        let link = bin_dir.join(program);
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&exe, &link)?;
    }
    Ok(())
}

fn log_call(state: Option<&Path>, program: &str, args: &[String]) {
    let Some(state) = state else { return };
    let line = format!("{}\n", args.join(" "));
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(state.join(format!("{program}.calls")))
    {
        let _ = file.write_all(line.as_bytes());
    }
}

/// The scenario word, `healthy` without a file (as the shell fake reads it).
fn scenario(state: Option<&Path>) -> String {
    state
        .and_then(|s| std::fs::read_to_string(s.join("scenario")).ok())
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "healthy".to_string())
}

/// A capture file's output: without its `$ command` line and its `[exit N]` line.
fn output_of(capture: &str) -> Vec<&str> {
    let lines: Vec<&str> = capture
        .strip_suffix('\n')
        .unwrap_or(capture)
        .split('\n')
        .collect();
    match lines.len() {
        0..=2 => Vec::new(),
        n => lines[1..n - 1].to_vec(),
    }
}

fn print_lines(lines: &[impl AsRef<str>]) -> i32 {
    let text: String = lines.iter().map(|l| format!("{}\n", l.as_ref())).collect();
    write_out(&text).map_or(EXIT_READER_GONE, |()| 0)
}

fn write_out(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}

fn nvidia_smi(args: &[String], state: Option<&Path>) -> i32 {
    log_call(state, "nvidia-smi", args);
    let word = scenario(state);
    if word != "healthy" {
        eprintln!(
            "the benchmark's stand-in nvidia-smi plays only the healthy scenario, not {word:?}"
        );
        return 2;
    }
    let mut query = None;
    let mut apps = false;
    let mut all = false;
    let mut lms = None;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        if arg == "-q" {
            all = true;
        } else if let Some(fields) = arg.strip_prefix("--query-gpu=") {
            query = Some(fields.to_string());
        } else if arg.starts_with("--query-compute-apps=") {
            apps = true;
        } else if arg == "-lms" {
            lms = rest.next().cloned();
        }
    }
    if apps {
        if let Some(pids) = state.and_then(|s| std::fs::read_to_string(s.join("apps_pids")).ok()) {
            return print_lines(&own_processes(&pids));
        }
        // apps_load.txt was taken with --format=csv: its header line goes too.
        return print_lines(output_of(APPS_LOAD).get(1..).unwrap_or_default());
    }
    if all {
        return print_lines(&output_of(SMI_Q));
    }
    let Some(query) = query.filter(|q| !q.is_empty()) else {
        return print_lines(&output_of(SMI));
    };
    let captured = captured_fields();
    let mut columns = Vec::new();
    for field in query.split(',') {
        let known = ALIASES
            .iter()
            .find(|(alias, _)| *alias == field)
            .map_or(field, |(_, name)| *name);
        match captured.iter().position(|c| *c == known) {
            Some(column) => columns.push((field == "index", column)),
            None => {
                // The exact form of query_badfield.txt: the message, an empty line, exit 2.
                let _ = write_out(&format!(
                    "Field \"{field}\" is not a valid field to query.\n\n"
                ));
                return 2;
            }
        }
    }
    let gpus = gpu_count(state);
    match lms.filter(|l| !l.is_empty()) {
        None => replay(&output_of(QUERY_IDLE), &columns, gpus, None),
        Some(ms) => {
            // awk reads a word that is not a number as 0.
            let pause_ms = ms.trim().parse::<u64>().unwrap_or(0);
            let lines: Vec<&str> = STREAM_LOAD.lines().collect();
            replay(
                &lines,
                &columns,
                gpus,
                Some(Duration::from_millis(pause_ms)),
            )
        }
    }
}

/// The shell fake's answer for the processes listed in `apps_pids` (one word each, as the
/// shell splits them): the captured line once per PID, only its `pid` column changed.
fn own_processes(pids: &str) -> Vec<String> {
    let line = output_of(APPS_LOAD).get(1).copied().unwrap_or_default();
    let rest = line.split_once(',').map_or("", |(_, rest)| rest);
    pids.split_whitespace()
        .map(|pid| format!("{pid},{rest}"))
        .collect()
}

/// The fields of the captured lines, from the command line they were captured with.
fn captured_fields() -> Vec<&'static str> {
    QUERY_IDLE
        .lines()
        .next()
        .and_then(|l| l.split("--query-gpu=").nth(1))
        .and_then(|l| l.split_whitespace().next())
        .map(|f| f.split(',').collect())
        .unwrap_or_default()
}

fn gpu_count(state: Option<&Path>) -> usize {
    match state.and_then(|s| std::fs::read_to_string(s.join("gpus")).ok()) {
        None => 1,
        // awk reads a word that is not a number as 0.
        Some(text) => text.trim().parse().unwrap_or(0),
    }
}

/// Prints each captured line once per GPU with the chosen columns (`(is_index, column)`),
/// once (no pause) or one reading per pause, cycling, until the reader goes away.
fn replay(lines: &[&str], columns: &[(bool, usize)], gpus: usize, pause: Option<Duration>) -> i32 {
    if lines.is_empty() {
        return 0;
    }
    // Added once, after the first reading: where in the interval this stream's readings fall.
    let mut phase = pause.map(random_part).unwrap_or_default();
    loop {
        for line in lines {
            let values: Vec<&str> = line.split(", ").collect();
            let mut reading = String::new();
            for gpu in 0..gpus {
                let row: Vec<String> = columns
                    .iter()
                    .map(|&(is_index, column)| {
                        if is_index {
                            gpu.to_string()
                        } else {
                            values.get(column).copied().unwrap_or_default().to_string()
                        }
                    })
                    .collect();
                reading.push_str(&row.join(", "));
                reading.push('\n');
            }
            if write_out(&reading).is_err() {
                return EXIT_READER_GONE;
            }
            match pause {
                None => return 0,
                Some(pause) => std::thread::sleep(pause + std::mem::take(&mut phase)),
            }
        }
    }
}

/// A random part of `pause` (from the clock's nanoseconds and the process's ID: the standard
/// library has no random numbers, and this needs no more than a spread).
fn random_part(pause: Duration) -> Duration {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::from(d.subsec_nanos()));
    let mixed = (nanos ^ u64::from(std::process::id()).wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .wrapping_mul(0xBF58_476D_1CE4_E5B9);
    let pause_us = u64::try_from(pause.as_micros()).unwrap_or(u64::MAX).max(1);
    Duration::from_micros((mixed >> 11) % pause_us)
}

fn dmesg(args: &[String], state: Option<&Path>) -> i32 {
    log_call(state, "dmesg", args);
    let word = scenario(state);
    if word != "healthy" {
        eprintln!("the benchmark's stand-in dmesg plays only the healthy scenario, not {word:?}");
        return 2;
    }
    // A quiet follower, like the real `dmesg --follow-new`: it never writes, so it never learns
    // that its session ended; it gives up after two minutes, as the shell fake does.
    std::thread::sleep(Duration::from_secs(DMESG_FOLLOW_S));
    0
}
