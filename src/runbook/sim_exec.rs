//! Runs a runbook's commands on a simulated demo host: each argv is answered by the simulator
//! ([`crate::telemetry::sim::Simulator::run_command`]) at the scenario's current time, so the
//! GPU-lost runbook sees the lost GPU and, after the simulated reboot, the GPU back. Nothing
//! runs on this machine or any other.

use std::time::Duration;

use crate::runbook::exec::{ExecError, ExecResult, Executor};
use crate::telemetry::sim::{self, SharedSim};
use crate::telemetry::source::StopFlag;

/// One demo host of a (possibly running) simulator.
#[derive(Debug, Clone)]
pub struct SimExecutor {
    sim: SharedSim,
    host: String,
}

impl SimExecutor {
    pub fn new(sim: SharedSim, host: impl Into<String>) -> Self {
        Self {
            sim,
            host: host.into(),
        }
    }
}

impl Executor for SimExecutor {
    fn host(&self) -> &str {
        &self.host
    }

    fn is_local(&self) -> bool {
        false
    }

    fn simulated(&self) -> bool {
        true
    }

    fn run(
        &mut self,
        argv: &[String],
        _timeout: Duration,
        stop: &StopFlag,
        on_line: &mut dyn FnMut(&str),
    ) -> Result<ExecResult, ExecError> {
        if argv.is_empty() {
            return Err(ExecError::Empty);
        }
        if stop.is_set() {
            return Err(ExecError::Stopped);
        }
        let answer = sim::lock(&self.sim)
            .run_command(&self.host, argv)
            .map_err(ExecError::Simulated)?;
        for line in &answer.lines {
            on_line(line);
        }
        Ok(ExecResult {
            exit_status: answer.exit_status,
            timed_out: false,
        })
    }
}
