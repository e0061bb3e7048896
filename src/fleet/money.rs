//! The fleet's money: each host's ledger fed from its live samples on the clock tick, the
//! fleet's costs and red lines, and the auto-release countdowns (also counting down to what
//! `on_plateau` asks for a job that stopped learning). Pure: a driver saves the ledgers and
//! runs releases; this only decides.

use crate::config::{Config, DEFAULT_STOP_GRACE_S, OnPlateau, Provider};
use crate::cost::{
    AutoDecision, AutoInput, AutoRelease, AutoState, FleetCost, FleetLimits, GpuObservation,
    HostCost, HostLimits, Ledger, LedgerBook, LedgerSettings, LedgerState, Price, RedLine,
    auto_release_triggered, billing_started_ms, fleet_red_lines, host_red_lines,
};
use crate::fleet::HostId;
use crate::fleet::host::{HostState, HostStatus};
use crate::fleet::job_actions::PlateauAct;
use crate::telemetry::TimestampMs;

/// How often the ledgers are written to disk while the console runs.
pub const SAVE_EVERY_MS: u64 = 30_000;

/// How a configured host is released, as far as the console needs to know before planning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReleaseTarget {
    pub provider: Provider,
    pub instance_id: Option<String>,
}

/// What the config says about one host's money.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HostMoneyConfig {
    pub name: String,
    pub price: Option<Price>,
    pub billing_started_ms: Option<TimestampMs>,
    pub limits: Option<HostLimits>,
    pub auto_release: bool,
    /// Whether a `backup` command runs before a release.
    pub backup: bool,
    /// This host's own countdown, when the config gives one.
    pub countdown_ms: Option<u64>,
    pub release: Option<ReleaseTarget>,
    /// When its instance disappeared from the provider account: its ledger is closed then.
    pub gone_ms: Option<TimestampMs>,
    /// When the price took effect, where the provider inventory says.
    pub price_since_ms: Option<TimestampMs>,
    /// `[[hosts.jobs]] on_plateau`: what a job that stopped learning leads to.
    pub on_plateau: OnPlateau,
    /// `[[hosts.jobs]] stop_grace_s`: SIGINT to SIGTERM for `stop-job`.
    pub stop_grace_s: u64,
}

/// The money settings the model is built with.
#[derive(Debug, Clone, PartialEq)]
pub struct MoneyOptions {
    pub settings: LedgerSettings,
    /// The configured hosts; a watched host not among them has hours but no price.
    pub hosts: Vec<HostMoneyConfig>,
    /// The red lines of a host the config does not list (the idle limit only).
    pub default_limits: HostLimits,
    pub fleet_limits: FleetLimits,
    pub countdown_ms: u64,
    pub save_every_ms: u64,
    /// Whether the configured hosts' ledgers are stored (never for the demo fleet).
    pub persist: bool,
}

impl Default for MoneyOptions {
    fn default() -> Self {
        let mut options = Self::from_config(&Config::default());
        options.persist = false;
        options
    }
}

impl MoneyOptions {
    /// Prices, limits and release targets of every configured host; ledgers are stored.
    pub fn from_config(config: &Config) -> Self {
        let default_limits = HostLimits {
            max_spend: None,
            max_hours: None,
            max_run_hours: None,
            idle_alert_ms: config.idle_minutes.saturating_mul(60_000),
        };
        Self {
            settings: LedgerSettings::from_config(config),
            hosts: config
                .hosts
                .iter()
                .map(|host| HostMoneyConfig {
                    name: host.name.clone(),
                    price: host.price_per_hour.map(|price_per_hour| Price {
                        price_per_hour,
                        currency: host.currency.clone().unwrap_or_default(),
                    }),
                    billing_started_ms: billing_started_ms(host),
                    limits: Some(HostLimits::from_config(config, host)),
                    auto_release: host.auto_release,
                    countdown_ms: host.countdown_s.map(|s| s.saturating_mul(1000)),
                    backup: host.backup.is_some(),
                    release: host.release.as_ref().map(|release| ReleaseTarget {
                        provider: release.provider,
                        instance_id: release.instance_id.clone(),
                    }),
                    gone_ms: None,
                    price_since_ms: host.price_since_ms,
                    on_plateau: host
                        .jobs
                        .first()
                        .and_then(|j| j.on_plateau)
                        .unwrap_or_default(),
                    stop_grace_s: host
                        .jobs
                        .first()
                        .and_then(|j| j.stop_grace_s)
                        .unwrap_or(DEFAULT_STOP_GRACE_S),
                })
                .collect(),
            default_limits,
            fleet_limits: FleetLimits::from_config(config),
            countdown_ms: config.countdown_s.saturating_mul(1000),
            save_every_ms: SAVE_EVERY_MS,
            persist: true,
        }
    }

    /// Whether any configured host asks for auto-release, or to act on a job that stopped
    /// learning (the same countdown).
    pub fn wants_auto_release(&self) -> bool {
        self.hosts
            .iter()
            .any(|host| host.auto_release || host.on_plateau.acts())
    }

    pub(crate) fn host(&self, name: &str) -> Option<&HostMoneyConfig> {
        self.hosts.iter().find(|host| host.name == name)
    }
}

/// One watched host's money.
#[derive(Debug, Clone, PartialEq)]
pub struct HostMoney {
    pub config: HostMoneyConfig,
    /// Listed in the config: its ledger is stored and it may be released.
    pub configured: bool,
    pub limits: HostLimits,
    pub ledger: Ledger,
    /// Armed for hosts with `auto_release = true` or an `on_plateau` that acts.
    pub auto: Option<AutoRelease>,
    /// What the countdown is for when a job stopped learning and `on_plateau` acts on it (set
    /// on each tick); `None` counts down to a release for a red line.
    pub plateau: Option<PlateauAct>,
    /// The job a `stop-job` was fired for: the countdown re-arms once that job is gone.
    stopped_pid: Option<u32>,
    /// What the countdown said at the last tick (for the banner).
    pub auto_decision: AutoDecision,
    /// No longer watched (gone from a reloaded or rejoined config, or restarted under a new
    /// id): it costs nothing more and its ledger is not stored from this slot.
    pub retired: bool,
}

/// The fleet's money.
#[derive(Debug, Clone, PartialEq)]
pub struct Money {
    /// Aligned with `Model::hosts`.
    pub hosts: Vec<HostMoney>,
    /// Every host's cost as of the last tick, hosts in model order.
    pub fleet: FleetCost,
    pub red_lines: Vec<RedLine>,
    /// The jobs over their own run limit, as of the last tick (kept in `red_lines` by every
    /// recompute).
    pub job_lines: Vec<RedLine>,
    /// Why the last save failed, until one succeeds.
    pub save_error: Option<String>,
    next_release_id: u64,
    last_save_ms: TimestampMs,
}

impl HostMoney {
    /// A fresh ledger for `name`, priced and limited as `options` configure it.
    pub fn new(name: &str, options: &MoneyOptions) -> Self {
        let configured = options.host(name);
        let config = configured.cloned().unwrap_or_else(|| HostMoneyConfig {
            name: name.to_string(),
            ..HostMoneyConfig::default()
        });
        let mut host = Self {
            limits: config.limits.unwrap_or(options.default_limits),
            ledger: Ledger::new(options.settings, config.billing_started_ms),
            auto: (configured.is_some() && (config.auto_release || config.on_plateau.acts())).then(
                || AutoRelease::new(config.countdown_ms.unwrap_or(options.countdown_ms), false),
            ),
            auto_decision: AutoDecision::Nothing,
            plateau: None,
            stopped_pid: None,
            configured: configured.is_some(),
            config,
            retired: false,
        };
        host.ledger
            .reprice(host.price_per_hour(), host.config.price_since_ms);
        host.close_if_gone();
        host
    }

    fn price_per_hour(&self) -> Option<f64> {
        self.config.price.as_ref().map(|p| p.price_per_hour)
    }

    /// Continues `stored` as this host's ledger, billed from now on at its price (the price
    /// before stays on the time billed under it), closed if its instance is gone.
    fn continue_ledger(&mut self, settings: LedgerSettings, stored: Option<LedgerState>) {
        self.ledger = Ledger::resume(settings, stored, self.config.billing_started_ms);
        self.ledger
            .reprice(self.price_per_hour(), self.config.price_since_ms);
        self.close_if_gone();
    }

    /// Closes the ledger at the time the instance disappeared from its account, if it did.
    fn close_if_gone(&mut self) {
        if let Some(at_ms) = self.config.gone_ms {
            let provider = self
                .config
                .release
                .as_ref()
                .map_or("", |r| r.provider.as_str());
            self.ledger.close(at_ms, "gone", provider);
        }
    }
}

impl Money {
    pub fn new(names: &[String], options: &MoneyOptions, now_ms: TimestampMs) -> Self {
        let hosts = names
            .iter()
            .map(|name| HostMoney::new(name, options))
            .collect();
        let mut money = Self {
            hosts,
            fleet: FleetCost::from_hosts(Vec::new()),
            red_lines: Vec::new(),
            job_lines: Vec::new(),
            save_error: None,
            next_release_id: 1,
            last_save_ms: now_ms,
        };
        money.recompute(now_ms, &options.fleet_limits);
        money
    }

    /// Adds a host watched from now on (a config reloaded or the provider inventory joined
    /// again). A host of that name restarted (retired just before: reached, priced or released
    /// differently) continues its ledger, at its new price from now on; any other starts fresh,
    /// and [`Money::resume`] continues it from the stored book.
    pub fn add_host(&mut self, name: &str, options: &MoneyOptions) {
        let mut host = HostMoney::new(name, options);
        if let Some(old) = self
            .hosts
            .iter()
            .rev()
            .find(|h| h.retired && h.config.name == name)
        {
            host.continue_ledger(options.settings, Some(old.ledger.state().clone()));
        }
        self.hosts.push(host);
    }

    /// Stops counting `host` (no longer watched).
    pub fn retire(&mut self, host: HostId) {
        if let Some(money) = self.hosts.get_mut(host) {
            money.retired = true;
            money.auto = None;
        }
    }

    /// Continues the configured hosts' ledgers from the stored book (at start).
    pub fn resume(&mut self, book: &LedgerBook, options: &MoneyOptions, now_ms: TimestampMs) {
        for host in self.hosts.iter_mut().filter(|h| h.configured && !h.retired) {
            host.continue_ledger(options.settings, book.hosts.get(&host.config.name).cloned());
        }
        self.recompute(now_ms, &options.fleet_limits);
    }

    /// The stored ledgers of the configured hosts.
    pub fn book(&self) -> LedgerBook {
        let mut book = LedgerBook::default();
        for host in self.hosts.iter().filter(|h| h.configured && !h.retired) {
            book.hosts
                .insert(host.config.name.clone(), host.ledger.state().clone());
        }
        book
    }

    /// After a save: a host another gpufleet released meanwhile (the merged book says released,
    /// this ledger does not) takes the stored, closed ledger.
    pub fn adopt_saved(&mut self, saved: &LedgerBook, options: &MoneyOptions, now_ms: TimestampMs) {
        for host in self.hosts.iter_mut().filter(|h| h.configured && !h.retired) {
            let Some(stored) = saved.hosts.get(&host.config.name) else {
                continue;
            };
            if stored.released.is_some() && !host.ledger.is_released() {
                host.continue_ledger(options.settings, Some(stored.clone()));
            }
        }
        self.save_error = None;
        self.recompute(now_ms, &options.fleet_limits);
    }

    /// Whether the ledger of `host` was closed by a release.
    pub fn is_released(&self, host: HostId) -> bool {
        self.hosts.get(host).is_some_and(|h| h.ledger.is_released())
    }

    /// The cost of `host` as of the last tick.
    pub fn cost(&self, host: HostId) -> Option<&HostCost> {
        self.fleet.hosts.get(host)
    }

    /// A fresh id for a release run.
    pub fn next_release_id(&mut self) -> u64 {
        let id = self.next_release_id;
        self.next_release_id += 1;
        id
    }

    /// Whether an auto-release countdown is running (any key cancels it).
    pub fn counting_down(&self) -> bool {
        self.hosts.iter().any(|h| {
            h.auto
                .is_some_and(|a| matches!(a.state(), AutoState::CountingDown { .. }))
        })
    }

    /// `gpufleet hold HOST`: cancels that host's countdown. Returns whether one was running.
    pub fn hold(&mut self, name: &str) -> bool {
        self.cancel_where(|host| host.config.name == name)
    }

    /// Stops every countdown for good (another process does the auto-releasing).
    pub fn disarm_auto_release(&mut self) {
        for host in &mut self.hosts {
            host.auto = None;
            host.auto_decision = AutoDecision::Nothing;
        }
    }

    /// Arms auto-release again on the hosts configured for it (this process took the duty
    /// over from another that held it); a host armed already keeps its countdown.
    pub fn arm_auto_release(&mut self, options: &MoneyOptions) {
        for host in self.hosts.iter_mut().filter(|h| h.auto.is_none()) {
            let fresh = HostMoney::new(&host.config.name, options);
            host.auto = fresh.auto;
        }
    }

    /// Whether any host has auto-release armed.
    pub fn auto_release_armed(&self) -> bool {
        self.hosts.iter().any(|h| h.auto.is_some())
    }

    /// Any key: cancels every running countdown. Returns whether one was running.
    pub fn cancel_countdowns(&mut self) -> bool {
        self.cancel_where(|_| true)
    }

    /// Cancels the running countdowns of the hosts `which` picks, as a key does.
    fn cancel_where(&mut self, which: impl Fn(&HostMoney) -> bool) -> bool {
        let mut cancelled = false;
        for host in self.hosts.iter_mut().filter(|h| which(h)) {
            if let Some(auto) = &mut host.auto
                && auto.key_pressed()
            {
                host.auto_decision = AutoDecision::Nothing;
                cancelled = true;
            }
        }
        cancelled
    }

    /// Whether the save timer ran out; restarts it.
    pub fn save_due(&mut self, now_ms: TimestampMs, every_ms: u64) -> bool {
        if now_ms.saturating_sub(self.last_save_ms) >= every_ms {
            self.last_save_ms = now_ms;
            true
        } else {
            false
        }
    }

    /// Recomputes every host's cost and the red lines as of `now_ms`.
    pub fn recompute(&mut self, now_ms: TimestampMs, fleet_limits: &FleetLimits) {
        let hosts: Vec<HostCost> = self
            .hosts
            .iter()
            .map(|host| HostCost {
                host: host.config.name.clone(),
                // A retired slot costs nothing: the host's money is on its current slot.
                price: host.config.price.clone().filter(|_| !host.retired),
                totals: if host.retired {
                    crate::cost::LedgerTotals::default()
                } else {
                    host.ledger.totals(now_ms)
                },
            })
            .collect();
        let mut lines: Vec<RedLine> = hosts
            .iter()
            .zip(&self.hosts)
            .flat_map(|(cost, host)| host_red_lines(cost, &host.limits))
            .collect();
        self.fleet = FleetCost::from_hosts(hosts);
        lines.extend(self.job_lines.iter().cloned());
        lines.extend(fleet_red_lines(&self.fleet, fleet_limits));
        self.red_lines = lines;
    }
}

/// Folds the latest readings of every live host into its ledger, as of when they were read (a
/// reading describes the time up to it, so the tick adds nothing a reading did not see). A host
/// that is not live (stale, unreachable, lost) is not observed: its billing runs on as
/// unobserved time.
pub fn observe(money: &mut Money, hosts: &[HostState], now_ms: TimestampMs, interval_ms: u64) {
    for (host, state) in money.hosts.iter_mut().zip(hosts) {
        let Some(read_ms) = state.last_sample_ms else {
            continue;
        };
        if state.gpus.is_empty() || state.status(now_ms, interval_ms) != HostStatus::Live {
            continue;
        }
        let gpus: Vec<GpuObservation> = state
            .gpus
            .iter()
            .map(|gpu| GpuObservation::from(&gpu.latest))
            .collect();
        host.ledger.observe(read_ms.min(now_ms), &gpus);
    }
}

/// Advances every armed countdown; returns the hosts whose countdown ran out now, with the act
/// on a job that stopped learning when that is what it counted down to (else a release for a
/// red line). A host whose process list is not known yet counts as running a process of the
/// user's: a release never fires on a guess. `stop-job` acts on the job's own process, so the
/// processes on the GPUs do not hold it; a release on a plateau is held by any process but that
/// job's.
pub fn tick_countdowns(
    money: &mut Money,
    hosts: &[HostState],
    now_ms: TimestampMs,
) -> Vec<(HostId, Option<PlateauAct>)> {
    let mut fired = Vec::new();
    for (id, (host, state)) in money.hosts.iter_mut().zip(hosts).enumerate() {
        let act = PlateauAct::of(state, host.config.on_plateau, host.config.stop_grace_s);
        let Some(auto) = &mut host.auto else {
            continue;
        };
        // The job stopped earlier is gone: a later run that stops learning is acted on again.
        if let Some(pid) = host.stopped_pid
            && act.map(|a| a.stop.pid()) != Some(pid)
        {
            auto.rearm();
            host.stopped_pid = None;
        }
        host.plateau = act;
        let unknown = state.processes_at_ms.is_none();
        let user_processes = match act {
            Some(a) if a.action == OnPlateau::StopJob => false,
            Some(a) => unknown || state.processes.iter().any(|p| p.pid != a.stop.pid()),
            None => unknown || !state.processes.is_empty(),
        };
        let red_line =
            host.config.auto_release && auto_release_triggered(&money.red_lines, &host.config.name);
        let decision = auto.tick(AutoInput {
            now_ms,
            triggered: act.is_some() || red_line,
            user_processes,
            job_running: state.jobs.holds_host(),
        });
        if decision == AutoDecision::Fire {
            if let Some(a) = act.filter(|a| a.action == OnPlateau::StopJob) {
                host.stopped_pid = Some(a.stop.pid());
            }
            fired.push((id, act));
        }
        host.auto_decision = decision;
    }
    fired
}
