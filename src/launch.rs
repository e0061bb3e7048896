//! Choosing where telemetry comes from (simulator, local NVML, configured hosts) and starting it.

use rust_i18n::t;
use std::sync::{Arc, mpsc};
use std::time::Duration;

use crate::app::event::{Event, host_sink};
use crate::app::prompt_bridge::{self, PendingPrompts};
use crate::cli::GlobalArgs;
use crate::config::Config;
use crate::diagnose::LiveOptions;
use crate::fleet::money::MoneyOptions;
use crate::fleet::{Fleet, FleetOptions, HostSink};
use crate::recording::{Recorder, Replay, replay};
use crate::remote::{
    self, ChannelPrompter, LinkOptions, RemoteHost, ResolveError, link_options, resolve_named,
};
use crate::telemetry::local::{self, LocalSource};
use crate::telemetry::nvml::NvmlOpenError;
use crate::telemetry::sim::{self, SharedSim, Simulator};
use crate::telemetry::source::{SourceHandle, now_ms};

/// Where the fleet's telemetry comes from.
pub enum Plan {
    Demo {
        /// Shared with the demo's runbooks, checks and releases, which run on its hosts.
        sim: SharedSim,
        speed: f64,
    },
    /// This machine: NVML, or `rocm-smi` where NVML cannot open.
    Local(Box<LocalSource>),
    Ssh {
        hosts: Vec<RemoteHost>,
        opts: LinkOptions,
        /// Hosts whose instance is gone from its provider account, by name, with why: no link
        /// is opened to them, they are shown down with the reason.
        gone: Gone,
    },
    /// `gpufleet replay FILE`: a recording played back (read-only, like the demo fleet).
    Replay { replay: Replay, speed: f64 },
    /// `gpufleet attach URL...`: the fleets of watchers (read-only here: they hold the duties).
    Attach(Box<crate::remote_watcher::Attach>),
}

/// How long a link waits for the user to answer a prompt before giving up on that attempt.
const PROMPT_TIMEOUT: Duration = Duration::from_secs(600);

#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error("{0}")]
    Nvml(#[from] NvmlOpenError),
    #[error("--speed {0}")]
    BadSpeed(String),
    /// No host named, none configured, no `--local`, and this machine has no GPU to fall back to.
    #[error("{}", t!("launch_error.nothing_to_watch", where_hosts = where_hosts(.config), nvml = .nvml))]
    NothingToWatch {
        /// The config file read, or `None` when there was none at the default path.
        config: Option<std::path::PathBuf>,
        nvml: NvmlOpenError,
    },
    #[error(transparent)]
    Host(#[from] ResolveError),
    #[error("{}", t!("launch_error.thread", error = .0))]
    Thread(#[from] std::io::Error),
}

impl LaunchError {
    /// The error in the interface's language where it has catalogue words (a host that could
    /// not be resolved), else as displayed.
    pub fn localized(&self) -> String {
        match self {
            LaunchError::Host(host) => host.localized(),
            other => other.to_string(),
        }
    }
}

impl Plan {
    /// `--demo` wins, then `--local`, then hosts named on the command line, then configured
    /// hosts; with none of those, the local GPUs.
    pub fn choose(
        args: &GlobalArgs,
        named: &[String],
        config: &Config,
        interval_ms: u64,
    ) -> Result<Self, LaunchError> {
        if args.demo {
            sim::check_speed(args.speed).map_err(LaunchError::BadSpeed)?;
            return Ok(Plan::Demo {
                sim: Arc::new(std::sync::Mutex::new(Simulator::demo(args.seed))),
                speed: args.speed,
            });
        }
        if !args.local && (!named.is_empty() || !config.hosts.is_empty()) {
            let ssh = args.ssh_settings();
            let hosts = resolve_named(&ssh, named, config)?;
            let opts = link_options(&ssh, interval_ms);
            return Ok(Plan::Ssh {
                hosts,
                opts,
                gone: Gone::default(),
            });
        }
        match LocalSource::open() {
            Ok(gpus) => Ok(Plan::Local(Box::new(gpus))),
            Err(nvml) if !args.local => Err(LaunchError::NothingToWatch {
                config: args.config_path(),
                nvml,
            }),
            Err(nvml) => Err(nvml.into()),
        }
    }

    pub fn host_names(&self) -> Vec<String> {
        match self {
            Plan::Demo { sim, .. } => sim::lock(sim).host_names(),
            Plan::Local(_) => vec![crate::remote::local_machine_name()],
            Plan::Ssh { hosts, .. } => hosts.iter().map(|h| h.name.clone()).collect(),
            Plan::Replay { replay, .. } => replay.host_names(),
            Plan::Attach(attach) => attach.host_names(),
        }
    }

    /// Starts the sources on their own threads, sending into `sink` (through `recorder` when
    /// the session is recorded); links' questions (host keys, passphrases, passwords) come
    /// back through the returned pending-prompt store. For SSH hosts, also the options the
    /// links were opened with (their prompter included), to open more alike.
    pub fn start(
        self,
        sink: mpsc::Sender<Event>,
        interval: Duration,
        recorder: Option<&Recorder>,
    ) -> Result<(Vec<SourceHandle>, PendingPrompts, Option<LinkOptions>), LaunchError> {
        let host_sink = |sink| {
            let sink = host_sink(sink);
            match recorder {
                Some(recorder) => recorder.wrap(sink),
                None => sink,
            }
        };
        Ok(match self {
            Plan::Demo { sim, speed } => (
                vec![sim::spawn_shared(sim, host_sink(sink), speed)?],
                PendingPrompts::default(),
                None,
            ),
            Plan::Replay { replay, speed } => (
                vec![replay::spawn(replay, host_sink(sink), speed)?],
                PendingPrompts::default(),
                None,
            ),
            Plan::Attach(attach) => (
                {
                    let tell = sink.clone();
                    let new_host: crate::remote_watcher::NewHost = Arc::new(move |id, name| {
                        let _ = tell.send(Event::HostAdded { id, name });
                    });
                    crate::remote_watcher::spawn(*attach, host_sink(sink), new_host)?
                },
                PendingPrompts::default(),
                None,
            ),
            Plan::Local(gpus) => (
                vec![local::spawn(*gpus, 0, host_sink(sink), interval)?],
                PendingPrompts::default(),
                None,
            ),
            Plan::Ssh {
                hosts,
                mut opts,
                gone,
            } => {
                let (to_ui, requests) = mpsc::channel();
                opts.prompter = Some(Arc::new(ChannelPrompter::new(to_ui, PROMPT_TIMEOUT)));
                let pending = prompt_bridge::spawn(requests, sink.clone())?;
                opts.ask_again = Some(pending.ask_again());
                let hosts_sink = host_sink(sink);
                let handles = hosts
                    .into_iter()
                    .enumerate()
                    .map(|(id, host)| match gone.get(&host.name) {
                        Some(why) => gone_source(id, hosts_sink.clone(), why.clone()),
                        None => remote::spawn_link(host, id, hosts_sink.clone(), opts.clone()),
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                (handles, pending, Some(opts))
            }
        })
    }

    /// Starts the sources with nobody at a terminal (`gpufleet watch`): events go to `sink`,
    /// and a link that would ask a question (an unknown host key, a passphrase) is refused
    /// instead, with the reason as the host's state.
    pub fn start_headless(
        self,
        sink: HostSink,
        interval: Duration,
    ) -> Result<Vec<SourceHandle>, LaunchError> {
        Ok(match self {
            Plan::Demo { sim, speed } => vec![sim::spawn_shared(sim, sink, speed)?],
            Plan::Replay { replay, speed } => vec![replay::spawn(replay, sink, speed)?],
            // A headless reader keeps the hosts it attached with.
            Plan::Attach(attach) => {
                crate::remote_watcher::spawn(*attach, sink, Arc::new(|_, _| {}))?
            }
            Plan::Local(gpus) => vec![local::spawn(*gpus, 0, sink, interval)?],
            Plan::Ssh { hosts, opts, gone } => hosts
                .into_iter()
                .enumerate()
                .map(|(id, host)| match gone.get(&host.name) {
                    Some(why) => gone_source(id, sink.clone(), why.clone()),
                    None => remote::spawn_link(host, id, sink.clone(), opts.clone()),
                })
                .collect::<Result<Vec<_>, _>>()?,
        })
    }

    /// Reads every host once, synchronously, into a fresh fleet (for `snapshot`): the same
    /// engine the console and the watcher drive, with no screen.
    pub fn read_once(self, options: FleetOptions) -> Fleet {
        let mut fleet = Fleet::new(self.host_names(), options, now_ms());
        match self {
            Plan::Demo { sim, .. } => {
                let mut sim = sim::lock(&sim);
                // Step the scenario clock until every host has settled: readings and processes
                // in, or a failure reported.
                let step = sim.interval_ms();
                let mut scenario_ms = 0;
                while scenario_ms <= SNAPSHOT_SCENARIO_MS && !settled(&fleet) {
                    for (host, event) in sim.advance(scenario_ms, now_ms()) {
                        fleet.apply(host, event);
                    }
                    scenario_ms += step;
                }
            }
            // `replay` plays in the console; no one-shot command reads a recording this way.
            Plan::Replay { .. } => {}
            // `snapshot --from` reads the watchers' state itself (`remote_watcher::read_once`).
            Plan::Attach(_) => {}
            Plan::Local(mut gpus) => {
                let mut events = vec![crate::fleet::HostEvent::Connected(gpus.info())];
                events.extend(gpus.read_events(now_ms(), true));
                for event in events {
                    fleet.apply(0, event);
                }
            }
            Plan::Ssh { hosts, opts, gone } => {
                // Every host at once, each on its own thread; the fleet takes their events as
                // they come, exactly as in the console.
                let (tx, events) = mpsc::channel();
                let sink = HostSink::from_sender(tx, |host, event| (host, event));
                std::thread::scope(|scope| {
                    for (id, host) in hosts.iter().enumerate() {
                        if let Some(why) = gone.get(&host.name) {
                            fleet.apply(id, gone_event(why, now_ms()));
                            continue;
                        }
                        let sink = sink.clone();
                        let opts = &opts;
                        scope.spawn(move || {
                            // The error was already sent as a `Disconnected` event.
                            let _ = remote::read_once(host, id, &sink, opts);
                        });
                    }
                    drop(sink);
                    for (host, event) in events.iter() {
                        fleet.apply(host, event);
                    }
                });
                fleet.advance_clock(now_ms());
                fleet.refresh_findings();
            }
        }
        fleet
    }
}

/// Hosts whose instance is gone from its provider account: name -> why.
pub type Gone = std::collections::HashMap<String, crate::words::Words>;

/// What a host whose instance is gone says in place of a connection: down, for good.
fn gone_event(why: &crate::words::Words, at_ms: u64) -> crate::fleet::HostEvent {
    let words = crate::fleet::DownWords::gone(why.clone());
    crate::fleet::HostEvent::Disconnected {
        at_ms,
        reason: words.reason.english(),
        summary: words.summary.english(),
        retry_at_ms: None,
        words: Some(words),
    }
}

/// The source of a host whose instance is gone: it says so once and ends.
pub fn gone_source(
    id: usize,
    sink: HostSink,
    why: crate::words::Words,
) -> Result<SourceHandle, std::io::Error> {
    SourceHandle::spawn("gone-host", move |_stop| {
        sink.send(id, gone_event(&why, now_ms()));
    })
}

/// Where hosts would have come from, for [`LaunchError::NothingToWatch`]: said once, with what to
/// do about it.
fn where_hosts(config: &Option<std::path::PathBuf>) -> String {
    match (config, crate::config::default_path()) {
        (Some(path), _) => t!("launch_error.no_hosts_in", path = path.display()),
        (None, Some(path)) => t!("launch_error.no_config_at", path = path.display()),
        (None, None) => t!("launch_error.no_config"),
    }
    .into_owned()
}

/// How far a demo snapshot may run the scenario clock looking for every host to settle.
const SNAPSHOT_SCENARIO_MS: u64 = 45_000;

/// True when every host has either reported readings and processes, or failed. A host of
/// other vendors' cards may send no process list (its tool lists none): readings suffice.
pub fn settled(fleet: &Fleet) -> bool {
    use crate::fleet::host::Link;
    use crate::telemetry::accel::Vendor;
    fleet.hosts.iter().all(|h| match h.link {
        Link::Lost { .. } | Link::Down { .. } => true,
        _ => {
            h.last_sample_ms.is_some()
                && (h.processes_at_ms.is_some()
                    || h.gpus.iter().all(|g| g.latest.vendor != Vendor::Nvidia))
        }
    })
}

/// The config whose hosts are priced, stored and released: for the demo fleet its own simulated
/// hosts ([`crate::demo::demo_config`]), never a configured host that shares a demo host's name.
pub fn money_config(config: &Config, demo: bool) -> Config {
    if demo {
        crate::demo::demo_config(config)
    } else {
        config.clone()
    }
}

/// The engine's options from the config and the command line (the console's and the
/// watcher's, at start and when the watcher reloads its config).
pub fn fleet_options(config: &Config, args: &GlobalArgs) -> FleetOptions {
    let interval_ms = args.interval_ms.unwrap_or(config.interval_ms);
    // The demo's ledgers start now, on the simulated clock, and are never stored.
    let money = if args.demo {
        crate::demo::money_options(config, now_ms())
    } else {
        MoneyOptions::from_config(config)
    };
    FleetOptions {
        money,
        interval_ms,
        history_minutes: config.history_minutes,
        read_only: args.read_only || config.read_only,
        live: LiveOptions {
            interval_ms,
            idle_util_pct: config.idle_util_pct,
            idle_minutes: config.idle_minutes,
            job_window_s: config.job_window_s,
            ..LiveOptions::default()
        },
        jobs: config
            .hosts
            .iter()
            .filter_map(|h| h.jobs.first().map(|j| (h.name.clone(), j.clone())))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::HostEvent;
    use crate::providers::fleet_hosts::GoneHost;

    #[test]
    fn a_gone_host_says_so_in_english_for_the_log_and_in_chinese_on_screen() {
        let gone = GoneHost {
            name: "a".into(),
            provider: "vast".into(),
            account: "main".into(),
            instance_id: "42".into(),
            gone_ms: 5_000,
        };
        let HostEvent::Disconnected {
            reason,
            summary,
            words: Some(words),
            ..
        } = gone_event(&gone.reason_words(), 6_000)
        else {
            panic!("a gone host is down, with words");
        };
        assert_eq!(
            reason,
            "instance 42 is gone from the vast account main (since 1970-01-01T00:00:05.000Z)"
        );
        assert_eq!(reason, gone.reason());
        assert_eq!(summary, "gone from the provider account");
        let zh = words.reason.render("zh-CN");
        assert!(zh.contains("实例 42") && zh.contains("main"), "{zh}");
        assert!(!zh.contains("gone"), "{zh}");
        assert_eq!(words.summary.render("zh-CN"), "已从平台账号中消失");
    }
}
