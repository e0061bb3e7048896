//! A notice's words: a key of the message catalogue with its named values, so the one text a
//! source sends reads in the user's language where it is shown (the console) and in English
//! where it is kept (the log, recordings). Values quoted from a host or the OS stay as they
//! came; a value that is a text of ours is itself a key with values, in the same language.

use std::borrow::Cow;
use std::fmt;

use rust_i18n::t;

/// What a notice says, before a language is chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoticeText {
    /// A catalogue text (`link_notice.kernel_flood`) with the values its `%{name}`s take.
    Words {
        key: Cow<'static, str>,
        args: Vec<(Cow<'static, str>, NoticeArg)>,
    },
    /// Text said as it is, in every language: a notice read from a recording written before
    /// notices had keys, or one whose key this build does not know.
    Verbatim(String),
}

/// Why a link is down, in catalogue words: the whole message and its few words, whose English
/// are the `reason` and `summary` the event carries for the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DownWords {
    pub reason: NoticeText,
    pub summary: NoticeText,
}

/// One value of a [`NoticeText`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoticeArg {
    /// Said as it came: what a host or the OS printed, a path, a name, a number.
    Verbatim(String),
    /// A text of ours, said in the notice's language too.
    Words(NoticeText),
}

impl NoticeText {
    /// The catalogue text `key`, values to be put in with [`NoticeText::put`].
    pub fn new(key: &'static str) -> Self {
        NoticeText::Words {
            key: Cow::Borrowed(key),
            args: Vec::new(),
        }
    }

    /// Text said as it is (see [`NoticeText::Verbatim`]).
    pub fn verbatim(text: impl Into<String>) -> Self {
        NoticeText::Verbatim(text.into())
    }

    /// Puts `value`, said as it came, in place of `%{name}`.
    pub fn put(self, name: &'static str, value: impl Into<String>) -> Self {
        self.with_arg(Cow::Borrowed(name), NoticeArg::Verbatim(value.into()))
    }

    /// Puts a text of ours in place of `%{name}`, said in the notice's language.
    pub fn put_words(self, name: &'static str, words: NoticeText) -> Self {
        self.with_arg(Cow::Borrowed(name), NoticeArg::Words(words))
    }

    fn with_arg(mut self, name: Cow<'static, str>, value: NoticeArg) -> Self {
        if let NoticeText::Words { args, .. } = &mut self {
            // Kept in name order, so two notices saying the same are equal however built.
            let at = args.partition_point(|(n, _)| *n < name);
            args.insert(at, (name, value));
        }
        self
    }

    /// A catalogue text with values read back from a recording. A key this build does not
    /// know, or a `%{name}` left without a value, gives `english` as it was written instead:
    /// a recording never shows a key or a placeholder.
    pub fn read_back(key: String, args: Vec<(String, NoticeArg)>, english: String) -> Self {
        let words = NoticeText::from_parts(key, args);
        if words.is_complete() {
            words
        } else {
            NoticeText::Verbatim(english)
        }
    }

    /// A catalogue text with its values as read, unchecked (see [`NoticeText::read_back`]).
    pub fn from_parts(key: String, args: Vec<(String, NoticeArg)>) -> Self {
        args.into_iter().fold(
            NoticeText::Words {
                key: Cow::Owned(key),
                args: Vec::new(),
            },
            |text, (name, value)| text.with_arg(Cow::Owned(name), value),
        )
    }

    /// Whether every key, here and in the values, is in the catalogue and every `%{name}` of
    /// its English text has a value.
    pub fn is_complete(&self) -> bool {
        match self {
            NoticeText::Verbatim(_) => true,
            NoticeText::Words { key, args } => {
                let template = t!(key.as_ref(), locale = "en");
                template != key.as_ref()
                    && !fill(&template, args, "en").contains("%{")
                    && args.iter().all(|(_, value)| match value {
                        NoticeArg::Verbatim(_) => true,
                        NoticeArg::Words(words) => words.is_complete(),
                    })
            }
        }
    }

    /// The catalogue key, or `None` for verbatim text.
    pub fn key(&self) -> Option<&str> {
        match self {
            NoticeText::Words { key, .. } => Some(key),
            NoticeText::Verbatim(_) => None,
        }
    }

    /// The values, in the order of their names.
    pub fn args(&self) -> &[(Cow<'static, str>, NoticeArg)] {
        match self {
            NoticeText::Words { args, .. } => args,
            NoticeText::Verbatim(_) => &[],
        }
    }

    /// The text in `locale` (`en`, `zh-CN`).
    pub fn render(&self, locale: &str) -> String {
        match self {
            NoticeText::Verbatim(text) => text.clone(),
            NoticeText::Words { key, args } => {
                fill(&t!(key.as_ref(), locale = locale), args, locale)
            }
        }
    }

    /// The text in the interface's language (the one `--lang`, the config or the locale chose).
    pub fn localized(&self) -> String {
        self.render(&rust_i18n::locale())
    }

    /// The text in English, as the log and recordings keep it.
    pub fn english(&self) -> String {
        self.render("en")
    }

    /// The same notice with every value said as it came passed through `clean` (the text a
    /// host sent made safe to show), nested texts included.
    pub fn map_verbatim(self, clean: &dyn Fn(&str) -> String) -> Self {
        match self {
            NoticeText::Verbatim(text) => NoticeText::Verbatim(clean(&text)),
            NoticeText::Words { key, args } => NoticeText::Words {
                key,
                args: args
                    .into_iter()
                    .map(|(name, value)| {
                        let value = match value {
                            NoticeArg::Verbatim(text) => NoticeArg::Verbatim(clean(&text)),
                            NoticeArg::Words(words) => NoticeArg::Words(words.map_verbatim(clean)),
                        };
                        (name, value)
                    })
                    .collect(),
            },
        }
    }
}

/// `items` one after the other, each two put together by `key` (`list_words.semicolon`:
/// `%{first}; %{rest}`), as one text of ours; `None` for no items.
pub fn joined(items: &[NoticeText], key: &'static str) -> Option<NoticeText> {
    let (last, before) = items.split_last()?;
    Some(before.iter().rev().fold(last.clone(), |rest, first| {
        NoticeText::new(key)
            .put_words("first", first.clone())
            .put_words("rest", rest)
    }))
}

/// `template` with each `%{name}` replaced by its value in `locale`.
fn fill(template: &str, args: &[(Cow<'static, str>, NoticeArg)], locale: &str) -> String {
    let names: Vec<&str> = args.iter().map(|(name, _)| name.as_ref()).collect();
    let values: Vec<String> = args
        .iter()
        .map(|(_, value)| match value {
            NoticeArg::Verbatim(text) => text.clone(),
            NoticeArg::Words(words) => words.render(locale),
        })
        .collect();
    rust_i18n::replace_patterns(template, &names, &values)
}

/// English, as the log writes it (`notice = %text`).
impl fmt::Display for NoticeText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.english())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(why: NoticeArg) -> NoticeText {
        let text = NoticeText::new("link_notice.kernel_unreadable");
        match why {
            NoticeArg::Verbatim(s) => text.put("why", s),
            NoticeArg::Words(w) => text.put_words("why", w),
        }
    }

    #[test]
    fn a_notice_reads_in_either_language_with_the_hosts_words_as_they_came() {
        let host_said = "dmesg: read kernel buffer failed: Operation not permitted";
        let notice = kernel(NoticeArg::Verbatim(host_said.into()));
        let en = notice.render("en");
        let zh = notice.render("zh-CN");
        assert!(en.starts_with("the kernel log is not readable"), "{en}");
        assert!(en.ends_with(&format!("({host_said})")), "{en}");
        assert!(zh.contains("内核日志") && zh.contains(host_said), "{zh}");
        assert_eq!(notice.to_string(), en, "Display is the English");
    }

    #[test]
    fn a_text_of_ours_inside_a_notice_follows_the_language() {
        let status = NoticeText::new("link_notice.exit_status").put("code", "2");
        let notice = kernel(NoticeArg::Words(status));
        assert!(notice.english().ends_with("(exit status 2)"), "{notice}");
        let zh = notice.render("zh-CN");
        assert!(!zh.contains("exit status"), "{zh}");
        assert!(zh.contains('2'), "{zh}");
    }

    #[test]
    fn what_a_recording_cannot_say_in_words_is_its_english() {
        let english = "a notice from a newer gpufleet".to_string();
        let unknown =
            NoticeText::read_back("link_notice.no_such_text".into(), vec![], english.clone());
        assert_eq!(unknown, NoticeText::Verbatim(english.clone()));
        // A value missing: the placeholder would show.
        let short = NoticeText::read_back(
            "link_notice.kernel_unreadable".into(),
            vec![],
            english.clone(),
        );
        assert_eq!(short, NoticeText::Verbatim(english));
        let whole = NoticeText::read_back(
            "link_notice.kernel_unreadable".into(),
            vec![("why".into(), NoticeArg::Verbatim("it ended".into()))],
            String::new(),
        );
        assert_eq!(whole.key(), Some("link_notice.kernel_unreadable"));
    }

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
            fleet.hosts[0].down_reason("zh-CN").as_deref(),
            Some(english)
        );
        fleet.apply(
            0,
            down(Some(DownWords {
                reason: NoticeText::new("link_error.connect")
                    .put("addr", "127.0.0.1:9")
                    .put("source", "connection refused"),
                summary: NoticeText::new("link_summary.refused"),
            })),
        );
        assert_eq!(fleet.hosts[0].down_reason("en").as_deref(), Some(english));
        let zh = fleet.hosts[0].down_reason("zh-CN").unwrap_or_default();
        assert!(zh.starts_with("无法连接 127.0.0.1:9"), "{zh}");
    }

    #[test]
    fn only_the_values_that_came_from_elsewhere_are_cleaned() {
        let notice = kernel(NoticeArg::Verbatim("bad\u{1b}[2Jline".into()))
            .map_verbatim(&|s: &str| s.replace('\u{1b}', ""));
        assert!(!notice.english().contains('\u{1b}'));
        assert_eq!(notice.key(), Some("link_notice.kernel_unreadable"));
    }
}
