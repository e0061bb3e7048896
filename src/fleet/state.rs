//! The fleet's state and how it changes: host events folded into each host, and the clock tick
//! that refreshes findings, feeds the ledgers, recomputes costs and red lines and advances the
//! auto-release countdowns. Pure: no I/O and no clock of its own; what must be done outside
//! (save the ledgers, release a host) comes back as [`FleetCommand`]s for the driver.

use crate::cost::LedgerBook;
use crate::diagnose::{LiveOptions, live_findings};
use crate::telemetry::TimestampMs;

use super::event::{HostEvent, HostId};
use super::host::{HostState, HostStatus};
use super::money::{Money, MoneyOptions, observe, tick_countdowns};

/// Settings the fleet is built with.
#[derive(Debug, Clone, PartialEq)]
pub struct FleetOptions {
    pub interval_ms: u64,
    /// History kept per GPU for the charts; 0 with no charts to draw (the watcher). The fleet
    /// keeps at least what the findings look back over, see [`FleetOptions::history_points`].
    pub history_minutes: u32,
    /// Changes no host: no automatic release either.
    pub read_only: bool,
    /// Thresholds of the live findings (idle billing, throttling, ...).
    pub live: LiveOptions,
    /// Prices, ledger thresholds, red lines and auto-release of the configured hosts.
    pub money: MoneyOptions,
}

impl Default for FleetOptions {
    fn default() -> Self {
        Self {
            interval_ms: 1000,
            history_minutes: 15,
            read_only: false,
            live: LiveOptions::default(),
            money: MoneyOptions::default(),
        }
    }
}

impl FleetOptions {
    /// With no charts to draw (the watcher): only the history the findings read.
    pub fn without_charts(self) -> Self {
        Self {
            history_minutes: 0,
            ..self
        }
    }

    /// Points of history kept per GPU (one a second): the charts' minutes, or the findings'
    /// longest look back (the idle window, or a duration rule's window and hold) plus a minute
    /// of slack, whichever is longer. An `idle_minutes` longer than `history_minutes` would
    /// otherwise never see a whole idle window.
    pub fn history_points(&self) -> usize {
        let live = &self.live;
        let rules_s = (live.idle_minutes * 60).max(live.window_s + live.hold_s) + 60;
        let charts_s = u64::from(self.history_minutes) * 60;
        usize::try_from(rules_s.max(charts_s)).unwrap_or(usize::MAX)
    }
}

/// What the fleet asks its driver to do.
#[derive(Debug, Clone, PartialEq)]
pub enum FleetCommand {
    /// Store the ledgers (merging what another gpufleet recorded meanwhile).
    SaveLedgers { book: LedgerBook },
    /// `host`'s auto-release countdown ran out: release it now.
    AutoRelease { host: HostId },
}

/// Every watched host and the fleet's money, as of `now_ms`.
#[derive(Debug, Clone, PartialEq)]
pub struct Fleet {
    /// In the order of the config or the command line; a [`HostId`] indexes it.
    pub hosts: Vec<HostState>,
    pub money: Money,
    /// The newest time seen: the clock's ticks and the events' stamps.
    pub now_ms: TimestampMs,
    /// When watching began: a host never heard from has been silent since then.
    pub started_ms: TimestampMs,
    pub options: FleetOptions,
}

impl Fleet {
    pub fn new(host_names: Vec<String>, options: FleetOptions, now_ms: TimestampMs) -> Self {
        let points = options.history_points();
        let money = Money::new(&host_names, &options.money, now_ms);
        Self {
            hosts: host_names
                .into_iter()
                .map(|name| HostState::new(name, points))
                .collect(),
            money,
            now_ms,
            started_ms: now_ms,
            options,
        }
    }

    /// What `host`'s row says now (`live`, `stale 12s`, `unreachable`, ...).
    pub fn status(&self, host: HostId) -> Option<HostStatus> {
        self.hosts
            .get(host)
            .filter(|h| !h.retired)
            .map(|h| h.status(self.now_ms, self.options.interval_ms))
    }

    /// Folds one event of `host` in; false when there is no such host. Events are stamped by
    /// the sources' own threads, so they may move the clock forward.
    pub fn apply(&mut self, host: HostId, event: HostEvent) -> bool {
        if let Some(at_ms) = event.at_ms() {
            self.now_ms = self.now_ms.max(at_ms);
        }
        match self.hosts.get_mut(host) {
            Some(state) => {
                state.apply(event);
                true
            }
            None => false,
        }
    }

    /// Watches one more host (a config reloaded with a new host); returns its id.
    pub fn add_host(&mut self, name: String) -> HostId {
        let points = self.options.history_points();
        self.money.add_host(&name, &self.options.money);
        self.hosts.push(HostState::new(name, points));
        self.hosts.len() - 1
    }

    /// Stops watching `host` (gone from a reloaded config). Its slot stays, so other ids keep
    /// their meaning; a retired host has no status, series or alerts.
    pub fn retire(&mut self, host: HostId) {
        if let Some(state) = self.hosts.get_mut(host) {
            state.retired = true;
        }
    }

    /// Hosts watched now, with their ids.
    pub fn watched(&self) -> impl Iterator<Item = (HostId, &HostState)> {
        self.hosts.iter().enumerate().filter(|(_, h)| !h.retired)
    }

    /// Moves the clock forward (never back).
    pub fn advance_clock(&mut self, now_ms: TimestampMs) {
        self.now_ms = self.now_ms.max(now_ms);
    }

    /// Recomputes every host's live findings (once a second: they are measured over windows of
    /// tens of seconds, so a faster pace would show nothing new). True when any changed.
    pub fn refresh_findings(&mut self) -> bool {
        let mut live = self.options.live.clone();
        live.interval_ms = self.options.interval_ms;
        let mut changed = false;
        for host in &mut self.hosts {
            let findings = live_findings(host, self.now_ms, &live);
            if findings != host.findings {
                host.findings = findings;
                changed = true;
            }
        }
        changed
    }

    /// Once a second: feeds the ledgers, recomputes costs and red lines, advances the
    /// auto-release countdowns (read-only mode releases nothing, automatically least of all)
    /// and asks for the ledgers to be saved every `save_every_ms`.
    pub fn money_tick(&mut self) -> Vec<FleetCommand> {
        let now_ms = self.now_ms;
        let interval_ms = self.options.interval_ms;
        observe(&mut self.money, &self.hosts, now_ms, interval_ms);
        let limits = self.options.money.fleet_limits;
        self.money.recompute(now_ms, &limits);
        let mut commands = Vec::new();
        if !self.options.read_only {
            commands.extend(
                tick_countdowns(&mut self.money, &self.hosts, now_ms)
                    .into_iter()
                    .map(|host| FleetCommand::AutoRelease { host }),
            );
        }
        let money = &self.options.money;
        if money.persist && self.money.save_due(now_ms, money.save_every_ms) {
            commands.push(FleetCommand::SaveLedgers {
                book: self.money.book(),
            });
        }
        commands
    }

    /// The ledgers as they stand, when they are stored at all (never for the demo fleet).
    pub fn book_to_store(&self) -> Option<LedgerBook> {
        self.options.money.persist.then(|| self.money.book())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_covers_the_longest_look_back_of_charts_and_rules() {
        let console = FleetOptions::default();
        assert_eq!(console.history_points(), 15 * 60, "the charts' 15 minutes");
        let watcher = FleetOptions {
            history_minutes: 0,
            ..FleetOptions::default()
        };
        assert_eq!(
            watcher.history_points(),
            11 * 60,
            "10 idle minutes and one of slack"
        );
        let long_idle = FleetOptions {
            live: LiveOptions {
                idle_minutes: 30,
                ..LiveOptions::default()
            },
            ..FleetOptions::default()
        };
        assert_eq!(
            long_idle.history_points(),
            31 * 60,
            "an idle window longer than the charts is still seen whole"
        );
    }
}
