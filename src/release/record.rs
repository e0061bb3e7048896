//! Recording a release in the ledger: the check made before the provider is asked (can the
//! ledger record it?), the record itself, and what to add by hand when recording failed after
//! the provider had already carried the release out.

use std::path::PathBuf;

use crate::cost::{Ledger, LedgerSettings, LedgerState, LedgerStore};
use crate::telemetry::TimestampMs;
use crate::words::Words;

/// A release the provider carried out but the ledger could not record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unrecorded {
    /// The ledger file.
    pub path: PathBuf,
    /// Why it could not be written.
    pub error: String,
    /// `"host": { ... }`: the entry to put under `"hosts"` in the ledger by hand.
    pub entry_json: String,
}

impl Unrecorded {
    /// The lines a user reads: what happened, where, and what to add.
    pub fn lines(&self, host: &str) -> Vec<String> {
        self.words(host).iter().map(Words::localized).collect()
    }

    /// [`Unrecorded::lines`] as catalogue words (said in English for the log); the entry to
    /// add is JSON and reads the same in every language.
    pub fn words(&self, host: &str) -> Vec<Words> {
        let mut lines = vec![
            Words::new("release_plan.unrecorded")
                .put("host", host)
                .put("why", self.error.clone()),
            Words::new("release_plan.add_by_hand").put("path", self.path.display().to_string()),
        ];
        lines.extend(
            self.entry_json
                .lines()
                .map(|line| Words::verbatim(format!("  {line}"))),
        );
        lines
    }
}

/// What closing one host's ledger needs.
#[derive(Debug, Clone, Copy)]
pub(super) struct Closing<'a> {
    pub host: &'a str,
    pub settings: LedgerSettings,
    pub billing_started_ms: Option<TimestampMs>,
    pub action: &'a str,
    pub provider: &'a str,
    pub at_ms: TimestampMs,
}

impl Closing<'_> {
    /// `stored` (the host's ledger as kept, if any) closed at the release.
    fn closed(&self, stored: Option<LedgerState>) -> LedgerState {
        let mut ledger = Ledger::resume(self.settings, stored, self.billing_started_ms);
        ledger.close(self.at_ms, self.action, self.provider);
        ledger.into_state()
    }

    /// Closes the host's stored ledger under the file's lock; on failure, the entry to add by
    /// hand, built from whatever of the stored ledger could still be read.
    pub fn record(&self, store: &LedgerStore) -> Result<(), Unrecorded> {
        let written = store.update(|book| {
            let closed = self.closed(book.hosts.get(self.host).cloned());
            book.hosts.insert(self.host.to_string(), closed);
        });
        let Err(error) = written else {
            return Ok(());
        };
        let stored = store
            .load()
            .ok()
            .and_then(|book| book.hosts.get(self.host).cloned());
        let entry = serde_json::json!({ self.host: self.closed(stored) });
        let entry_json = serde_json::to_string_pretty(&entry)
            .map(|text| strip_braces(&text))
            .unwrap_or_else(|e| {
                rust_i18n::t!("release_plan.entry_not_shown", why = e).into_owned()
            });
        Err(Unrecorded {
            path: store.path().to_owned(),
            error: error.to_string(),
            entry_json,
        })
    }
}

/// `{\n  "h": {...}\n}` -> `"h": {...}`, the form that goes inside `"hosts": { }`.
fn strip_braces(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    match lines.as_slice() {
        [first, inner @ .., last] if *first == "{" && *last == "}" => inner
            .iter()
            .map(|line| line.strip_prefix("  ").unwrap_or(line))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn closing(at_ms: TimestampMs) -> Closing<'static> {
        Closing {
            host: "h1",
            settings: LedgerSettings::default(),
            billing_started_ms: None,
            action: "stop",
            provider: "command",
            at_ms,
        }
    }

    #[test]
    fn a_corrupt_ledger_gives_the_entry_to_add_by_hand() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.json");
        std::fs::write(&path, "{ not json").unwrap();
        let store = LedgerStore::at(&path);
        let unrecorded = closing(5_000).record(&store).unwrap_err();
        assert_eq!(unrecorded.path, path);
        let back: serde_json::Value =
            serde_json::from_str(&format!("{{{}}}", unrecorded.entry_json)).unwrap();
        assert_eq!(back["h1"]["released"]["at_ms"], 5_000);
        assert_eq!(back["h1"]["released"]["action"], "stop");
        // Nothing was written over the damaged file.
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{ not json");
    }

    #[test]
    fn a_good_ledger_records_the_release() {
        let dir = tempfile::tempdir().unwrap();
        let store = LedgerStore::at(dir.path().join("ledger.json"));
        closing(7_000).record(&store).unwrap();
        let book = store.load().unwrap();
        assert_eq!(book.hosts["h1"].released.as_ref().unwrap().at_ms, 7_000);
    }
}
