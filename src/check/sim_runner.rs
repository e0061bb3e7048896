//! The acceptance check on a simulated demo host: a [`Runner`] whose programs are answered by
//! the simulator, so `check --demo` grades simulated facts through the same inventory, probe
//! parser and verdicts as a real check. The host's state (its GPU lost or back, its kernel
//! lines) is the simulator's; what a card reads and measures under the probe is a real H200's,
//! replayed from `tests/fixtures/check/real-h200/` (captured with this probe and driver
//! 580.159.04), with the simulated GPU's UUID in place of the captured one. So the check runs
//! on the demo's H200 host only.

use rust_i18n::t;
use std::time::Duration;

use crate::check::CheckError;
use crate::check::runner::{RunEnd, Runner};
use crate::telemetry::sim::{self, SharedSim};
use crate::telemetry::source::StopFlag;

/// The card the replayed captures come from.
pub const SIM_CHECK_CARD: &str = "NVIDIA H200";
const REAL_QX: &str = include_str!("../../tests/fixtures/check/real-h200/smi_qx.xml");
const REAL_QUERY: &str = include_str!("../../tests/fixtures/check/real-h200/query.csv");
const REAL_PROBE: &str = include_str!("../../tests/fixtures/check/real-h200/probe.jsonl");
/// The UUID of the captured card, without the `GPU-` prefix.
const REAL_UUID: &str = "606b7d42-d306-fbed-4c48-308a70a87b16";

/// One simulated host; the probe's output is paced `speed` times faster than it was captured.
#[derive(Debug, Clone)]
pub struct SimCheckRunner {
    sim: SharedSim,
    host: String,
    speed: f64,
}

impl SimCheckRunner {
    /// Refuses a host that is not a one-GPU H200 of the demo fleet (the captures are of one).
    pub fn new(sim: SharedSim, host: &str, speed: f64) -> Result<Self, String> {
        let facts = sim::lock(&sim).host_facts(host)?;
        if facts.card != SIM_CHECK_CARD || facts.gpu_count != 1 {
            return Err(t!(
                "demo_shell.check_card",
                host = host,
                card = facts.card,
                count = facts.gpu_count,
                replayed = SIM_CHECK_CARD
            )
            .into_owned());
        }
        Ok(Self {
            sim,
            host: host.to_string(),
            speed: if speed.is_finite() && speed > 0.0 {
                speed
            } else {
                1.0
            },
        })
    }

    /// The simulated host's name.
    pub fn host(&self) -> &str {
        &self.host
    }
}

impl Runner for SimCheckRunner {
    fn run(
        &mut self,
        argv: &[String],
        _stdin: Option<&[u8]>,
        _timeout: Duration,
        stop: &StopFlag,
        on_line: &mut dyn FnMut(&str),
    ) -> Result<RunEnd, CheckError> {
        let ended = |status: Option<i32>| RunEnd {
            exit_status: status,
            timed_out: false,
            missing: false,
        };
        let Some(program) = argv.first() else {
            return Err(CheckError::EmptyCommand);
        };
        let facts = sim::lock(&self.sim)
            .host_facts(&self.host)
            .map_err(CheckError::Simulated)?;
        let uuid = facts.uuid.trim_start_matches("GPU-").to_string();
        let replay = |text: &str, on_line: &mut dyn FnMut(&str)| {
            for line in text.lines() {
                on_line(&line.replace(REAL_UUID, &uuid));
            }
        };
        let args: Vec<&str> = argv[1..].iter().map(String::as_str).collect();
        let is_smi = program.ends_with("nvidia-smi");
        let is_dmesg = program.ends_with("dmesg");
        if (is_smi && facts.gpu_lost) || is_dmesg {
            // The simulator's own answer: the lost GPU's error, the kernel's Xid lines.
            let command = if is_smi { "nvidia-smi" } else { "dmesg" };
            let answer = sim::lock(&self.sim)
                .run_command(&self.host, &[command.to_string()])
                .map_err(CheckError::Simulated)?;
            answer.lines.iter().for_each(|line| on_line(line));
            return Ok(ended(answer.exit_status));
        }
        if is_smi && args == ["-q", "-x"] {
            replay(REAL_QX, on_line);
            return Ok(ended(Some(0)));
        }
        if is_smi && args.first().is_some_and(|a| a.starts_with("--query-gpu=")) {
            replay(REAL_QUERY, on_line);
            return Ok(ended(Some(0)));
        }
        if args.first() == Some(&"-") {
            // The probe: the captured lines at the pace they came, `speed` times faster.
            let mut last_s = 0.0;
            for line in REAL_PROBE.lines() {
                let at_s = elapsed_s(line).unwrap_or(last_s);
                let wait_s = ((at_s - last_s) / self.speed).max(0.0);
                last_s = at_s;
                if stop.sleep(Duration::from_secs_f64(wait_s)) {
                    return Err(CheckError::Stopped);
                }
                on_line(&line.replace(REAL_UUID, &uuid));
            }
            return Ok(ended(Some(0)));
        }
        on_line(&t!(
            "demo_shell.not_simulated",
            program = program,
            host = self.host
        ));
        Ok(RunEnd {
            exit_status: Some(127),
            timed_out: false,
            missing: true,
        })
    }
}

/// The `elapsed_s` of a probe line, if it has one.
fn elapsed_s(line: &str) -> Option<f64> {
    serde_json::from_str::<serde_json::Value>(line)
        .ok()?
        .get("elapsed_s")?
        .as_f64()
}
