//! The per-reading conditions behind thermal, power-brake and power-cap findings, shared by
//! live samples and by readings found in pasted nvidia-smi output.

use crate::telemetry::ClockEventReasons;
use rust_i18n::t;

/// Power draw, or the enforced limit, below this share of its reference counts as "far below".
pub const POWER_CAP_RATIO: f64 = 0.8;

const THERMAL_BITS: u64 =
    ClockEventReasons::SW_THERMAL_SLOWDOWN | ClockEventReasons::HW_THERMAL_SLOWDOWN;

/// Thermal slowdown: a thermal clock-event bit, or the temperature at or above the card's own
/// slowdown point.
pub fn thermal(mask: Option<u64>, temperature_c: Option<f64>, slowdown_c: Option<f64>) -> bool {
    mask.is_some_and(|m| m & THERMAL_BITS != 0)
        || matches!((temperature_c, slowdown_c), (Some(t), Some(s)) if t >= s)
}

pub fn hw_thermal(mask: Option<u64>) -> bool {
    mask.is_some_and(|m| m & ClockEventReasons::HW_THERMAL_SLOWDOWN != 0)
}

pub fn power_brake(mask: Option<u64>) -> bool {
    mask.is_some_and(|m| m & ClockEventReasons::HW_POWER_BRAKE != 0)
}

/// Why an active software power cap is a problem rather than the normal state of a busy GPU.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PowerCap {
    /// Capped although drawing far less than the enforced limit.
    DrawFarBelowLimit { draw_w: f64, limit_w: f64 },
    /// Capped at a limit set far below the card's default (or maximum) limit.
    LimitFarBelowDefault { limit_w: f64, default_w: f64 },
}

impl PowerCap {
    pub fn describe(self) -> String {
        match self {
            PowerCap::DrawFarBelowLimit { draw_w, limit_w } => {
                let (draw, limit) = (format!("{draw_w:.0}"), format!("{limit_w:.0}"));
                t!("live_evidence.cap_draw", draw = draw, limit = limit).into_owned()
            }
            PowerCap::LimitFarBelowDefault { limit_w, default_w } => {
                let limit = format!("{limit_w:.0}");
                let percent = format!("{:.0}", limit_w * 100.0 / default_w);
                let default = format!("{default_w:.0}");
                let text = t!(
                    "live_evidence.cap_limit",
                    limit = limit,
                    percent = percent,
                    default = default
                );
                text.into_owned()
            }
        }
    }
}

/// A software power cap that holds the GPU back for no good reason. A cap at full load with
/// the draw near a limit that is itself near the default is how a busy GPU normally runs, and
/// is not reported.
pub fn power_capped(
    mask: Option<u64>,
    draw_w: Option<f64>,
    limit_w: Option<f64>,
    default_w: Option<f64>,
) -> Option<PowerCap> {
    if mask.is_none_or(|m| m & ClockEventReasons::SW_POWER_CAP == 0) {
        return None;
    }
    let limit_w = limit_w.filter(|l| *l > 0.0)?;
    if let Some(draw_w) = draw_w
        && draw_w < POWER_CAP_RATIO * limit_w
    {
        return Some(PowerCap::DrawFarBelowLimit { draw_w, limit_w });
    }
    match default_w {
        Some(default_w) if default_w > 0.0 && limit_w < POWER_CAP_RATIO * default_w => {
            Some(PowerCap::LimitFarBelowDefault { limit_w, default_w })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAP: Option<u64> = Some(ClockEventReasons::SW_POWER_CAP);

    #[test]
    fn a_cap_at_full_load_is_normal() {
        // The H200 capture under load: 692 W of a 700 W limit that is also the default.
        assert_eq!(
            power_capped(CAP, Some(692.0), Some(700.0), Some(700.0)),
            None
        );
        assert!(power_capped(CAP, Some(300.0), Some(700.0), Some(700.0)).is_some());
        assert!(power_capped(CAP, Some(299.0), Some(300.0), Some(700.0)).is_some());
        assert_eq!(power_capped(Some(0), Some(100.0), Some(700.0), None), None);
    }

    #[test]
    fn thermal_by_bit_or_by_temperature() {
        assert!(thermal(Some(0x20), None, None));
        assert!(thermal(Some(0), Some(90.0), Some(89.0)));
        assert!(!thermal(Some(0x4), Some(60.0), Some(89.0)));
    }
}
