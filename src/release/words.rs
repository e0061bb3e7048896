//! What a release says to the person releasing, in the language of the interface: the plan
//! shown before the typed confirmation, and why a release was refused or failed. The errors'
//! own `Display` texts stay English for the log lines and the audit log; these are for the
//! screen and the terminal.

use crate::config::Provider;
use crate::words::Words;

use super::execute::{CommandStatus, SendError};
use super::request::{BuildError, ReleaseAction};

impl ReleaseAction {
    /// The action as the reader says it: `stop` / `terminate` (`关机` / `释放`).
    pub fn words(self) -> Words {
        match self {
            ReleaseAction::Stop => Words::new("action.stop"),
            ReleaseAction::Terminate => Words::new("action.terminate"),
        }
    }
}

/// A release action as the reader says it, in the interface's language.
pub fn action_words(action: ReleaseAction) -> String {
    action.words().localized()
}

/// What a release action does to the instance and its data; its English is what the plan's
/// JSON and the log keep.
pub fn effect_words(provider: Provider, action: ReleaseAction) -> Words {
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
    Words::new(key)
}

/// `: what the provider said`, or nothing when it said nothing.
pub(super) fn detail(text: &str) -> Words {
    if text.is_empty() {
        Words::verbatim("")
    } else {
        Words::new("release_error.detail").put("text", text.to_string())
    }
}

impl SendError {
    /// Why sending a release failed; in English, the error's `Display`.
    pub fn words(&self) -> Words {
        match self {
            SendError::Client(why) => {
                Words::new("release_error.client").put("why", why.to_string())
            }
            SendError::NoToken => Words::new("release_error.no_token"),
            SendError::BadToken => Words::new("release_error.bad_token"),
            SendError::TokenRejected { status, text } => Words::new("release_error.token_rejected")
                .put("status", status.to_string())
                .put_words("detail", detail(text)),
            SendError::NotFound { text } => {
                Words::new("release_error.not_found").put_words("detail", detail(text))
            }
            SendError::ServerError { status, text } => Words::new("release_error.server_error")
                .put("status", status.to_string())
                .put_words("detail", detail(text)),
            SendError::Unexpected { status, text } => Words::new("release_error.unexpected")
                .put("status", status.to_string())
                .put_words("detail", detail(text)),
            SendError::Refused { text } => {
                Words::new("release_error.refused").put("text", text.to_string())
            }
            SendError::Timeout { url, timeout_ms } => Words::new("release_error.timeout")
                .put("url", url.to_string())
                .put("ms", timeout_ms.to_string()),
            SendError::Unreachable { url, message } => Words::new("release_error.unreachable")
                .put("url", url.to_string())
                .put("why", message.to_string()),
            SendError::ReadAnswer { url, message } => Words::new("release_error.unreachable")
                .put("url", url.to_string())
                .put_words(
                    "why",
                    Words::new("release_words.reading_answer").put("why", message.to_string()),
                ),
            SendError::EmptyCommand => Words::new("release_error.spawn")
                .put("program", "")
                .put_words("why", Words::new("release_words.empty_command")),
            SendError::Spawn { program, message } => Words::new("release_error.spawn")
                .put("program", program.to_string())
                .put("why", message.to_string()),
            SendError::CommandTimeout {
                program,
                timeout_ms,
            } => Words::new("release_error.command_timeout")
                .put("program", program.to_string())
                .put("ms", timeout_ms.to_string()),
            SendError::CommandFailed {
                command,
                status,
                text,
            } => Words::new("release_error.command_failed")
                .put("command", command.to_string())
                .put_words("status", status.words())
                .put_words("detail", detail(text)),
            SendError::Remote { message } => {
                Words::new("release_error.remote").put("why", message.to_string())
            }
        }
    }
}

impl CommandStatus {
    /// How a failed release command ended: `exit 3` (`退出码 3`), killed by a signal.
    pub fn words(self) -> Words {
        match self {
            CommandStatus::Exit(code) => {
                Words::new("release_words.exit").put("code", code.to_string())
            }
            CommandStatus::Signal => Words::new("release_words.signal"),
        }
    }
}

impl BuildError {
    /// Why the config cannot say how to release a host; in English, the error's `Display`.
    pub fn words(&self) -> Words {
        match self {
            BuildError::NoStop { provider } => {
                Words::new("release_error.no_stop").put("provider", provider.to_string())
            }
            BuildError::NoTerminate => Words::new("release_error.no_terminate"),
            BuildError::MissingInstanceId { provider } => {
                Words::new("release_error.missing_instance_id")
                    .put("provider", provider.to_string())
            }
            BuildError::MissingCommand => Words::new("release_error.missing_command"),
            BuildError::BadBaseUrl { url } => {
                Words::new("release_error.bad_base_url").put("url", format!("{url:?}"))
            }
        }
    }
}

/// English, for the log: `exit 3`, `killed by a signal`.
impl std::fmt::Display for CommandStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.words().fmt(f)
    }
}

/// English, as the log and the audit log keep it: the catalogue's English of
/// [`SendError::words`].
impl std::fmt::Display for SendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.words().fmt(f)
    }
}

/// English, as the log keeps it: the catalogue's English of [`BuildError::words`].
impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.words().fmt(f)
    }
}

/// What the action does to the instance and its data, in English, as the plan's JSON and the
/// log keep it (the dialog says [`effect_words`], in the reader's language).
pub fn effect(provider: Provider, action: ReleaseAction) -> String {
    effect_words(provider, action).english()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::release::TokenError;
    use crate::release::flow::FlowError;

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
        let zh = failed.words().render("zh-CN");
        assert_eq!(zh, "sh -c 'exit 3' 失败（退出码 3）：no quota");
        let zh = SendError::EmptyCommand.words().render("zh-CN");
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
            assert_eq!(e.words().localized(), e.to_string());
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
            assert_eq!(e.words().localized(), e.to_string());
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
            assert_eq!(e.words().localized(), e.to_string());
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
            assert_eq!(e.words().localized(), e.to_string());
        }
    }
}
