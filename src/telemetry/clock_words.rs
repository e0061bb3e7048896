//! The clock-event reasons in the interface's language (the card's clock line, the check
//! report); unknown words stay as they are.

use rust_i18n::t;

/// The short labels of the active clock event reasons (`power cap`, `thermal slowdown`) in the
/// interface's language; the English are the telemetry's own labels.
pub fn localized(reasons: crate::telemetry::ClockEventReasons) -> Vec<String> {
    reasons
        .words()
        .into_iter()
        .map(|word| {
            let key = match word {
                "gpu_idle" => "clock_words.gpu_idle",
                "applications_clocks_setting" => "clock_words.applications_clocks_setting",
                "sw_power_cap" => "clock_words.sw_power_cap",
                "hw_slowdown" => "clock_words.hw_slowdown",
                "sync_boost" => "clock_words.sync_boost",
                "sw_thermal_slowdown" => "clock_words.sw_thermal_slowdown",
                "hw_thermal_slowdown" => "clock_words.hw_thermal_slowdown",
                "hw_power_brake_slowdown" => "clock_words.hw_power_brake_slowdown",
                "display_clock_setting" => "clock_words.display_clock_setting",
                other => return other.to_string(),
            };
            t!(key).into_owned()
        })
        .collect()
}
