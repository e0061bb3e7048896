//! What a host that is quiet, floods or is gone says, in catalogue words: `no data for 12s`,
//! `connecting (attempt 3)`, `no data from the host for 5s`, a flood's budget, an instance gone
//! from its provider account. The engine keeps their English (`english()`) for the log, JSON in
//! English and recordings; the console says them in the user's language.

use crate::fleet::notice::DownWords;
use crate::telemetry::LostReason;
use crate::units::format_age;
use crate::words::Words;

/// `no data for 12s`: the link is up but nothing came for `age_ms`.
pub fn no_data(age_ms: u64) -> Words {
    Words::new("quiet_words.no_data").put("age", format_age(age_ms))
}

/// `no reading for 12s`: the newest reading is `age_ms` old.
pub fn no_reading(age_ms: u64) -> Words {
    Words::new("quiet_words.no_reading").put("age", format_age(age_ms))
}

/// `connecting`, or `connecting (attempt 3)` past the first.
pub fn connecting(attempt: u32) -> Words {
    if attempt > 1 {
        Words::new("quiet_words.connecting_attempt").put("attempt", attempt.to_string())
    } else {
        Words::new("status.connecting")
    }
}

/// `waiting for the first reading`: up, nothing read yet.
pub fn waiting() -> Words {
    Words::new("outage.waiting")
}

/// `no data from the host for 5s`: an unresponsive host's reason.
pub fn host_silent(age_ms: u64) -> Words {
    Words::new("quiet_words.host_silent").put("age", format_age(age_ms))
}

/// A lost stream's few words: the reason's label, or `nvidia-smi missing` when the shell could
/// not find it.
pub fn lost(reason: LostReason, smi_missing: bool) -> Words {
    Words::new(match reason {
        LostReason::GpuLost => "status.lost.gpu_lost",
        LostReason::DriverNotLoaded => "status.lost.driver_not_loaded",
        LostReason::DriverLibraryMismatch => "status.lost.driver_library_mismatch",
        LostReason::NoDevices => "status.lost.no_devices",
        LostReason::SmiMissing => "status.lost.smi_missing",
        LostReason::Other if smi_missing => "outage.smi_missing",
        LostReason::Other => "status.lost.telemetry_failed",
    })
}

/// A quiet outage's words: the few words are the whole message.
pub fn quiet(words: Words) -> DownWords {
    DownWords {
        reason: words.clone(),
        summary: words,
    }
}

/// Why a host whose instance is gone from its provider account is not connected: `why` (in
/// words) and the few words `gone from the provider account`.
pub fn gone(why: Words) -> DownWords {
    DownWords {
        reason: why,
        summary: Words::new("quiet_words.gone"),
    }
}

/// `instance 123 is gone from the vast account main (since …)`.
pub fn gone_reason(instance: &str, provider: &str, account: &str, since: &str) -> Words {
    Words::new("quiet_words.gone_reason")
        .put("instance", instance)
        .put("provider", provider)
        .put("account", account)
        .put("since", since)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quiet_words_keep_the_english_and_read_in_chinese() {
        let cases = [
            (no_data(12_000), "no data for 12s", "12s"),
            (no_reading(5_000), "no reading for 5s", "5s"),
            (connecting(3), "connecting (attempt 3)", "3"),
            (connecting(1), "connecting", ""),
            (waiting(), "waiting for the first reading", ""),
            (host_silent(3_000), "no data from the host for 3s", "3s"),
            (
                Words::new("quiet_words.gone"),
                "gone from the provider account",
                "",
            ),
        ];
        for (words, english, value) in cases {
            assert_eq!(words.english(), english);
            let zh = words.render("zh-CN");
            assert!(zh.contains(value), "{zh}");
            assert!(
                !zh.replace(value, "")
                    .chars()
                    .any(|c| c.is_ascii_lowercase()),
                "English left in {zh:?}"
            );
        }
        // A lost stream's words are its reason's label, as the status column says it.
        for reason in [
            LostReason::GpuLost,
            LostReason::DriverNotLoaded,
            LostReason::DriverLibraryMismatch,
            LostReason::NoDevices,
            LostReason::Other,
        ] {
            assert_eq!(lost(reason, false).english(), reason.label());
        }
        assert_eq!(
            lost(LostReason::Other, true).english(),
            "nvidia-smi missing"
        );
        assert_eq!(lost(LostReason::GpuLost, true).render("zh-CN"), "掉卡");
        let why = gone_reason("123", "vast", "main", "2026-01-02T03:04:05Z");
        assert_eq!(
            why.english(),
            "instance 123 is gone from the vast account main (since 2026-01-02T03:04:05Z)"
        );
        let zh = why.render("zh-CN");
        assert!(
            zh.contains("123") && zh.contains("main") && zh.contains("已"),
            "{zh}"
        );
        assert!(!zh.contains("is gone"), "{zh}");
    }
}
