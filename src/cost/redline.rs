//! Red lines: a host idle for too long, a budget, an hour limit or a run-time limit crossed. Each becomes a
//! warning banner; host red lines can also arm a host's auto-release.

use rust_i18n::t;

use crate::config::{Config, HostConfig};

use super::fleet::{FleetCost, HostCost};
use super::{format_duration_ms, format_money, hours};

/// Limits of one host. The config has no per-host budget keys yet, so only the idle limit comes
/// from it; the others are there for whoever sets them (a provider's inventory, a later key).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HostLimits {
    pub max_spend: Option<f64>,
    pub max_hours: Option<f64>,
    /// How long the host may bill without a break (`max_run_hours`), like a `timeout` on the job.
    pub max_run_hours: Option<f64>,
    /// How long the GPUs may stay idle before it is a red line.
    pub idle_alert_ms: u64,
}

impl HostLimits {
    pub fn from_config(config: &Config, host: &HostConfig) -> Self {
        Self {
            max_spend: host.max_spend,
            max_hours: host.max_hours,
            max_run_hours: host.max_run_hours,
            idle_alert_ms: config.idle_minutes.saturating_mul(60_000),
        }
    }
}

/// The fleet's `[budget]`. A fleet paid in two currencies has each checked on its own against
/// `max_spend`, since the two cannot be added; `max_hours` bounds billed host-hours.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FleetLimits {
    pub max_spend: Option<f64>,
    pub max_hours: Option<f64>,
}

impl FleetLimits {
    pub fn from_config(config: &Config) -> Self {
        config
            .budget
            .as_ref()
            .map_or_else(Self::default, |budget| Self {
                max_spend: budget.max_spend,
                max_hours: budget.max_hours,
            })
    }
}

/// One crossed red line.
#[derive(Debug, Clone, PartialEq)]
pub enum RedLine {
    HostIdle {
        host: String,
        idle_ms: u64,
        limit_ms: u64,
    },
    HostOverBudget {
        host: String,
        spent: f64,
        max_spend: f64,
        currency: String,
    },
    HostOverHours {
        host: String,
        billed_ms: u64,
        max_hours: f64,
    },
    /// Billing without a break for longer than `max_run_hours`.
    HostOverRunTime {
        host: String,
        run_ms: u64,
        max_run_hours: f64,
    },
    /// A job's process has run longer than its `[[hosts.jobs]] max_run_hours`.
    JobOverRunTime {
        host: String,
        pid: u32,
        run_ms: u64,
        max_run_hours: f64,
    },
    FleetOverBudget {
        currency: String,
        spent: f64,
        max_spend: f64,
    },
    FleetOverHours {
        billed_ms: u64,
        max_hours: f64,
    },
}

impl RedLine {
    /// The host it is about; `None` for the fleet's.
    pub fn host(&self) -> Option<&str> {
        match self {
            Self::HostIdle { host, .. }
            | Self::HostOverBudget { host, .. }
            | Self::HostOverHours { host, .. }
            | Self::HostOverRunTime { host, .. }
            | Self::JobOverRunTime { host, .. } => Some(host),
            Self::FleetOverBudget { .. } | Self::FleetOverHours { .. } => None,
        }
    }

    /// The machine word used in JSON.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::HostIdle { .. } => "host_idle",
            Self::HostOverBudget { .. } => "host_budget",
            Self::HostOverHours { .. } => "host_hours",
            Self::HostOverRunTime { .. } => "host_run_time",
            Self::JobOverRunTime { .. } => "job_run_time",
            Self::FleetOverBudget { .. } => "fleet_budget",
            Self::FleetOverHours { .. } => "fleet_hours",
        }
    }

    /// The text of a crossed red line, in the interface's language: the banner's, the
    /// alert's, `gpufleet cost`'s. Figures are written as in English in every language.
    pub fn message(&self) -> String {
        let hours = |ms: u64| format!("{:.1}", hours(ms));
        let text = match self {
            Self::HostIdle {
                host,
                idle_ms,
                limit_ms,
            } => t!(
                "redline.host_idle",
                host = host,
                idle = format_duration_ms(*idle_ms),
                limit = format_duration_ms(*limit_ms)
            ),
            Self::HostOverBudget {
                host,
                spent,
                max_spend,
                currency,
            } => t!(
                "redline.host_budget",
                host = host,
                spent = format_money(*spent, currency),
                max = format_money(*max_spend, currency)
            ),
            Self::HostOverHours {
                host,
                billed_ms,
                max_hours,
            } => t!(
                "redline.host_hours",
                host = host,
                hours = hours(*billed_ms),
                max = max_hours
            ),
            Self::HostOverRunTime {
                host,
                run_ms,
                max_run_hours,
            } => t!(
                "redline.run_time.host",
                host = host,
                run = format_duration_ms(*run_ms),
                max = max_run_hours
            ),
            Self::JobOverRunTime {
                host,
                pid,
                run_ms,
                max_run_hours,
            } => t!(
                "job_action.redline_run_time",
                host = host,
                pid = pid,
                run = format_duration_ms(*run_ms),
                max = max_run_hours
            ),
            Self::FleetOverBudget {
                currency,
                spent,
                max_spend,
            } => t!(
                "redline.fleet_budget",
                spent = format_money(*spent, currency),
                max = format_money(*max_spend, currency)
            ),
            Self::FleetOverHours {
                billed_ms,
                max_hours,
            } => t!(
                "redline.fleet_hours",
                hours = hours(*billed_ms),
                max = max_hours
            ),
        };
        text.into_owned()
    }
}

/// The red lines one host crossed. A released host crosses none: it no longer bills.
pub fn host_red_lines(cost: &HostCost, limits: &HostLimits) -> Vec<RedLine> {
    let mut lines = Vec::new();
    if cost.totals.released.is_some() {
        return lines;
    }
    let idle_ms = cost.totals.current_idle_ms;
    if limits.idle_alert_ms > 0 && idle_ms >= limits.idle_alert_ms {
        lines.push(RedLine::HostIdle {
            host: cost.host.clone(),
            idle_ms,
            limit_ms: limits.idle_alert_ms,
        });
    }
    if let (Some(max_spend), Some(spent), Some(currency)) =
        (limits.max_spend, cost.spent(), cost.currency())
        && spent >= max_spend
    {
        lines.push(RedLine::HostOverBudget {
            host: cost.host.clone(),
            spent,
            max_spend,
            currency: currency.to_string(),
        });
    }
    if let Some(max_hours) = limits.max_hours
        && hours(cost.totals.billed_ms) >= max_hours
    {
        lines.push(RedLine::HostOverHours {
            host: cost.host.clone(),
            billed_ms: cost.totals.billed_ms,
            max_hours,
        });
    }
    if let Some(max_run_hours) = limits.max_run_hours
        && hours(cost.totals.run_ms) >= max_run_hours
    {
        lines.push(RedLine::HostOverRunTime {
            host: cost.host.clone(),
            run_ms: cost.totals.run_ms,
            max_run_hours,
        });
    }
    lines
}

/// The fleet's own red lines (money spent on released hosts still counts against the budget).
pub fn fleet_red_lines(fleet: &FleetCost, limits: &FleetLimits) -> Vec<RedLine> {
    let mut lines = Vec::new();
    if let Some(max_spend) = limits.max_spend {
        for total in fleet.by_currency.iter().filter(|t| t.spent >= max_spend) {
            lines.push(RedLine::FleetOverBudget {
                currency: total.currency.clone(),
                spent: total.spent,
                max_spend,
            });
        }
    }
    if let Some(max_hours) = limits.max_hours
        && hours(fleet.billed_ms) >= max_hours
    {
        lines.push(RedLine::FleetOverHours {
            billed_ms: fleet.billed_ms,
            max_hours,
        });
    }
    lines
}

/// Every red line of the configured hosts and the fleet, hosts in config order first.
pub fn red_lines(config: &Config, fleet: &FleetCost) -> Vec<RedLine> {
    let mut lines: Vec<RedLine> = config
        .hosts
        .iter()
        .filter_map(|host| {
            let cost = fleet.host(&host.name)?;
            Some(host_red_lines(cost, &HostLimits::from_config(config, host)))
        })
        .flatten()
        .collect();
    lines.extend(fleet_red_lines(fleet, &FleetLimits::from_config(config)));
    lines
}

/// Whether `lines` hold a red line of `host` itself, the condition that arms its auto-release
/// countdown (fleet red lines name no host to release).
pub fn auto_release_triggered(lines: &[RedLine], host: &str) -> bool {
    lines.iter().any(|line| line.host() == Some(host))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The English texts are what they were before the catalogue held them, figure for figure.
    #[test]
    fn english_red_line_texts_are_unchanged() {
        let host = "a100-1".to_string();
        let cases = [
            (
                RedLine::HostIdle {
                    host: host.clone(),
                    idle_ms: 1_800_000,
                    limit_ms: 1_200_000,
                },
                format!(
                    "a100-1: GPUs idle for {} (red line {})",
                    format_duration_ms(1_800_000),
                    format_duration_ms(1_200_000)
                ),
            ),
            (
                RedLine::HostOverBudget {
                    host: host.clone(),
                    spent: 101.5,
                    max_spend: 100.0,
                    currency: "CNY".into(),
                },
                "a100-1: spent 101.50 CNY, over its budget of 100.00 CNY".to_string(),
            ),
            (
                RedLine::HostOverHours {
                    host,
                    billed_ms: 37_000_000,
                    max_hours: 10.0,
                },
                "a100-1: billed 10.3 h, over its limit of 10 h".to_string(),
            ),
            (
                RedLine::FleetOverBudget {
                    currency: "USD".into(),
                    spent: 12.0,
                    max_spend: 10.0,
                },
                "fleet: spent 12.00 USD, over the budget of 10.00 USD".to_string(),
            ),
            (
                RedLine::FleetOverHours {
                    billed_ms: 90_000_000,
                    max_hours: 24.5,
                },
                "fleet: 25.0 billed host-hours, over the limit of 24.5 h".to_string(),
            ),
        ];
        for (line, english) in cases {
            assert_eq!(line.message(), english);
        }
    }

    /// A host billing without a break past `max_run_hours` crosses the red line; a release
    /// clears it, and a host started again counts its run afresh.
    #[test]
    fn a_run_longer_than_max_run_hours_is_a_red_line() {
        use crate::cost::{GpuObservation, Ledger, LedgerSettings, REOPEN_AFTER_MS};
        const HOUR: u64 = 3_600_000;
        let start = 1_795_939_200_000;
        let limits = HostLimits {
            max_spend: None,
            max_hours: None,
            max_run_hours: Some(12.0),
            idle_alert_ms: 0,
        };
        let busy = [GpuObservation {
            utilization_gpu_pct: Some(95.0),
            memory_used_mib: Some(60_000),
        }];
        let mut ledger = Ledger::new(LedgerSettings::default(), Some(start));
        let judge = |ledger: &Ledger, at: u64| {
            let cost = HostCost {
                host: "a100-1".into(),
                price: None,
                totals: ledger.totals(at),
            };
            host_red_lines(&cost, &limits)
        };
        assert!(judge(&ledger, start + 11 * HOUR).is_empty());
        let over = judge(&ledger, start + 13 * HOUR);
        assert_eq!(
            over,
            vec![RedLine::HostOverRunTime {
                host: "a100-1".into(),
                run_ms: 13 * HOUR,
                max_run_hours: 12.0,
            }]
        );
        assert_eq!(over[0].kind(), "host_run_time");
        assert_eq!(
            over[0].message(),
            "a100-1: billed without a break for 13h00m, over its run limit of 12 h"
        );
        ledger.close(start + 13 * HOUR, "stop", "ssh");
        assert!(judge(&ledger, start + 14 * HOUR).is_empty());
        let again = start + 13 * HOUR + REOPEN_AFTER_MS;
        ledger.observe(again, &busy);
        assert!(judge(&ledger, again + 11 * HOUR).is_empty());
        assert_eq!(judge(&ledger, again + 12 * HOUR).len(), 1);
        // Twelve hours billed in this run, 25 in all: `max_hours` would count both runs.
        assert_eq!(ledger.totals(again + 12 * HOUR).run_ms, 12 * HOUR);
    }

    /// A ledger stored before run starts were recorded (no `running_since_ms`, as older
    /// versions wrote it) counts its run from billing start.
    #[test]
    fn an_older_ledger_counts_its_run_from_billing_start() {
        use crate::cost::{Ledger, LedgerSettings, LedgerState};
        let start = 1_795_939_200_000;
        let mut state = Ledger::new(LedgerSettings::default(), Some(start)).into_state();
        state.running_since_ms = None;
        let text = serde_json::to_string(&state).unwrap();
        assert!(!text.contains("running_since"), "{text}");
        let stored: LedgerState = serde_json::from_str(&text).unwrap();
        let ledger = Ledger::resume(LedgerSettings::default(), Some(stored), None);
        assert_eq!(ledger.totals(start + 5 * 3_600_000).run_ms, 5 * 3_600_000);
    }
}
