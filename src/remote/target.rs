//! Which machine to reach and as whom (a [`RemoteHost`], `host.rs`): a host's `ssh` value
//! resolved through `~/.ssh/config` (`ssh_config_file`: `Host`, `Match`, `Include`; HostName,
//! User, Port, IdentityFile), with the host-key options of `ssh_options`, the proxies of
//! `proxy_config` and the connection settings of `host_settings`.

use crate::paths::expand_tilde;
use crate::words::Words;
use std::path::{Path, PathBuf};

use crate::config::parse_ssh_target;
use crate::remote::error::RemoteError;
use crate::remote::host::{Endpoint, Proxy, RemoteHost};
use crate::remote::host_settings::host_settings;
use crate::remote::proxy_config::{HopResolver, proxy_of};
use crate::remote::ssh_config_file::{HostOptions, expand_host_name, read_host};
use crate::remote::ssh_options::{Source, Tokens, expand_file, host_key_settings, is_none};

/// Keys OpenSSH tries when nothing names one, in its order.
const DEFAULT_KEYS: [&str; 3] = ["id_ed25519", "id_ecdsa", "id_rsa"];

/// Resolves a host's `ssh` value (`user@host:port` or an `~/.ssh/config` alias).
///
/// What the value says explicitly wins over the ssh config, which wins over defaults (port 22,
/// the local user name), as with `ssh`. `identity_file` comes first, then the config's
/// `IdentityFile`s; with neither, the default keys in `~/.ssh` that exist. `ssh_config_path`
/// `None` reads `~/.ssh/config` when there is one.
pub fn resolve(
    name: &str,
    ssh_spec: &str,
    identity_file: Option<&Path>,
    password_env: Option<&str>,
    ssh_config_path: Option<&Path>,
) -> Result<RemoteHost, RemoteError> {
    let home = home_dir();
    let config = config_path(ssh_config_path, home.as_deref())?;
    let config_home = config_home(config.as_deref(), home);
    let include_dir = config_home.as_ref().map(|h| h.join(".ssh"));
    let resolver = Resolver {
        config: config.as_deref(),
        include_dir: include_dir.as_deref(),
        home: config_home.as_deref(),
    };
    resolver.resolve(
        Wanted {
            name,
            ssh_spec,
            identity_file,
            password_env,
        },
        None,
        0,
    )
}

/// What the ssh config says of a word typed where a host goes: whether a `Host` block other
/// than the catch-all names it (an alias), and the literal host names it declares (for "did
/// you mean"). `Ok(None)` without a config file; `Err` when the file cannot be read, so that
/// connecting can say why.
pub fn ssh_config_names(
    ssh_config_path: Option<&Path>,
    word: &str,
) -> Result<Option<(bool, Vec<String>)>, RemoteError> {
    let home = home_dir();
    let Some(config) = config_path(ssh_config_path, home.as_deref())? else {
        return Ok(None);
    };
    let config_home = config_home(Some(&config), home);
    let include_dir = config_home.as_ref().map(|h| h.join(".ssh"));
    let options = read_host(
        &config,
        include_dir.as_deref(),
        config_home.as_deref(),
        word,
        &local_user(),
    )?;
    Ok(Some((options.named_by_a_block, options.literal_hosts)))
}

/// What a host is asked for as.
struct Wanted<'a> {
    name: &'a str,
    ssh_spec: &'a str,
    identity_file: Option<&'a Path>,
    password_env: Option<&'a str>,
}

/// Resolves hosts, and the jump hosts they are reached through, against one read config.
struct Resolver<'a> {
    config: Option<&'a Path>,
    include_dir: Option<&'a Path>,
    home: Option<&'a Path>,
}

impl HopResolver for Resolver<'_> {
    fn resolve_hop(
        &self,
        spec: &str,
        through: Option<Proxy>,
        depth: usize,
    ) -> Result<RemoteHost, RemoteError> {
        let wanted = Wanted {
            name: spec,
            ssh_spec: spec,
            identity_file: None,
            password_env: None,
        };
        self.resolve(wanted, through, depth)
    }
}

impl Resolver<'_> {
    /// `proxy`, when given, is how the host is reached whatever its config says.
    fn resolve(
        &self,
        wanted: Wanted<'_>,
        proxy: Option<Proxy>,
        depth: usize,
    ) -> Result<RemoteHost, RemoteError> {
        let ssh_spec = wanted.ssh_spec;
        let spec = parse_ssh_target(ssh_spec).map_err(|error| RemoteError::Target {
            spec: ssh_spec.to_string(),
            error,
        })?;
        let home = self.home;
        let local = local_user();
        let params = match self.config {
            Some(path) => read_host(path, self.include_dir, home, &spec.host, &local)?,
            None => HostOptions::default(),
        };
        let no_config = PathBuf::from("~/.ssh/config");
        let source = Source {
            host: &spec.host,
            config: self.config.unwrap_or(&no_config),
        };
        let first = |key: &str| params.get(key).and_then(|a| a.first()).cloned();
        let host = match first("hostname") {
            Some(value) => expand_host_name(&value, &spec.host)
                .map_err(|why| source.refuse("HostName", why))?,
            None => spec.host.clone(),
        };
        let user = spec
            .user
            .clone()
            .or_else(|| first("user"))
            .unwrap_or_else(|| local.clone());
        let port = match (spec.port, first("port")) {
            (Some(port), _) => port,
            (None, Some(text)) => text.parse::<u16>().ok().filter(|p| *p > 0).ok_or_else(|| {
                source.refuse(
                    "Port",
                    Words::new("option_words.not_port").put("text", format!("{text:?}")),
                )
            })?,
            (None, None) => 22,
        };
        let tokens = Tokens {
            original: &spec.host,
            host: &host,
            port,
            user: &user,
            local_user: &local,
            home,
        };
        let host_keys = host_key_settings(&params, &source, &tokens)?;
        let settings = host_settings(&params, &source, &tokens)?;
        let proxy = match proxy {
            Some(proxy) => proxy,
            None => proxy_of(self, &params, &source, &tokens, depth)?,
        };

        let mut identity_files: Vec<PathBuf> = Vec::new();
        let mut configured = Vec::new();
        for setting in params.all("identityfile") {
            if is_none(&setting.args) {
                continue;
            }
            for file in &setting.args {
                let path = expand_file(
                    file,
                    &tokens,
                    host_keys.alias.as_deref().unwrap_or(&spec.host),
                )
                .map_err(|why| source.refuse("IdentityFile", why))?;
                configured.push(path);
            }
        }
        let explicit = wanted.identity_file.map(|p| expand_tilde(p, home));
        for path in explicit.into_iter().chain(configured) {
            if !identity_files.contains(&path) {
                identity_files.push(path);
            }
        }
        if identity_files.is_empty()
            && let Some(home) = home
        {
            identity_files = DEFAULT_KEYS
                .iter()
                .map(|k| home.join(".ssh").join(k))
                .filter(|p| p.is_file())
                .collect();
        }
        Ok(RemoteHost {
            name: wanted.name.to_string(),
            target: Endpoint { user, host, port },
            identity_files,
            password_env: wanted.password_env.map(str::to_string),
            host_keys,
            proxy,
            settings,
            job_log: None,
            dead_man: None,
            disarm_stray_switch: false,
        })
    }
}

/// The ssh config to read: `path`, which must exist, else `~/.ssh/config` when there is one.
fn config_path(path: Option<&Path>, home: Option<&Path>) -> Result<Option<PathBuf>, RemoteError> {
    match path {
        Some(p) => match std::fs::metadata(p) {
            Ok(_) => Ok(Some(p.to_path_buf())),
            Err(e) => Err(RemoteError::SshConfig {
                path: p.to_path_buf(),
                message: Box::new(crate::remote::ssh_config_file::os_said(&e)),
            }),
        },
        None => Ok(home
            .map(|h| h.join(".ssh").join("config"))
            .filter(|p| p.exists())),
    }
}

/// Relative `Include`s are relative to `~/.ssh`; a config that lives in some `<dir>/.ssh`
/// (tests, alternate homes) has `<dir>` as its home, for its includes and its `~`.
fn config_home(config: Option<&Path>, home: Option<PathBuf>) -> Option<PathBuf> {
    config
        .and_then(Path::parent)
        .filter(|dir| dir.file_name().is_some_and(|n| n == ".ssh"))
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .or(home)
}

/// The user's home directory, where `~/.ssh` lives.
pub(crate) fn home_dir() -> Option<PathBuf> {
    std::env::home_dir().filter(|h| !h.as_os_str().is_empty())
}

/// This machine's name, as the kernel has it (`localhost` when it has none).
pub fn local_machine_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}

/// The local user's name (`USER`, else `LOGNAME`, else `root`).
pub(crate) fn local_user() -> String {
    std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .ok()
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| "root".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).expect("mkdir");
        }
        std::fs::write(path, text).expect("write");
    }

    #[test]
    fn explicit_values_need_no_config() {
        let dir = tempfile::tempdir().expect("tempdir");
        let empty = dir.path().join("none");
        write(&empty, "");
        let key = dir.path().join("k");
        let host = resolve(
            "a100-1",
            "root@connect.example.com:38291",
            Some(&key),
            Some("A100_PW"),
            Some(&empty),
        )
        .expect("resolves");
        assert_eq!(
            host.target,
            Endpoint {
                user: "root".into(),
                host: "connect.example.com".into(),
                port: 38291
            }
        );
        assert_eq!(host.target.to_string(), "root@connect.example.com:38291");
        assert_eq!(host.identity_files, vec![key]);
        assert_eq!(host.password_env.as_deref(), Some("A100_PW"));
    }

    #[test]
    fn alias_resolves_through_include_and_patterns() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ssh = dir.path().join(".ssh");
        write(
            &ssh.join("config"),
            "Include conf.d/*.conf\n\nHost *\n    User fallback\n    Port 2200\n",
        );
        write(
            &ssh.join("conf.d/gpus.conf"),
            "Host my-4090\n    HostName 10.1.2.3\n    Port 38291\n    IdentityFile ~/.ssh/rented\n\n\
             Host gpu-*\n    HostName %h.example.net\n    User ubuntu\n",
        );
        let config = ssh.join("config");
        let host = resolve("box", "my-4090", None, None, Some(&config)).expect("resolves");
        assert_eq!(host.target.host, "10.1.2.3");
        assert_eq!(host.target.port, 38291);
        assert_eq!(host.target.user, "fallback");
        assert_eq!(host.identity_files, vec![ssh.join("rented")]);

        let host = resolve("g", "gpu-7", None, None, Some(&config)).expect("resolves");
        assert_eq!(host.target.host, "gpu-7.example.net");
        assert_eq!(host.target.user, "ubuntu");
        assert_eq!(host.target.port, 2200);

        // What the user wrote beats the config.
        let host = resolve("x", "admin@my-4090:22", None, None, Some(&config)).expect("ok");
        assert_eq!((host.target.user.as_str(), host.target.port), ("admin", 22));
    }

    #[test]
    fn proxy_jump_chains_resolve_each_hop_through_the_config() {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = dir.path().join("config");
        write(
            &config,
            "Host hidden\n    ProxyJump ssh://ops@a:2201,b\nHost b\n    HostName 10.9.9.9\n",
        );
        let host = resolve("h", "hidden", None, None, Some(&config)).expect("resolves");
        let Proxy::Jump(b) = &host.proxy else {
            panic!("{:?}", host.proxy)
        };
        assert_eq!(
            (b.spec.as_str(), b.host.target.host.as_str()),
            ("b", "10.9.9.9")
        );
        let Proxy::Jump(a) = &b.host.proxy else {
            panic!("{:?}", b.host.proxy)
        };
        assert_eq!(a.spec, "ssh://ops@a:2201");
        assert_eq!(a.host.target.to_string(), "ops@a:2201");
        assert_eq!(a.host.proxy, Proxy::Direct);
    }

    #[test]
    fn bad_inputs_are_errors() {
        let dir = tempfile::tempdir().expect("tempdir");
        let missing = dir.path().join("missing");
        assert!(matches!(
            resolve("h", "root@h", None, None, Some(&missing)),
            Err(RemoteError::SshConfig { .. })
        ));
        assert!(matches!(
            resolve("h", "ssh -p 22 root@h", None, None, None),
            Err(RemoteError::Target { .. })
        ));
    }
}
