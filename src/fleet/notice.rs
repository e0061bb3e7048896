//! Why a link is down, in catalogue words (see [`crate::words`]).

use crate::words::Words;

/// Why a link is down, in catalogue words: the whole message and its few words, whose English
/// are the `reason` and `summary` the event carries for the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DownWords {
    pub reason: Words,
    pub summary: Words,
}

impl DownWords {
    /// A quiet outage's words (`no data for 12s`): the few words are the whole message.
    pub fn quiet(words: Words) -> DownWords {
        DownWords {
            reason: words.clone(),
            summary: words,
        }
    }

    /// Why a host whose instance is gone from its provider account is not connected: `why`
    /// (in words) and the few words `gone from the provider account`.
    pub fn gone(why: Words) -> DownWords {
        DownWords {
            reason: why,
            summary: Words::new("quiet_words.gone"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_down_links_reason_reads_in_the_language_asked_for() {
        use crate::fleet::{Fleet, FleetOptions, HostEvent};
        let mut fleet = Fleet::new(vec!["h".into()], FleetOptions::default(), 1_000);
        let english = "cannot connect to 127.0.0.1:9: connection refused";
        let down = |words| HostEvent::Disconnected {
            at_ms: 1_000,
            reason: english.into(),
            summary: "connection refused".into(),
            retry_at_ms: None,
            words,
        };
        fleet.apply(0, down(None));
        assert_eq!(
            fleet.hosts[0]
                .down_reason()
                .map(|w| w.render("zh-CN"))
                .as_deref(),
            Some(english)
        );
        fleet.apply(
            0,
            down(Some(DownWords {
                reason: Words::new("link_error.connect")
                    .put("addr", "127.0.0.1:9")
                    .put("source", "connection refused"),
                summary: Words::new("link_summary.refused"),
            })),
        );
        assert_eq!(
            fleet.hosts[0]
                .down_reason()
                .map(|w| w.render("en"))
                .as_deref(),
            Some(english)
        );
        let zh = fleet.hosts[0]
            .down_reason()
            .map(|w| w.render("zh-CN"))
            .unwrap_or_default();
        assert!(zh.starts_with("无法连接 127.0.0.1:9"), "{zh}");
    }
}
