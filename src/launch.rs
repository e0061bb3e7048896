//! Choosing where telemetry comes from (simulator, local NVML, configured hosts) and starting it.

use std::sync::mpsc;
use std::time::Duration;

use crate::app::event::Event;
use crate::app::model::{Model, ModelOptions};
use crate::app::update::update;
use crate::cli::GlobalArgs;
use crate::config::Config;
use crate::telemetry::nvml::{self, LocalGpus, NvmlOpenError};
use crate::telemetry::sim::{self, Simulator};
use crate::telemetry::source::{SourceHandle, now_ms};

/// Where the fleet's telemetry comes from.
pub enum Plan {
    Demo { sim: Simulator, speed: f64 },
    Local(Box<LocalGpus>),
}

#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error("{0}")]
    Nvml(#[from] NvmlOpenError),
    #[error("--speed must be a positive number, got {0}")]
    BadSpeed(f64),
    #[error(
        "watching hosts over SSH is not built yet ({0} host(s) configured); use --local or --demo"
    )]
    SshNotYet(usize),
    #[error("could not start a worker thread: {0}")]
    Thread(#[from] std::io::Error),
}

impl Plan {
    /// `--demo` wins, then `--local`, then configured hosts; with none of those, the local GPUs.
    pub fn choose(args: &GlobalArgs, config: &Config) -> Result<Self, LaunchError> {
        if args.demo {
            if !(args.speed.is_finite() && args.speed > 0.0) {
                return Err(LaunchError::BadSpeed(args.speed));
            }
            return Ok(Plan::Demo {
                sim: Simulator::demo(args.seed),
                speed: args.speed,
            });
        }
        if !args.local && !config.hosts.is_empty() {
            return Err(LaunchError::SshNotYet(config.hosts.len()));
        }
        Ok(Plan::Local(Box::new(LocalGpus::open()?)))
    }

    pub fn host_names(&self) -> Vec<String> {
        match self {
            Plan::Demo { sim, .. } => sim.host_names(),
            Plan::Local(_) => vec![local_host_name()],
        }
    }

    /// Starts the sources on their own threads, sending into `sink`.
    pub fn start(
        self,
        sink: mpsc::Sender<Event>,
        interval: Duration,
    ) -> Result<Vec<SourceHandle>, LaunchError> {
        Ok(match self {
            Plan::Demo { sim, speed } => vec![sim::spawn(sim, sink, speed)?],
            Plan::Local(gpus) => vec![nvml::spawn(*gpus, 0, sink, interval)?],
        })
    }

    /// Reads every host once, synchronously, into a fresh model (for `snapshot`).
    pub fn read_once(self, options: ModelOptions) -> Model {
        let mut model = Model::new(self.host_names(), options, now_ms());
        match self {
            Plan::Demo { mut sim, .. } => {
                // Step the scenario clock until every host has settled: readings and processes
                // in, or a failure reported.
                let step = sim.interval_ms();
                let mut scenario_ms = 0;
                while scenario_ms <= SNAPSHOT_SCENARIO_MS && !settled(&model) {
                    for (host, event) in sim.advance(scenario_ms, now_ms()) {
                        update(&mut model, Event::Host { host, event });
                    }
                    scenario_ms += step;
                }
            }
            Plan::Local(mut gpus) => {
                let at_ms = now_ms();
                let mut events = vec![crate::app::event::HostEvent::Connected(gpus.info())];
                match gpus.read_samples() {
                    Ok(samples) => events.extend(
                        samples
                            .into_iter()
                            .map(|gpu| crate::app::event::HostEvent::Sample { at_ms, gpu }),
                    ),
                    Err((reason, raw)) => {
                        events.push(crate::app::event::HostEvent::Lost { at_ms, reason, raw })
                    }
                }
                events.push(crate::app::event::HostEvent::Processes {
                    at_ms,
                    processes: gpus.read_processes(),
                });
                for event in events {
                    update(&mut model, Event::Host { host: 0, event });
                }
            }
        }
        model
    }
}

/// How far a demo snapshot may run the scenario clock looking for every host to settle.
const SNAPSHOT_SCENARIO_MS: u64 = 45_000;

/// True when every host has either reported readings and processes, or failed.
pub fn settled(model: &Model) -> bool {
    use crate::app::host::Link;
    model.hosts.iter().all(|h| match h.link {
        Link::Lost { .. } | Link::Down { .. } => true,
        _ => h.last_sample_ms.is_some() && h.processes_at_ms.is_some(),
    })
}

fn local_host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}
