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
mod tests {
    //! Each ssh config option on proxies and host keys, through `resolve` on a real config file:
    //! honoured or refused with the option and the file named, never ignored.

    use std::path::Path;

    use crate::remote::error::RemoteError;
    use crate::remote::host::{Proxy, RemoteHost};
    use crate::remote::ssh_options::{HostKeySettings, StrictHostKeys};
    use crate::remote::target::{home_dir, resolve};

    fn resolve_with(dir: &Path, config: &str, spec: &str) -> Result<RemoteHost, RemoteError> {
        let path = dir.join("config");
        std::fs::write(&path, config).expect("write config");
        resolve("h", spec, None, None, Some(&path))
    }

    /// The refusal's text, checked to name the option and the config file.
    fn refusal(dir: &Path, config: &str, spec: &str, option: &str) -> String {
        match resolve_with(dir, config, spec) {
            Err(e @ RemoteError::UnsupportedOption { .. }) => {
                let text = e.to_string();
                assert!(text.contains(option), "{text}");
                assert!(
                    text.contains(&dir.join("config").display().to_string()),
                    "{text}"
                );
                text
            }
            other => panic!("{option} not refused: {other:?}"),
        }
    }

    fn settings(dir: &Path, config: &str, spec: &str) -> HostKeySettings {
        resolve_with(dir, config, spec).expect("resolves").host_keys
    }

    #[test]
    fn proxies_are_read_with_their_tokens_and_none_is_direct() {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        let host = resolve_with(
            d,
            "Host gpu\n    HostName 10.0.0.5\n    User ubuntu\n    \
         ProxyCommand ssh -W %h:%p -l %r bastion --secret=abc\n",
            "gpu",
        )
        .expect("resolves");
        let Proxy::Command(command) = &host.proxy else {
            panic!("{:?}", host.proxy)
        };
        assert_eq!(
            command.0,
            "ssh -W 10.0.0.5:22 -l ubuntu bastion --secret=abc"
        );
        assert!(
            !format!("{:?}", host.proxy).contains("secret"),
            "the command is not printed"
        );
        // Whichever of ProxyCommand and ProxyJump comes first wins, `none` included.
        let both = "Host gpu\n  ProxyCommand nc %h %p\n  ProxyJump bastion\n";
        let host = resolve_with(d, both, "gpu").expect("resolves");
        assert!(matches!(host.proxy, Proxy::Command(_)), "{:?}", host.proxy);
        let both = "Host gpu\n  ProxyJump none\nHost *\n  ProxyCommand nc %h %p\n";
        assert_eq!(
            resolve_with(d, both, "gpu").expect("ok").proxy,
            Proxy::Direct
        );
        refusal(
            d,
            "ProxyCommand nc %h %C\n",
            "root@1.2.3.4:22",
            "ProxyCommand",
        );
        let jumped =
            resolve_with(d, "Host * !bastion\n    ProxyJump bastion\n", "gpu").expect("ok");
        assert!(matches!(jumped.proxy, Proxy::Jump(_)), "{:?}", jumped.proxy);
        refusal(
            d,
            "Host gpu\n  KnownHostsCommand /bin/keys %H\n",
            "gpu",
            "KnownHostsCommand",
        );
        refusal(
            d,
            "RevokedHostKeys ~/.ssh/revoked\n",
            "gpu",
            "RevokedHostKeys",
        );

        let none = "Host gpu\n  ProxyCommand none\n  ProxyJump none\n  KnownHostsCommand none\n\
                Host *\n  ProxyCommand nc %h %p\n";
        assert_eq!(settings(d, none, "gpu"), HostKeySettings::default());
        assert_eq!(
            resolve_with(d, none, "gpu").expect("ok").proxy,
            Proxy::Direct
        );
        // A block for another host says nothing about this one.
        let other = "Host bastion-only\n  ProxyCommand nc %h %p\n";
        assert_eq!(settings(d, other, "gpu"), HostKeySettings::default());
        assert_eq!(
            resolve_with(d, other, "gpu").expect("ok").proxy,
            Proxy::Direct
        );
    }

    #[test]
    fn strict_host_key_checking_is_honoured_or_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        let strict = |value: &str| {
            settings(
                d,
                &format!("Host *\n  StrictHostKeyChecking {value}\n"),
                "gpu",
            )
            .strict
        };
        assert_eq!(strict("yes"), StrictHostKeys::Yes);
        assert_eq!(strict("Ask"), StrictHostKeys::Ask);
        assert_eq!(strict("accept-new"), StrictHostKeys::AcceptNew);
        // `no` is read; whether it is honoured is decided when connecting (the flag).
        assert_eq!(strict("no"), StrictHostKeys::No);
        assert_eq!(strict("off"), StrictHostKeys::No);
        refusal(
            d,
            "StrictHostKeyChecking maybe\n",
            "gpu",
            "StrictHostKeyChecking",
        );
        // The first value obtained wins, as in ssh: the host's own block before `Host *`.
        let first =
            "Host gpu\n  StrictHostKeyChecking accept-new\nHost *\n  StrictHostKeyChecking no\n";
        assert_eq!(settings(d, first, "gpu").strict, StrictHostKeys::AcceptNew);
    }

    #[test]
    fn known_hosts_files_and_aliases_are_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        let home = home_dir().expect("home");
        let config = "Host gpu\n  HostName 10.0.0.5\n  Port 2222\n  User ubuntu\n  HostKeyAlias GPU-Box\n  \
                  UserKnownHostsFile ~/.ssh/kh_fleet %d/kh_%h_%p_%r_%k_%n_%%\n";
        let s = settings(d, config, "gpu");
        assert_eq!(s.alias.as_deref(), Some("gpu-box"));
        assert_eq!(
            s.known_hosts_files,
            vec![
                home.join(".ssh/kh_fleet"),
                home.join("kh_10.0.0.5_2222_ubuntu_gpu-box_gpu_%"),
            ]
        );
        let s = settings(d, "Host gpu\n  UserKnownHostsFile /tmp/a\n", "gpu");
        assert_eq!(s.known_hosts_files, vec![Path::new("/tmp/a").to_path_buf()]);
        assert_eq!(s.alias, None);
        assert_eq!(
            s.global_known_hosts_files, None,
            "unset: OpenSSH's defaults"
        );
        let s = settings(
            d,
            "Host gpu\n  GlobalKnownHostsFile ~/fleet_keys /etc/fleet_keys\n",
            "gpu",
        );
        assert_eq!(
            s.global_known_hosts_files,
            Some(vec![
                home.join("fleet_keys"),
                Path::new("/etc/fleet_keys").to_path_buf()
            ])
        );
        let s = settings(d, "Host gpu\n  GlobalKnownHostsFile none\n", "gpu");
        assert_eq!(s.global_known_hosts_files, Some(vec![]));
        refusal(
            d,
            "Host gpu\n  UserKnownHostsFile none\n",
            "gpu",
            "UserKnownHostsFile",
        );
        let text = refusal(
            d,
            "Host gpu\n  UserKnownHostsFile ~/.ssh/kh_%C\n",
            "gpu",
            "UserKnownHostsFile",
        );
        assert!(text.contains("%C"), "{text}");
        refusal(
            d,
            "Host gpu\n  UserKnownHostsFile ${GPUFLEET_SURELY_UNSET_VAR}/kh\n",
            "gpu",
            "UserKnownHostsFile",
        );
    }

    #[test]
    fn match_blocks_are_evaluated_and_match_exec_refused_when_it_decides_security() {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        let host = resolve_with(
            d,
            "Host other\n  User x\nMatch host gpu\n  ProxyCommand nc %h %p\n",
            "gpu",
        )
        .expect("resolves");
        assert!(matches!(host.proxy, Proxy::Command(_)), "{:?}", host.proxy);
        let host = resolve_with(
            d,
            "Host other\n  User x\nMatch host other\n  ProxyCommand nc %h %p\n",
            "gpu",
        )
        .expect("resolves");
        assert_eq!(host.proxy, Proxy::Direct);
        match resolve_with(
            d,
            "Match exec \"true\"\n  StrictHostKeyChecking no\n",
            "gpu",
        ) {
            Err(e @ RemoteError::UnevaluatedMatch { .. }) => {
                let text = e.to_string();
                assert!(text.contains("stricthostkeychecking"), "{text}");
                assert!(text.contains("line 1"), "{text}");
            }
            other => panic!("not refused: {other:?}"),
        }
        // A Match exec block with nothing that decides security is only warned about.
        let host = resolve_with(d, "Match exec true\n  Compression yes\n", "gpu").expect("ok");
        assert!(
            host.settings
                .warnings
                .iter()
                .any(|w| w.english().contains("Match exec")),
            "{:?}",
            host.settings.warnings
        );
        assert!(resolve_with(d, "Match all\n  ServerAliveInterval 5\n", "gpu").is_ok());
    }

    /// Why an option is refused: the English as before (the log, `check`), and in Chinese a
    /// sentence of ours with the config's own values as written.
    #[test]
    fn a_refusals_reason_reads_in_chinese_and_its_english_is_unchanged() {
        let dir = tempfile::tempdir().expect("temp");
        let d = dir.path();
        let cases = [
            (
                "Host gpu\n  Ciphers aes128-ctr\n",
                "gpufleet does not restrict the algorithms libssh2 negotiates, so the connection \
             could use one this config rules out; remove it for this host",
            ),
            (
                "Host gpu\n  VerifyHostKeyDNS yes\n",
                "it changes how host keys or logins are checked, which gpufleet does not \
             implement; remove it for this host or set it to no",
            ),
            ("Host gpu\n  Port http\n", "\"http\" is not a port number"),
            (
                "Host gpu\n  ServerAliveInterval soon\n",
                "\"soon\" is not a time (seconds, or as 1m30s)",
            ),
            (
                "Host gpu\n  ProxyCommand nc %k\n",
                "its command uses the token %k, which ProxyCommand does not take \
             (%%, %h, %n, %p, %r)",
            ),
            (
                "Host gpu\n  IdentityFile ~/%z\n",
                "the token %z in \"~/%z\" is not supported; use %d, %h, %k, %n, %p, %r, %u or a \
             plain path",
            ),
            (
                "Host gpu\n  UserKnownHostsFile ${GPUFLEET_TEST_UNSET_VAR}/k\n",
                "\"${GPUFLEET_TEST_UNSET_VAR}/k\" uses ${GPUFLEET_TEST_UNSET_VAR}, which is not set",
            ),
        ];
        for (config, english) in cases {
            let e = resolve_with(d, config, "gpu").expect_err("refused");
            let RemoteError::UnsupportedOption { why, .. } = &e else {
                panic!("not a refusal: {e:?}");
            };
            assert_eq!(why.english(), english);
            assert!(e.to_string().ends_with(english), "{e}");
            let zh = why.render("zh-CN");
            assert!(zh.chars().any(|c| c > '\u{2e80}'), "{zh}");
            for word in ["remove it", "is not a", "does not", "which is not set"] {
                assert!(!zh.contains(word), "{word:?} in {zh}");
            }
        }
    }
}
