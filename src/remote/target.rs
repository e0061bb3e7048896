//! Which machine to reach and as whom: a host's `ssh` value resolved through `~/.ssh/config`
//! (HostName, User, Port, IdentityFile; `Include` and `Host` patterns), with the options on
//! host keys that `ssh_options` honours or refuses and the proxies of `proxy_config`.

use crate::paths::expand_tilde;
use std::fmt;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use ssh2_config::{ParseRule, SshConfig};

use crate::config::parse_ssh_target;
use crate::remote::error::RemoteError;
use crate::remote::proxy::Proxy;
use crate::remote::proxy_config::proxy_of;
use crate::remote::ssh_options::{
    HostKeySettings, Source, Tokens, host_key_settings, refuse_match_blocks,
};

/// A fully resolved address: nothing is left for ssh config or defaults to fill in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub user: String,
    pub host: String,
    pub port: u16,
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.host.contains(':') {
            write!(f, "{}@[{}]:{}", self.user, self.host, self.port)
        } else {
            write!(f, "{}@{}:{}", self.user, self.host, self.port)
        }
    }
}

/// One host the link connects to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteHost {
    /// The name shown in the UI.
    pub name: String,
    pub target: Endpoint,
    /// Keys to offer, in order; empty means none exist.
    pub identity_files: Vec<PathBuf>,
    /// The name of the environment variable holding the password (never the password).
    pub password_env: Option<String>,
    /// How the host's key is checked, from the ssh config.
    pub host_keys: HostKeySettings,
    /// How the host is reached: directly, or through a proxy command or jump host.
    pub proxy: Proxy,
}

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
    let config = load_config(ssh_config_path, home.as_deref())?;
    let resolver = Resolver {
        config: config.as_ref().map(|(c, p)| (c, p.as_path())),
        home: home.as_deref(),
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

/// What a host is asked for as.
struct Wanted<'a> {
    name: &'a str,
    ssh_spec: &'a str,
    identity_file: Option<&'a Path>,
    password_env: Option<&'a str>,
}

/// Resolves hosts, and the jump hosts they are reached through, against one read config.
pub(crate) struct Resolver<'a> {
    config: Option<(&'a SshConfig, &'a Path)>,
    home: Option<&'a Path>,
}

impl Resolver<'_> {
    /// A jump host of `ProxyJump`, reached through `through` when it is not the first.
    pub(crate) fn resolve_hop(
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

    /// `proxy`, when given, is how the host is reached whatever its config says.
    fn resolve(
        &self,
        wanted: Wanted<'_>,
        proxy: Option<Proxy>,
        depth: usize,
    ) -> Result<RemoteHost, RemoteError> {
        let ssh_spec = wanted.ssh_spec;
        let spec = parse_ssh_target(ssh_spec).map_err(|e| RemoteError::Target {
            spec: ssh_spec.to_string(),
            message: e.to_string(),
        })?;
        let home = self.home;
        let params = self.config.map(|(c, _)| c.query(&spec.host));
        let host = params
            .as_ref()
            .and_then(|p| p.host_name.clone())
            .map(|h| h.replace("%h", &spec.host))
            .unwrap_or_else(|| spec.host.clone());
        let user = spec
            .user
            .clone()
            .or_else(|| params.as_ref().and_then(|p| p.user.clone()))
            .unwrap_or_else(local_user);
        let port = spec
            .port
            .or_else(|| params.as_ref().and_then(|p| p.port))
            .unwrap_or(22);

        let (host_keys, proxy) = match (self.config, &params) {
            (Some((config, path)), Some(params)) => {
                let source = Source {
                    host: &spec.host,
                    config: path,
                };
                refuse_match_blocks(config.get_hosts(), &source)?;
                let tokens = Tokens {
                    original: &spec.host,
                    host: &host,
                    port,
                    user: &user,
                    local_user: &local_user(),
                    home,
                };
                let host_keys = host_key_settings(params, &source, &tokens)?;
                let proxy = match proxy {
                    Some(proxy) => proxy,
                    None => proxy_of(self, params, &source, &tokens, depth)?,
                };
                (host_keys, proxy)
            }
            _ => (HostKeySettings::default(), proxy.unwrap_or_default()),
        };

        let mut identity_files: Vec<PathBuf> = Vec::new();
        let configured = params
            .as_ref()
            .and_then(|p| p.identity_file.clone())
            .unwrap_or_default();
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
        })
    }
}

/// The parsed ssh config and the file it was read from; `None` when there is none.
fn load_config(
    path: Option<&Path>,
    home: Option<&Path>,
) -> Result<Option<(SshConfig, PathBuf)>, RemoteError> {
    let (path, required) = match path {
        Some(p) => (p.to_path_buf(), true),
        None => match home {
            Some(h) => (h.join(".ssh").join("config"), false),
            None => return Ok(None),
        },
    };
    let file = match File::open(&path) {
        Ok(f) => f,
        Err(e) if !required && e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(RemoteError::SshConfig {
                path,
                message: e.to_string(),
            });
        }
    };
    // Relative `Include`s are relative to `~/.ssh`; a config that lives in some `<dir>/.ssh`
    // (tests, alternate homes) gets `<dir>` as its home so its includes resolve beside it.
    let config_home = path
        .parent()
        .filter(|dir| dir.file_name().is_some_and(|n| n == ".ssh"))
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .or_else(|| home.map(Path::to_path_buf));
    let mut parser = SshConfig::default();
    if let Some(h) = config_home {
        parser = parser.home_dir(h);
    }
    let rules = ParseRule::ALLOW_UNKNOWN_FIELDS | ParseRule::ALLOW_UNSUPPORTED_FIELDS;
    parser
        .parse(&mut BufReader::new(file), rules)
        .map(|config| Some((config, path.clone())))
        .map_err(|e| RemoteError::SshConfig {
            path,
            message: e.to_string(),
        })
}

/// The user's home directory, where `~/.ssh` lives.
pub(crate) fn home_dir() -> Option<PathBuf> {
    std::env::home_dir().filter(|h| !h.as_os_str().is_empty())
}

fn local_user() -> String {
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
