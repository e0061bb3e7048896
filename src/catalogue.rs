//! The catalogues of every language as static tables, read where a text is looked up. The
//! build script compiles `locales/*.toml` into one text and a sorted index per language; the
//! `t!` macro's backend here finds a key by binary search. Nothing is parsed or allocated at
//! start: the catalogues held as maps of strings took about 0.7 MB of heap for both languages
//! (and the code that filled them about as much again), whatever language was shown.

mod tables {
    include!(concat!(env!("OUT_DIR"), "/catalogue_tables.rs"));
}

/// One language's catalogue: its keys and texts, and where each lies in `text`.
struct Table {
    text: &'static str,
    index: &'static [[u32; 3]],
}

impl Table {
    fn get(&self, key: &str) -> Option<&'static str> {
        let slice = |from: u32, to: u32| {
            self.text
                .get(usize::try_from(from).ok()?..usize::try_from(to).ok()?)
        };
        let at = self
            .index
            .binary_search_by(|&[key_start, text_start, _]| {
                slice(key_start, text_start).unwrap_or_default().cmp(key)
            })
            .ok()?;
        let [_, text_start, text_end] = *self.index.get(at)?;
        slice(text_start, text_end)
    }
}

const LOCALES: [(&str, Table); 2] = [
    (
        "en",
        Table {
            text: tables::EN_TEXT,
            index: tables::EN_INDEX,
        },
    ),
    (
        "zh-CN",
        Table {
            text: tables::ZH_CN_TEXT,
            index: tables::ZH_CN_INDEX,
        },
    ),
];

/// The backend `t!` reads through (see `lib.rs`).
pub struct Catalogue;

impl rust_i18n::Backend for Catalogue {
    fn available_locales(&self) -> Vec<&str> {
        LOCALES.iter().map(|(locale, _)| *locale).collect()
    }

    fn translate(&self, locale: &str, key: &str) -> Option<&str> {
        LOCALES
            .iter()
            .find(|(name, _)| *name == locale)
            .and_then(|(_, table)| table.get(key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rust_i18n::Backend;

    #[test]
    fn every_key_of_both_catalogues_is_found_with_its_text() {
        for (locale, table) in &LOCALES {
            assert!(table.index.len() > 1000, "{locale}: {}", table.index.len());
            for &[key_start, text_start, text_end] in table.index {
                let key = &table.text[key_start as usize..text_start as usize];
                let text = &table.text[text_start as usize..text_end as usize];
                assert_eq!(
                    Catalogue.translate(locale, key),
                    Some(text),
                    "{locale} {key}"
                );
            }
        }
        assert_eq!(
            Catalogue.translate("en", "alert_text.no_data"),
            Some("no data")
        );
        assert_eq!(Catalogue.translate("en", "alert_text.no_such_key"), None);
        assert_eq!(Catalogue.translate("fr", "alert_text.no_data"), None);
    }
}
