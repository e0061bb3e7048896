//! The words the console shows for the engine's states (a host's status, the sort order) in
//! the language of the interface. The engine keeps its own English words for logs, JSON and
//! `snapshot`; these are for the screen only.

use rust_i18n::t;

use crate::config::Provider;
use crate::fleet::host::{CONNECTING_SAID_FROM_MS, HostStatus, format_age};
use crate::fleet::outage::Outage;
use crate::release::ReleaseAction;
use crate::words::Words;

/// The status column's words: `live`, `stale 12s`, `GPU lost` (`在线`, `无数据 12s`, `掉卡`).
pub fn status(status: &HostStatus) -> String {
    let text = match status {
        HostStatus::Connecting { attempt, for_ms } => {
            let took = for_ms
                .filter(|&ms| ms >= CONNECTING_SAID_FROM_MS)
                .map(format_age);
            match (*attempt <= 1, took) {
                (true, None) => t!("status.connecting"),
                (false, None) => t!("status.connecting_again", attempt = attempt),
                (true, Some(took)) => t!("status.connecting_for", took = took),
                (false, Some(took)) => {
                    t!(
                        "status.connecting_again_for",
                        attempt = attempt,
                        took = took
                    )
                }
            }
        }
        HostStatus::Live => t!("status.live"),
        HostStatus::Stale { age_ms } => t!("status.stale", age = format_age(*age_ms)),
        HostStatus::Unreachable { .. } => t!("status.unreachable"),
        HostStatus::Lost { reason } => reason.said().into(),
        HostStatus::Flooding { .. } => t!("status.flooding"),
    };
    text.into_owned()
}

/// A release action as the dialog names it: `stop` / `terminate` (`关机` / `释放`).
pub fn action(action: ReleaseAction) -> String {
    crate::release::action_words(action)
}

/// What a release action does to the instance and its data (the release module's `effect` is
/// the English one that the plan's JSON keeps).
pub fn effect(provider: Provider, action: ReleaseAction) -> String {
    crate::release::effect_words(provider, action).localized()
}

/// An outage's few words (the engine's English, `fleet::outage`) in the interface's language,
/// for the fixed ones: a lost stream's reason, a missing nvidia-smi, waiting to connect. Words
/// that carry what a host or the network said (`connection refused`) stay as they came.
pub fn outage_summary(summary: &str) -> String {
    let key = match summary {
        "GPU lost" => "status.lost.gpu_lost",
        "driver not loaded" => "status.lost.driver_not_loaded",
        "driver/library mismatch" => "status.lost.driver_library_mismatch",
        "no devices" => "status.lost.no_devices",
        "telemetry failed" => "status.lost.telemetry_failed",
        "nvidia-smi missing" => "outage.smi_missing",
        "connecting" => "status.connecting",
        "waiting for the first reading" => "outage.waiting",
        other => return other.to_string(),
    };
    t!(key).into_owned()
}

/// A link's notice (the engine keeps its catalogue words) in the interface's language.
pub fn notice(text: &Words) -> String {
    text.localized()
}

/// An outage's few words in the interface's language: the link's own catalogue words when its
/// source gave them, else [`outage_summary`] of the English.
pub fn outage_words(outage: &Outage) -> String {
    match &outage.words {
        Some(words) => notice(&words.summary),
        None => outage_summary(&outage.summary),
    }
}

/// An outage's whole message in the interface's language (see [`outage_words`]).
pub fn outage_detail(outage: &Outage) -> Option<String> {
    let detail = outage.detail.as_ref()?;
    Some(match &outage.words {
        Some(words) => notice(&words.reason),
        None => detail.clone(),
    })
}

/// The short labels of the active clock event reasons (`power cap`, `thermal slowdown`) in the
/// interface's language; the English are the telemetry's own labels.
pub fn clock_reasons(reasons: crate::telemetry::ClockEventReasons) -> Vec<String> {
    reasons.label_words().iter().map(Words::localized).collect()
}

/// Where a host's readings come from (`simulated`, `local NVML`, `ssh root@h`) in the
/// interface's language: the words of ours, the tool and target as they are.
pub fn source(text: &str) -> String {
    if text == "simulated" {
        return t!("clock_words.simulated").into_owned();
    }
    match text.strip_prefix("local ") {
        Some(tool) => t!("clock_words.local", tool = tool).into_owned(),
        None => text.to_string(),
    }
}

/// The word for a released host in the status column.
pub fn released() -> String {
    t!("status.released").into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::model::LostReason;

    /// The English words are the engine's own, so the screen and `snapshot` agree.
    #[test]
    fn english_status_words_are_the_engines() {
        for s in [
            HostStatus::Connecting {
                attempt: 1,
                for_ms: None,
            },
            HostStatus::Connecting {
                attempt: 3,
                for_ms: None,
            },
            HostStatus::Connecting {
                attempt: 1,
                for_ms: Some(12_000),
            },
            HostStatus::Connecting {
                attempt: 3,
                for_ms: Some(400),
            },
            HostStatus::Live,
            HostStatus::Stale { age_ms: 12_000 },
            HostStatus::Unreachable {
                reason: "refused".into(),
                words: None,
            },
            HostStatus::Flooding {
                detail: "x".into(),
                words: None,
            },
            HostStatus::Lost {
                reason: LostReason::GpuLost,
            },
            HostStatus::Lost {
                reason: LostReason::DriverNotLoaded,
            },
            HostStatus::Lost {
                reason: LostReason::DriverLibraryMismatch,
            },
            HostStatus::Lost {
                reason: LostReason::NoDevices,
            },
            HostStatus::Lost {
                reason: LostReason::SmiMissing,
            },
            HostStatus::Lost {
                reason: LostReason::Other,
            },
        ] {
            assert_eq!(status(&s), s.text());
        }
    }

    /// In English the engine's words come back as they are, each through its own text.
    #[test]
    fn english_outage_words_are_the_engines() {
        for reason in [
            LostReason::GpuLost,
            LostReason::DriverNotLoaded,
            LostReason::DriverLibraryMismatch,
            LostReason::NoDevices,
            LostReason::SmiMissing,
            LostReason::Other,
        ] {
            assert_eq!(outage_summary(reason.label()), reason.label());
        }
        for words in [
            "nvidia-smi missing",
            "connecting",
            "waiting for the first reading",
            "connection refused",
        ] {
            assert_eq!(outage_summary(words), words);
        }
        // Chinese for the fixed words, from the catalogue compiled in.
        assert_eq!(t!("status.lost.gpu_lost", locale = "zh-CN"), "掉卡");
    }

    #[test]
    fn english_effects_and_actions_are_the_release_modules() {
        use crate::config::Provider::*;
        for provider in [Vast, RunPod, Lambda, AutoDl, Command, Ssh] {
            for a in [ReleaseAction::Stop, ReleaseAction::Terminate] {
                assert_eq!(effect(provider, a), crate::release::effect(provider, a));
                assert_eq!(action(a), a.as_str());
            }
        }
    }

    /// The clock reasons and a reading's source in English are the telemetry's own words, and
    /// in Chinese the catalogue's.
    #[test]
    fn clock_reasons_and_sources_are_the_telemetrys_english_and_chinese_in_zh() {
        use crate::telemetry::ClockEventReasons;
        use crate::telemetry::model::CLOCK_EVENT_BITS;
        let all = ClockEventReasons(
            CLOCK_EVENT_BITS
                .iter()
                .fold(0, |acc, (bit, _, _)| acc | bit),
        );
        let labels: Vec<String> = all.labels().into_iter().map(str::to_string).collect();
        assert_eq!(clock_reasons(all), labels);
        for (_, word, _) in CLOCK_EVENT_BITS {
            let key = format!("clock_words.{word}");
            let zh = t!(&key, locale = "zh-CN");
            assert!(zh.chars().any(|c| c > '\u{2e80}'), "{word}: {zh}");
        }
        for source_text in ["simulated", "local NVML", "ssh root@h:22"] {
            assert_eq!(source(source_text), source_text);
        }
        assert_eq!(t!("clock_words.simulated", locale = "zh-CN"), "模拟");
    }
}
