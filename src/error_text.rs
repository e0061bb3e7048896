//! An error and its causes as one line, each cause said once.
//!
//! Many of our error enums print their cause in their own message (`"{path}: {source}"`) and
//! also hand it out as `source()`, so walking the chain the usual way (anyhow's `{:#}`) says the
//! same thing twice: "d: Is a directory (os error 21): Is a directory (os error 21)".

use std::error::Error;

/// `error`, then each cause in turn, joined by ": ", leaving out a cause whose text the line
/// already holds.
pub fn chain(error: &(dyn Error + 'static)) -> String {
    let mut line = error.to_string();
    let mut cause = error.source();
    while let Some(next) = cause {
        let text = next.to_string();
        if !text.is_empty() && !line.contains(&text) {
            line.push_str(": ");
            line.push_str(&text);
        }
        cause = next.source();
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("{path}: {source}")]
    struct Read {
        path: String,
        source: std::io::Error,
    }

    #[derive(Debug, thiserror::Error)]
    #[error("loading the config")]
    struct Load(#[source] Read);

    #[test]
    fn a_cause_already_in_the_message_is_said_once() {
        let io = std::io::Error::from_raw_os_error(21);
        let io_text = io.to_string();
        let error = Load(Read {
            path: "d".to_string(),
            source: io,
        });
        let line = chain(&error);
        assert_eq!(line, format!("loading the config: d: {io_text}"));
        assert_eq!(line.matches(&io_text).count(), 1);
    }

    #[test]
    fn anyhow_context_keeps_every_distinct_cause() {
        let error =
            anyhow::Error::from(std::io::Error::other("disk full")).context("saving the ledger");
        assert_eq!(chain(error.as_ref()), "saving the ledger: disk full");
    }
}
