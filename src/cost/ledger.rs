//! One host's ledger: billed, busy, idle, parked and unobserved milliseconds, accumulated from
//! GPU observations under an explicit clock. No I/O and no clock reads, so it replays exactly.

use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::telemetry::{GpuSample, TimestampMs};

/// Memory use above which an idle GPU counts as parked. The driver and an idle CUDA context
/// alone take a few hundred MiB, so only more than that means a process is holding VRAM.
pub const PARKED_FLOOR_MIB: u64 = 1024;

/// The SSH link declares a host dead after 15 s of silence; a shorter quiet spell is a slow
/// stream, not an absent host, so it is still accounted from the readings around it.
const MIN_GAP_MS: u64 = 15_000;
const GAP_INTERVALS: u64 = 5;

/// Readings this long after a release mean the host runs (and bills) again: a stopped instance
/// was started, or the name was rented anew. Shorter, they are the host winding down.
pub const REOPEN_AFTER_MS: u64 = 10 * 60_000;

/// What one GPU said at one moment, reduced to what the ledger needs.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct GpuObservation {
    pub utilization_gpu_pct: Option<f64>,
    pub memory_used_mib: Option<u64>,
}

impl From<&GpuSample> for GpuObservation {
    fn from(sample: &GpuSample) -> Self {
        Self {
            utilization_gpu_pct: sample.utilization_gpu_pct,
            memory_used_mib: sample.memory_used_mib,
        }
    }
}

/// The thresholds a ledger classifies with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LedgerSettings {
    pub busy_util_pct: f64,
    pub idle_util_pct: f64,
    /// How long a host must stay idle before the stretch counts as idle time.
    pub idle_after_ms: u64,
    pub parked_floor_mib: u64,
    /// A longer time between two observations is unobserved (the host was unreachable).
    pub gap_ms: u64,
}

impl Default for LedgerSettings {
    fn default() -> Self {
        Self::from_config(&Config::default())
    }
}

impl LedgerSettings {
    pub fn from_config(config: &Config) -> Self {
        Self {
            busy_util_pct: config.busy_util_pct,
            idle_util_pct: config.idle_util_pct,
            idle_after_ms: config.idle_minutes.saturating_mul(60_000),
            parked_floor_mib: PARKED_FLOOR_MIB,
            gap_ms: config
                .interval_ms
                .saturating_mul(GAP_INTERVALS)
                .max(MIN_GAP_MS),
        }
    }
}

/// The idle stretch in progress.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdleRun {
    pub length_ms: u64,
    pub parked_ms: u64,
    /// Whether the stretch reached `idle_after_ms` and is already in the totals.
    pub counted: bool,
}

/// How a host was released, once it was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Released {
    pub at_ms: TimestampMs,
    /// `stop`, `terminate`, or the provider word for what was done.
    pub action: String,
    pub provider: String,
}

/// What was billed while an earlier price was in force: the counters' share up to the time
/// the price changed, priced at that price.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PriceSpan {
    pub price_per_hour: f64,
    /// When the next price took over (the ledger's last accounted instant then).
    pub until_ms: TimestampMs,
    /// Billed time at this price.
    pub billed_ms: u64,
    /// Idle time (parked included) at this price.
    pub idle_ms: u64,
}

/// The stored part of a ledger: plain counters, so the file stays readable and mergeable.
/// Files written before prices were recorded (no `price_per_hour`, no `earlier_prices`) read
/// as ledgers billed at one price throughout.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LedgerState {
    /// When billing started: the config's `billing_started`, else the first observation.
    pub billing_started_ms: Option<TimestampMs>,
    /// Everything up to this instant is in the counters.
    pub accounted_to_ms: Option<TimestampMs>,
    pub billed_ms: u64,
    pub busy_ms: u64,
    pub idle_ms: u64,
    pub parked_ms: u64,
    pub unobserved_ms: u64,
    pub idle_run: Option<IdleRun>,
    pub released: Option<Released>,
    /// The price the counters since the last [`PriceSpan`] are billed at, as last set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub price_per_hour: Option<f64>,
    /// The shares billed at earlier prices, oldest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub earlier_prices: Vec<PriceSpan>,
    /// When the host last began billing without a break: billing started, or the ledger
    /// reopened after a release. Files written before it was recorded read as
    /// `billing_started_ms`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub running_since_ms: Option<TimestampMs>,
}

/// A ledger's counters as of some instant, with the time since the last observation added as
/// unobserved billing (the host keeps billing while nobody watches).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LedgerTotals {
    pub billed_ms: u64,
    pub busy_ms: u64,
    pub idle_ms: u64,
    pub parked_ms: u64,
    pub unobserved_ms: u64,
    /// The idle stretch in progress, counted or not yet (0 when the host is not idle).
    pub current_idle_ms: u64,
    pub released: Option<Released>,
    /// The shares billed at earlier prices (the rest is at the current price).
    pub earlier_prices: Vec<PriceSpan>,
    /// When billing started (see [`LedgerState::billing_started_ms`]).
    pub billing_started_ms: Option<TimestampMs>,
    /// How long the host has billed without a break, up to now (0 once released).
    pub run_ms: u64,
}

impl LedgerTotals {
    /// Busy hours over billed hours; `None` before anything was billed.
    pub fn effective_utilization(&self) -> Option<f64> {
        (self.billed_ms > 0).then(|| self.busy_ms as f64 / self.billed_ms as f64)
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Activity {
    Busy,
    Idle { parked: bool },
    Between,
    Unknown,
}

/// A host's ledger: settings plus stored state.
#[derive(Debug, Clone, PartialEq)]
pub struct Ledger {
    settings: LedgerSettings,
    state: LedgerState,
}

impl Ledger {
    /// A fresh ledger; with `billing_started_ms` the time before the first observation is billed.
    pub fn new(settings: LedgerSettings, billing_started_ms: Option<TimestampMs>) -> Self {
        Self {
            settings,
            state: LedgerState {
                billing_started_ms,
                accounted_to_ms: billing_started_ms,
                running_since_ms: billing_started_ms,
                ..LedgerState::default()
            },
        }
    }

    /// Continues a stored ledger. A host released before `billing_started_ms` was rented again
    /// and starts afresh; a start moved earlier in the config is billed as unobserved time; a
    /// start moved later means the stored counters describe another rental, so they are dropped.
    pub fn resume(
        settings: LedgerSettings,
        stored: Option<LedgerState>,
        billing_started_ms: Option<TimestampMs>,
    ) -> Self {
        // A ledger never observed has nothing to continue, unless it records a release (one
        // made by `gpufleet release` before any console watched the host): that is kept.
        let Some(mut state) =
            stored.filter(|state| state.billing_started_ms.is_some() || state.released.is_some())
        else {
            return Self::new(settings, billing_started_ms);
        };
        if let (Some(released), Some(start)) = (&state.released, billing_started_ms)
            && start > released.at_ms
        {
            return Self::new(settings, billing_started_ms);
        }
        match (state.billing_started_ms, billing_started_ms) {
            (Some(old), Some(new)) if new < old && state.released.is_none() => {
                state.billed_ms += old - new;
                state.unobserved_ms += old - new;
                state.billing_started_ms = Some(new);
                if state.running_since_ms.is_none_or(|since| since == old) {
                    state.running_since_ms = Some(new);
                }
            }
            (Some(old), Some(new)) if new > old => return Self::new(settings, Some(new)),
            _ => {}
        }
        Self { settings, state }
    }

    pub fn settings(&self) -> &LedgerSettings {
        &self.settings
    }

    pub fn state(&self) -> &LedgerState {
        &self.state
    }

    pub fn into_state(self) -> LedgerState {
        self.state
    }

    pub fn is_released(&self) -> bool {
        self.state.released.is_some()
    }

    /// Folds in the host's GPUs as read at `at_ms` (one observation per sample interval, every
    /// GPU of the host). Utilization is averaged over the period before the reading, so the
    /// reading describes the time since the previous observation. Observations at or before the
    /// last one or before billing started change nothing; after a release, only a reading
    /// [`REOPEN_AFTER_MS`] later does, reopening the ledger (the time in between is not billed).
    pub fn observe(&mut self, at_ms: TimestampMs, gpus: &[GpuObservation]) {
        if let Some(released) = &self.state.released {
            if at_ms >= released.at_ms.saturating_add(REOPEN_AFTER_MS) {
                self.state.released = None;
                self.state.accounted_to_ms = Some(at_ms);
                self.state.billing_started_ms.get_or_insert(at_ms);
                self.state.running_since_ms = Some(at_ms);
            }
            return;
        }
        let Some(last_ms) = self.state.accounted_to_ms else {
            self.state.billing_started_ms = Some(at_ms);
            self.state.accounted_to_ms = Some(at_ms);
            self.state.running_since_ms = Some(at_ms);
            return;
        };
        if at_ms <= last_ms {
            return;
        }
        let elapsed_ms = at_ms - last_ms;
        self.state.accounted_to_ms = Some(at_ms);
        self.state.billed_ms += elapsed_ms;
        let activity = if elapsed_ms > self.settings.gap_ms {
            Activity::Unknown
        } else {
            self.classify(gpus)
        };
        self.account(activity, elapsed_ms);
    }

    /// Bills from `since_ms` (when the provider's price changed, as its inventory says; else
    /// the last accounted instant) at `price_per_hour`: when it differs from the price the
    /// ledger bills at, what was billed before stays at the old price (a [`PriceSpan`]; the
    /// unwatched time up to `since_ms` is billed as unobserved first). A ledger that never had a
    /// price (a fresh one, or one stored before prices were recorded) takes this one for all
    /// its time.
    pub fn reprice(&mut self, price_per_hour: Option<f64>, since_ms: Option<TimestampMs>) {
        let state = &mut self.state;
        if state.price_per_hour == price_per_hour {
            return;
        }
        if let (Some(_), Some(at_ms), Some(last_ms), None) = (
            state.price_per_hour,
            since_ms,
            state.accounted_to_ms,
            &state.released,
        ) && at_ms > last_ms
        {
            state.billed_ms += at_ms - last_ms;
            state.unobserved_ms += at_ms - last_ms;
            state.accounted_to_ms = Some(at_ms);
            state.idle_run = None;
        }
        let earlier_billed: u64 = state.earlier_prices.iter().map(|p| p.billed_ms).sum();
        let earlier_idle: u64 = state.earlier_prices.iter().map(|p| p.idle_ms).sum();
        if let (Some(old), Some(until_ms)) = (state.price_per_hour, state.accounted_to_ms)
            && state.billed_ms > earlier_billed
        {
            state.earlier_prices.push(PriceSpan {
                price_per_hour: old,
                until_ms,
                billed_ms: state.billed_ms - earlier_billed,
                idle_ms: state.idle_ms.saturating_sub(earlier_idle),
            });
        }
        state.price_per_hour = price_per_hour;
    }

    /// Closes the ledger at `at_ms`: time since the last observation is billed as unobserved and
    /// nothing more is added afterwards.
    pub fn close(&mut self, at_ms: TimestampMs, action: &str, provider: &str) {
        if self.state.released.is_some() {
            return;
        }
        if let Some(last_ms) = self.state.accounted_to_ms
            && at_ms > last_ms
        {
            self.state.billed_ms += at_ms - last_ms;
            self.state.unobserved_ms += at_ms - last_ms;
            self.state.accounted_to_ms = Some(at_ms);
        }
        self.state.idle_run = None;
        self.state.released = Some(Released {
            at_ms,
            action: action.to_string(),
            provider: provider.to_string(),
        });
    }

    /// The current idle stretch, counted or not yet.
    pub fn current_idle_ms(&self) -> u64 {
        self.state.idle_run.map_or(0, |run| run.length_ms)
    }

    /// The counters as of `now_ms`.
    pub fn totals(&self, now_ms: TimestampMs) -> LedgerTotals {
        totals_of(&self.state, now_ms)
    }

    fn classify(&self, gpus: &[GpuObservation]) -> Activity {
        let utilizations: Vec<f64> = gpus
            .iter()
            .filter_map(|gpu| gpu.utilization_gpu_pct)
            .filter(|pct| pct.is_finite())
            .collect();
        if utilizations.is_empty() {
            return Activity::Unknown;
        }
        let mean_pct = utilizations.iter().sum::<f64>() / utilizations.len() as f64;
        if mean_pct >= self.settings.busy_util_pct {
            Activity::Busy
        } else if utilizations
            .iter()
            .all(|pct| *pct < self.settings.idle_util_pct)
        {
            let parked = gpus.iter().any(|gpu| {
                gpu.memory_used_mib
                    .is_some_and(|mib| mib > self.settings.parked_floor_mib)
            });
            Activity::Idle { parked }
        } else {
            Activity::Between
        }
    }

    fn account(&mut self, activity: Activity, elapsed_ms: u64) {
        let state = &mut self.state;
        match activity {
            Activity::Busy => {
                state.busy_ms += elapsed_ms;
                state.idle_run = None;
            }
            Activity::Between => state.idle_run = None,
            Activity::Unknown => {
                state.unobserved_ms += elapsed_ms;
                state.idle_run = None;
            }
            Activity::Idle { parked } => {
                let parked_ms = if parked { elapsed_ms } else { 0 };
                let run = state.idle_run.get_or_insert_with(IdleRun::default);
                run.length_ms += elapsed_ms;
                run.parked_ms += parked_ms;
                if run.counted {
                    state.idle_ms += elapsed_ms;
                    state.parked_ms += parked_ms;
                } else if run.length_ms >= self.settings.idle_after_ms {
                    run.counted = true;
                    state.idle_ms += run.length_ms;
                    state.parked_ms += run.parked_ms;
                }
            }
        }
    }
}

/// The counters of a stored ledger as of `now_ms` (see [`Ledger::totals`]).
pub(crate) fn totals_of(state: &LedgerState, now_ms: TimestampMs) -> LedgerTotals {
    let tail_ms = match (&state.released, state.accounted_to_ms) {
        (None, Some(last_ms)) => now_ms.saturating_sub(last_ms),
        _ => 0,
    };
    LedgerTotals {
        billed_ms: state.billed_ms + tail_ms,
        busy_ms: state.busy_ms,
        idle_ms: state.idle_ms,
        parked_ms: state.parked_ms,
        unobserved_ms: state.unobserved_ms + tail_ms,
        current_idle_ms: state.idle_run.map_or(0, |run| run.length_ms),
        released: state.released.clone(),
        earlier_prices: state.earlier_prices.clone(),
        billing_started_ms: state.billing_started_ms,
        run_ms: match (
            &state.released,
            state.running_since_ms.or(state.billing_started_ms),
        ) {
            (None, Some(since_ms)) => now_ms.saturating_sub(since_ms),
            _ => 0,
        },
    }
}
