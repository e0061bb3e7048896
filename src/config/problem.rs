//! A broken rule of the config and the key it is about; the caller turns the key into a line.
//! The message is already in the reader's language (a `config_error.*` catalogue text).

use super::locate::KeyPath;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Problem {
    pub(super) path: KeyPath,
    pub(super) message: String,
}

pub(super) fn problem(path: KeyPath, message: impl Into<String>) -> Result<(), Problem> {
    Err(Problem {
        path,
        message: message.into(),
    })
}
