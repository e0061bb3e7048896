//! What a release says to the person releasing, in the language of the interface: the plan
//! shown before the typed confirmation, and why a release was refused or failed. The errors'
//! own `Display` texts stay English for the log lines and the audit log; these are for the
//! screen and the terminal.

use rust_i18n::t;

use crate::config::Provider;

use super::execute::{CommandStatus, SendError};
use super::request::{BuildError, ReleaseAction};

/// A release action as the reader says it: `stop` / `terminate` (`关机` / `释放`).
pub fn action_words(action: ReleaseAction) -> String {
    match action {
        ReleaseAction::Stop => t!("action.stop"),
        ReleaseAction::Terminate => t!("action.terminate"),
    }
    .into_owned()
}

/// What a release action does to the instance and its data, in the interface's language.
pub fn effect_words(provider: Provider, action: ReleaseAction) -> String {
    effect_words_in(provider, action, &rust_i18n::locale())
}

/// [`effect_words`] in `locale`; in `en`, [`effect`].
pub fn effect_words_in(provider: Provider, action: ReleaseAction, locale: &str) -> String {
    use ReleaseAction::{Stop, Terminate};
    let key = match (provider, action) {
        (Provider::Vast, Stop) => "effect.vast_stop",
        (Provider::Vast, Terminate) => "effect.vast_terminate",
        (Provider::RunPod, Stop) => "effect.runpod_stop",
        (Provider::RunPod, Terminate) => "effect.runpod_terminate",
        (Provider::Lambda, _) => "effect.lambda",
        (Provider::AutoDl, Stop) => "effect.autodl_stop",
        (Provider::AutoDl, Terminate) => "effect.autodl_terminate",
        (Provider::Command, _) => "effect.command",
        (Provider::Ssh, _) => "effect.ssh",
    };
    t!(key, locale = locale).into_owned()
}

/// `: what the provider said`, or nothing when it said nothing.
pub(super) fn detail(text: &str, locale: &str) -> String {
    if text.is_empty() {
        String::new()
    } else {
        t!("release_error.detail", locale = locale, text = text).into_owned()
    }
}

/// Why sending a release failed.
pub fn send_error_words(error: &SendError) -> String {
    send_error_words_in(error, &rust_i18n::locale())
}

/// [`send_error_words`] in `locale`; in `en`, the error's `Display`.
pub fn send_error_words_in(error: &SendError, locale: &str) -> String {
    match error {
        SendError::Client(why) => t!("release_error.client", locale = locale, why = why),
        SendError::NoToken => t!("release_error.no_token", locale = locale),
        SendError::BadToken => t!("release_error.bad_token", locale = locale),
        SendError::TokenRejected { status, text } => t!(
            "release_error.token_rejected",
            locale = locale,
            status = status,
            detail = detail(text, locale)
        ),
        SendError::NotFound { text } => t!(
            "release_error.not_found",
            locale = locale,
            detail = detail(text, locale)
        ),
        SendError::ServerError { status, text } => t!(
            "release_error.server_error",
            locale = locale,
            status = status,
            detail = detail(text, locale)
        ),
        SendError::Unexpected { status, text } => t!(
            "release_error.unexpected",
            locale = locale,
            status = status,
            detail = detail(text, locale)
        ),
        SendError::Refused { text } => t!("release_error.refused", locale = locale, text = text),
        SendError::Timeout { url, timeout_ms } => {
            t!(
                "release_error.timeout",
                locale = locale,
                url = url,
                ms = timeout_ms
            )
        }
        SendError::Unreachable { url, message } => {
            t!(
                "release_error.unreachable",
                locale = locale,
                url = url,
                why = message
            )
        }
        SendError::ReadAnswer { url, message } => t!(
            "release_error.unreachable",
            locale = locale,
            url = url,
            why = t!(
                "release_words.reading_answer",
                locale = locale,
                why = message
            )
        ),
        SendError::EmptyCommand => t!(
            "release_error.spawn",
            locale = locale,
            program = "",
            why = t!("release_words.empty_command", locale = locale)
        ),
        SendError::Spawn { program, message } => {
            t!(
                "release_error.spawn",
                locale = locale,
                program = program,
                why = message
            )
        }
        SendError::CommandTimeout {
            program,
            timeout_ms,
        } => t!(
            "release_error.command_timeout",
            locale = locale,
            program = program,
            ms = timeout_ms
        ),
        SendError::CommandFailed {
            command,
            status,
            text,
        } => t!(
            "release_error.command_failed",
            locale = locale,
            command = command,
            status = command_status_words(*status, locale),
            detail = detail(text, locale)
        ),
        SendError::Remote { message } => t!("release_error.remote", locale = locale, why = message),
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
    build_error_words_in(error, &rust_i18n::locale())
}

/// [`build_error_words`] in `locale`; in `en`, the error's `Display`.
pub fn build_error_words_in(error: &BuildError, locale: &str) -> String {
    match error {
        BuildError::NoStop { provider } => t!(
            "release_error.no_stop",
            locale = locale,
            provider = provider
        ),
        BuildError::NoTerminate => t!("release_error.no_terminate", locale = locale),
        BuildError::MissingInstanceId { provider } => {
            t!(
                "release_error.missing_instance_id",
                locale = locale,
                provider = provider
            )
        }
        BuildError::MissingCommand => t!("release_error.missing_command", locale = locale),
        BuildError::BadBaseUrl { url } => {
            t!(
                "release_error.bad_base_url",
                locale = locale,
                url = format!("{url:?}")
            )
        }
    }
    .into_owned()
}

/// English, for the log: `exit 3`, `killed by a signal`.
impl std::fmt::Display for CommandStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&command_status_words(*self, "en"))
    }
}

/// English, as the log and the audit log keep it: the catalogue's English
/// ([`send_error_words_in`]).
impl std::fmt::Display for SendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&send_error_words_in(self, "en"))
    }
}

/// English, as the log keeps it: the catalogue's English
/// ([`build_error_words_in`]).
impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&build_error_words_in(self, "en"))
    }
}

/// What the action does to the instance and its data, in English, as the plan's JSON and the
/// log keep it (the dialog says [`effect_words`], in the reader's language).
pub fn effect(provider: Provider, action: ReleaseAction) -> String {
    effect_words_in(provider, action, "en")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::release::TokenError;
    use crate::release::flow::FlowError;
    use crate::release::flow_words::error_words;
    use crate::release::token_error_words;

    /// The English the log and the audit log keep, as it read when it was written in the
    /// source (users grep it); in Chinese our words are Chinese, the command and what it said
    /// as they came.
    #[test]
    fn the_english_is_as_before_and_chinese_is_chinese() {
        let failed = SendError::CommandFailed {
            command: "sh -c 'exit 3'".into(),
            status: CommandStatus::Exit(3),
            text: "no quota".into(),
        };
        let cases: [(String, &str); 8] = [
            (
                failed.to_string(),
                "sh -c 'exit 3' failed (exit 3): no quota",
            ),
            (
                SendError::CommandFailed {
                    command: "p".into(),
                    status: CommandStatus::Signal,
                    text: String::new(),
                }
                .to_string(),
                "p failed (killed by a signal)",
            ),
            (
                SendError::ReadAnswer {
                    url: "https://a".into(),
                    message: "reset".into(),
                }
                .to_string(),
                "could not reach https://a: reading the answer: reset",
            ),
            (
                SendError::EmptyCommand.to_string(),
                "could not start : the command is empty",
            ),
            (
                BuildError::NoStop { provider: "lambda" }.to_string(),
                "lambda has no stop, only terminate, which deletes the instance's local disk \
                 (persistent filesystems survive); use --terminate",
            ),
            (
                FlowError::Token {
                    problem: "没有令牌".into(),
                    english: "no token".into(),
                }
                .to_string(),
                "cannot release without the API token: no token",
            ),
            (
                FlowError::Send {
                    failure: super::super::SendFailure {
                        done: Vec::new(),
                        error: SendError::NoToken,
                    },
                    audit: Some("disk full".into()),
                }
                .to_string(),
                "no API token: none was loaded (and the audit log could not be written: disk full)",
            ),
            (
                FlowError::WrongName {
                    typed: "x".into(),
                    host: "h".into(),
                }
                .to_string(),
                "\"x\" is not the host name \"h\"; cancelled",
            ),
        ];
        for (said, expected) in cases {
            assert_eq!(said, expected);
        }
        let zh = send_error_words_in(&failed, "zh-CN");
        assert_eq!(zh, "sh -c 'exit 3' 失败（退出码 3）：no quota");
        let zh = send_error_words_in(&SendError::EmptyCommand, "zh-CN");
        assert!(!zh.contains("empty"), "{zh}");
    }

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
