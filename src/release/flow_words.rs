//! What a release's plan and its refusals say to the person releasing, in the interface's
//! language: the plan shown before the typed confirmation, and why a release was refused or
//! failed. `FlowError`'s `Display` is the catalogue's English, for the log and the audit log.

use rust_i18n::t;

use crate::cost::format_duration_ms;
use crate::remote::sanitize as clean;
use crate::words::Words;

use super::flow::{FlowError, ReleasePlan, quoted};
use super::words::{action_words, effect_words};

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
                effect = effect_words(self.provider, self.action).localized()
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

impl FlowError {
    /// Why a release was refused or failed; in English, the error's `Display` (the log's
    /// text), except that a token's problem is said in the language it was loaded in.
    pub fn words(&self) -> Words {
        match self {
            FlowError::ReadOnly => Words::new("release.read_only"),
            FlowError::UnknownHost(host) => {
                Words::new("release_error.unknown_host").put("host", format!("{host:?}"))
            }
            FlowError::NoReleaseConfig(host) => {
                Words::new("release.no_table").put("host", host.to_string())
            }
            FlowError::Build(e) => e.words(),
            FlowError::Token { problem, .. } => {
                Words::new("release.no_token").put("problem", problem.to_string())
            }
            FlowError::BackupNotRun => Words::new("release_error.backup_not_run"),
            FlowError::BackupFailed(why) => {
                Words::new("release_error.backup_failed").put("why", why.to_string())
            }
            FlowError::Cancelled => Words::new("release.cancelled"),
            FlowError::WrongName { typed, host } => Words::new("release_error.wrong_name")
                .put("typed", format!("{typed:?}"))
                .put("host", format!("{host:?}")),
            FlowError::NotConfirmed => Words::new("release_error.not_confirmed"),
            FlowError::AlreadySent => Words::new("release_error.already_sent"),
            FlowError::Send { failure, audit } => {
                let note = match audit {
                    Some(why) => Words::new("release.audit_unwritten").put("why", why.to_string()),
                    None => Words::verbatim(""),
                };
                Words::new("release.then")
                    .put_words("first", failure.error.words())
                    .put_words("then", note)
            }
            FlowError::Audit(e) => Words::verbatim(e.to_string()),
            FlowError::Unrecordable(e) => {
                Words::new("release_error.unrecordable").put("why", e.to_string())
            }
        }
    }
}

/// Why a release was refused or failed, in the interface's language.
pub fn error_words(error: &FlowError) -> String {
    error.words().localized()
}

/// English, as the log and the audit log keep it: the catalogue's English of
/// [`FlowError::words`], the token's problem in English too.
impl std::fmt::Display for FlowError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FlowError::Token { english, .. } => Words::new("release.no_token")
                .put("problem", english.to_string())
                .fmt(f),
            other => other.words().fmt(f),
        }
    }
}
