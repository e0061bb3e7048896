//! The curated runbooks in the interface's language. The runbook files (`runbooks/*.toml`) are
//! written in English and stay the source of truth for commands, checks and ids; every text a
//! person reads (title, summary, the closing advice, parameter help, each step's title, why and conclusion,
//! each explanation) also has a catalogue entry, `runbook_text.<runbook>.<field>`, whose
//! English is the file's own text (a test holds them equal). A user's own runbook has no
//! entries and keeps its own words.

use crate::runbook::model::Runbook;

/// One readable text of a runbook: its catalogue key and where it sits.
pub struct Text<'a> {
    pub key: String,
    pub text: &'a str,
}

/// `gpu-lost` -> `gpu_lost`: catalogue keys take no dashes.
fn part(id: &str) -> String {
    id.replace('-', "_")
}

/// Every readable text of `book` with its catalogue key, in file order.
pub fn texts(book: &Runbook) -> Vec<Text<'_>> {
    let base = format!("runbook_text.{}", part(&book.id));
    let mut out = vec![
        Text {
            key: format!("{base}.title"),
            text: &book.title,
        },
        Text {
            key: format!("{base}.summary"),
            text: &book.summary,
        },
    ];
    if let Some(recurred) = &book.recurred {
        out.push(Text {
            key: format!("{base}.recurred"),
            text: recurred,
        });
    }
    for (i, explain) in book.explain.iter().enumerate() {
        out.push(Text {
            key: format!("{base}.explain_{i}"),
            text: &explain.say,
        });
    }
    for param in &book.params {
        let at = format!("{base}.param_{}", part(&param.name));
        out.push(Text {
            key: format!("{at}.help"),
            text: &param.help,
        });
        if let Some(reason) = &param.suggest_reason {
            out.push(Text {
                key: format!("{at}.suggest_reason"),
                text: reason,
            });
        }
    }
    for step in &book.steps {
        let at = format!("{base}.step_{}", part(&step.id));
        out.push(Text {
            key: format!("{at}.title"),
            text: &step.title,
        });
        out.push(Text {
            key: format!("{at}.why"),
            text: &step.why,
        });
        if let Some(say) = &step.say {
            out.push(Text {
                key: format!("{at}.say"),
                text: say,
            });
        }
        for (i, explain) in step.explain.iter().enumerate() {
            out.push(Text {
                key: format!("{at}.explain_{i}"),
                text: &explain.say,
            });
        }
    }
    out
}

/// `book` with each readable text from the current language's catalogue; a text with no
/// entry keeps the file's words.
pub fn localized(book: Runbook) -> Runbook {
    // `t!` gives the key back when the catalogue has no such entry: the file's words stay.
    let find = |key: &str, text: &mut String| {
        let found = rust_i18n::t!(key);
        if found != key {
            *text = found.into_owned();
        }
    };
    let mut book = book;
    let base = format!("runbook_text.{}", part(&book.id));
    find(&format!("{base}.title"), &mut book.title);
    find(&format!("{base}.summary"), &mut book.summary);
    if let Some(recurred) = book.recurred.as_mut() {
        find(&format!("{base}.recurred"), recurred);
    }
    for (i, explain) in book.explain.iter_mut().enumerate() {
        find(&format!("{base}.explain_{i}"), &mut explain.say);
    }
    for param in &mut book.params {
        let at = format!("{base}.param_{}", part(&param.name));
        find(&format!("{at}.help"), &mut param.help);
        if let Some(reason) = param.suggest_reason.as_mut() {
            find(&format!("{at}.suggest_reason"), reason);
        }
    }
    for step in &mut book.steps {
        let at = format!("{base}.step_{}", part(&step.id));
        find(&format!("{at}.title"), &mut step.title);
        find(&format!("{at}.why"), &mut step.why);
        if let Some(say) = step.say.as_mut() {
            find(&format!("{at}.say"), say);
        }
        for (i, explain) in step.explain.iter_mut().enumerate() {
            find(&format!("{at}.explain_{i}"), &mut explain.say);
        }
    }
    book
}
