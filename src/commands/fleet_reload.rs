//! The configured fleet joined again while a driver runs: the watcher's SIGHUP (the config file
//! read again) and, for the watcher and the console alike, each background sync of the
//! provider accounts (the inventory joined again to the user's config as loaded). Both go
//! through `watch::reload::apply`, which starts new hosts, marks gone ones and leaves the
//! others streaming.

use std::path::PathBuf;

use rust_i18n::t;

use crate::cli::GlobalArgs;
use crate::config::{self, Config};
use crate::fleet::{HostId, HostSink};
use crate::launch::{Gone, fleet_options, gone_source, money_config};
use crate::remote::{LinkOptions, RemoteHost, resolve_named, spawn_link};
use crate::telemetry::source::{SourceHandle, now_ms};
use crate::watch::{Reloaded, Reloader, WatchedHost};

use super::fleet_inventory::{self, Freshness};

/// Each configured host with what, when changed, means it must be restarted: how it is
/// reached, priced and released, and whether its instance is gone.
pub fn watched_hosts(config: &Config, remote: &[RemoteHost], gone: &Gone) -> Vec<WatchedHost> {
    remote
        .iter()
        .map(|host| WatchedHost {
            name: host.name.clone(),
            identity: format!(
                "{host:?} {:?} {:?}",
                config.host(&host.name),
                gone.get(&host.name)
            ),
        })
        .collect()
}

/// The config's `[[alerts]]` sinks with their secrets loaded (their warnings logged).
pub fn load_sinks(config: &Config) -> Result<Vec<crate::alerts::Sink>, crate::alerts::SinkError> {
    let mut sinks = Vec::new();
    for sink in &config.alerts {
        let loaded = crate::alerts::Sink::load(sink, &crate::release::process_env)?;
        for warning in &loaded.warnings {
            tracing::warn!("{warning}");
        }
        sinks.push(loaded);
    }
    Ok(sinks)
}

/// Joins the provider inventory to the user's config and starts the links of new hosts.
pub struct FleetReloader {
    /// The config file SIGHUP reads again; `None` where nothing reads it again (the console).
    pub path: Option<PathBuf>,
    /// The user's config as last loaded, before the inventory was joined.
    pub user: Config,
    pub global: GlobalArgs,
    /// How links are opened (the console's asks its questions on screen).
    pub link: LinkOptions,
    /// The hosts as resolved by the last successful join.
    pub remote: Vec<RemoteHost>,
    /// The hosts whose instance is gone from its provider account: no link, the reason shown.
    pub gone: Gone,
    /// Who says the notes about the inventory (`watch`, `console`).
    pub who: &'static str,
}

impl FleetReloader {
    /// `user` with the stored inventory joined, resolved; kept for [`Reloader::start`].
    fn joined(&mut self, user: &Config) -> Result<Reloaded, String> {
        let mut notes = Vec::new();
        let (config, gone) = fleet_inventory::join(
            user.clone(),
            Freshness::Cached,
            self.who,
            &now_ms,
            &mut notes,
        );
        for line in String::from_utf8_lossy(&notes).lines() {
            tracing::warn!("{line}");
        }
        let remote =
            resolve_named(&self.global.ssh_settings(), &[], &config).map_err(|e| e.to_string())?;
        let gone_map: Gone = gone
            .iter()
            .map(|g| (g.name.clone(), g.reason_words()))
            .collect();
        let hosts = watched_hosts(&config, &remote, &gone_map);
        let mut options = fleet_options(&config, &self.global).without_charts();
        fleet_inventory::close_ledgers(&mut options.money, &gone);
        self.remote = remote;
        self.gone = gone_map;
        Ok(Reloaded {
            hosts,
            release_config: money_config(&config, self.global.demo),
            options,
            sinks: None,
            unreachable_after_ms: config.unreachable_minutes.saturating_mul(60_000),
            gone: gone.into_iter().map(|g| g.name).collect(),
            unwatched: fleet_inventory::stored_unwatched(user, now_ms()),
        })
    }
}

impl Reloader for FleetReloader {
    fn reload(&mut self) -> Result<Reloaded, String> {
        let path = self
            .path
            .clone()
            .ok_or_else(|| t!("reload_error.no_config_file").into_owned())?;
        let user = config::load(&path).map_err(|e| e.to_string())?;
        let sinks = load_sinks(&user).map_err(|e| e.to_string())?;
        let mut reloaded = self.joined(&user)?;
        self.user = user;
        reloaded.sinks = Some(sinks);
        Ok(reloaded)
    }

    fn rejoin(&mut self) -> Result<Reloaded, String> {
        let user = self.user.clone();
        self.joined(&user)
    }

    fn unwatched(&self) -> Vec<crate::fleet::unwatched::UnwatchedLine> {
        fleet_inventory::stored_unwatched(&self.user, now_ms())
    }

    fn start(
        &self,
        host: &WatchedHost,
        id: HostId,
        sink: HostSink,
    ) -> Result<SourceHandle, String> {
        let remote = self
            .remote
            .iter()
            .find(|r| r.name == host.name)
            .ok_or_else(|| t!("cli.no_host_named", host = host.name).into_owned())?;
        if let Some(why) = self.gone.get(&host.name) {
            return gone_source(id, sink, why.clone()).map_err(|e| e.to_string());
        }
        spawn_link(remote.clone(), id, sink, self.link.clone()).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reloader with no config file to read (the console's).
    fn without_a_file() -> FleetReloader {
        FleetReloader {
            path: None,
            user: Config::default(),
            global: GlobalArgs::default(),
            link: LinkOptions::default(),
            remote: Vec::new(),
            gone: Gone::new(),
            who: "console",
        }
    }

    #[test]
    fn no_file_to_read_again_is_said_from_the_catalogue_in_both_languages() {
        let Err(why) = without_a_file().reload() else {
            panic!("reloaded without a config file");
        };
        // The tests run in English: the text the log has always had.
        assert_eq!(why, "no config file to read again");
        assert_eq!(why, t!("reload_error.no_config_file", locale = "en"));
        assert_eq!(
            t!("reload_error.no_config_file", locale = "zh-CN"),
            "没有可重新读取的配置文件"
        );
    }
}
