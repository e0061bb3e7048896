//! Parses a host's `ssh` value (`user@host:port`, `user@host`, `host:port`, `host` or an
//! `~/.ssh/config` alias) into its parts.

use std::fmt;

use serde::Deserialize;
use thiserror::Error;

use rust_i18n::t;

/// Where to connect. A bare word keeps its spelling as `host`, because it may be an alias that
/// only `~/.ssh/config` can resolve.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Deserialize)]
#[serde(try_from = "String")]
pub struct SshTarget {
    pub user: Option<String>,
    pub host: String,
    pub port: Option<u16>,
}

/// Why a value is not an ssh target, in catalogue words (its key and value, [`SshTargetError::key_and_value`]). Its
/// `Display` says them in the reader's language, as the config file's errors are said (serde
/// writes it after the key); the link's error keeps the words and logs their English.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SshTargetError {
    Empty,
    CommandLine { suggestion: String },
    EmptyUser,
    BadUser { user: String },
    EmptyHost,
    BadHost { host: String },
    BadPort { port: String },
    UnclosedBracket,
}

impl fmt::Display for SshTargetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (key, value) = self.key_and_value();
        let text = t!(key);
        match value {
            Some((name, value)) => {
                f.write_str(&rust_i18n::replace_patterns(&text, &[name], &[value]))
            }
            None => f.write_str(&text),
        }
    }
}

impl SshTargetError {
    /// What is wrong, as its catalogue key (`ssh_target_words.*`) and the one value it names
    /// (the value as written, quoted). The link builds its error's words from them.
    pub fn key_and_value(&self) -> (&'static str, Option<(&'static str, String)>) {
        match self {
            SshTargetError::Empty => ("ssh_target_words.empty", None),
            SshTargetError::CommandLine { suggestion } => (
                "ssh_target_words.command_line",
                Some(("suggestion", suggestion.clone())),
            ),
            SshTargetError::EmptyUser => ("ssh_target_words.empty_user", None),
            SshTargetError::BadUser { user } => (
                "ssh_target_words.bad_user",
                Some(("user", format!("{user:?}"))),
            ),
            SshTargetError::EmptyHost => ("ssh_target_words.empty_host", None),
            SshTargetError::BadHost { host } => (
                "ssh_target_words.bad_host",
                Some(("host", format!("{host:?}"))),
            ),
            SshTargetError::BadPort { port } => (
                "ssh_target_words.bad_port",
                Some(("port", format!("{port:?}"))),
            ),
            SshTargetError::UnclosedBracket => ("ssh_target_words.unclosed_bracket", None),
        }
    }
}

/// Reads `user@host:port` and its shorter forms; `[v6addr]:port` for IPv6 addresses.
pub fn parse_ssh_target(text: &str) -> Result<SshTarget, SshTargetError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(SshTargetError::Empty);
    }
    if text == "ssh" || text.starts_with("ssh ") {
        return Err(SshTargetError::CommandLine {
            suggestion: suggest_from_command_line(text),
        });
    }
    let (user, rest) = match text.rsplit_once('@') {
        Some((user, rest)) => (Some(user), rest),
        None => (None, text),
    };
    if let Some(user) = user {
        if user.is_empty() {
            return Err(SshTargetError::EmptyUser);
        }
        if user
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || c == ':')
        {
            return Err(SshTargetError::BadUser {
                user: user.to_owned(),
            });
        }
    }
    let (host, port) = split_host_port(rest)?;
    Ok(SshTarget {
        user: user.map(str::to_owned),
        host,
        port,
    })
}

fn split_host_port(text: &str) -> Result<(String, Option<u16>), SshTargetError> {
    if let Some(inside) = text.strip_prefix('[') {
        let (host, after) = inside
            .split_once(']')
            .ok_or(SshTargetError::UnclosedBracket)?;
        check_host(host, true)?;
        let port = match after {
            "" => None,
            _ => match after.strip_prefix(':') {
                Some(port) => Some(parse_port(port)?),
                None => {
                    return Err(SshTargetError::BadHost {
                        host: text.to_owned(),
                    });
                }
            },
        };
        return Ok((host.to_owned(), port));
    }
    let colons = text.matches(':').count();
    if colons > 1 {
        // More than one colon without brackets can only be a bare IPv6 address.
        check_host(text, true)?;
        return Ok((text.to_owned(), None));
    }
    let (host, port) = match text.split_once(':') {
        Some((host, port)) => (host, Some(parse_port(port)?)),
        None => (text, None),
    };
    check_host(host, false)?;
    Ok((host.to_owned(), port))
}

fn check_host(host: &str, ipv6: bool) -> Result<(), SshTargetError> {
    if host.is_empty() {
        return Err(SshTargetError::EmptyHost);
    }
    let allowed = |c: char| {
        if ipv6 {
            c.is_ascii_hexdigit() || c == ':' || c == '.'
        } else {
            c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_')
        }
    };
    if host.chars().all(allowed) {
        Ok(())
    } else {
        Err(SshTargetError::BadHost {
            host: host.to_owned(),
        })
    }
}

fn parse_port(text: &str) -> Result<u16, SshTargetError> {
    match text.parse::<u16>() {
        Ok(port) if port != 0 && text.bytes().all(|b| b.is_ascii_digit()) => Ok(port),
        _ => Err(SshTargetError::BadPort {
            port: text.to_owned(),
        }),
    }
}

/// Providers show logins as `ssh -p 38291 root@host`; turn that into the form the config takes.
fn suggest_from_command_line(text: &str) -> String {
    let mut words = text.split_whitespace().skip(1);
    let mut port = None;
    let mut target = None;
    while let Some(word) = words.next() {
        if word == "-p" {
            port = words.next();
        } else if let Some(attached) = word.strip_prefix("-p") {
            port = Some(attached);
        } else if !word.starts_with('-') && target.is_none() {
            target = Some(word);
        }
    }
    let target = target.unwrap_or("user@host");
    match port {
        Some(port) => format!("{target}:{port}"),
        None => target.to_owned(),
    }
}

impl TryFrom<String> for SshTarget {
    type Error = SshTargetError;

    fn try_from(text: String) -> Result<Self, Self::Error> {
        parse_ssh_target(&text)
    }
}

impl fmt::Display for SshTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(user) = &self.user {
            write!(f, "{user}@")?;
        }
        match (self.port, self.host.contains(':')) {
            (Some(port), true) => write!(f, "[{}]:{port}", self.host),
            (Some(port), false) => write!(f, "{}:{port}", self.host),
            (None, _) => f.write_str(&self.host),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(user: Option<&str>, host: &str, port: Option<u16>) -> SshTarget {
        SshTarget {
            user: user.map(str::to_owned),
            host: host.to_owned(),
            port,
        }
    }

    #[test]
    fn accepts_every_documented_form() {
        let cases = [
            (
                "root@connect.example.com:38291",
                target(Some("root"), "connect.example.com", Some(38291)),
            ),
            ("root@10.0.0.2", target(Some("root"), "10.0.0.2", None)),
            ("gpu-box:2222", target(None, "gpu-box", Some(2222))),
            ("a100_1", target(None, "a100_1", None)),
            ("u@[::1]:22", target(Some("u"), "::1", Some(22))),
            ("fe80::1", target(None, "fe80::1", None)),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_ssh_target(text), Ok(expected.clone()), "{text}");
            assert_eq!(
                parse_ssh_target(&expected.to_string()),
                Ok(expected),
                "{text}"
            );
        }
    }

    #[test]
    fn rejects_bad_ports() {
        for port in ["0", "65536", "22a", "", "+22"] {
            let text = format!("root@host:{port}");
            assert_eq!(
                parse_ssh_target(&text),
                Err(SshTargetError::BadPort {
                    port: port.to_owned()
                }),
                "{text}"
            );
        }
    }

    #[test]
    fn rejects_malformed_targets() {
        assert_eq!(parse_ssh_target("  "), Err(SshTargetError::Empty));
        assert_eq!(parse_ssh_target("@host"), Err(SshTargetError::EmptyUser));
        assert_eq!(parse_ssh_target("root@"), Err(SshTargetError::EmptyHost));
        assert_eq!(parse_ssh_target("root@:22"), Err(SshTargetError::EmptyHost));
        assert!(matches!(
            parse_ssh_target("root@my host"),
            Err(SshTargetError::BadHost { .. })
        ));
        assert_eq!(
            parse_ssh_target("u@[::1:22"),
            Err(SshTargetError::UnclosedBracket)
        );
    }

    #[test]
    fn a_pasted_ssh_command_gets_a_rewritten_suggestion() {
        assert_eq!(
            parse_ssh_target("ssh -p 38291 root@region-x.provider.com"),
            Err(SshTargetError::CommandLine {
                suggestion: "root@region-x.provider.com:38291".to_owned()
            })
        );
    }
}
