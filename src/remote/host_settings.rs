//! A host's connection and login settings from its ssh config: `ConnectTimeout`,
//! `ServerAliveInterval`/`ServerAliveCountMax`, `IdentitiesOnly`, `IdentityAgent`, `BatchMode`,
//! which login methods may be tried (`PasswordAuthentication`, `KbdInteractiveAuthentication`,
//! `PubkeyAuthentication`, `PreferredAuthentications`), `HashKnownHosts`; `CertificateFile`
//! is refused (libssh2 cannot log in with a certificate). The other options are judged by
//! `option_policy`.

use std::path::PathBuf;

use crate::remote::error::RemoteError;
use crate::remote::option_policy::review;
use crate::remote::ssh_config_file::HostOptions;
use crate::remote::ssh_options::{Source, Tokens, expand_file, is_none};
use crate::words::Words;

/// Which ssh-agent to ask for keys (`IdentityAgent`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Agent {
    /// `$SSH_AUTH_SOCK` (unset, or `IdentityAgent SSH_AUTH_SOCK`).
    #[default]
    FromEnvironment,
    /// `IdentityAgent none`.
    Off,
    Socket(PathBuf),
}

/// What the ssh config says about connecting to and logging into one host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostSettings {
    pub connect_timeout_ms: Option<u64>,
    /// `ServerAliveInterval`; `None` when unset or 0 (gpufleet's own keepalive then).
    pub server_alive_interval_s: Option<u32>,
    pub server_alive_count_max: u32,
    /// Only agent keys whose public half is one of the identity files are tried.
    pub identities_only: bool,
    pub agent: Agent,
    /// `BatchMode yes`: nothing is asked (no passphrase, password or host-key question).
    pub batch_mode: bool,
    pub pubkey_auth: bool,
    pub password_auth: bool,
    pub kbd_interactive_auth: bool,
    /// `HashKnownHosts yes`: keys added to known_hosts are filed under a hashed name.
    pub hash_known_hosts: bool,
    /// Options not honoured, named with the host; each is shown once per process.
    pub warnings: Vec<crate::words::Words>,
}

impl Default for HostSettings {
    fn default() -> Self {
        Self {
            connect_timeout_ms: None,
            server_alive_interval_s: None,
            server_alive_count_max: 3,
            identities_only: false,
            agent: Agent::default(),
            batch_mode: false,
            pubkey_auth: true,
            password_auth: true,
            kbd_interactive_auth: true,
            hash_known_hosts: false,
            warnings: Vec::new(),
        }
    }
}

/// Reads the settings, refusing what gpufleet cannot honour safely.
pub(crate) fn host_settings(
    params: &HostOptions,
    source: &Source<'_>,
    tokens: &Tokens<'_>,
) -> Result<HostSettings, RemoteError> {
    if params
        .all("certificatefile")
        .iter()
        .any(|s| !is_none(&s.args))
    {
        return Err(source.refuse(
            "CertificateFile",
            Words::new("option_words.certificate_file"),
        ));
    }
    let first = |key: &str| params.get(key).and_then(|a| a.first()).map(String::as_str);
    let mut settings = HostSettings::default();
    if let Some(text) = first("connecttimeout")
        && !text.eq_ignore_ascii_case("none")
    {
        let seconds =
            parse_time(text).ok_or_else(|| source.refuse("ConnectTimeout", bad_time(text)))?;
        settings.connect_timeout_ms = (seconds > 0).then_some(seconds * 1_000);
    }
    if let Some(text) = first("serveraliveinterval") {
        let seconds =
            parse_time(text).ok_or_else(|| source.refuse("ServerAliveInterval", bad_time(text)))?;
        settings.server_alive_interval_s = u32::try_from(seconds).ok().filter(|s| *s > 0);
    }
    if let Some(text) = first("serveralivecountmax") {
        settings.server_alive_count_max = text.parse::<u32>().map_err(|_| {
            source.refuse(
                "ServerAliveCountMax",
                Words::new("option_words.not_count").put("text", format!("{text:?}")),
            )
        })?;
    }
    let flag = |key: &'static str, name: &'static str| -> Result<Option<bool>, RemoteError> {
        match first(key) {
            None => Ok(None),
            Some(v) if v.eq_ignore_ascii_case("yes") || v.eq_ignore_ascii_case("true") => {
                Ok(Some(true))
            }
            Some(v) if v.eq_ignore_ascii_case("no") || v.eq_ignore_ascii_case("false") => {
                Ok(Some(false))
            }
            Some(v) => Err(source.refuse(
                name,
                Words::new("option_words.not_yes_no").put("text", format!("{v:?}")),
            )),
        }
    };
    settings.identities_only = flag("identitiesonly", "IdentitiesOnly")?.unwrap_or(false);
    settings.batch_mode = flag("batchmode", "BatchMode")?.unwrap_or(false);
    // `unbound` and `host-bound` (OpenSSH 8.9) are kinds of yes.
    settings.pubkey_auth = match first("pubkeyauthentication") {
        Some(v) if v.eq_ignore_ascii_case("unbound") || v.eq_ignore_ascii_case("host-bound") => {
            true
        }
        _ => flag("pubkeyauthentication", "PubkeyAuthentication")?.unwrap_or(true),
    };
    settings.password_auth =
        flag("passwordauthentication", "PasswordAuthentication")?.unwrap_or(true);
    let kbd = flag(
        "kbdinteractiveauthentication",
        "KbdInteractiveAuthentication",
    )?
    .or(flag(
        "challengeresponseauthentication",
        "ChallengeResponseAuthentication",
    )?);
    settings.kbd_interactive_auth = kbd.unwrap_or(true);
    settings.hash_known_hosts = flag("hashknownhosts", "HashKnownHosts")?.unwrap_or(false);
    if let Some(list) = first("preferredauthentications") {
        let wants = |m: &str| list.split(',').any(|x| x.eq_ignore_ascii_case(m));
        settings.pubkey_auth &= wants("publickey");
        settings.password_auth &= wants("password");
        settings.kbd_interactive_auth &= wants("keyboard-interactive");
    }
    if let Some(agent) = first("identityagent") {
        settings.agent = if agent.eq_ignore_ascii_case("none") {
            Agent::Off
        } else if agent == "SSH_AUTH_SOCK" {
            Agent::FromEnvironment
        } else if let Some(var) = agent.strip_prefix('$') {
            match std::env::var_os(var) {
                Some(path) => Agent::Socket(PathBuf::from(path)),
                None => Agent::Off,
            }
        } else {
            let alias = tokens.original;
            Agent::Socket(
                expand_file(agent, tokens, alias)
                    .map_err(|why| source.refuse("IdentityAgent", why))?,
            )
        };
    }
    settings.warnings = review(params, source)?;
    Ok(settings)
}

fn bad_time(text: &str) -> Words {
    Words::new("option_words.not_time").put("text", format!("{text:?}"))
}

/// OpenSSH's time format: seconds, or numbers each followed by `s`, `m`, `h`, `d` or `w`.
pub(crate) fn parse_time(text: &str) -> Option<u64> {
    if let Ok(seconds) = text.parse::<u64>() {
        return Some(seconds);
    }
    let mut total: u64 = 0;
    let mut number = String::new();
    for c in text.chars() {
        if c.is_ascii_digit() {
            number.push(c);
            continue;
        }
        let unit = match c.to_ascii_lowercase() {
            's' => 1,
            'm' => 60,
            'h' => 3_600,
            'd' => 86_400,
            'w' => 604_800,
            _ => return None,
        };
        let value: u64 = std::mem::take(&mut number).parse().ok()?;
        total = total.checked_add(value.checked_mul(unit)?)?;
    }
    if !number.is_empty() {
        total = total.checked_add(number.parse().ok()?)?;
    }
    Some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_follow_openssh() {
        assert_eq!(parse_time("30"), Some(30));
        assert_eq!(parse_time("1m30s"), Some(90));
        assert_eq!(parse_time("2H"), Some(7_200));
        assert_eq!(parse_time("1w1d"), Some(691_200));
        assert_eq!(parse_time("soon"), None);
    }
}
