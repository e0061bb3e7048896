//! The language of the interface: English or Simplified Chinese, chosen once at start from
//! `--lang`, else `language` in the config, else the locale (`LC_ALL`, `LC_MESSAGES`, `LANG`),
//! else English. The texts themselves live in the catalogues under `locales/`, looked up with
//! `rust_i18n::t!`; this module only decides which catalogue is read.

use std::fmt;

/// A language gpufleet speaks. Its tag is what `--lang`, the config and the catalogues use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Lang {
    #[default]
    En,
    ZhCn,
}

/// The tags `--lang` and `language` accept, in the order help texts list them.
pub const TAGS: [&str; 2] = ["en", "zh-CN"];

impl Lang {
    /// The catalogue's tag: `en` or `zh-CN`.
    pub fn tag(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::ZhCn => "zh-CN",
        }
    }

    /// A tag as `--lang` and the config write it. Exact tags only (`en`, `zh-CN`), so a typo
    /// is an error rather than a silent English.
    pub fn from_tag(tag: &str) -> Option<Lang> {
        match tag {
            "en" => Some(Lang::En),
            "zh-CN" => Some(Lang::ZhCn),
            _ => None,
        }
    }

    /// The language of a POSIX locale value such as `zh_CN.UTF-8`, `zh_SG`, `en_US.UTF-8`:
    /// Chinese for `zh` with a Simplified region or script (or none), `None` for Traditional
    /// Chinese (`zh_TW`, `zh_HK`, `zh_MO`, `zh_Hant`), whose readers are better served by
    /// English than by a script they do not write; English for `en*`, `C` and `POSIX`; `None`
    /// for anything else (unknown, so the next variable or English decides).
    pub fn from_locale(value: &str) -> Option<Lang> {
        // `language[_territory][.codeset][@modifier]`
        let name = value.split(['.', '@']).next().unwrap_or_default();
        let mut parts = name.split(['_', '-']);
        let language = parts.next().unwrap_or_default().to_ascii_lowercase();
        let rest: Vec<String> = parts.map(str::to_ascii_lowercase).collect();
        match language.as_str() {
            "zh" => {
                let traditional = rest
                    .iter()
                    .any(|p| matches!(p.as_str(), "tw" | "hk" | "mo" | "hant"));
                (!traditional).then_some(Lang::ZhCn)
            }
            "en" | "c" | "posix" => Some(Lang::En),
            _ => None,
        }
    }

    /// The language of the locale variables, looked at as `setlocale(LC_MESSAGES, "")` does:
    /// the first of `LC_ALL`, `LC_MESSAGES`, `LANG` that is set and not empty decides; a value
    /// gpufleet has no catalogue for means English.
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Lang {
        ["LC_ALL", "LC_MESSAGES", "LANG"]
            .iter()
            .find_map(|name| var(name).filter(|v| !v.is_empty()))
            .and_then(|value| Lang::from_locale(&value))
            .unwrap_or_default()
    }

    /// The language to use: the flag, else the config, else the locale.
    pub fn choose(
        flag: Option<Lang>,
        config: Option<Lang>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Lang {
        flag.or(config).unwrap_or_else(|| Lang::from_env(env))
    }

    /// Makes every later `t!` read this language's catalogue.
    pub fn apply(self) {
        rust_i18n::set_locale(self.tag());
    }
}

impl fmt::Display for Lang {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.tag())
    }
}

/// `--lang`'s value parser: `en` or `zh-CN`.
pub fn parse_flag(value: &str) -> Result<Lang, String> {
    Lang::from_tag(value).ok_or_else(|| {
        let value = format!("{value:?}");
        let tags = TAGS.join(", ");
        rust_i18n::t!("cli_value.not_a_language", value = value, tags = tags).into_owned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_string())
        }
    }

    #[test]
    fn the_flag_wins_then_the_config_then_the_locale() {
        let zh = [("LANG", "zh_CN.UTF-8")];
        assert_eq!(
            Lang::choose(Some(Lang::En), Some(Lang::ZhCn), env(&zh)),
            Lang::En
        );
        assert_eq!(Lang::choose(None, Some(Lang::En), env(&zh)), Lang::En);
        assert_eq!(Lang::choose(None, None, env(&zh)), Lang::ZhCn);
        assert_eq!(Lang::choose(None, None, env(&[])), Lang::En);
    }

    #[test]
    fn lc_all_then_lc_messages_then_lang_and_empty_ones_are_skipped() {
        let all = [("LC_ALL", "en_US.UTF-8"), ("LC_MESSAGES", "zh_CN.UTF-8")];
        assert_eq!(Lang::from_env(env(&all)), Lang::En);
        let messages = [
            ("LC_ALL", ""),
            ("LC_MESSAGES", "zh_CN.UTF-8"),
            ("LANG", "C"),
        ];
        assert_eq!(Lang::from_env(env(&messages)), Lang::ZhCn);
        let lang = [("LC_ALL", ""), ("LANG", "zh_CN.GB18030")];
        assert_eq!(Lang::from_env(env(&lang)), Lang::ZhCn);
    }

    #[test]
    fn simplified_chinese_locales_are_chinese_traditional_and_unknown_are_english() {
        for zh in [
            "zh_CN.UTF-8",
            "zh_CN",
            "zh",
            "zh_SG.UTF-8",
            "zh-Hans",
            "zh_CN@pinyin",
        ] {
            assert_eq!(Lang::from_locale(zh), Some(Lang::ZhCn), "{zh}");
        }
        for other in [
            "zh_TW.UTF-8",
            "zh_HK",
            "zh-Hant-TW",
            "fr_FR.UTF-8",
            "de",
            "",
        ] {
            assert_eq!(Lang::from_locale(other), None, "{other}");
            assert_eq!(Lang::from_env(env(&[("LANG", other)])), Lang::En, "{other}");
        }
        assert_eq!(Lang::from_locale("C.UTF-8"), Some(Lang::En));
    }

    #[test]
    fn the_flag_takes_exact_tags_only() {
        assert_eq!(parse_flag("zh-CN"), Ok(Lang::ZhCn));
        assert_eq!(parse_flag("en"), Ok(Lang::En));
        let refused = parse_flag("zh_CN").unwrap_err();
        assert!(refused.contains("en, zh-CN"), "{refused}");
    }
}
