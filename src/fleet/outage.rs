//! Why a host is not streaming, in words: a few words for a row (`connection refused`,
//! `GPU lost`, `nvidia-smi missing`), the whole message, when the link last tried and when it
//! tries next, and when the newest reading came. Derived from the link and the clock, like the
//! status.

use crate::fleet::DownWords;
use crate::fleet::host::{HostState, Link, Retry};
use crate::telemetry::{LostReason, TimestampMs};
use crate::units::format_age;
use crate::words::Words;

/// What a host that is not streaming says about itself.
#[derive(Debug, Clone, PartialEq)]
pub struct Outage {
    /// A few words: `connection refused`, `GPU lost`, `no reading for 12s`.
    pub summary: String,
    /// The whole message, when it says more than the summary.
    pub detail: Option<String>,
    /// `summary` and `detail` of a link that is down in catalogue words, when its source gave
    /// them (the console says them in the user's language).
    pub words: Option<DownWords>,
    /// When the latest connection attempt failed, for a link that is down.
    pub last_attempt_ms: Option<TimestampMs>,
    /// Attempts made since the link went down (0 when not counted).
    pub attempts: u32,
    /// When the link tries again; `None` when nothing is being retried.
    pub retry: Option<Retry>,
    /// When the newest reading came; `None` for a host never observed.
    pub last_reading_ms: Option<TimestampMs>,
}

impl Outage {
    /// The few words in catalogue words: the link's own when its source gave them, else the
    /// fixed English ones (a lost stream's reason, a missing nvidia-smi, waiting to connect)
    /// as catalogue texts; words that carry what a host or the network said (`connection
    /// refused`) stay as they came.
    pub fn summary_words(&self) -> Words {
        match &self.words {
            Some(words) => words.summary.clone(),
            None => fixed_summary(&self.summary),
        }
    }

    /// The whole message in catalogue words, when there is more than the summary: the link's
    /// own when its source gave them, else the English as it came.
    pub fn detail_words(&self) -> Option<Words> {
        let detail = self.detail.as_ref()?;
        Some(match &self.words {
            Some(words) => words.reason.clone(),
            None => Words::verbatim(detail.as_str()),
        })
    }

    /// A host key the user declined: the link waits, where the console can ask it again.
    pub fn key_declined(&self) -> bool {
        self.retry == Some(Retry::Never)
            && self
                .words
                .as_ref()
                .and_then(|w| w.summary.key())
                .is_some_and(|key| key == "link_summary.key_declined")
    }
}

/// The exit status a POSIX shell gives a command it cannot find.
const COMMAND_NOT_FOUND: &str = "exited with status 127";

/// Why `host` is not streaming at `now_ms`, or `None` while it streams (live or flooding).
pub fn outage(host: &HostState, now_ms: TimestampMs, interval_ms: u64) -> Option<Outage> {
    let last_reading_ms = host.last_sample_ms;
    let quiet = |words: Option<Words>| Outage {
        summary: words.as_ref().map(Words::english).unwrap_or_default(),
        detail: None,
        words: words.map(DownWords::quiet),
        last_attempt_ms: None,
        attempts: 0,
        retry: None,
        last_reading_ms,
    };
    match &host.link {
        Link::Down {
            reason,
            summary,
            attempts,
            last_attempt_ms,
            retry,
            words,
            ..
        } => Some(Outage {
            summary: if summary.is_empty() {
                reason.clone()
            } else {
                summary.clone()
            },
            detail: (reason != summary).then(|| reason.clone()),
            words: words.clone(),
            last_attempt_ms: Some(*last_attempt_ms),
            attempts: *attempts,
            retry: Some(*retry),
            last_reading_ms,
        }),
        Link::Lost { reason, raw, .. } => {
            let summary = lost(*reason, smi_missing(*reason, raw));
            let detail = raw
                .lines()
                .map(str::trim)
                .find(|line| !line.is_empty())
                .map(str::to_string);
            Some(Outage {
                summary: summary.english(),
                // What the host printed, said as it came.
                words: Some(DownWords {
                    reason: Words::verbatim(detail.clone().unwrap_or_default()),
                    summary,
                }),
                detail,
                ..quiet(None)
            })
        }
        Link::Silent { since_ms } => Some(quiet(Some(no_data(now_ms.saturating_sub(*since_ms))))),
        Link::Connecting { attempt, .. } => Some(quiet(Some(match last_reading_ms {
            Some(at) => no_reading(now_ms.saturating_sub(at)),
            None => connecting(*attempt),
        }))),
        // A flooding host streams (too much); its status says so.
        Link::Up if host.flooding.is_some() => None,
        Link::Up => match last_reading_ms {
            Some(at) if now_ms.saturating_sub(at) > 2 * interval_ms => {
                Some(quiet(Some(no_reading(now_ms.saturating_sub(at)))))
            }
            Some(_) => None,
            None => Some(quiet(Some(waiting()))),
        },
    }
}

/// Whether a lost stream ended because the shell could not find nvidia-smi.
fn smi_missing(reason: LostReason, raw: &str) -> bool {
    reason == LostReason::Other
        && (raw.contains(COMMAND_NOT_FOUND) || raw.contains("command not found"))
}

/// An engine's fixed English summary (`fleet::outage`) as its catalogue text; any other words
/// as they came.
fn fixed_summary(summary: &str) -> Words {
    let key = match summary {
        "GPU lost" => "status.lost.gpu_lost",
        "driver not loaded" => "status.lost.driver_not_loaded",
        "driver/library mismatch" => "status.lost.driver_library_mismatch",
        "no devices" => "status.lost.no_devices",
        "telemetry failed" => "status.lost.telemetry_failed",
        "nvidia-smi missing" => "outage.smi_missing",
        "connecting" => "status.connecting",
        "waiting for the first reading" => "outage.waiting",
        other => return Words::verbatim(other),
    };
    Words::new(key)
}

/// `no data for 12s`: the link is up but nothing came for `age_ms`.
fn no_data(age_ms: u64) -> Words {
    Words::new("quiet_words.no_data").put("age", format_age(age_ms))
}

/// `no reading for 12s`: the newest reading is `age_ms` old.
fn no_reading(age_ms: u64) -> Words {
    Words::new("quiet_words.no_reading").put("age", format_age(age_ms))
}

/// `connecting`, or `connecting (attempt 3)` past the first.
fn connecting(attempt: u32) -> Words {
    if attempt > 1 {
        Words::new("quiet_words.connecting_attempt").put("attempt", attempt.to_string())
    } else {
        Words::new("status.connecting")
    }
}

/// `waiting for the first reading`: up, nothing read yet.
fn waiting() -> Words {
    Words::new("outage.waiting")
}

/// A lost stream's few words: the reason's label, or `nvidia-smi missing` when the shell could
/// not find it.
fn lost(reason: LostReason, smi_missing: bool) -> Words {
    match reason {
        LostReason::Other if smi_missing => Words::new("outage.smi_missing"),
        reason => reason.words(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::HostEvent;
    use crate::telemetry::{GpuSample, HostInfo};

    fn host() -> HostState {
        HostState::new("h", crate::fleet::FleetOptions::default().history_shape())
    }

    #[test]
    fn a_refused_link_says_so_with_its_attempts_and_next_retry() {
        let mut h = host();
        h.apply(HostEvent::Connecting {
            attempt: 1,
            at_ms: None,
        });
        h.apply(HostEvent::Disconnected {
            at_ms: 5_000,
            reason: "cannot connect to 127.0.0.1:9: Connection refused (os error 111)".into(),
            summary: "connection refused".into(),
            retry_at_ms: Some(9_000),
            words: None,
        });
        let o = outage(&h, 6_000, 1_000).expect("down");
        assert_eq!(o.summary, "connection refused");
        assert!(o.detail.is_some_and(|d| d.contains("127.0.0.1:9")));
        assert_eq!(o.last_attempt_ms, Some(5_000));
        assert_eq!(o.retry, Some(Retry::At(9_000)));
        assert_eq!(o.last_reading_ms, None);
        // The retry starts: under way, counted.
        h.apply(HostEvent::Connecting {
            attempt: 2,
            at_ms: None,
        });
        let o = outage(&h, 9_100, 1_000).expect("down");
        assert_eq!((o.retry, o.attempts), (Some(Retry::Trying), 2));
        // A permanent failure is not retried.
        h.apply(HostEvent::Disconnected {
            at_ms: 9_500,
            reason: "HOST KEY CHANGED for h (not retrying)".into(),
            summary: "HOST KEY CHANGED".into(),
            retry_at_ms: None,
            words: None,
        });
        assert_eq!(
            outage(&h, 9_600, 1_000).expect("down").retry,
            Some(Retry::Never)
        );
    }

    #[test]
    fn a_missing_nvidia_smi_and_an_unloaded_driver_are_named() {
        let mut h = host();
        h.apply(HostEvent::Connected(HostInfo::default()));
        h.apply(HostEvent::Lost {
            at_ms: 1_000,
            reason: LostReason::Other,
            raw: "bash: line 1: nvidia-smi: command not found\nnvidia-smi exited with status 127"
                .into(),
        });
        let o = outage(&h, 2_000, 1_000).expect("lost");
        assert_eq!(o.summary, "nvidia-smi missing");
        assert_eq!(
            o.detail.as_deref(),
            Some("bash: line 1: nvidia-smi: command not found")
        );
        let mut h = host();
        h.apply(HostEvent::Lost {
            at_ms: 1_000,
            reason: LostReason::DriverNotLoaded,
            raw: "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."
                .into(),
        });
        assert_eq!(
            outage(&h, 2_000, 1_000).expect("lost").summary,
            "driver not loaded"
        );
    }

    #[test]
    fn a_streaming_host_has_no_outage_and_a_late_one_says_since_when() {
        let mut h = host();
        assert_eq!(
            outage(&h, 0, 1_000).map(|o| o.summary),
            Some("connecting".to_string())
        );
        h.apply(HostEvent::Connected(HostInfo::default()));
        h.apply(HostEvent::Sample {
            at_ms: 10_000,
            gpu: GpuSample::default(),
        });
        assert_eq!(outage(&h, 11_000, 1_000), None);
        let late = outage(&h, 15_000, 1_000).expect("stale");
        assert_eq!(late.summary, "no reading for 5s");
        assert_eq!(late.last_reading_ms, Some(10_000));
    }

    /// A quiet outage's words: the English as before, and catalogue words the console says
    /// in Chinese.
    #[test]
    fn quiet_outages_have_words_in_either_language() {
        let zh_of = |o: &Outage| o.words.as_ref().map(|w| w.summary.render("zh-CN"));
        let mut h = host();
        h.apply(HostEvent::Connecting {
            attempt: 3,
            at_ms: None,
        });
        let o = outage(&h, 0, 1_000).expect("connecting");
        assert_eq!(o.summary, "connecting (attempt 3)");
        assert_eq!(zh_of(&o).as_deref(), Some("连接中（第 3 次）"));
        h.apply(HostEvent::Connected(HostInfo::default()));
        let o = outage(&h, 0, 1_000).expect("no reading yet");
        assert_eq!(o.summary, "waiting for the first reading");
        assert_eq!(zh_of(&o).as_deref(), Some("等待第一个读数"));
        h.apply(HostEvent::Sample {
            at_ms: 10_000,
            gpu: GpuSample::default(),
        });
        let o = outage(&h, 22_000, 1_000).expect("stale");
        assert_eq!(o.summary, "no reading for 12s");
        assert_eq!(zh_of(&o).as_deref(), Some("12s 无读数"));
        h.apply(HostEvent::Unresponsive {
            at_ms: 23_000,
            silent_ms: 3_000,
        });
        let o = outage(&h, 25_000, 1_000).expect("silent");
        assert_eq!(o.summary, "no data for 5s");
        assert_eq!(zh_of(&o).as_deref(), Some("5s 无数据"));
        assert_eq!(o.detail, None, "the few words say it all");
        // The host's status says why in either language too.
        let status = h.status(25_000, 1_000);
        assert_eq!(status.reason(), Some("no data from the host for 5s"));
        assert_eq!(
            status.reason_words().map(|w| w.render("en")).as_deref(),
            status.reason()
        );
        assert_eq!(
            status.reason_words().map(|w| w.render("zh-CN")).as_deref(),
            Some("主机 5s 没有发来数据")
        );
    }

    #[test]
    fn a_flooding_hosts_detail_reads_in_either_language() {
        let mut h = host();
        h.apply(HostEvent::Connected(HostInfo::default()));
        let words = crate::words::Words::new("flood_words.over_budget")
            .put("lines", "70")
            .put("kib", "7")
            .put("within", "1 s")
            .put_words("what", crate::words::Words::new("flood_words.stream"))
            .put("budget_lines", "64")
            .put("budget_kib", "64");
        h.apply(HostEvent::Flooding {
            at_ms: 1,
            detail: Some(words.english()),
            words: Some(words),
        });
        let status = h.status(1, 1_000);
        let en = status
            .reason_words()
            .map(|w| w.render("en"))
            .unwrap_or_default();
        assert!(en.starts_with("over budget: 70 lines, 7 KiB in 1 s from the nvidia-smi stream"));
        assert_eq!(status.reason(), Some(en.as_str()));
        let zh = status
            .reason_words()
            .map(|w| w.render("zh-CN"))
            .unwrap_or_default();
        assert!(
            zh.starts_with("超出预算") && zh.contains("nvidia-smi 数据流"),
            "{zh}"
        );
        // Calm again: no words left over for the next flood.
        h.apply(HostEvent::Flooding {
            at_ms: 2,
            detail: None,
            words: None,
        });
        assert_eq!(h.flooding_words, None);
    }

    /// In English the engine's fixed words come back as they are, each through its own text.
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
            let words = fixed_summary(reason.label());
            assert!(words.key().is_some(), "{}", reason.label());
            assert_eq!(words.english(), reason.label());
        }
        for words in [
            "nvidia-smi missing",
            "connecting",
            "waiting for the first reading",
        ] {
            assert!(fixed_summary(words).key().is_some(), "{words}");
            assert_eq!(fixed_summary(words).english(), words);
        }
        assert_eq!(
            fixed_summary("connection refused"),
            Words::verbatim("connection refused")
        );
        assert_eq!(fixed_summary("GPU lost").render("zh-CN"), "掉卡");
    }

    #[test]
    fn quiet_words_keep_the_english_and_read_in_chinese() {
        let cases = [
            (no_data(12_000), "no data for 12s", "12s"),
            (no_reading(5_000), "no reading for 5s", "5s"),
            (connecting(3), "connecting (attempt 3)", "3"),
            (connecting(1), "connecting", ""),
            (waiting(), "waiting for the first reading", ""),
            (
                DownWords::gone(Words::verbatim("x")).summary,
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
    }
}
