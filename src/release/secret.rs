//! API tokens: read from the environment variable or file the config names, held in a type that
//! prints as `<redacted>` everywhere (Debug, Display, errors), so no log line, error or screen
//! can carry one by accident.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::config::{ReleaseConfig, expand_home};

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
    #[error("no token configured: set token_env or token_file in [hosts.release]")]
    NotConfigured,
    #[error("the environment variable {name} (token_env) is not set")]
    EnvMissing { name: String },
    #[error("the environment variable {name} (token_env) is empty")]
    EnvEmpty { name: String },
    #[error("token_file {}: {source}", .path.display())]
    File {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("token_file {} is empty", .path.display())]
    FileEmpty { path: PathBuf },
    #[error("the token from {from} contains a line break or control character")]
    Malformed { from: String },
}

/// A token and what the user should hear about where it came from.
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
    if let Some(name) = &release.token_env {
        let value = env(name).ok_or_else(|| TokenError::EnvMissing { name: name.clone() })?;
        let text = value.trim();
        if text.is_empty() {
            return Err(TokenError::EnvEmpty { name: name.clone() });
        }
        return checked(text, &format!("${name}")).map(|secret| LoadedToken {
            secret,
            warnings: Vec::new(),
        });
    }
    let Some(file) = &release.token_file else {
        return Err(TokenError::NotConfigured);
    };
    let path = expand_home(file);
    let bytes = std::fs::read(&path).map_err(|source| TokenError::File {
        path: path.clone(),
        source,
    })?;
    let text = String::from_utf8_lossy(&bytes);
    let text = text.trim();
    if text.is_empty() {
        return Err(TokenError::FileEmpty { path });
    }
    let secret = checked(text, &path.display().to_string())?;
    Ok(LoadedToken {
        secret,
        warnings: permission_warning(&path).into_iter().collect(),
    })
}

/// A token with a line break would end the HTTP header early and smuggle in another one.
fn checked(text: &str, from: &str) -> Result<Secret, TokenError> {
    if text.chars().any(char::is_control) {
        return Err(TokenError::Malformed {
            from: from.to_string(),
        });
    }
    Ok(Secret::new(text))
}

#[cfg(unix)]
fn permission_warning(path: &Path) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path).ok()?.permissions().mode();
    (mode & 0o077 != 0).then(|| {
        format!(
            "token_file {} is open to other users (mode {:o}); run chmod 600 on it",
            path.display(),
            mode & 0o777
        )
    })
}

#[cfg(not(unix))]
fn permission_warning(_path: &Path) -> Option<String> {
    None
}

/// The process environment, for [`load_token`].
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}
