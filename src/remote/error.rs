//! What can go wrong between gpufleet and a host, with messages that say what to do next.
//! The messages are catalogue words (`link_error.*`, `link_summary.*`) built here: `Display` is
//! their English, as the log and recordings keep it; the console (the line under a down host's
//! row, the host view's banner) and the CLI say them in the user's language. What the OS,
//! libssh2 or a host said is put in as it came, and so are the parts other modules word (a
//! login's attempts, the reason an option is refused, how to clear a changed key).

use std::path::PathBuf;

use thiserror::Error;

use crate::config::SshTargetError;
use crate::remote::quote::CommandError;
use crate::words::Words;

#[derive(Debug, Error)]
pub enum RemoteError {
    Target {
        spec: String,
        error: SshTargetError,
    },
    SshConfig {
        path: PathBuf,
        /// What is wrong, in catalogue words (what the OS said, as it said it).
        message: Box<crate::words::Words>,
    },
    UnsupportedOption {
        host: String,
        /// The ssh config file that was read (the option may come from a file it includes).
        config: PathBuf,
        option: String,
        /// What gpufleet would do differently, and what to write instead.
        why: Box<crate::words::Words>,
    },
    UnevaluatedMatch {
        host: String,
        place: Box<crate::words::Words>,
        criterion: String,
        option: String,
    },
    Resolve {
        host: String,
        #[source]
        source: std::io::Error,
    },
    /// The name resolved to no address at all.
    NoAddress {
        host: String,
    },
    Connect {
        addr: String,
        #[source]
        source: std::io::Error,
    },
    /// A jump host of `ProxyJump` failed; `host` as written there.
    JumpHost {
        host: String,
        #[source]
        source: Box<RemoteError>,
    },
    /// The host's `ProxyCommand` could not carry the session (its text is not shown).
    Proxy {
        host: String,
        message: Box<crate::words::Words>,
    },
    /// `addr`: where the transport leads (an address, or through a proxy or jump host);
    /// `message`: what libssh2 said, with what a ProxyCommand said.
    Handshake {
        addr: Box<crate::words::Words>,
        message: Box<crate::words::Words>,
    },
    /// Something answers on the port, but not an SSH server: its first line (`said`, cut
    /// short) is not an SSH version line (a web server, another service, a wrong port).
    NotSsh {
        addr: Box<crate::words::Words>,
        port: u16,
        said: String,
    },
    HostKeyUnknown {
        known_as: String,
        key_type: String,
        fingerprint: String,
        /// What to do, as catalogue words (English here, in the console's language there).
        hint: Box<crate::words::Words>,
    },
    HostKeyDeclined {
        known_as: String,
        key_type: String,
        fingerprint: String,
    },
    HostKeyChanged {
        known_as: String,
        key_type: String,
        presented: String,
        /// Every key of that type on file for the host, as `type SHA256:... (FILE line N)`.
        expected: Box<crate::words::Words>,
        /// How to clear the old key if the host really was re-installed.
        remedy: Box<crate::words::Words>,
    },
    /// `known_hosts` is the file and line of the `@revoked` entry.
    HostKeyRevoked {
        known_as: String,
        known_hosts: Box<crate::words::Words>,
        fingerprint: String,
    },
    /// `known_hosts` is the file and line of the `@cert-authority` entry.
    HostKeyCertOnly {
        known_as: String,
        known_hosts: Box<crate::words::Words>,
        fingerprint: String,
    },
    StrictNoRefused {
        target: String,
    },
    KnownHosts {
        path: PathBuf,
        /// What is wrong, in catalogue words (what the OS said, as it said it).
        message: Box<crate::words::Words>,
    },
    Auth {
        target: String,
        offered: String,
        /// Each attempt, in catalogue words (`auth.rs`).
        tried: Vec<crate::words::Words>,
    },
    /// `context` says what gpufleet was doing (catalogue words); `message` is libssh2's or
    /// the OS's.
    Ssh {
        context: Box<crate::words::Words>,
        message: String,
    },
    LinkDead {
        silent_s: u64,
    },
    Incomplete {
        timeout_ms: u64,
    },
    Command(#[from] CommandError),
    Stopped,
}

impl RemoteError {
    /// Errors that retrying cannot fix: the link gives up and waits to be started again.
    pub fn is_permanent(&self) -> bool {
        if let RemoteError::JumpHost { source, .. } = self {
            return source.is_permanent();
        }
        matches!(
            self,
            RemoteError::Target { .. }
                | RemoteError::SshConfig { .. }
                | RemoteError::UnsupportedOption { .. }
                | RemoteError::UnevaluatedMatch { .. }
                | RemoteError::HostKeyUnknown { .. }
                | RemoteError::HostKeyDeclined { .. }
                | RemoteError::HostKeyChanged { .. }
                | RemoteError::HostKeyRevoked { .. }
                | RemoteError::HostKeyCertOnly { .. }
                | RemoteError::StrictNoRefused { .. }
                | RemoteError::KnownHosts { .. }
                | RemoteError::Auth { .. }
                | RemoteError::Command(_)
                | RemoteError::Stopped
        )
    }

    /// libssh2's `err` while doing what the catalogue text `context` (`ssh_context.*`) says.
    pub(crate) fn ssh(context: &'static str, err: &ssh2::Error) -> Self {
        Self::ssh_said(crate::words::Words::new(context), err.message())
    }

    /// What libssh2 or the OS said (`message`) while doing `context`.
    pub(crate) fn ssh_said(context: crate::words::Words, message: impl ToString) -> Self {
        RemoteError::Ssh {
            context: Box::new(context),
            message: message.to_string(),
        }
    }
}

/// English, as the log writes it: the catalogue's English of [`reason`].
impl std::fmt::Display for RemoteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&reason(self).english())
    }
}

impl RemoteError {
    /// The whole message, in catalogue words.
    pub fn words(&self) -> Words {
        reason(self)
    }

    /// The whole message of an error the link will not retry.
    pub(crate) fn words_not_retrying(&self) -> Words {
        Words::new("link_error.not_retrying").put_words("error", reason(self))
    }

    /// A few words for a status line, in catalogue words ([`RemoteError::summary`] is their
    /// English).
    pub(crate) fn summary_words(&self) -> Words {
        summary(self)
    }

    /// The message in the interface's language, for a person to read.
    pub fn localized(&self) -> String {
        reason(self).localized()
    }

    /// A few words for a status line (`connection refused`, `auth failed (tried key, agent)`,
    /// `HOST KEY CHANGED`); the whole message says the rest. English: the catalogue's words
    /// ([`RemoteError::summary_words`]) say them in the console's language.
    pub fn summary(&self) -> String {
        summary(self).english()
    }
}

/// The whole message.
fn reason(e: &RemoteError) -> Words {
    let text = |key: &'static str| Words::new(key);
    match e {
        RemoteError::Target { spec, error } => text("link_error.target")
            .put("spec", format!("{spec:?}"))
            .put_words("message", Words::keyed(error.key_and_value())),
        RemoteError::SshConfig { path, message } => text("link_error.ssh_config")
            .put("path", path.display().to_string())
            .put_words("message", message.as_ref().clone()),
        RemoteError::UnsupportedOption {
            host,
            config,
            option,
            why,
        } => text("link_error.unsupported_option")
            .put("host", host.as_str())
            .put("config", config.display().to_string())
            .put("option", option.as_str())
            .put_words("why", why.as_ref().clone()),
        RemoteError::UnevaluatedMatch {
            host,
            place,
            criterion,
            option,
        } => text("link_error.unevaluated_match")
            .put("host", host.as_str())
            .put_words("place", place.as_ref().clone())
            .put("criterion", criterion.as_str())
            .put("option", option.as_str()),
        RemoteError::Resolve { host, source } => text("link_error.resolve")
            .put("host", host.as_str())
            .put("source", source.to_string()),
        RemoteError::NoAddress { host } => text("link_error.resolve")
            .put("host", host.as_str())
            .put_words("source", text("remote_words.no_address")),
        RemoteError::Connect { addr, source } => text("link_error.connect")
            .put("addr", addr.as_str())
            .put("source", source.to_string()),
        RemoteError::JumpHost { host, source } => text("link_error.jump_host")
            .put("host", host.as_str())
            .put_words("source", reason(source)),
        RemoteError::Proxy { host, message } => text("link_error.proxy")
            .put("host", host.as_str())
            .put_words("message", message.as_ref().clone()),
        RemoteError::Handshake { addr, message } => text("link_error.handshake")
            .put_words("addr", addr.as_ref().clone())
            .put_words("message", message.as_ref().clone()),
        RemoteError::NotSsh { addr, port, said } => text("link_error.not_ssh")
            .put_words("addr", addr.as_ref().clone())
            .put("port", port.to_string())
            .put("said", said.as_str()),
        RemoteError::HostKeyUnknown {
            known_as,
            key_type,
            fingerprint,
            hint,
        } => text("link_error.host_key_unknown")
            .put("known_as", known_as.as_str())
            .put("key_type", key_type.as_str())
            .put("fingerprint", fingerprint.as_str())
            .put_words("hint", hint.as_ref().clone()),
        RemoteError::HostKeyDeclined {
            known_as,
            key_type,
            fingerprint,
        } => text("link_error.host_key_declined")
            .put("known_as", known_as.as_str())
            .put("key_type", key_type.as_str())
            .put("fingerprint", fingerprint.as_str()),
        RemoteError::HostKeyChanged {
            known_as,
            key_type,
            presented,
            expected,
            remedy,
        } => text("link_error.host_key_changed")
            .put("known_as", known_as.as_str())
            .put("key_type", key_type.as_str())
            .put("presented", presented.as_str())
            .put_words("expected", expected.as_ref().clone())
            .put_words("remedy", remedy.as_ref().clone()),
        RemoteError::HostKeyRevoked {
            known_as,
            known_hosts,
            fingerprint,
        } => text("link_error.host_key_revoked")
            .put("known_as", known_as.as_str())
            .put_words("known_hosts", known_hosts.as_ref().clone())
            .put("fingerprint", fingerprint.as_str()),
        RemoteError::HostKeyCertOnly {
            known_as,
            known_hosts,
            fingerprint,
        } => text("link_error.host_key_cert_only")
            .put("known_as", known_as.as_str())
            .put_words("known_hosts", known_hosts.as_ref().clone())
            .put("fingerprint", fingerprint.as_str()),
        RemoteError::StrictNoRefused { target } => {
            text("link_error.strict_no_refused").put("target", target.as_str())
        }
        RemoteError::KnownHosts { path, message } => text("link_error.known_hosts")
            .put("path", path.display().to_string())
            .put_words("message", message.as_ref().clone()),
        RemoteError::Auth {
            target,
            offered,
            tried,
        } => text("link_error.auth")
            .put("target", target.as_str())
            .put("offered", offered.as_str())
            .put_words("tried", attempts_joined(tried)),
        RemoteError::Ssh { context, message } => text("link_error.ssh")
            .put_words("context", context.as_ref().clone())
            .put("message", message.as_str()),
        RemoteError::LinkDead { silent_s } => {
            text("link_error.link_dead").put("silent_s", silent_s.to_string())
        }
        RemoteError::Incomplete { timeout_ms } => {
            text("link_error.incomplete").put("timeout_ms", timeout_ms.to_string())
        }
        RemoteError::Command(e) => text("link_error.command").put_words("error", e.words()),
        RemoteError::Stopped => text("link_error.stopped"),
    }
}

/// A few words for a status line (`connection refused`, `auth failed (tried key, agent)`);
/// [`RemoteError::summary`] is their English.
fn summary(e: &RemoteError) -> Words {
    use std::io::ErrorKind;
    let key = match e {
        RemoteError::Target { .. } => "link_summary.bad_target",
        RemoteError::SshConfig { .. }
        | RemoteError::UnsupportedOption { .. }
        | RemoteError::UnevaluatedMatch { .. } => "link_summary.ssh_config",
        RemoteError::Resolve { .. } | RemoteError::NoAddress { .. } => "link_summary.dns",
        RemoteError::Connect { source, .. } => match source.kind() {
            ErrorKind::ConnectionRefused => "link_summary.refused",
            ErrorKind::TimedOut => "link_summary.timed_out",
            ErrorKind::HostUnreachable => "link_summary.no_route",
            ErrorKind::NetworkUnreachable => "link_summary.network_unreachable",
            ErrorKind::ConnectionReset => "link_summary.reset",
            _ => "link_summary.cannot_connect",
        },
        RemoteError::JumpHost { source, .. } => {
            return Words::new("link_summary.jump").put_words("summary", summary(source));
        }
        RemoteError::Proxy { .. } => "link_summary.proxy",
        RemoteError::Handshake { .. } => "link_summary.handshake",
        RemoteError::NotSsh { port, .. } => {
            return Words::new("link_summary.not_ssh").put("port", port.to_string());
        }
        RemoteError::HostKeyUnknown { .. } => "link_summary.key_unknown",
        RemoteError::HostKeyDeclined { .. } => "link_summary.key_declined",
        RemoteError::HostKeyChanged { .. } => "link_summary.key_changed",
        RemoteError::HostKeyRevoked { .. } => "link_summary.key_revoked",
        RemoteError::HostKeyCertOnly { .. } => "link_summary.key_not_checkable",
        RemoteError::StrictNoRefused { .. } => "link_summary.strict_no_refused",
        RemoteError::KnownHosts { .. } => "link_summary.known_hosts",
        RemoteError::Auth { tried, .. } => return auth_summary(tried),
        RemoteError::Ssh { .. } => "link_summary.ssh",
        RemoteError::LinkDead { .. } => "link_summary.link_dead",
        RemoteError::Incomplete { .. } => "link_summary.incomplete",
        RemoteError::Command(_) => "link_summary.command",
        RemoteError::Stopped => "link_summary.stopped",
    };
    Words::new(key)
}

/// `auth failed (tried key, agent)`: the methods named by the attempts `auth` recorded.
fn auth_summary(tried: &[Words]) -> Words {
    let mut methods: Vec<&'static str> = Vec::new();
    for attempt in tried {
        let Some(method) = method(attempt) else {
            continue;
        };
        if !methods.contains(&method) {
            methods.push(method);
        }
    }
    let text = match methods.len() {
        0 => return Words::new("link_summary.auth_nothing"),
        1 => Words::new("link_summary.auth_1"),
        2 => Words::new("link_summary.auth_2"),
        _ => Words::new("link_summary.auth_3"),
    };
    let names = ["m1", "m2", "m3"];
    names
        .into_iter()
        .zip(methods)
        .fold(text, |text, (name, method)| {
            text.put_words(name, Words::new(method))
        })
}

// A failed login's attempts (built in `auth.rs`), in catalogue words.

/// The attempts, joined by `; ` (said in the notice's language): one text of ours, nested.
fn attempts_joined(tried: &[Words]) -> Words {
    crate::words::joined(tried, "list_words.semicolon")
        .unwrap_or_else(|| Words::new("auth_words.nothing"))
}

/// The login method an attempt tried (`agent`, `key`, `password`), by its words' key; `None`
/// for one that tried nothing (`nothing to try`, a password variable not set).
fn method(attempt: &Words) -> Option<&'static str> {
    let name = attempt.key()?.strip_prefix("auth_words.")?;
    if name.starts_with("agent") {
        Some("link_summary.method_agent")
    } else if name.starts_with("key_") {
        Some("link_summary.method_key")
    } else if name.starts_with("password") {
        Some("link_summary.method_password")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_name_the_cause_in_a_few_words() {
        let refused = RemoteError::Connect {
            addr: "127.0.0.1:1".into(),
            source: std::io::Error::from(std::io::ErrorKind::ConnectionRefused),
        };
        assert_eq!(refused.summary(), "connection refused");
        let jump = RemoteError::JumpHost {
            host: "bastion".into(),
            source: Box::new(RemoteError::Connect {
                addr: "10.0.0.1:22".into(),
                source: std::io::Error::from(std::io::ErrorKind::TimedOut),
            }),
        };
        assert_eq!(jump.summary(), "jump host: connection timed out");
        let auth = RemoteError::Auth {
            target: "root@h".into(),
            offered: "publickey,password".into(),
            tried: vec![
                auth::agent_none(2, false),
                auth::key_attempt("auth_words.key_rejected", "/k/id_ed25519"),
                auth::key_attempt("auth_words.key_rejected", "/k/id_rsa"),
                auth::password_env("auth_words.password_env_rejected", "PW"),
            ],
        };
        assert_eq!(auth.summary(), "auth failed (tried agent, key, password)");
        let nothing = RemoteError::Auth {
            target: "root@h".into(),
            offered: "publickey".into(),
            tried: vec![crate::words::Words::new("auth_words.nothing")],
        };
        assert_eq!(nothing.summary(), "auth failed (nothing to try)");
    }

    use crate::remote::auth;
    use crate::remote::ssh_config_file::place;
    use std::io::{Error, ErrorKind};
    use std::path::Path;

    fn every_error() -> Vec<RemoteError> {
        let io = |kind| Error::from(kind);
        vec![
            RemoteError::Target {
                spec: "a b".into(),
                error: crate::config::SshTargetError::BadHost { host: "a b".into() },
            },
            RemoteError::SshConfig {
                path: "/c".into(),
                message: Box::new(
                    Words::new("config_words.at_line")
                        .put("line", "3")
                        .put_words("message", Words::new("config_words.quote_open")),
                ),
            },
            RemoteError::UnsupportedOption {
                host: "h".into(),
                config: "/c".into(),
                option: "Ciphers".into(),
                why: Box::new(Words::new("option_words.one_name")),
            },
            RemoteError::UnevaluatedMatch {
                host: "h".into(),
                place: Box::new(place(Path::new("/c"), 2)),
                criterion: "exec".into(),
                option: "port".into(),
            },
            RemoteError::Resolve {
                host: "h".into(),
                source: io(ErrorKind::NotFound),
            },
            RemoteError::NoAddress { host: "h".into() },
            RemoteError::Connect {
                addr: "127.0.0.1:9".into(),
                source: io(ErrorKind::ConnectionRefused),
            },
            RemoteError::JumpHost {
                host: "bastion".into(),
                source: Box::new(RemoteError::Connect {
                    addr: "10.0.0.1:22".into(),
                    source: io(ErrorKind::TimedOut),
                }),
            },
            RemoteError::Proxy {
                host: "h".into(),
                message: Box::new(Words::new("option_words.proxy_start").put("error", "m")),
            },
            RemoteError::Handshake {
                addr: Box::new(
                    Words::new("remote_words.through_jump_host")
                        .put("target", "root@gpu:22")
                        .put("jump", "bastion"),
                ),
                message: Box::new(
                    Words::new("remote_words.proxy_said")
                        .put_words("message", Words::new("config_words.os").put("error", "m"))
                        .put("said", "p"),
                ),
            },
            RemoteError::HostKeyUnknown {
                known_as: "h".into(),
                key_type: "ssh-ed25519".into(),
                fingerprint: "SHA256:x".into(),
                hint: Box::new(Words::new("link_error.hint_other_types").put("types", "ssh-rsa")),
            },
            RemoteError::HostKeyDeclined {
                known_as: "h".into(),
                key_type: "t".into(),
                fingerprint: "f".into(),
            },
            RemoteError::HostKeyChanged {
                known_as: "h".into(),
                key_type: "t".into(),
                presented: "p".into(),
                expected: Box::new(
                    Words::new("known_hosts_words.expected")
                        .put("key_type", "t")
                        .put("fingerprint", "f")
                        .put_words("place", place(Path::new("/k"), 1)),
                ),
                remedy: Box::new(
                    Words::new("known_hosts_words.remedy").put_words(
                        "steps",
                        Words::new("known_hosts_words.edit_by_hand")
                            .put_words("place", place(Path::new("/k"), 1)),
                    ),
                ),
            },
            RemoteError::HostKeyRevoked {
                known_as: "h".into(),
                known_hosts: Box::new(place(Path::new("/k"), 1)),
                fingerprint: "f".into(),
            },
            RemoteError::HostKeyCertOnly {
                known_as: "h".into(),
                known_hosts: Box::new(place(Path::new("/k"), 1)),
                fingerprint: "f".into(),
            },
            RemoteError::StrictNoRefused { target: "h".into() },
            RemoteError::KnownHosts {
                path: "/k".into(),
                message: Box::new(Words::new("remote_words.no_known_hosts_file")),
            },
            RemoteError::Auth {
                target: "root@h".into(),
                offered: "publickey,password".into(),
                tried: vec![
                    auth::agent_none(2, false),
                    auth::key_attempt("auth_words.key_rejected", "/k/id_rsa"),
                    auth::password_env("auth_words.password_env_rejected", "PW"),
                ],
            },
            RemoteError::Auth {
                target: "root@h".into(),
                offered: "publickey".into(),
                tried: vec![auth::key_attempt("auth_words.key_rejected", "/k/id_rsa")],
            },
            RemoteError::Auth {
                target: "root@h".into(),
                offered: "publickey".into(),
                tried: vec![Words::new("auth_words.nothing")],
            },
            RemoteError::Ssh {
                context: Box::new(Words::new("ssh_context.open_channel")),
                message: "m".into(),
            },
            RemoteError::LinkDead { silent_s: 30 },
            RemoteError::Incomplete { timeout_ms: 5_000 },
            RemoteError::Command(crate::remote::quote::CommandError::EmptyProgram),
            RemoteError::Command(crate::remote::quote::CommandError::Nul { argument: Some(2) }),
            RemoteError::Stopped,
        ]
    }

    /// The English the log keeps is the catalogue's English, as it read before the errors
    /// were catalogue words (users and tests grep it).
    #[test]
    fn the_words_in_english_are_the_errors_own_text() {
        for e in every_error() {
            assert_eq!(reason(&e).english(), e.to_string());
            assert_eq!(summary(&e).english(), e.summary());
            assert_eq!(
                e.words_not_retrying().english(),
                format!("{e} (not retrying)")
            );
        }
        let english: Vec<String> = every_error().iter().map(ToString::to_string).collect();
        for expected in [
            "invalid ssh target \"a b\": host \"a b\" may only contain letters, digits, '-', '.' \
             and '_' (IPv6 goes in [brackets])",
            "cannot resolve h: no address",
            "ssh handshake with root@gpu:22 (through jump host bastion) failed: m; the \
             ProxyCommand said: p",
            "known_hosts /k: no known_hosts file to check host keys against",
            "the remote program name is empty",
            "argument 2 contains a NUL byte, which no remote command can receive",
            "cannot connect to 127.0.0.1:9: connection refused",
            "no data from the host for 30 s (keepalives unanswered); link presumed dead",
            "stopped",
        ] {
            assert!(
                english.iter().any(|e| e == expected),
                "{expected:?} in {english:#?}"
            );
        }
    }

    #[test]
    fn in_chinese_the_words_are_chinese_and_what_the_os_said_stays() {
        let e = RemoteError::Connect {
            addr: "127.0.0.1:9".into(),
            source: Error::from(ErrorKind::ConnectionRefused),
        };
        let zh = reason(&e).render("zh-CN");
        assert!(!zh.contains("cannot connect"), "{zh}");
        assert!(
            zh.contains("127.0.0.1:9") && zh.contains("connection refused"),
            "{zh}"
        );
        let summary_zh = summary(&e).render("zh-CN");
        assert!(!summary_zh.contains("connection refused"), "{summary_zh}");
        for e in every_error() {
            let zh = summary(&e).render("zh-CN");
            assert!(zh.chars().any(|c| c > '\u{2e80}'), "{zh}");
        }
    }

    /// Our own texts inside an error (a changed key's fix-up advice and file places, a login's
    /// attempts) follow the language; paths and fingerprints stay as they came.
    #[test]
    fn the_texts_of_ours_inside_an_error_read_in_chinese() {
        for e in every_error() {
            let zh = reason(&e).render("zh-CN");
            for english in [
                "If the host was re-installed",
                "by hand",
                " line 1",
                "was not accepted",
                "was rejected",
                "nothing to try",
                "exactly one name",
                "cannot start its ProxyCommand",
                " line 2",
                "opening a channel",
                "line 3",
                "not closed",
                "may only contain",
                "no address",
                "no known_hosts file",
                "program name",
                "NUL byte",
                "through jump host",
                "the ProxyCommand said",
            ] {
                assert!(!zh.contains(english), "{english:?} in {zh}");
            }
        }
        let changed = every_error()
            .into_iter()
            .find(|e| matches!(e, RemoteError::HostKeyChanged { .. }))
            .map(|e| reason(&e).render("zh-CN"))
            .unwrap_or_default();
        assert!(
            changed.contains("如果主机重装过系统") && changed.contains("/k 第 1 行"),
            "{changed}"
        );
    }

    #[test]
    fn the_attempts_read_in_chinese_with_paths_as_they_came_and_the_english_unchanged() {
        let tried = vec![
            auth::agent_none(2, true),
            auth::key_attempt("auth_words.key_rejected", "/k/id_rsa"),
            auth::password_env("auth_words.password_env_rejected", "PW"),
            auth::password_typed(3),
        ];
        assert_eq!(
            attempts_joined(&tried).english(),
            "ssh-agent: none of its 2 key(s) was accepted (IdentitiesOnly: only the identity \
             files' keys); key /k/id_rsa was not accepted by the server; the password in $PW \
             was rejected; the password typed was rejected (3 tries)"
        );
        let zh = attempts_joined(&tried).render("zh-CN");
        assert!(zh.contains("/k/id_rsa") && zh.contains("$PW"), "{zh}");
        assert!(
            !zh.contains("was not accepted") && !zh.contains("rejected"),
            "{zh}"
        );
        let methods: Vec<_> = tried.iter().filter_map(method).collect();
        assert_eq!(
            methods,
            [
                "link_summary.method_agent",
                "link_summary.method_key",
                "link_summary.method_password",
                "link_summary.method_password"
            ]
        );
        assert_eq!(method(&Words::new("auth_words.nothing")), None);
        assert_eq!(
            method(&auth::password_env("auth_words.env_unset", "PW")),
            None,
            "a variable not set tried no password"
        );
    }
}
