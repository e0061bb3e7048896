//! Host words on the command line: which hosts a run names, and a clear refusal with "did you
//! mean" for a word that is neither a subcommand, a host of the config, an `~/.ssh/config` alias
//! nor shaped like `user@host[:port]`.
//!
//! Clap parses subcommands before host words (`subcommand_precedence_over_arg`), so
//! `gpufleet snapshot HOST...` and `gpufleet HOST snapshot` both reach `snapshot` with `HOST`;
//! a mistyped subcommand arrives here as a host word and is caught before any connection.
//!
//! A concept of its own (the command line's host arguments), not a file of messages: its one
//! error, [`WordError`], carries its words beside it.

use std::path::Path;

use clap::CommandFactory;

use crate::cli::{Cli, CliCommand};
use crate::config::locate::edit_distance;
use crate::config::{Config, parse_ssh_target};
use crate::remote;
use crate::words::Words;

/// A command line whose host words cannot be used.
#[derive(Debug, PartialEq, Eq)]
pub enum WordError {
    /// Hosts written before a subcommand that takes none.
    HostsBefore { subcommand: String, words: String },
    /// A word that names nothing this run can reach.
    Unknown {
        word: String,
        closest: Option<String>,
    },
    /// A word that is meant as an address but is not a valid one.
    BadTarget {
        word: String,
        error: crate::config::SshTargetError,
    },
}

impl WordError {
    /// What is wrong, in catalogue words.
    pub fn words(&self) -> Words {
        match self {
            WordError::HostsBefore { subcommand, words } => Words::new("cli.hosts_before")
                .put("subcommand", subcommand.as_str())
                .put("words", words.as_str()),
            WordError::Unknown { word, closest } => Words::new("cli.unknown_word")
                .put("word", word.as_str())
                .put_words("suggestion", suggestion(closest)),
            WordError::BadTarget { word, error } => Words::new("cli.bad_target")
                .put("word", word.as_str())
                .put_words("message", Words::keyed(error.key_and_value())),
        }
    }
}

/// English, as a log would keep it: the catalogue's English of [`WordError::words`].
impl std::fmt::Display for WordError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.words().english())
    }
}

impl std::error::Error for WordError {}

fn suggestion(closest: &Option<String>) -> Words {
    match closest {
        Some(name) => Words::new("cli.did_you_mean").put("name", name.as_str()),
        None => Words::new("cli.see_help"),
    }
}

/// The host words of this run: those before the subcommand and those after it, for the console,
/// `snapshot` and `watch`; an error when hosts come before a subcommand that takes none.
/// `subcommand` is the name clap matched (`ArgMatches::subcommand_name`).
pub fn named_hosts(cli: &Cli, subcommand: Option<&str>) -> Result<Vec<String>, WordError> {
    let after: &[String] = match &cli.command {
        None => &[],
        Some(CliCommand::Snapshot { hosts, .. }) | Some(CliCommand::Watch { hosts, .. }) => hosts,
        Some(_) if cli.hosts.is_empty() => return Ok(Vec::new()),
        Some(_) => {
            return Err(WordError::HostsBefore {
                subcommand: subcommand.unwrap_or_default().to_string(),
                words: cli.hosts.join(" "),
            });
        }
    };
    Ok(cli.hosts.iter().chain(after).cloned().collect())
}

/// Checks every word: a host of the config, an alias of the ssh config (`ssh_config`, else
/// `~/.ssh/config`), or an address (`user@host`, `host:port`, a dotted name or IP, `localhost`).
pub fn check_words(
    words: &[String],
    config: &Config,
    ssh_config: Option<&Path>,
) -> Result<(), WordError> {
    for word in words {
        if config.host(word).is_some() {
            continue;
        }
        // The ssh config is read as the links read it (`Host`, `Match`, `Include`).
        let aliases = match remote::ssh_config_names(ssh_config, word) {
            Ok(Some((true, _))) => continue,
            Ok(Some((false, literal))) => literal,
            Ok(None) => Vec::new(),
            // Connecting reports why the file is unusable; the word may well be an alias in it.
            Err(_) => continue,
        };
        if looks_like_address(word) {
            parse_ssh_target(word).map_err(|error| WordError::BadTarget {
                word: word.clone(),
                error,
            })?;
            continue;
        }
        let candidates = subcommand_names()
            .into_iter()
            .chain(config.hosts.iter().map(|h| h.name.clone()))
            .chain(aliases.iter().cloned());
        return Err(WordError::Unknown {
            word: word.clone(),
            closest: closest(word, candidates),
        });
    }
    Ok(())
}

/// Every subcommand's name and visible alias, from the clap definition.
fn subcommand_names() -> Vec<String> {
    Cli::command()
        .get_subcommands()
        .filter(|c| !c.is_hide_set())
        .flat_map(|c| {
            std::iter::once(c.get_name().to_string())
                .chain(c.get_visible_aliases().map(str::to_string))
        })
        .collect()
}

/// The candidate closest to `word`, when it is close enough to be a typo of it.
fn closest(word: &str, candidates: impl Iterator<Item = String>) -> Option<String> {
    candidates
        .map(|name| (edit_distance(word, &name), name))
        .filter(|(distance, name)| {
            *distance <= 2.max(name.chars().count() / 3) && *distance < word.chars().count()
        })
        .min()
        .map(|(_, name)| name)
}

/// A word written as an address rather than a name: with a user, a port, a dot (a DNS name or
/// an IPv4 address), brackets or colons (IPv6), or `localhost`.
fn looks_like_address(word: &str) -> bool {
    word == "localhost" || word.contains(['@', ':', '.', '['])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typo_of_a_subcommand_is_suggested() {
        let candidates = ["snapshot", "watch", "a100-1"].map(String::from);
        assert_eq!(
            closest("snapsht", candidates.clone().into_iter()),
            Some("snapshot".to_string())
        );
        assert_eq!(
            closest("a100-2", candidates.clone().into_iter()),
            Some("a100-1".to_string())
        );
        assert_eq!(closest("zzzzzzzz", candidates.into_iter()), None);
        // A word too short to be a typo of anything.
        assert_eq!(closest("a", ["man".to_string()].into_iter()), None);
    }

    #[test]
    fn addresses_are_told_from_names() {
        for word in [
            "root@gpu",
            "gpu:2222",
            "10.0.0.5",
            "box.example.com",
            "[::1]:22",
        ] {
            assert!(looks_like_address(word), "{word}");
        }
        for word in ["snapsht", "gpu1"] {
            assert!(!looks_like_address(word), "{word}");
        }
    }

    #[test]
    fn subcommand_names_come_from_clap() {
        let names = subcommand_names();
        assert!(names.contains(&"snapshot".to_string()), "{names:?}");
    }
}
