//! A message's words: a key of the message catalogue with its named values, built next to the
//! type it describes (an error, a finding, a notice) and said in the reader's language only
//! where it is shown (the console, the command line's output, an alert). Its `Display` is the
//! English of the same catalogue text, so the log, recordings and the audit log stay English.
//! Values quoted from a host or the OS stay as they came; a value that is a text of ours is
//! itself a key with values, in the same language. A key whose catalogue entry is a table of
//! plural forms (`count.host.one`, `count.host.other`) picks its form by the CLDR plural rules
//! of the language for its value `n` (see [`Words::counted`]).

use std::borrow::Cow;
use std::fmt;

use rust_i18n::t;

/// What a notice says, before a language is chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Words {
    /// A catalogue text (`link_notice.kernel_flood`) with the values its `%{name}`s take.
    Catalogue {
        key: Cow<'static, str>,
        args: Vec<(Cow<'static, str>, WordArg)>,
    },
    /// Text said as it is, in every language: a notice read from a recording written before
    /// notices had keys, or one whose key this build does not know.
    Verbatim(String),
}

/// One value of a [`Words`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WordArg {
    /// Said as it came: what a host or the OS printed, a path, a name, a number.
    Verbatim(String),
    /// A text of ours, said in the notice's language too.
    Words(Words),
}

impl Words {
    /// The catalogue text `key`, values to be put in with [`Words::put`].
    pub fn new(key: &'static str) -> Self {
        Words::Catalogue {
            key: Cow::Borrowed(key),
            args: Vec::new(),
        }
    }

    /// Text said as it is (see [`Words::Verbatim`]).
    pub fn verbatim(text: impl Into<String>) -> Self {
        Words::Verbatim(text.into())
    }

    /// The plural table `key` (`count.host`: `one = "1 host"`, `other = "%{n} hosts"`) for `n`
    /// things: the form is chosen where the text is said, by the CLDR plural rules of its
    /// language, and `%{n}` takes `n`.
    pub fn counted(key: &'static str, n: u64) -> Self {
        Words::new(key).put("n", n.to_string())
    }

    /// The catalogue text `key` with at most one value, as an error of a lower floor gives
    /// them (`SshTargetError::key_and_value`).
    pub fn keyed((key, value): (&'static str, Option<(&'static str, String)>)) -> Self {
        match value {
            Some((name, value)) => Words::new(key).put(name, value),
            None => Words::new(key),
        }
    }

    /// Puts `value`, said as it came, in place of `%{name}`.
    pub fn put(self, name: &'static str, value: impl Into<String>) -> Self {
        self.with_arg(Cow::Borrowed(name), WordArg::Verbatim(value.into()))
    }

    /// Puts a text of ours in place of `%{name}`, said in the notice's language.
    pub fn put_words(self, name: &'static str, words: Words) -> Self {
        self.with_arg(Cow::Borrowed(name), WordArg::Words(words))
    }

    fn with_arg(mut self, name: Cow<'static, str>, value: WordArg) -> Self {
        if let Words::Catalogue { args, .. } = &mut self {
            // Kept in name order, so two notices saying the same are equal however built.
            let at = args.partition_point(|(n, _)| *n < name);
            args.insert(at, (name, value));
        }
        self
    }

    /// A catalogue text with values read back from a recording. A key this build does not
    /// know, or a `%{name}` left without a value, gives `english` as it was written instead:
    /// a recording never shows a key or a placeholder.
    pub fn read_back(key: String, args: Vec<(String, WordArg)>, english: String) -> Self {
        let words = Words::from_parts(key, args);
        if words.is_complete() {
            words
        } else {
            Words::Verbatim(english)
        }
    }

    /// A catalogue text with its values as read, unchecked (see [`Words::read_back`]).
    pub fn from_parts(key: String, args: Vec<(String, WordArg)>) -> Self {
        args.into_iter().fold(
            Words::Catalogue {
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
            Words::Verbatim(_) => true,
            Words::Catalogue { key, args } => {
                template(key, args, "en")
                    .is_some_and(|text| !fill(&text, args, "en").contains("%{"))
                    && args.iter().all(|(_, value)| match value {
                        WordArg::Verbatim(_) => true,
                        WordArg::Words(words) => words.is_complete(),
                    })
            }
        }
    }

    /// The catalogue key, or `None` for verbatim text.
    pub fn key(&self) -> Option<&str> {
        match self {
            Words::Catalogue { key, .. } => Some(key),
            Words::Verbatim(_) => None,
        }
    }

    /// The values, in the order of their names.
    pub fn args(&self) -> &[(Cow<'static, str>, WordArg)] {
        match self {
            Words::Catalogue { args, .. } => args,
            Words::Verbatim(_) => &[],
        }
    }

    /// The text in `locale` (`en`, `zh-CN`).
    pub fn render(&self, locale: &str) -> String {
        match self {
            Words::Verbatim(text) => text.clone(),
            Words::Catalogue { key, args } => match template(key, args, locale) {
                Some(text) => fill(&text, args, locale),
                None => key.to_string(),
            },
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
            Words::Verbatim(text) => Words::Verbatim(clean(&text)),
            Words::Catalogue { key, args } => Words::Catalogue {
                key,
                args: args
                    .into_iter()
                    .map(|(name, value)| {
                        let value = match value {
                            WordArg::Verbatim(text) => WordArg::Verbatim(clean(&text)),
                            WordArg::Words(words) => WordArg::Words(words.map_verbatim(clean)),
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
pub fn joined(items: &[Words], key: &'static str) -> Option<Words> {
    let (last, before) = items.split_last()?;
    Some(before.iter().rev().fold(last.clone(), |rest, first| {
        Words::new(key)
            .put_words("first", first.clone())
            .put_words("rest", rest)
    }))
}

/// The catalogue text of `key` in `locale`, or `None` when the catalogue does not hold it. A
/// key naming a table of plural forms gives the form its value `n` takes in `locale`: `one`,
/// `two`, `few`, `many` or `zero` where the language has it, else `other`.
fn template(key: &str, args: &[(Cow<'static, str>, WordArg)], locale: &str) -> Option<String> {
    let text = t!(key, locale = locale);
    if text != key {
        return Some(text.into_owned());
    }
    let n = args.iter().find_map(|(name, value)| match value {
        WordArg::Verbatim(text) if name == "n" => Some(text.as_str()),
        _ => None,
    })?;
    let form = |category: &str| {
        let full = format!("{key}.{category}");
        let text = t!(&full, locale = locale);
        (text != full.as_str()).then(|| text.into_owned())
    };
    plural_category(locale, n)
        .and_then(&form)
        .or_else(|| form("other"))
}

/// The CLDR plural category (`one`, `other`, ...) of the number `n` in `locale`, by the rules
/// of its language (`zh-CN` by `zh`'s).
pub fn plural_category(locale: &str, n: &str) -> Option<&'static str> {
    use intl_pluralrules::{PluralCategory, PluralRuleType, PluralRules};
    let language = locale.split(['-', '_']).next()?;
    let langid: unic_langid::LanguageIdentifier = language.parse().ok()?;
    let rules = PluralRules::create(langid, PluralRuleType::CARDINAL).ok()?;
    let category = rules.select(n).ok()?;
    Some(match category {
        PluralCategory::ZERO => "zero",
        PluralCategory::ONE => "one",
        PluralCategory::TWO => "two",
        PluralCategory::FEW => "few",
        PluralCategory::MANY => "many",
        PluralCategory::OTHER => "other",
    })
}

/// `template` with each `%{name}` replaced by its value in `locale`.
fn fill(template: &str, args: &[(Cow<'static, str>, WordArg)], locale: &str) -> String {
    let names: Vec<&str> = args.iter().map(|(name, _)| name.as_ref()).collect();
    let values: Vec<String> = args
        .iter()
        .map(|(_, value)| match value {
            WordArg::Verbatim(text) => text.clone(),
            WordArg::Words(words) => words.render(locale),
        })
        .collect();
    rust_i18n::replace_patterns(template, &names, &values)
}

/// English, as the log writes it (`notice = %text`).
impl fmt::Display for Words {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.english())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(why: WordArg) -> Words {
        let text = Words::new("link_notice.kernel_unreadable");
        match why {
            WordArg::Verbatim(s) => text.put("why", s),
            WordArg::Words(w) => text.put_words("why", w),
        }
    }

    #[test]
    fn a_notice_reads_in_either_language_with_the_hosts_words_as_they_came() {
        let host_said = "dmesg: read kernel buffer failed: Operation not permitted";
        let notice = kernel(WordArg::Verbatim(host_said.into()));
        let en = notice.render("en");
        let zh = notice.render("zh-CN");
        assert!(en.starts_with("the kernel log is not readable"), "{en}");
        assert!(en.ends_with(&format!("({host_said})")), "{en}");
        assert!(zh.contains("内核日志") && zh.contains(host_said), "{zh}");
        assert_eq!(notice.to_string(), en, "Display is the English");
    }

    #[test]
    fn a_text_of_ours_inside_a_notice_follows_the_language() {
        let status = Words::new("link_notice.exit_status").put("code", "2");
        let notice = kernel(WordArg::Words(status));
        assert!(notice.english().ends_with("(exit status 2)"), "{notice}");
        let zh = notice.render("zh-CN");
        assert!(!zh.contains("exit status"), "{zh}");
        assert!(zh.contains('2'), "{zh}");
    }

    #[test]
    fn what_a_recording_cannot_say_in_words_is_its_english() {
        let english = "a notice from a newer gpufleet".to_string();
        let unknown = Words::read_back("link_notice.no_such_text".into(), vec![], english.clone());
        assert_eq!(unknown, Words::Verbatim(english.clone()));
        // A value missing: the placeholder would show.
        let short = Words::read_back(
            "link_notice.kernel_unreadable".into(),
            vec![],
            english.clone(),
        );
        assert_eq!(short, Words::Verbatim(english));
        let whole = Words::read_back(
            "link_notice.kernel_unreadable".into(),
            vec![("why".into(), WordArg::Verbatim("it ended".into()))],
            String::new(),
        );
        assert_eq!(whole.key(), Some("link_notice.kernel_unreadable"));
    }

    #[test]
    fn a_count_takes_the_plural_form_of_its_language() {
        assert_eq!(Words::counted("count.host", 1).render("en"), "1 host");
        assert_eq!(Words::counted("count.host", 2).render("en"), "2 hosts");
        assert_eq!(Words::counted("count.gpu", 0).render("en"), "0 GPUs");
        assert_eq!(Words::counted("count.gpu", 1).render("zh-CN"), "1 张卡");
        assert_eq!(Words::counted("count.gpu", 8).render("zh-CN"), "8 张卡");
        assert_eq!(plural_category("en", "1"), Some("one"));
        assert_eq!(plural_category("zh-CN", "1"), Some("other"));
    }

    #[test]
    fn only_the_values_that_came_from_elsewhere_are_cleaned() {
        let notice = kernel(WordArg::Verbatim("bad\u{1b}[2Jline".into()))
            .map_verbatim(&|s: &str| s.replace('\u{1b}', ""));
        assert!(!notice.english().contains('\u{1b}'));
        assert_eq!(notice.key(), Some("link_notice.kernel_unreadable"));
    }
}
