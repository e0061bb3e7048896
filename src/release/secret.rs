//! API tokens: read from the environment variable or file the config names, held in a type that
//! prints as `<redacted>` everywhere (Debug, Display, errors), so no log line, error or screen
//! can carry one by accident.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::config::{ReleaseConfig, expand_home};
use crate::words::Words;

/// What a secret prints as.
pub const REDACTED: &str = "<redacted>";

/// A token; only [`Secret::expose`] gives the text, for the one header that needs it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(text: impl Into<String>) -> Self {
        Self(text.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    NotConfigured {
        what: &'static str,
        env_key: &'static str,
        file_key: &'static str,
        table: &'static str,
    },
    EnvMissing {
        name: String,
        key: &'static str,
    },
    EnvEmpty {
        name: String,
        key: &'static str,
    },
    File {
        path: PathBuf,
        key: &'static str,
        source: std::io::Error,
    },
    FileEmpty {
        path: PathBuf,
        key: &'static str,
    },
    Malformed {
        what: &'static str,
        from: String,
    },
}

/// Where one secret comes from: an environment variable or a file named in the config, and the
/// config keys that name them (errors say which key to fix, never the value).
#[derive(Debug, Clone, Copy)]
pub struct SecretSource<'a> {
    /// What the secret is, for messages: `token`, or the catalogue key of its name
    /// (`alert_sink.what_url`).
    pub what: &'static str,
    pub env: Option<&'a str>,
    pub file: Option<&'a Path>,
    pub env_key: &'static str,
    pub file_key: &'static str,
    /// The table the keys belong in, e.g. `[hosts.release]`.
    pub table: &'static str,
}

#[derive(Debug, Clone)]
pub struct LoadedToken {
    pub secret: Secret,
    /// Such as "token_file ... is open to other users".
    pub warnings: Vec<String>,
}

/// Reads the token the release config points at. `env` looks up an environment variable (the
/// process environment in the binary; a map in tests, which must not race on the real one).
pub fn load_token(
    release: &ReleaseConfig,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<LoadedToken, TokenError> {
    let source = SecretSource {
        what: "token",
        env: release.token_env.as_deref(),
        file: release.token_file.as_deref(),
        env_key: "token_env",
        file_key: "token_file",
        table: "[hosts.release]",
    };
    load_secret(&source, env)
}

/// Loads one secret from the environment variable, else the file, that `source` names.
pub fn load_secret(
    source: &SecretSource<'_>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<LoadedToken, TokenError> {
    let what = source.what;
    if let Some(name) = source.env {
        let key = source.env_key;
        let value = env(name).ok_or_else(|| TokenError::EnvMissing {
            name: name.to_string(),
            key,
        })?;
        let text = value.trim();
        if text.is_empty() {
            return Err(TokenError::EnvEmpty {
                name: name.to_string(),
                key,
            });
        }
        return checked(text, what, &format!("${name}")).map(|secret| LoadedToken {
            secret,
            warnings: Vec::new(),
        });
    }
    let Some(file) = source.file else {
        return Err(TokenError::NotConfigured {
            what,
            env_key: source.env_key,
            file_key: source.file_key,
            table: source.table,
        });
    };
    let key = source.file_key;
    let path = expand_home(file);
    let bytes = std::fs::read(&path).map_err(|e| TokenError::File {
        path: path.clone(),
        key,
        source: e,
    })?;
    let text = String::from_utf8_lossy(&bytes);
    let text = text.trim();
    if text.is_empty() {
        return Err(TokenError::FileEmpty { path, key });
    }
    let secret = checked(text, what, &path.display().to_string())?;
    Ok(LoadedToken {
        secret,
        warnings: permission_warning(&path, key).into_iter().collect(),
    })
}

fn checked(text: &str, what: &'static str, from: &str) -> Result<Secret, TokenError> {
    if text.chars().any(char::is_control) {
        return Err(TokenError::Malformed {
            what,
            from: from.to_string(),
        });
    }
    Ok(Secret::new(text))
}

#[cfg(unix)]
fn permission_warning(path: &Path, key: &str) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path).ok()?.permissions().mode();
    (mode & 0o077 != 0).then(|| {
        rust_i18n::t!(
            "release_plan.secret_open",
            key = key,
            path = path.display(),
            mode = format!("{:o}", mode & 0o777)
        )
        .into_owned()
    })
}

#[cfg(not(unix))]
fn permission_warning(_path: &Path, _key: &str) -> Option<String> {
    None
}

/// The process environment, for [`load_token`].
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

impl TokenError {
    /// Why the API token could not be loaded (which key to fix, never the value).
    pub fn words(&self) -> Words {
        // What the secret is: the release's is the token; other secrets name their catalogue
        // key (`alert_sink.what_url`), or keep their name where the catalogue has none.
        let what = |what: &'static str| match what {
            "token" => Words::new("release_error.what_token"),
            key => Words::new(key),
        };
        match self {
            TokenError::NotConfigured {
                what: w,
                env_key,
                file_key,
                table,
            } => Words::new("release_error.token_not_configured")
                .put_words("what", what(w))
                .put("env_key", env_key.to_string())
                .put("file_key", file_key.to_string())
                .put("table", table.to_string()),
            TokenError::EnvMissing { name, key } => Words::new("release_error.env_missing")
                .put("name", name.to_string())
                .put("key", key.to_string()),
            TokenError::EnvEmpty { name, key } => Words::new("release_error.env_empty")
                .put("name", name.to_string())
                .put("key", key.to_string()),
            TokenError::File { path, key, source } => Words::new("release_error.token_file")
                .put("key", key.to_string())
                .put("path", path.display().to_string())
                .put("why", source.to_string()),
            TokenError::FileEmpty { path, key } => Words::new("release_error.token_file_empty")
                .put("key", key.to_string())
                .put("path", path.display().to_string()),
            TokenError::Malformed { what: w, from } => Words::new("release_error.token_malformed")
                .put_words("what", what(w))
                .put("from", from.to_string()),
        }
    }
}

/// English, as the log keeps it: the catalogue's English of [`TokenError::words`].
impl std::fmt::Display for TokenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.words().fmt(f)
    }
}
