//! The fleet's state and how it changes: host events folded into each host, and the clock tick
//! that refreshes findings, feeds the ledgers, recomputes costs and red lines and advances the
//! auto-release countdowns. Pure: no I/O and no clock of its own; what must be done outside
//! (save the ledgers, release a host) comes back as [`FleetCommand`]s for the driver.

use crate::config::OnPlateau;
use crate::cost::LedgerBook;
use crate::diagnose::live_fit::JobFitMemo;
use crate::diagnose::{LiveOptions, live_findings_judged};
use crate::fleet::event_log::log_host_event;
use crate::telemetry::TimestampMs;

use super::event::{HostEvent, HostId};
use super::history::HistoryShape;
use super::host::{HostState, HostStatus};
use super::idle_trail::{IDLE_BUCKET_MS, IdleTrailShape};
use super::job_actions::job_red_lines;
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
    /// Each configured host's `[[hosts.jobs]]` table, by host name.
    pub jobs: Vec<(String, crate::config::JobConfig)>,
}

impl Default for FleetOptions {
    fn default() -> Self {
        Self {
            interval_ms: 1000,
            history_minutes: 15,
            read_only: false,
            live: LiveOptions::default(),
            money: MoneyOptions::default(),
            jobs: Vec::new(),
        }
    }
}

impl FleetOptions {
    /// A new host's jobs, read and judged as its `[[hosts.jobs]]` table says.
    fn host_state(&self, name: String, shape: HistoryShape) -> HostState {
        let mut host = HostState::new(name, shape);
        if let Some((_, jobs)) = self.jobs.iter().find(|(n, _)| *n == host.name) {
            host.jobs.set_options(super::job::job_options(jobs));
        }
        host
    }

    /// With no charts to draw (the watcher): only the history the findings read.
    pub fn without_charts(self) -> Self {
        Self {
            history_minutes: 0,
            ..self
        }
    }

    /// Points of history kept per GPU (one a second): the charts' minutes, or the duration
    /// rules' look back (their window and hold) plus a minute of slack, whichever is longer.
    /// The idle rule reads its own trail (see [`FleetOptions::history_shape`]).
    pub fn history_points(&self) -> usize {
        let charts_s = u64::from(self.history_minutes) * 60;
        usize::try_from(self.rules_look_back_s().max(charts_s)).unwrap_or(usize::MAX)
    }

    /// What the duration rules look back over: their window (the job rules' when longer) and
    /// hold and a minute of slack.
    /// Kept a second apart; older history (the charts') is folded.
    fn rules_look_back_s(&self) -> u64 {
        self.live.window_s.max(self.live.job_window_s) + self.live.hold_s + 60
    }

    /// The history each GPU keeps: [`FleetOptions::history_points`], and an idle trail over
    /// `idle_minutes` and a minute more (an `idle_minutes` longer than the charts' history is
    /// still seen whole).
    pub fn history_shape(&self) -> HistoryShape {
        let idle_s = self.live.idle_minutes.saturating_mul(60) + 60;
        HistoryShape {
            points: self.history_points(),
            fine_points: usize::try_from(self.rules_look_back_s()).unwrap_or(usize::MAX),
            idle: IdleTrailShape {
                buckets: usize::try_from(idle_s * 1000 / IDLE_BUCKET_MS + 1).unwrap_or(usize::MAX),
                busy_at_pct: self.live.idle_util_pct,
                interval_ms: self.interval_ms,
            },
        }
    }
}

/// What the fleet asks its driver to do.
#[derive(Debug, Clone, PartialEq)]
pub enum FleetCommand {
    /// Store the ledgers (merging what another gpufleet recorded meanwhile).
    SaveLedgers { book: LedgerBook },
    /// `host`'s auto-release countdown ran out: release it now.
    AutoRelease { host: HostId },
    /// `host`'s countdown for a job that stopped learning ran out and `on_plateau =
    /// "stop-job"`: stop that job now (SIGINT, then SIGTERM).
    StopJob {
        host: HostId,
        stop: crate::job::stop::StopJob,
    },
}

/// What a refresh of the live findings changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FindingsRefresh {
    /// Some host gained or lost a finding, or one changed its severity or GPU: what the
    /// fleet's rows show of findings (their badges) may differ.
    pub reshaped: bool,
    /// Hosts whose findings are the same ones, only worded anew (a plateau's time and money
    /// since, a count that moved): only a view that shows their text changes.
    pub reworded: Vec<HostId>,
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
    /// The money nobody watches, from the synced provider inventory (set by the drivers).
    pub unwatched: Vec<super::unwatched::UnwatchedLine>,
    /// Each host's jobs' use of their GPUs as last judged, by [`HostId`].
    job_fit: Vec<JobFitMemo>,
}

impl Fleet {
    pub fn new(host_names: Vec<String>, options: FleetOptions, now_ms: TimestampMs) -> Self {
        let shape = options.history_shape();
        let money = Money::new(&host_names, &options.money, now_ms);
        Self {
            hosts: host_names
                .into_iter()
                .map(|name| options.host_state(name, shape))
                .collect(),
            money,
            now_ms,
            started_ms: now_ms,
            options,
            unwatched: Vec::new(),
            job_fit: Vec::new(),
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
                // Both drivers' log: the watcher's stderr, the console's log file.
                log_host_event(&state.name, &event);
                state.apply(event);
                true
            }
            None => false,
        }
    }

    /// Watches one more host (a config reloaded with a new host); returns its id.
    pub fn add_host(&mut self, name: String) -> HostId {
        let shape = self.options.history_shape();
        self.money.add_host(&name, &self.options.money);
        let host = self.options.host_state(name, shape);
        self.hosts.push(host);
        self.hosts.len() - 1
    }

    /// Stops watching `host` (gone from a reloaded config). Its slot stays, so other ids keep
    /// their meaning; a retired host has no status, series or alerts.
    pub fn retire(&mut self, host: HostId) {
        if let Some(state) = self.hosts.get_mut(host) {
            state.retire();
        }
        self.money.retire(host);
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
    /// tens of seconds, so a faster pace would show nothing new), and says what changed.
    pub fn refresh_findings(&mut self) -> FindingsRefresh {
        let mut live = self.options.live.clone();
        live.interval_ms = self.options.interval_ms;
        let mut changed = FindingsRefresh::default();
        self.job_fit
            .resize_with(self.hosts.len(), JobFitMemo::default);
        for (i, (host, job_fit)) in self.hosts.iter_mut().zip(&mut self.job_fit).enumerate() {
            // The jobs' findings price at the host's price now (a provider sync may change it).
            let price = self
                .money
                .hosts
                .get(i)
                .and_then(|m| m.config.price.as_ref());
            if host.jobs.price() != price {
                host.set_job_price(price.cloned());
            }
            // A fault that ended (a new boot, the GPUs streaming again) leaves the live
            // findings for the earlier ones.
            if crate::diagnose::live_earlier::settle(host, self.now_ms, &live) {
                changed.reshaped = true;
            }
            let judged = job_fit.refresh(host, self.now_ms, &live);
            let findings = live_findings_judged(host, self.now_ms, &live, judged);
            if findings != host.findings {
                let same_kinds = findings.len() == host.findings.len()
                    && findings.iter().zip(host.findings.iter()).all(|(a, b)| {
                        a.label == b.label && a.severity == b.severity && a.gpu == b.gpu
                    });
                if same_kinds {
                    changed.reworded.push(i);
                } else {
                    changed.reshaped = true;
                }
                host.set_findings(findings);
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
        self.money.job_lines = job_red_lines(&self.hosts, &self.options.jobs, now_ms);
        self.money.recompute(now_ms, &limits);
        let mut commands = Vec::new();
        if !self.options.read_only {
            commands.extend(
                tick_countdowns(&mut self.money, &self.hosts, now_ms)
                    .into_iter()
                    .map(|(host, act)| match act {
                        Some(act) if act.action == OnPlateau::StopJob => FleetCommand::StopJob {
                            host,
                            stop: act.stop,
                        },
                        _ => FleetCommand::AutoRelease { host },
                    }),
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
        let watcher = FleetOptions::default().without_charts();
        assert_eq!(
            watcher.history_points(),
            4 * 60,
            "the job rules' window (2 minutes), the hold, and a minute of slack"
        );
        let long_idle = FleetOptions {
            live: LiveOptions {
                idle_minutes: 30,
                ..LiveOptions::default()
            },
            ..FleetOptions::default()
        };
        let shape = long_idle.history_shape();
        assert_eq!(shape.points, 15 * 60);
        assert!(
            shape.idle.buckets as u64 * IDLE_BUCKET_MS >= 31 * 60_000,
            "an idle window longer than the charts is still seen whole: {shape:?}"
        );
    }
}
