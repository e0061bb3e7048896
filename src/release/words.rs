//! What a release says to the person releasing, in the language of the interface: the plan
//! shown before the typed confirmation, and why a release was refused or failed. The errors'
//! own `Display` texts stay English for the log lines and the audit log; these are for the
//! screen and the terminal.

use rust_i18n::t;

use crate::config::Provider;
use crate::cost::format_duration_ms;
use crate::remote::sanitize as clean;

use super::execute::{CommandStatus, SendError};
use super::flow::{FlowError, ReleasePlan, quoted};
use super::request::{BuildError, ReleaseAction};

/// A release action as the reader says it: `stop` / `terminate` (`关机` / `释放`).
pub fn action_words(action: ReleaseAction) -> String {
    match action {
        ReleaseAction::Stop => t!("action.stop"),
        ReleaseAction::Terminate => t!("action.terminate"),
    }
    .into_owned()
}

/// What a release action does to the instance and its data (the English of
/// [`super::effect`], which the plan's JSON keeps).
pub fn effect_words(provider: Provider, action: ReleaseAction) -> String {
    use ReleaseAction::{Stop, Terminate};
    match (provider, action) {
        (Provider::Vast, Stop) => t!("effect.vast_stop"),
        (Provider::Vast, Terminate) => t!("effect.vast_terminate"),
        (Provider::RunPod, Stop) => t!("effect.runpod_stop"),
        (Provider::RunPod, Terminate) => t!("effect.runpod_terminate"),
        (Provider::Lambda, _) => t!("effect.lambda"),
        (Provider::AutoDl, Stop) => t!("effect.autodl_stop"),
        (Provider::AutoDl, Terminate) => t!("effect.autodl_terminate"),
        (Provider::Command, _) => t!("effect.command"),
        (Provider::Ssh, _) => t!("effect.ssh"),
    }
    .into_owned()
}

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
    let text = match error {
        FlowError::ReadOnly => t!("release.read_only"),
        FlowError::UnknownHost(host) => {
            t!("release_error.unknown_host", host = format!("{host:?}"))
        }
        FlowError::NoReleaseConfig(host) => t!("release.no_table", host = host),
        FlowError::Build(e) => return build_error_words(e),
        FlowError::Token { problem, .. } => t!("release.no_token", problem = problem),
        FlowError::BackupNotRun => t!("release_error.backup_not_run"),
        FlowError::BackupFailed(why) => t!("release_error.backup_failed", why = why),
        FlowError::Cancelled => t!("release.cancelled"),
        FlowError::WrongName { typed, host } => t!(
            "release_error.wrong_name",
            typed = format!("{typed:?}"),
            host = format!("{host:?}")
        ),
        FlowError::NotConfirmed => t!("release_error.not_confirmed"),
        FlowError::AlreadySent => t!("release_error.already_sent"),
        FlowError::Send { failure, audit } => {
            let note = audit
                .as_ref()
                .map(|why| t!("release.audit_unwritten", why = why).into_owned())
                .unwrap_or_default();
            return send_error_words(&failure.error) + &note;
        }
        FlowError::Audit(e) => return e.to_string(),
        FlowError::Unrecordable(e) => t!("release_error.unrecordable", why = e),
    };
    text.into_owned()
}

/// `: what the provider said`, or nothing when it said nothing.
fn detail(text: &str) -> String {
    if text.is_empty() {
        String::new()
    } else {
        t!("release_error.detail", text = text).into_owned()
    }
}

/// Why sending a release failed.
pub fn send_error_words(error: &SendError) -> String {
    match error {
        SendError::Client(why) => t!("release_error.client", why = why),
        SendError::NoToken => t!("release_error.no_token"),
        SendError::BadToken => t!("release_error.bad_token"),
        SendError::TokenRejected { status, text } => t!(
            "release_error.token_rejected",
            status = status,
            detail = detail(text)
        ),
        SendError::NotFound { text } => t!("release_error.not_found", detail = detail(text)),
        SendError::ServerError { status, text } => t!(
            "release_error.server_error",
            status = status,
            detail = detail(text)
        ),
        SendError::Unexpected { status, text } => t!(
            "release_error.unexpected",
            status = status,
            detail = detail(text)
        ),
        SendError::Refused { text } => t!("release_error.refused", text = text),
        SendError::Timeout { url, timeout_ms } => {
            t!("release_error.timeout", url = url, ms = timeout_ms)
        }
        SendError::Unreachable { url, message } => {
            t!("release_error.unreachable", url = url, why = message)
        }
        SendError::ReadAnswer { url, message } => t!(
            "release_error.unreachable",
            url = url,
            why = t!("release_words.reading_answer", why = message)
        ),
        SendError::EmptyCommand => t!(
            "release_error.spawn",
            program = "",
            why = t!("release_words.empty_command")
        ),
        SendError::Spawn { program, message } => {
            t!("release_error.spawn", program = program, why = message)
        }
        SendError::CommandTimeout {
            program,
            timeout_ms,
        } => t!(
            "release_error.command_timeout",
            program = program,
            ms = timeout_ms
        ),
        SendError::CommandFailed {
            command,
            status,
            text,
        } => t!(
            "release_error.command_failed",
            command = command,
            status = command_status_words(*status, &rust_i18n::locale()),
            detail = detail(text)
        ),
        SendError::Remote { message } => t!("release_error.remote", why = message),
    }
    .into_owned()
}

/// How a failed release command ended, in `locale`: `exit 3` (`退出码 3`), killed by a signal.
pub fn command_status_words(status: CommandStatus, locale: &str) -> String {
    match status {
        CommandStatus::Exit(code) => t!("release_words.exit", locale = locale, code = code),
        CommandStatus::Signal => t!("release_words.signal", locale = locale),
    }
    .into_owned()
}

/// Why the config cannot say how to release a host.
pub fn build_error_words(error: &BuildError) -> String {
    match error {
        BuildError::NoStop { provider } => t!("release_error.no_stop", provider = provider),
        BuildError::NoTerminate => t!("release_error.no_terminate"),
        BuildError::MissingInstanceId { provider } => {
            t!("release_error.missing_instance_id", provider = provider)
        }
        BuildError::MissingCommand => t!("release_error.missing_command"),
        BuildError::BadBaseUrl { url } => {
            t!("release_error.bad_base_url", url = format!("{url:?}"))
        }
    }
    .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::release::TokenError;
    use crate::release::token_error_words;

    /// In English every word is the error's own text, so the terminal and the log agree.
    #[test]
    fn english_words_are_the_errors_own_text() {
        let sends = [
            SendError::Client("tls".into()),
            SendError::NoToken,
            SendError::BadToken,
            SendError::TokenRejected {
                status: 401,
                text: "bad key".into(),
            },
            SendError::NotFound {
                text: String::new(),
            },
            SendError::ServerError {
                status: 502,
                text: "x".into(),
            },
            SendError::Unexpected {
                status: 418,
                text: String::new(),
            },
            SendError::Refused { text: "no".into() },
            SendError::Timeout {
                url: "https://a/b".into(),
                timeout_ms: 30_000,
            },
            SendError::Unreachable {
                url: "https://a".into(),
                message: "refused".into(),
            },
            SendError::Spawn {
                program: "p".into(),
                message: "not found".into(),
            },
            SendError::CommandTimeout {
                program: "p".into(),
                timeout_ms: 5,
            },
            SendError::CommandFailed {
                command: "p a".into(),
                status: CommandStatus::Exit(3),
                text: "said".into(),
            },
            SendError::CommandFailed {
                command: "p".into(),
                status: CommandStatus::Signal,
                text: String::new(),
            },
            SendError::ReadAnswer {
                url: "https://a".into(),
                message: "reset".into(),
            },
            SendError::EmptyCommand,
            SendError::Remote {
                message: "gone".into(),
            },
        ];
        for e in &sends {
            assert_eq!(send_error_words(e), e.to_string());
        }
        let builds = [
            BuildError::NoStop { provider: "lambda" },
            BuildError::NoTerminate,
            BuildError::MissingInstanceId { provider: "vast" },
            BuildError::MissingCommand,
            BuildError::BadBaseUrl {
                url: "ftp://x".into(),
            },
        ];
        for e in &builds {
            assert_eq!(build_error_words(e), e.to_string());
        }
        let flows = [
            FlowError::ReadOnly,
            FlowError::UnknownHost("h".into()),
            FlowError::NoReleaseConfig("h".into()),
            FlowError::Token {
                problem: "no token".into(),
                english: "no token".into(),
            },
            FlowError::BackupNotRun,
            FlowError::BackupFailed("exit 1".into()),
            FlowError::Cancelled,
            FlowError::WrongName {
                typed: "x".into(),
                host: "h".into(),
            },
            FlowError::NotConfirmed,
            FlowError::AlreadySent,
            FlowError::Send {
                failure: super::super::SendFailure {
                    done: Vec::new(),
                    error: SendError::BadToken,
                },
                audit: Some("disk full".into()),
            },
        ];
        for e in &flows {
            assert_eq!(error_words(e), e.to_string());
        }
        let tokens = [
            TokenError::NotConfigured {
                what: "token",
                env_key: "token_env",
                file_key: "token_file",
                table: "[hosts.release]",
            },
            TokenError::EnvMissing {
                name: "K".into(),
                key: "token_env",
            },
            TokenError::EnvEmpty {
                name: "K".into(),
                key: "token_env",
            },
            TokenError::FileEmpty {
                path: "/t".into(),
                key: "token_file",
            },
            TokenError::Malformed {
                what: "token",
                from: "$K".into(),
            },
        ];
        for e in &tokens {
            assert_eq!(token_error_words(e), e.to_string());
        }
    }
}
