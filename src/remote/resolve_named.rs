//! Hosts by name: the SSH settings the command line gives every connection, and resolving
//! configured hosts (or ssh targets and aliases typed on the command line) through
//! `~/.ssh/config` into hosts to connect to.

use std::path::PathBuf;

use crate::config::{Config, HostConfig};
use crate::remote::{LinkOptions, RemoteError, RemoteHost, resolve};
use crate::words::Words;

/// SSH settings of the command line, shared by every connection of one run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SshSettings {
    /// `--ssh-config`: instead of `~/.ssh/config`.
    pub ssh_config: Option<PathBuf>,
    /// `--known-hosts`: instead of the config's `UserKnownHostsFile` or `~/.ssh/known_hosts`.
    pub known_hosts: Option<PathBuf>,
    /// `--accept-new-host-keys`.
    pub accept_new_host_keys: bool,
    /// `--allow-strict-host-key-checking-no`.
    pub allow_strict_host_key_checking_no: bool,
}

/// A host that could not be resolved. Its `Display` is the catalogue's English, for logs.
#[derive(Debug, thiserror::Error)]
#[error("{}", resolve_words(.name, .source).english())]
pub struct ResolveError {
    pub name: String,
    pub source: Box<RemoteError>,
}

impl ResolveError {
    /// The error in the interface's language, for a person to read (its `Display` is the
    /// English, for logs); the same words in English.
    pub fn localized(&self) -> String {
        self.words().localized()
    }

    /// The error in catalogue words (`resolve_words.host`), to be said in any language.
    pub fn words(&self) -> Words {
        resolve_words(&self.name, &self.source)
    }
}

/// `host NAME: REASON`, the reason in the link error's own catalogue words.
fn resolve_words(name: &str, source: &RemoteError) -> Words {
    Words::new("resolve_words.host")
        .put("name", name)
        .put_words("reason", source.words())
}

/// The link options of `settings` at `interval_ms`.
pub fn link_options(settings: &SshSettings, interval_ms: u64) -> LinkOptions {
    LinkOptions {
        interval_ms: u32::try_from(interval_ms).unwrap_or(u32::MAX),
        known_hosts: settings.known_hosts.clone(),
        accept_new_host_keys: settings.accept_new_host_keys,
        allow_strict_host_key_checking_no: settings.allow_strict_host_key_checking_no,
        ..LinkOptions::default()
    }
}

/// Hosts named on the command line (a config host's name, or an ssh target / alias), else every
/// configured host, resolved through `~/.ssh/config`.
pub fn resolve_named(
    settings: &SshSettings,
    named: &[String],
    config: &Config,
) -> Result<Vec<RemoteHost>, ResolveError> {
    let ssh_config = settings.ssh_config.as_deref();
    let failed = |name: &str, source| ResolveError {
        name: name.to_string(),
        source: Box::new(source),
    };
    let resolve_config = |h: &HostConfig| {
        resolve(
            &h.name,
            &h.ssh.to_string(),
            h.identity_file.as_deref(),
            h.password_env.as_deref(),
            ssh_config,
        )
        .map(|mut host| {
            host.job_log = h.jobs.first().and_then(|j| j.log.clone());
            host.dead_man = h.dead_man_plan();
            host.disarm_stray_switch = host.dead_man.is_none();
            host
        })
        .map_err(|source| failed(&h.name, source))
    };
    if named.is_empty() {
        return config.hosts.iter().map(resolve_config).collect();
    }
    named
        .iter()
        .map(|name| match config.host(name) {
            Some(h) => resolve_config(h),
            None => {
                resolve(name, name, None, None, ssh_config).map_err(|source| failed(name, source))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_that_cannot_be_resolved_says_why_in_english_as_displayed_and_in_chinese() {
        let error = ResolveError {
            name: "rented".into(),
            source: Box::new(RemoteError::SshConfig {
                path: "/c".into(),
                message: Box::new(
                    crate::words::Words::new("config_words.at_line")
                        .put("line", "4")
                        .put_words(
                            "message",
                            crate::words::Words::new("config_words.quote_open"),
                        ),
                ),
            }),
        };
        let english = error.source.words().english();
        assert_eq!(format!("host rented: {english}"), error.to_string());
        assert_eq!(error.words().english(), error.to_string());
        assert_eq!(
            error.words().render("zh-CN"),
            "主机 rented：/c: 第 4 行：引号没有闭合"
        );
    }
}
