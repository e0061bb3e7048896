//! The report's words for what `report.json` keeps as identifiers: a check's result, as a
//! reader of report.md or a ticket reads it (a finding's severity is `Severity::said`).

use rust_i18n::t;

/// A check's result (`pass`, `warning`, `failure`, as `report.json` writes it) in `locale`.
pub fn result_word(result: &str, locale: &str) -> String {
    match result {
        super::RESULT_PASS => t!("report_md.result_pass", locale = locale),
        super::RESULT_WARNING => t!("report_md.result_warning", locale = locale),
        super::RESULT_FAILURE => t!("report_md.result_failure", locale = locale),
        other => other.into(),
    }
    .into_owned()
}
