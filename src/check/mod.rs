//! `gpufleet check`: is this the card I paid for? Reads a host's GPUs at rest (nvidia-smi,
//! kernel log), loads them with an embedded PyTorch probe sent over SSH standard input, and
//! grades identity, health, power, PCIe, usable VRAM, throughput and a sustained load. The
//! JSON report is documented in `SCHEMA.md`.

pub mod evaluate;
pub mod expect;
mod format;
mod inventory;
mod load;
pub mod probe;
mod probe_progress;
mod progress;
pub mod reference;
mod render;
pub mod report;
mod runner;
pub mod sim_runner;
pub mod storage;
mod vendor;
mod verdict;

use std::time::Duration;

use rust_i18n::t;
use thiserror::Error;

use crate::config::Expect;
use crate::remote::{LinkOptions, RemoteError, RemoteHost};
use crate::telemetry::source::{StopFlag, now_ms};
use crate::words::Words;

pub use evaluate::{Observed, evaluate};
pub use expect::{ExpectError, ExpectFlags, expect_from_flags, model_matches};
pub use inventory::{Inventory, KernelLog};
pub use probe::{PROBE_SCRIPT, ProbeData, ProbeSettings};
pub use progress::{CheckPhase, CheckProgress, LiveReading};
pub use render::{render_json, render_text};
pub use report::{
    Category, CheckReport, CheckResult, EXIT_COULD_NOT_RUN, EXIT_FAIL, EXIT_PASS, EXIT_WARN,
    GpuFigures, Status, exit_code,
};
pub use runner::{LocalRunner, RemoteRunner, RunEnd, Runner};

/// Where the check runs.
// Built once per check and moved into it, so the size of the SSH variant costs nothing; a box
// would only make every caller's match noisier.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum CheckTarget {
    /// This machine: local `nvidia-smi`, `python3` and `dmesg`, run without a shell.
    Local,
    /// A host over SSH; each step opens its own session.
    Remote(RemoteHost, LinkOptions),
    /// A simulated demo host: the simulator answers ([`sim_runner`]); nothing runs anywhere.
    Simulated(sim_runner::SimCheckRunner),
}

/// How the check runs. `Default` is a real check (about 60 s of sustained load).
#[derive(Debug, Clone, PartialEq)]
pub struct CheckOptions {
    /// Length of the sustained load; 0 leaves it out.
    pub sustain_s: f64,
    /// Timed part of each benchmark (after its warm-up).
    pub bench_s: f64,
    /// Size of the square matrices multiplied.
    pub matmul_n: u32,
    /// Share of the free memory the VRAM check allocates.
    pub vram_fraction: f64,
    /// Throughput is reported per window of this length during the sustained load.
    pub window_s: f64,
    /// nvidia-smi sampling period during the load.
    pub sample_interval_ms: u32,
    /// Program names (or paths) on the target.
    pub python: String,
    pub nvidia_smi: String,
    /// Empty skips the kernel log.
    pub dmesg: String,
    /// Whether to run the PyTorch probe at all.
    pub run_probe: bool,
}

impl Default for CheckOptions {
    fn default() -> Self {
        Self {
            sustain_s: 60.0,
            bench_s: 2.0,
            matmul_n: 8192,
            vram_fraction: 0.95,
            window_s: 2.0,
            sample_interval_ms: 500,
            python: "python3".to_string(),
            nvidia_smi: "nvidia-smi".to_string(),
            dmesg: "dmesg".to_string(),
            run_probe: true,
        }
    }
}

impl CheckOptions {
    fn probe_settings(&self) -> ProbeSettings {
        ProbeSettings {
            sustain_s: self.sustain_s,
            bench_s: self.bench_s,
            matmul_n: self.matmul_n,
            vram_fraction: self.vram_fraction,
            window_s: self.window_s,
            sample_interval_ms: self.sample_interval_ms,
        }
    }

    fn validate(&self) -> Result<(), CheckError> {
        let bad = |what: &str, value: String| {
            Err(CheckError::Options {
                message: format!("{what} {value}"),
            })
        };
        if !(self.sustain_s.is_finite() && (0.0..=3600.0).contains(&self.sustain_s)) {
            return bad(
                "sustained load must last 0 to 3600 s, not",
                self.sustain_s.to_string(),
            );
        }
        if !(self.bench_s.is_finite() && self.bench_s > 0.0 && self.bench_s <= 60.0) {
            return bad(
                "benchmarks must time 0 to 60 s, not",
                self.bench_s.to_string(),
            );
        }
        if !(256..=65536).contains(&self.matmul_n) {
            return bad(
                "matrix size must be 256 to 65536, not",
                self.matmul_n.to_string(),
            );
        }
        if !(self.vram_fraction > 0.0 && self.vram_fraction < 1.0) {
            return bad(
                "VRAM share must be between 0 and 1, not",
                self.vram_fraction.to_string(),
            );
        }
        if !(self.window_s.is_finite() && self.window_s >= 0.1) {
            return bad(
                "windows must be at least 0.1 s, not",
                self.window_s.to_string(),
            );
        }
        if self.python.is_empty() || self.nvidia_smi.is_empty() {
            return bad(
                "program names must not be empty:",
                format!("{:?}", (&self.python, &self.nvidia_smi)),
            );
        }
        Ok(())
    }
}

/// Why a check could not run (exit code 3). What the GPUs do wrong is never an error: it is a
/// verdict in the report.
#[derive(Debug, Error)]
pub enum CheckError {
    #[error("cannot run the check on the host: {0}")]
    Remote(#[from] RemoteError),
    #[error("cannot start {program}: {source}")]
    Spawn {
        program: String,
        #[source]
        source: std::io::Error,
    },
    #[error("an empty command was given to run")]
    EmptyCommand,
    #[error("invalid check options: {message}")]
    Options { message: String },
    #[error("invalid expectation: {0}")]
    Expect(#[from] ExpectError),
    #[error("the check was stopped")]
    Stopped,
    /// A simulated demo host could not be reached (the simulator's words).
    #[error("{0}")]
    Simulated(String),
}

impl CheckError {
    /// Why the check could not run, in catalogue words (`check_error.*`): what
    /// `gpufleet check: ...` says before it exits 3. The causes underneath (the SSH layer's
    /// error, the operating system's, an expectation's) keep their own words.
    pub fn words(&self) -> Words {
        match self {
            CheckError::Remote(why) => {
                Words::new("check_error.remote").put_words("why", why.words())
            }
            CheckError::Spawn { program, source } => Words::new("check_error.spawn")
                .put("program", program.clone())
                .put("why", source.to_string()),
            CheckError::EmptyCommand => Words::new("check_error.empty_command"),
            CheckError::Options { message } => {
                Words::new("check_error.options").put("why", message.clone())
            }
            CheckError::Expect(why) => {
                Words::new("check_error.expect").put_words("why", why.words())
            }
            CheckError::Stopped => Words::new("check_error.stopped"),
            CheckError::Simulated(said) => Words::verbatim(said.clone()),
        }
    }
}

/// Runs the whole check on `target` and grades it against `expect` (whose empty fields fall
/// back to the card's own limits and the reference table). Blocking; `progress` is called from
/// this thread; `stop` ends it early with [`CheckError::Stopped`].
pub fn run_check(
    target: CheckTarget,
    expect: &Expect,
    opts: &CheckOptions,
    progress: &mut dyn FnMut(CheckProgress),
    stop: &StopFlag,
) -> Result<CheckReport, CheckError> {
    let (mut runner, host, target_text): (Box<dyn Runner>, String, String) = match target {
        CheckTarget::Local => (
            Box::new(LocalRunner),
            "local".to_string(),
            "local".to_string(),
        ),
        CheckTarget::Remote(host, link) => {
            let name = host.name.clone();
            let text = format!("ssh {}", host.target);
            (Box::new(RemoteRunner { host, opts: link }), name, text)
        }
        CheckTarget::Simulated(runner) => {
            let name = runner.host().to_string();
            (Box::new(runner), name, "simulated (demo)".to_string())
        }
    };
    run_check_with(
        runner.as_mut(),
        &host,
        &target_text,
        expect,
        opts,
        progress,
        stop,
    )
}

/// [`run_check`] through any [`Runner`] (a front end with its own transport, or a test that
/// replays recorded output); `host` names the report and `target` says where it ran.
pub fn run_check_with(
    runner: &mut dyn Runner,
    host: &str,
    target: &str,
    expect: &Expect,
    opts: &CheckOptions,
    progress: &mut dyn FnMut(CheckProgress),
    stop: &StopFlag,
) -> Result<CheckReport, CheckError> {
    opts.validate()?;
    expect::validate(expect)?;
    let started_at_ms = now_ms();
    let observed = observe(runner, opts, progress, stop)?;
    let (checks, gpus) = evaluate::evaluate(&observed, expect, opts.sustain_s);
    let mut report = CheckReport {
        schema: report::SCHEMA_VERSION,
        host: host.to_string(),
        target: target.to_string(),
        started_at_ms,
        duration_ms: now_ms().saturating_sub(started_at_ms),
        gpufleet_version: env!("CARGO_PKG_VERSION").to_string(),
        expect: report::ExpectSummary {
            gpu: expect.gpu.clone(),
            count: expect.count,
            memory_gib: expect.memory_gib,
            min_cuda: expect.min_cuda.map(|c| c.to_string()),
        },
        settings: report::RunSettings {
            sustain_s: opts.sustain_s,
            bench_s: opts.bench_s,
            matmul_n: opts.matmul_n,
            vram_fraction: opts.vram_fraction,
        },
        driver_version: observed.inventory.driver_version(),
        cuda_version: observed.inventory.cuda_version(),
        torch_version: observed.probe.torch_version.clone(),
        torch_cuda: observed.probe.torch_cuda.clone(),
        gpus,
        checks,
        status: Status::Pass,
        exit_code: EXIT_PASS,
    };
    report.finish();
    progress(CheckProgress {
        phase: CheckPhase::Done,
        fraction: 1.0,
        message: progress::finished(&report.host, report.status),
        reading: None,
    });
    Ok(report)
}

/// Gathers everything from the host with any [`Runner`], without grading it.
pub fn observe(
    runner: &mut dyn Runner,
    opts: &CheckOptions,
    progress: &mut dyn FnMut(CheckProgress),
    stop: &StopFlag,
) -> Result<Observed, CheckError> {
    let say = |progress: &mut dyn FnMut(CheckProgress), phase: CheckPhase, fraction: f64| {
        progress(CheckProgress {
            phase,
            fraction,
            message: phase.label(),
            reading: None,
        });
    };
    say(progress, CheckPhase::Inventory, 0.0);
    let inventory = inventory::collect_inventory(runner, &opts.nvidia_smi, stop)?;
    stopped(stop)?;
    say(progress, CheckPhase::KernelLog, 0.03);
    // The kernel log is read for the NVIDIA driver's lines only; on another vendor's host
    // that check is listed as skipped instead.
    let kernel = if inventory.vendor.is_some() {
        KernelLog::NotRead
    } else {
        inventory::read_kernel_log(runner, &opts.dmesg, stop)?
    };
    stopped(stop)?;
    let probe = if let Some(failure) = &inventory.failure {
        ProbeData::skipped(t!("check_failure.probe_not_run", why = failure))
    } else if let Some(vendor) = &inventory.vendor {
        let label = vendor.vendor.label();
        ProbeData::skipped(t!("check_vendor.no_probe", vendor = label))
    } else if !opts.run_probe {
        ProbeData::skipped(t!("check_failure.probe_off"))
    } else {
        say(progress, CheckPhase::Probe, 0.05);
        let gpus = inventory.gpus().len().max(1);
        run_probe(runner, opts, gpus, progress, stop)?
    };
    stopped(stop)?;
    Ok(Observed {
        inventory,
        kernel,
        probe,
    })
}

fn stopped(stop: &StopFlag) -> Result<(), CheckError> {
    if stop.is_set() {
        Err(CheckError::Stopped)
    } else {
        Ok(())
    }
}

/// Runs the embedded script and gathers its lines, reporting progress as they come.
fn run_probe(
    runner: &mut dyn Runner,
    opts: &CheckOptions,
    gpus: usize,
    progress: &mut dyn FnMut(CheckProgress),
    stop: &StopFlag,
) -> Result<ProbeData, CheckError> {
    let argv = probe::probe_argv(&opts.python, &opts.nvidia_smi, &opts.probe_settings());
    // Generous: importing PyTorch can take a minute on a cold disk, and filling a large card's
    // memory takes seconds per pass.
    let per_gpu_s = 6.0 * opts.bench_s + 90.0;
    let limit_s = 180.0 + opts.sustain_s * 1.5 + per_gpu_s * gpus as f64;
    let mut tracker = probe_progress::Tracker::new(gpus, opts.sustain_s);
    let mut data = ProbeData::default();
    let end = runner.run(
        &argv,
        Some(PROBE_SCRIPT.as_bytes()),
        Duration::from_secs_f64(limit_s),
        stop,
        &mut |line| {
            let update = data.feed(line);
            if let Some(p) = tracker.update(&update, &data) {
                progress(p);
            }
        },
    )?;
    if data.skip.is_some() || data.done {
        return Ok(data);
    }
    if end.missing || (data.protocol.is_none() && end.exit_status == Some(127)) {
        data.skip = Some(t!("check_failure.python_missing", python = opts.python).into_owned());
    } else if end.timed_out {
        let secs = format!("{limit_s:.0}");
        let why = t!("check_failure.probe_timeout", seconds = secs);
        data.failure = Some(why.into_owned());
    } else if data.protocol.is_none() {
        let said = data
            .last_noise()
            .map(str::to_string)
            .unwrap_or_else(|| t!("check_failure.no_output").into_owned());
        let python = &opts.python;
        let why = t!("check_failure.no_probe", python = python, said = said);
        data.skip = Some(why.into_owned());
    } else {
        let status = end.exit_status.map_or(t!("check_failure.a_signal"), |s| {
            t!("check_failure.exit_status", status = s)
        });
        let said = data
            .last_noise()
            .map(|n| t!("check_failure.said", text = n).into_owned())
            .unwrap_or_default();
        data.failure =
            Some(t!("check_failure.probe_ended", status = status, said = said).into_owned());
    }
    Ok(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_error_reads_as_its_display_in_english() {
        for error in [
            CheckError::EmptyCommand,
            CheckError::Stopped,
            CheckError::Options {
                message: "bad".into(),
            },
            CheckError::Spawn {
                program: "python3".into(),
                source: std::io::Error::from(std::io::ErrorKind::NotFound),
            },
        ] {
            assert_eq!(error.words().english(), error.to_string());
        }
    }
}
