//! Where a runbook runs: this machine, an SSH host, or a simulated demo host, and what runs the
//! commands of each.

use crate::remote::{LinkOptions, RemoteHost};
use crate::runbook::exec::{Executor, LocalExecutor};
use crate::runbook::remote_exec::RemoteExecutor;
use crate::runbook::sim_exec::SimExecutor;
use crate::telemetry::sim::SharedSim;

/// Where a runbook runs.
// One value per command: the size of the SSH variant costs nothing worth boxing for.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum Target {
    /// This machine, commands started directly.
    Local,
    /// An SSH host, one session per command.
    Remote(RemoteHost, LinkOptions),
    /// A simulated demo host: the simulator answers every command, nothing runs anywhere.
    Simulated { sim: SharedSim, host: String },
}

impl Target {
    /// What runs the target's commands.
    pub fn executor(self) -> Box<dyn Executor> {
        match self {
            Target::Local => Box::new(LocalExecutor::default()),
            Target::Remote(host, options) => Box::new(RemoteExecutor::new(host, options)),
            Target::Simulated { sim, host } => Box::new(SimExecutor::new(sim, host)),
        }
    }
}
