//! What can go wrong between gpufleet and a host, with messages that say what to do next.
//! The messages are catalogue words (`error_words.rs`): `Display` is their English, as the log
//! and recordings keep it; the console and the CLI say them in the user's language.

use std::path::PathBuf;

use thiserror::Error;

use crate::config::SshTargetError;
use crate::remote::quote::CommandError;

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
        /// Each attempt, in catalogue words (`auth_words.rs`).
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
                crate::remote::auth_words::agent_none(2, false),
                crate::remote::auth_words::key("auth_words.key_rejected", "/k/id_ed25519"),
                crate::remote::auth_words::key("auth_words.key_rejected", "/k/id_rsa"),
                crate::remote::auth_words::password_env("auth_words.password_env_rejected", "PW"),
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
}
