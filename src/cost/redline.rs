//! Red lines: a host idle for too long, a budget or an hour limit crossed. Each becomes a
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
    /// How long the GPUs may stay idle before it is a red line.
    pub idle_alert_ms: u64,
}

impl HostLimits {
    pub fn from_config(config: &Config, host: &HostConfig) -> Self {
        Self {
            max_spend: host.max_spend,
            max_hours: host.max_hours,
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
            | Self::HostOverHours { host, .. } => Some(host),
            Self::FleetOverBudget { .. } | Self::FleetOverHours { .. } => None,
        }
    }

    /// The machine word used in JSON.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::HostIdle { .. } => "host_idle",
            Self::HostOverBudget { .. } => "host_budget",
            Self::HostOverHours { .. } => "host_hours",
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
}
