//! SIGHUP: the config read again. Hosts that are gone (or reached or priced differently) are
//! stopped and retired, new ones added and started, the others keep streaming untouched; the
//! alert sinks and thresholds are replaced. A config that does not load is logged and the old
//! one kept.

use crate::alerts::Sink;
use crate::fleet::{Fleet, FleetOptions, HostId, HostSink};
use crate::telemetry::source::SourceHandle;

/// A host the watcher starts and stops on its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchedHost {
    pub name: String,
    /// How the host is reached and priced, as text: when it changes, the host is restarted.
    pub identity: String,
}

/// The config as read again.
pub struct Reloaded {
    pub hosts: Vec<WatchedHost>,
    /// The hosts that may be released, with their `[hosts.release]` tables.
    pub release_config: crate::config::Config,
    pub options: FleetOptions,
    pub sinks: Vec<Sink>,
    pub unreachable_after_ms: u64,
}

/// Reads the config again and starts one host's source.
pub trait Reloader {
    fn reload(&mut self) -> Result<Reloaded, String>;
    fn start(&self, host: &WatchedHost, id: HostId, sink: HostSink)
    -> Result<SourceHandle, String>;
}

/// The running source of each host id (`None` once retired).
pub type Running = Vec<Option<(WatchedHost, SourceHandle)>>;

/// What a reload changed, for the log.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Changes {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub restarted: Vec<String>,
}

/// Applies `new` to the running fleet: stops what is gone or changed, starts what is new or
/// changed. Failures to start a host are logged; the others go on.
pub fn apply(
    new: &Reloaded,
    fleet: &mut Fleet,
    running: &mut Running,
    reloader: &dyn Reloader,
    sink: &HostSink,
    recorder: Option<&crate::recording::Recorder>,
) -> Changes {
    let mut changes = Changes::default();
    for slot in running.iter_mut() {
        let Some((host, _)) = slot else { continue };
        let kept = new.hosts.iter().find(|h| h.name == host.name);
        match kept {
            Some(same) if same.identity == host.identity => {}
            Some(_) => changes.restarted.push(host.name.clone()),
            None => changes.removed.push(host.name.clone()),
        }
        if kept.is_none_or(|same| same.identity != host.identity) {
            // Dropping the handle stops the link, which closes its channels on the host.
            *slot = None;
        }
    }
    for (id, slot) in running.iter().enumerate() {
        if slot.is_none() && !fleet.hosts.get(id).is_some_and(|h| h.retired) {
            fleet.retire(id);
        }
    }
    fleet.options.money = new.options.money.clone();
    for host in &new.hosts {
        let running_now = running
            .iter()
            .flatten()
            .any(|(h, _)| h.name == host.name && h.identity == host.identity);
        if running_now {
            continue;
        }
        if !changes.restarted.contains(&host.name) {
            changes.added.push(host.name.clone());
        }
        let id = fleet.add_host(host.name.clone());
        if let Some(recorder) = recorder {
            recorder.name_host(id, &host.name);
        }
        match reloader.start(host, id, sink.clone()) {
            Ok(handle) => {
                if running.len() <= id {
                    running.resize_with(id + 1, || None);
                }
                running[id] = Some((host.clone(), handle));
            }
            Err(e) => {
                tracing::error!(host = %host.name, error = %e, "could not start the host");
                fleet.retire(id);
            }
        }
    }
    changes
}
