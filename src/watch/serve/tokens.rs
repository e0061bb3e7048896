//! Who may attach to the watcher's event stream: the `[[serve.tokens]]` of the config, each a
//! name and a secret read from an environment variable or a file when the watcher starts (with
//! none, one token with every right from `GPUFLEET_SERVE_TOKEN`). A request is matched against
//! every token in constant time (the check `/metrics` uses); the secrets never reach a log.

use std::path::{Path, PathBuf};

use rust_i18n::t;

use crate::config::{ServeConfig, ServeToken};
use crate::metrics::bearer_matches;

/// The variable read when the config names no token.
pub const DEFAULT_TOKEN_ENV: &str = "GPUFLEET_SERVE_TOKEN";
/// The name the default token's requests go by.
pub const DEFAULT_TOKEN_NAME: &str = "default";

/// Why the watcher cannot serve its fleet.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("{}", t!("serve_error.bad_address", addr = .0 : {:?}))]
    BadAddress(String),
    #[error("{}", t!("serve_error.no_token", env = DEFAULT_TOKEN_ENV))]
    NoToken,
    #[error("{}", t!("serve_error.token_unset", name = .name, env = .env))]
    TokenUnset { name: String, env: String },
    #[error("{}", t!("serve_error.token_empty", name = .0))]
    TokenEmpty(String),
    #[error("{}", t!("serve_error.token_file", name = .name, path = .path.display(), error = .error))]
    TokenFile {
        name: String,
        path: PathBuf,
        error: String,
    },
    #[error("{}", t!("serve_error.token_source", name = .0))]
    TokenSource(String),
    #[error("{}", t!("serve_error.plaintext_off_loopback", addr = .0))]
    PlaintextOffLoopback(String),
    #[error("{}", t!("serve_error.tls_half"))]
    TlsHalf,
    #[error("{}", t!("serve_error.tls", path = .path.display(), error = .error))]
    Tls {
        path: std::path::PathBuf,
        error: String,
    },
    #[error(transparent)]
    Serve(#[from] crate::metrics::ServeError),
}

/// One token and what it may do.
#[derive(Clone)]
pub struct Grant {
    pub name: String,
    token: Vec<u8>,
    /// Whether it may ask the watcher to act; watching only when false.
    pub actions: bool,
}

impl std::fmt::Debug for Grant {
    // The secret never reaches a log or a panic message.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Grant")
            .field("name", &self.name)
            .field("actions", &self.actions)
            .finish_non_exhaustive()
    }
}

/// Every token the watcher answers.
#[derive(Debug, Clone)]
pub struct Tokens(Vec<Grant>);

impl Tokens {
    /// The config's tokens, their secrets read now; `GPUFLEET_SERVE_TOKEN` when it names none.
    pub fn load(config: Option<&ServeConfig>) -> Result<Self, SetupError> {
        let listed = config.map(|c| c.tokens.as_slice()).unwrap_or_default();
        if listed.is_empty() {
            return match std::env::var(DEFAULT_TOKEN_ENV) {
                Ok(token) if !token.trim().is_empty() => Ok(Self(vec![Grant {
                    name: DEFAULT_TOKEN_NAME.to_string(),
                    token: token.trim().as_bytes().to_vec(),
                    actions: true,
                }])),
                _ => Err(SetupError::NoToken),
            };
        }
        listed
            .iter()
            .map(read_grant)
            .collect::<Result<_, _>>()
            .map(Self)
    }

    /// The token an `Authorization` header carries, if it is one of these. Every token is
    /// compared, whichever matches, so the time taken says nothing of which one did.
    pub fn who(&self, authorization: Option<&[u8]>) -> Option<&Grant> {
        let mut found = None;
        for grant in &self.0 {
            if bearer_matches(authorization, &grant.token) && found.is_none() {
                found = Some(grant);
            }
        }
        found
    }
}

fn read_grant(listed: &ServeToken) -> Result<Grant, SetupError> {
    let name = listed.name.clone();
    let token = match (&listed.token_env, &listed.token_file) {
        (Some(env), None) => std::env::var(env).map_err(|_| SetupError::TokenUnset {
            name: name.clone(),
            env: env.clone(),
        })?,
        (None, Some(path)) => read_token_file(path).map_err(|error| SetupError::TokenFile {
            name: name.clone(),
            path: path.clone(),
            error,
        })?,
        _ => return Err(SetupError::TokenSource(name)),
    };
    let token = token.trim();
    if token.is_empty() {
        return Err(SetupError::TokenEmpty(name));
    }
    Ok(Grant {
        name,
        token: token.as_bytes().to_vec(),
        actions: listed.actions,
    })
}

/// A token file's first line.
pub fn read_token_file(path: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    Ok(text.lines().next().unwrap_or_default().trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_known_by_its_token_alone() {
        let tokens = Tokens(vec![
            Grant {
                name: "ops".into(),
                token: b"one".to_vec(),
                actions: true,
            },
            Grant {
                name: "viewer".into(),
                token: b"two".to_vec(),
                actions: false,
            },
        ]);
        assert_eq!(
            tokens.who(Some(b"Bearer two")).map(|g| g.name.as_str()),
            Some("viewer")
        );
        assert_eq!(
            tokens.who(Some(b"Bearer one")).map(|g| g.actions),
            Some(true)
        );
        assert!(tokens.who(Some(b"Bearer three")).is_none());
        assert!(tokens.who(None).is_none());
        assert!(!format!("{tokens:?}").contains("one\""));
    }

    #[test]
    fn a_token_needs_exactly_one_source() {
        let both = ServeToken {
            name: "x".into(),
            token_env: Some("A".into()),
            token_file: Some("/nonexistent".into()),
            actions: false,
        };
        assert!(matches!(read_grant(&both), Err(SetupError::TokenSource(_))));
    }
}
