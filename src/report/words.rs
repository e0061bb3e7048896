//! The report's words for what `report.json` keeps as identifiers: a finding's severity and a
//! check's result, as a reader of report.md or a ticket reads them.

use rust_i18n::t;

use crate::diagnose::Severity;

/// A finding's severity in the reader's words (`critical` in English, as JSON writes it).
pub fn severity_word(severity: Severity) -> String {
    match severity {
        Severity::Critical => t!("alert_text.severity_critical"),
        Severity::Warning => t!("alert_text.severity_warning"),
        Severity::Info => t!("alert_text.severity_info"),
    }
    .into_owned()
}

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
