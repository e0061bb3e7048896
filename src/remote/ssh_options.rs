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
    pub(crate) fn refuse(&self, option: &'static str, why: impl Into<String>) -> RemoteError {
        self.refuse_named(option, why)
    }

    pub(crate) fn refuse_named(&self, option: &str, why: impl Into<String>) -> RemoteError {
        RemoteError::UnsupportedOption {
            host: self.host.to_string(),
            config: self.config.to_path_buf(),
            option: option.to_string(),
            why: why.into(),
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
            "it does not run commands to learn host keys; put the keys in a known_hosts file \
             (UserKnownHostsFile) instead",
        ));
    }
    if params
        .get("revokedhostkeys")
        .is_some_and(|args| !is_none(args))
    {
        return Err(source.refuse(
            "RevokedHostKeys",
            "it does not read revoked-key files, so a revoked key would be trusted; mark the \
             keys `@revoked` in known_hosts instead",
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
            return Err(source.refuse("HostKeyAlias", "it takes exactly one name"));
        }
    };
    let known_hosts_files = match params.get("userknownhostsfile") {
        None => Vec::new(),
        Some(args) if is_none(args) => {
            return Err(source.refuse(
                "UserKnownHostsFile",
                "`none` leaves no file to check host keys against; name a file",
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
            format!("unknown value {value:?}; use yes, ask or accept-new"),
        )),
    }
}

/// `~`, `${VAR}` and the `%` tokens of one `UserKnownHostsFile` name.
pub(crate) fn expand_file(
    file: &str,
    tokens: &Tokens<'_>,
    alias_or_name: &str,
) -> Result<PathBuf, String> {
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
                    None => return Err("%d needs a home directory, and there is none".into()),
                },
                other => {
                    let token = other.map(String::from).unwrap_or_default();
                    return Err(format!(
                        "the token %{token} in {file:?} is not supported; use %d, %h, %k, %n, \
                         %p, %r, %u or a plain path"
                    ));
                }
            },
            '$' if chars.as_str().starts_with('{') => {
                let rest = &chars.as_str()[1..];
                let Some((name, after)) = rest.split_once('}') else {
                    return Err(format!("{file:?} has a `${{` without its `}}`"));
                };
                match std::env::var(name) {
                    Ok(value) => out.push_str(&value),
                    Err(_) => {
                        return Err(format!("{file:?} uses ${{{name}}}, which is not set"));
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
