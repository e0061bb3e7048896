//! What a release's plan and its refusals say to the person releasing, in the interface's
//! language: the plan shown before the typed confirmation, and why a release was refused or
//! failed. `FlowError`'s `Display` is the catalogue's English, for the log and the audit log.

use rust_i18n::t;

use crate::cost::format_duration_ms;
use crate::remote::sanitize as clean;

use super::flow::{FlowError, ReleasePlan, quoted};
use super::words::{action_words, build_error_words_in, effect_words, send_error_words_in};

impl ReleasePlan {
    /// The plan as lines of text, the request included (token redacted).
    pub fn lines(&self) -> Vec<String> {
        let instance = self
            .instance_id
            .as_deref()
            .map(|id| t!("release_plan.instance", id = clean(id)).into_owned())
            .unwrap_or_default();
        let mut lines = Vec::new();
        if self.simulated {
            lines.push(t!("release_plan.simulated").into_owned());
        }
        let spent = match self.spent.as_deref() {
            Some(spent) => spent.to_string(),
            None => t!("release_plan.spent_unknown").into_owned(),
        };
        lines.extend([
            t!(
                "release_plan.head",
                action = action_words(self.action),
                host = self.host,
                provider = self.provider.as_str(),
                instance = instance
            )
            .into_owned(),
            t!(
                "release_plan.effect",
                effect = effect_words(self.provider, self.action)
            )
            .into_owned(),
            t!(
                "release_plan.spent",
                spent = spent,
                billed = format_duration_ms(self.billed_ms),
                idle = format_duration_ms(self.current_idle_ms)
            )
            .into_owned(),
        ]);
        lines.push(match &self.backup {
            Some(argv) => t!(
                "release_plan.backup",
                host = self.host,
                command = quoted(argv)
            )
            .into_owned(),
            None => t!("release_plan.no_backup").into_owned(),
        });
        lines.push(t!("release_plan.request").into_owned());
        lines.extend(
            self.request
                .shown(&self.host)
                .into_iter()
                .map(|line| format!("    {line}")),
        );
        for warning in &self.warnings {
            lines.push(t!("release_plan.warning", text = warning).into_owned());
        }
        if let Some(problem) = &self.token_problem {
            lines.push(t!("release_plan.token", problem = problem).into_owned());
        }
        lines
    }
}

/// Why a release was refused or failed.
pub fn error_words(error: &FlowError) -> String {
    error_words_in(error, &rust_i18n::locale())
}

/// [`error_words`] in `locale`; in `en`, the error's `Display` (the log's text), except that
/// a token's problem is said in the language it was loaded in.
pub fn error_words_in(error: &FlowError, locale: &str) -> String {
    let text = match error {
        FlowError::ReadOnly => t!("release.read_only", locale = locale),
        FlowError::UnknownHost(host) => {
            t!(
                "release_error.unknown_host",
                locale = locale,
                host = format!("{host:?}")
            )
        }
        FlowError::NoReleaseConfig(host) => t!("release.no_table", locale = locale, host = host),
        FlowError::Build(e) => return build_error_words_in(e, locale),
        FlowError::Token { problem, .. } => {
            t!("release.no_token", locale = locale, problem = problem)
        }
        FlowError::BackupNotRun => t!("release_error.backup_not_run", locale = locale),
        FlowError::BackupFailed(why) => {
            t!("release_error.backup_failed", locale = locale, why = why)
        }
        FlowError::Cancelled => t!("release.cancelled", locale = locale),
        FlowError::WrongName { typed, host } => t!(
            "release_error.wrong_name",
            locale = locale,
            typed = format!("{typed:?}"),
            host = format!("{host:?}")
        ),
        FlowError::NotConfirmed => t!("release_error.not_confirmed", locale = locale),
        FlowError::AlreadySent => t!("release_error.already_sent", locale = locale),
        FlowError::Send { failure, audit } => {
            let note = audit
                .as_ref()
                .map(|why| t!("release.audit_unwritten", locale = locale, why = why).into_owned())
                .unwrap_or_default();
            return send_error_words_in(&failure.error, locale) + &note;
        }
        FlowError::Audit(e) => return e.to_string(),
        FlowError::Unrecordable(e) => t!("release_error.unrecordable", locale = locale, why = e),
    };
    text.into_owned()
}

/// English, as the log and the audit log keep it: the catalogue's English
/// ([`error_words_in`]), the token's problem in English too.
impl std::fmt::Display for FlowError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = match self {
            FlowError::Token { english, .. } => {
                rust_i18n::t!("release.no_token", locale = "en", problem = english).into_owned()
            }
            other => error_words_in(other, "en"),
        };
        f.write_str(&text)
    }
}
