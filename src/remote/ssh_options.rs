//! The `~/.ssh/config` options that decide how a host's key is checked. Each is honoured or
//! refused, never silently ignored:
//!
//! - honoured: `StrictHostKeyChecking` `yes`/`ask`/`accept-new` (and `no`/`off`, which the
//!   connection refuses unless `--allow-strict-host-key-checking-no`), `UserKnownHostsFile`
//!   (files, `~`, `%`-tokens, `${VAR}`), `GlobalKnownHostsFile` (files, `~`, `none`),
//!   `HostKeyAlias`, `none` for `KnownHostsCommand`; `ProxyCommand` and `ProxyJump` are read
//!   by `proxy_config.rs`;
//! - refused: `KnownHostsCommand` (it would not run), `RevokedHostKeys` (a revoked key would be
//!   trusted), `UserKnownHostsFile none`.

use std::path::{Path, PathBuf};

use crate::paths::expand_tilde;
use crate::remote::error::RemoteError;
use crate::remote::ssh_config_file::HostOptions;
use crate::words::Words;

/// What to do with a host key that is not on file (`StrictHostKeyChecking`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StrictHostKeys {
    /// Ask in the console; headless, refuse unless `--accept-new-host-keys` (the default).
    #[default]
    Ask,
    /// Never add a key, not even with `--accept-new-host-keys` or in the console.
    Yes,
    /// Add new keys without asking (never a changed one), as `--accept-new-host-keys` does.
    AcceptNew,
    /// `no`/`off`: refused unless `--allow-strict-host-key-checking-no`; then, as OpenSSH,
    /// new keys are added and a changed key is let through with passwords turned off.
    No,
}

/// The host-key settings a host's ssh config gives it; `Default` is no setting at all.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HostKeySettings {
    pub strict: StrictHostKeys,
    /// `UserKnownHostsFile`: the files to check (new keys go to the first); empty when unset.
    pub known_hosts_files: Vec<PathBuf>,
    /// `GlobalKnownHostsFile`: read after the user's files, never written; `None` when unset
    /// (OpenSSH's `/etc/ssh/ssh_known_hosts` and `ssh_known_hosts2`), empty for `none`.
    pub global_known_hosts_files: Option<Vec<PathBuf>>,
    /// `HostKeyAlias`: the name (lowercased) keys are looked up and filed under instead of
    /// `host` / `[host]:port`.
    pub alias: Option<String>,
}

/// What the `%` tokens of `UserKnownHostsFile` stand for.
pub(crate) struct Tokens<'a> {
    /// The name the user gave (`%n`).
    pub original: &'a str,
    /// The host connected to, after `HostName` (`%h`).
    pub host: &'a str,
    pub port: u16,
    /// The remote user (`%r`).
    pub user: &'a str,
    /// The local user (`%u`).
    pub local_user: &'a str,
    pub home: Option<&'a Path>,
}

/// Where a refusal points.
pub(crate) struct Source<'a> {
    /// The name the host was looked up under in the ssh config.
    pub host: &'a str,
    pub config: &'a Path,
}

impl Source<'_> {
    pub(crate) fn refuse(&self, option: &'static str, why: Words) -> RemoteError {
        self.refuse_named(option, why)
    }

    /// `option` refused, `why` in catalogue words (`option_words.*`).
    pub(crate) fn refuse_named(&self, option: &str, why: Words) -> RemoteError {
        RemoteError::UnsupportedOption {
            host: self.host.to_string(),
            config: self.config.to_path_buf(),
            option: option.to_string(),
            why: Box::new(why),
        }
    }
}

pub(crate) fn is_none(args: &[String]) -> bool {
    matches!(args, [one] if one.eq_ignore_ascii_case("none"))
}

/// Refuses the options gpufleet cannot honour, and reads the ones it honours.
pub(crate) fn host_key_settings(
    params: &HostOptions,
    source: &Source<'_>,
    tokens: &Tokens<'_>,
) -> Result<HostKeySettings, RemoteError> {
    if params
        .get("knownhostscommand")
        .is_some_and(|args| !is_none(args))
    {
        return Err(source.refuse(
            "KnownHostsCommand",
            Words::new("option_words.known_hosts_command"),
        ));
    }
    if params
        .get("revokedhostkeys")
        .is_some_and(|args| !is_none(args))
    {
        return Err(source.refuse(
            "RevokedHostKeys",
            Words::new("option_words.revoked_host_keys"),
        ));
    }
    let strict = match params.get("stricthostkeychecking") {
        None => StrictHostKeys::Ask,
        Some(args) => strict_value(args, source)?,
    };
    let alias = match params.get("hostkeyalias") {
        None => None,
        Some([alias]) if !alias.is_empty() => Some(alias.to_ascii_lowercase()),
        Some(_) => {
            return Err(source.refuse("HostKeyAlias", Words::new("option_words.one_name")));
        }
    };
    let known_hosts_files = match params.get("userknownhostsfile") {
        None => Vec::new(),
        Some(args) if is_none(args) => {
            return Err(source.refuse(
                "UserKnownHostsFile",
                Words::new("option_words.known_hosts_none"),
            ));
        }
        Some(args) => {
            let alias_or_name = alias.as_deref().unwrap_or(tokens.original);
            args.iter()
                .map(|file| {
                    expand_file(file, tokens, alias_or_name)
                        .map_err(|why| source.refuse("UserKnownHostsFile", why))
                })
                .collect::<Result<Vec<_>, _>>()?
        }
    };
    let global_known_hosts_files = params.get("globalknownhostsfile").map(|args| {
        if is_none(args) {
            Vec::new()
        } else {
            args.iter()
                .map(|file| expand_tilde(Path::new(file), tokens.home))
                .collect()
        }
    });
    Ok(HostKeySettings {
        strict,
        known_hosts_files,
        global_known_hosts_files,
        alias,
    })
}

fn strict_value(args: &[String], source: &Source<'_>) -> Result<StrictHostKeys, RemoteError> {
    let value = args
        .first()
        .map(|v| v.to_ascii_lowercase())
        .unwrap_or_default();
    match value.as_str() {
        "yes" | "true" => Ok(StrictHostKeys::Yes),
        "ask" => Ok(StrictHostKeys::Ask),
        "accept-new" => Ok(StrictHostKeys::AcceptNew),
        "no" | "off" | "false" => Ok(StrictHostKeys::No),
        _ => Err(source.refuse(
            "StrictHostKeyChecking",
            Words::new("option_words.strict_unknown").put("value", format!("{value:?}")),
        )),
    }
}

/// `~`, `${VAR}` and the `%` tokens of one `UserKnownHostsFile` name.
pub(crate) fn expand_file(
    file: &str,
    tokens: &Tokens<'_>,
    alias_or_name: &str,
) -> Result<PathBuf, Words> {
    let mut out = String::new();
    let mut chars = file.chars();
    while let Some(c) = chars.next() {
        match c {
            '%' => match chars.next() {
                Some('%') => out.push('%'),
                Some('h') => out.push_str(tokens.host),
                Some('n') => out.push_str(tokens.original),
                Some('k') => out.push_str(alias_or_name),
                Some('p') => out.push_str(&tokens.port.to_string()),
                Some('r') => out.push_str(tokens.user),
                Some('u') => out.push_str(tokens.local_user),
                Some('d') => match tokens.home {
                    Some(home) => out.push_str(&home.to_string_lossy()),
                    None => return Err(Words::new("option_words.path_no_home")),
                },
                other => {
                    let token = other.map(String::from).unwrap_or_default();
                    return Err(Words::new("option_words.path_token")
                        .put("token", format!("%{token}"))
                        .put("file", format!("{file:?}")));
                }
            },
            '$' if chars.as_str().starts_with('{') => {
                let rest = &chars.as_str()[1..];
                let Some((name, after)) = rest.split_once('}') else {
                    return Err(
                        Words::new("option_words.path_unclosed").put("file", format!("{file:?}"))
                    );
                };
                match std::env::var(name) {
                    Ok(value) => out.push_str(&value),
                    Err(_) => {
                        return Err(Words::new("option_words.path_unset")
                            .put("file", format!("{file:?}"))
                            .put("name", name));
                    }
                }
                chars = after.chars();
            }
            _ => out.push(c),
        }
    }
    Ok(expand_tilde(Path::new(&out), tokens.home))
}

#[cfg(test)]
#[path = "ssh_options_tests.rs"]
mod tests;
