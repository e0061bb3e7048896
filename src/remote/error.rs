//! What can go wrong between gpufleet and a host, with messages that say what to do next.

use std::path::PathBuf;

use thiserror::Error;

use crate::remote::quote::CommandError;

#[derive(Debug, Error)]
pub enum RemoteError {
    #[error("invalid ssh target {spec:?}: {message}")]
    Target { spec: String, message: String },
    #[error("{path}: {message}")]
    SshConfig {
        path: PathBuf,
        /// What is wrong, in catalogue words (what the OS said, as it said it).
        message: Box<crate::fleet::NoticeText>,
    },
    #[error("{host}: the ssh config {} sets {option}, which gpufleet does not honour: {why}", config.display())]
    UnsupportedOption {
        host: String,
        /// The ssh config file that was read (the option may come from a file it includes).
        config: PathBuf,
        option: String,
        /// What gpufleet would do differently, and what to write instead.
        why: Box<crate::fleet::NoticeText>,
    },
    #[error(
        "{host}: the ssh config's `Match {criterion}` block at {place} sets {option}, which \
         decides how the host is reached, checked or logged into; gpufleet does not evaluate \
         `Match {criterion}` (it runs no command to read its config), so it cannot tell whether \
         it applies: move the option into a Host block"
    )]
    UnevaluatedMatch {
        host: String,
        place: Box<crate::fleet::NoticeText>,
        criterion: String,
        option: String,
    },
    #[error("cannot resolve {host}: {source}")]
    Resolve {
        host: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot connect to {addr}: {source}")]
    Connect {
        addr: String,
        #[source]
        source: std::io::Error,
    },
    /// A jump host of `ProxyJump` failed; `host` as written there.
    #[error("jump host {host}: {source}")]
    JumpHost {
        host: String,
        #[source]
        source: Box<RemoteError>,
    },
    /// The host's `ProxyCommand` could not carry the session (its text is not shown).
    #[error("{host}: {message}")]
    Proxy {
        host: String,
        message: Box<crate::fleet::NoticeText>,
    },
    #[error("ssh handshake with {addr} failed: {message}")]
    Handshake { addr: String, message: String },
    #[error("host key of {known_as} is not known: {key_type} {fingerprint}; {hint}")]
    HostKeyUnknown {
        known_as: String,
        key_type: String,
        fingerprint: String,
        /// What to do, as catalogue words (English here, in the console's language there).
        hint: Box<crate::fleet::NoticeText>,
    },
    #[error("host key of {known_as} ({key_type} {fingerprint}) was not accepted")]
    HostKeyDeclined {
        known_as: String,
        key_type: String,
        fingerprint: String,
    },
    #[error(
        "HOST KEY CHANGED for {known_as}: known_hosts has {expected}, \
         the server presented {key_type} {presented}. Not connecting: this is what a \
         man-in-the-middle looks like. {remedy}"
    )]
    HostKeyChanged {
        known_as: String,
        key_type: String,
        presented: String,
        /// Every key of that type on file for the host, as `type SHA256:... (FILE line N)`.
        expected: Box<crate::fleet::NoticeText>,
        /// How to clear the old key if the host really was re-installed.
        remedy: Box<crate::fleet::NoticeText>,
    },
    /// `known_hosts` is the file and line of the `@revoked` entry.
    #[error("host key of {known_as} ({fingerprint}) is marked @revoked in {known_hosts}")]
    HostKeyRevoked {
        known_as: String,
        known_hosts: Box<crate::fleet::NoticeText>,
        fingerprint: String,
    },
    /// `known_hosts` is the file and line of the `@cert-authority` entry.
    #[error(
        "{known_as} is known only through a certificate authority ({known_hosts}), and libssh2 \
         cannot verify certificate host keys, so gpufleet cannot check this host (it presented \
         a plain key, {fingerprint}); add the host's own key to known_hosts once you have \
         checked it against its certificate"
    )]
    HostKeyCertOnly {
        known_as: String,
        known_hosts: Box<crate::fleet::NoticeText>,
        fingerprint: String,
    },
    #[error(
        "{target}: the ssh config sets StrictHostKeyChecking no, which lets a changed host key \
         through; gpufleet honours it only with --allow-strict-host-key-checking-no (then, as \
         OpenSSH does, new keys are added and a changed key is let through with a warning and \
         password logins turned off); or set StrictHostKeyChecking accept-new"
    )]
    StrictNoRefused { target: String },
    #[error("known_hosts {path}: {message}")]
    KnownHosts { path: PathBuf, message: String },
    #[error(
        "authentication failed for {target} (server accepts: {offered}): {}",
        crate::remote::auth_words::english(tried)
    )]
    Auth {
        target: String,
        offered: String,
        /// Each attempt, in catalogue words (`auth_words.rs`).
        tried: Vec<crate::fleet::NoticeText>,
    },
    /// `context` says what gpufleet was doing (catalogue words); `message` is libssh2's or
    /// the OS's.
    #[error("{context}: {message}")]
    Ssh {
        context: Box<crate::fleet::NoticeText>,
        message: String,
    },
    #[error("no data from the host for {silent_s} s (keepalives unanswered); link presumed dead")]
    LinkDead { silent_s: u64 },
    #[error("no complete reading within {timeout_ms} ms")]
    Incomplete { timeout_ms: u64 },
    #[error(transparent)]
    Command(#[from] CommandError),
    #[error("stopped")]
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

    /// A few words for a status line (`connection refused`, `auth failed (tried key, agent)`,
    /// `HOST KEY CHANGED`); the whole message says the rest. English: the catalogue's words
    /// (`error_words::summary`) say them in the console's language.
    pub fn summary(&self) -> String {
        crate::remote::error_words::summary(self).english()
    }

    /// libssh2's `err` while doing what the catalogue text `context` (`ssh_context.*`) says.
    pub(crate) fn ssh(context: &'static str, err: &ssh2::Error) -> Self {
        Self::ssh_said(crate::fleet::NoticeText::new(context), err.message())
    }

    /// What libssh2 or the OS said (`message`) while doing `context`.
    pub(crate) fn ssh_said(context: crate::fleet::NoticeText, message: impl ToString) -> Self {
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
            tried: vec![crate::fleet::NoticeText::new("auth_words.nothing")],
        };
        assert_eq!(nothing.summary(), "auth failed (nothing to try)");
    }
}
