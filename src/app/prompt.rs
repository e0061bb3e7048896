//! Questions a host's link asks the user (trust an unknown host key, a key passphrase, a
//! password), as the model holds them; the reply channels stay in the runtime.

use crate::fleet::HostId;

/// What is being asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptKind {
    HostKey {
        known_as: String,
        key_type: String,
        fingerprint: String,
        other_types_known: Vec<String>,
    },
    Passphrase {
        key_file: String,
    },
    Password,
}

/// One open question, shown as a dialog until answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompt {
    pub id: u64,
    pub host: HostId,
    /// `user@host:port`.
    pub target: String,
    pub kind: PromptKind,
}

impl Prompt {
    pub fn wants_secret(&self) -> bool {
        !matches!(self.kind, PromptKind::HostKey { .. })
    }
}

/// The user's answer, sent back to the link that asked.
#[derive(Clone, PartialEq, Eq)]
pub enum PromptAnswer {
    HostKey(bool),
    /// `None` when the user cancelled.
    Secret(Option<String>),
}

impl std::fmt::Debug for PromptAnswer {
    // A typed secret must never reach a log or a panic message.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PromptAnswer::HostKey(accept) => write!(f, "HostKey({accept})"),
            PromptAnswer::Secret(Some(_)) => f.write_str("Secret(***)"),
            PromptAnswer::Secret(None) => f.write_str("Secret(cancelled)"),
        }
    }
}
