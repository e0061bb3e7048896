//! SIGHUP: the config read again; and after each background sync of the provider accounts,
//! the inventory joined again to the config in use (the console and the watcher alike). Hosts
//! that are gone (or reached or priced differently, or whose instance left its account) are
//! stopped and retired, new ones added and started, the others keep streaming untouched; on
//! SIGHUP the alert sinks and thresholds are replaced too. A config that does not load is
//! logged and the old one kept.

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
    /// The alert sinks read again; `None` keeps those in use (the inventory joined again).
    pub sinks: Option<Vec<Sink>>,
    pub unreachable_after_ms: u64,
    /// The hosts whose instance is gone from its provider account (watched, marked gone).
    pub gone: Vec<String>,
    /// The money nobody watches in the provider accounts, with this fleet.
    pub unwatched: Vec<crate::fleet::unwatched::UnwatchedLine>,
}

/// Reads the config again and starts one host's source.
pub trait Reloader {
    /// The config file read again, the provider inventory joined to it.
    fn reload(&mut self) -> Result<Reloaded, String>;
    /// The provider inventory as last synced joined again to the config in use (not read
    /// again).
    fn rejoin(&mut self) -> Result<Reloaded, String>;
    /// The money nobody watches in the provider accounts, as last synced.
    fn unwatched(&self) -> Vec<crate::fleet::unwatched::UnwatchedLine>;
    fn start(&self, host: &WatchedHost, id: HostId, sink: HostSink)
    -> Result<SourceHandle, String>;
}

/// The running source of each host id (`None` once retired).
pub type Running = Vec<Option<(WatchedHost, SourceHandle)>>;

/// Why the hosts are joined again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// SIGHUP: the config read again.
    Sighup,
    /// A provider account synced: the inventory joined again.
    Inventory,
}

impl Why {
    pub fn message(self) -> &'static str {
        match self {
            Why::Sighup => "config reloaded",
            Why::Inventory => "provider inventory joined: hosts changed",
        }
    }

    /// Logs why the hosts could not be joined again (the ones in use stay).
    pub fn failed(self, error: &str) {
        match self {
            Why::Sighup => tracing::error!(error, "config not reloaded; keeping the one in use"),
            Why::Inventory => {
                tracing::error!(
                    error,
                    "provider inventory not joined; keeping the hosts in use"
                )
            }
        }
    }
}

/// What a reload changed, for the log.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Changes {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub restarted: Vec<String>,
    /// Hosts now marked gone (their instance left its account; their ledger closed).
    pub gone: Vec<String>,
}

impl Changes {
    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.removed.is_empty()
            && self.restarted.is_empty()
            && self.gone.is_empty()
    }
}

/// Whether `new` would start or stop any host of `running`.
pub fn changes_hosts(new: &Reloaded, running: &Running) -> bool {
    let now: Vec<&WatchedHost> = running.iter().flatten().map(|(h, _)| h).collect();
    now.len() != new.hosts.len() || new.hosts.iter().any(|h| !now.contains(&h))
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
    fleet.unwatched.clone_from(&new.unwatched);
    for host in &new.hosts {
        let running_now = running
            .iter()
            .flatten()
            .any(|(h, _)| h.name == host.name && h.identity == host.identity);
        if running_now {
            continue;
        }
        if new.gone.contains(&host.name) {
            changes.restarted.retain(|name| name != &host.name);
            changes.gone.push(host.name.clone());
        } else if !changes.restarted.contains(&host.name) {
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

/// The hosts a console started itself, kept so the provider inventory can be joined again
/// while it runs: each sync's new instances started, gone ones marked, through [`apply`].
pub struct LiveHosts {
    pub reloader: Box<dyn Reloader>,
    pub running: Running,
    pub sink: HostSink,
}

impl LiveHosts {
    /// Joins the inventory again and applies it to `fleet`; what changed and the hosts that
    /// may be released now, or `None` when no host changes.
    pub fn rejoin(
        &mut self,
        fleet: &mut Fleet,
    ) -> Result<Option<(Changes, crate::config::Config)>, String> {
        let new = self.reloader.rejoin()?;
        if !changes_hosts(&new, &self.running) {
            return Ok(None);
        }
        let changes = apply(
            &new,
            fleet,
            &mut self.running,
            self.reloader.as_ref(),
            &self.sink,
            None,
        );
        Ok(Some((changes, new.release_config)))
    }
}
