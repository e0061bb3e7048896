//! Who may attach to the watcher's event stream: the `[[serve.tokens]]` of the config, each a
//! name and a secret read from an environment variable or a file when the watcher starts (with
//! none, one token with every right from `GPUFLEET_SERVE_TOKEN`). A request is matched against
//! every token in constant time (the check `/metrics` uses); the secrets never reach a log.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

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

/// The tokens a watcher serves with now, shared by its server and its loop: a SIGHUP reload
/// replaces them, so a token taken out of the config is refused from then on.
#[derive(Debug, Clone)]
pub struct ServeTokens(Arc<RwLock<Arc<Tokens>>>);

impl ServeTokens {
    pub fn new(tokens: Tokens) -> Self {
        Self(Arc::new(RwLock::new(Arc::new(tokens))))
    }

    /// The tokens now.
    pub fn current(&self) -> Arc<Tokens> {
        self.0
            .read()
            .map(|t| Arc::clone(&t))
            .unwrap_or_else(|poisoned| Arc::clone(&poisoned.into_inner()))
    }

    /// Serves with `tokens` from now on; the names whose token is gone or changed (their
    /// consoles' streams are to be ended).
    pub fn replace(&self, tokens: Tokens) -> Vec<String> {
        let old = self.current();
        let revoked = old
            .0
            .iter()
            .filter(|was| {
                !tokens
                    .0
                    .iter()
                    .any(|now| now.name == was.name && now.token == was.token)
            })
            .map(|was| was.name.clone())
            .collect();
        match self.0.write() {
            Ok(mut kept) => *kept = Arc::new(tokens),
            Err(poisoned) => *poisoned.into_inner() = Arc::new(tokens),
        }
        revoked
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
    fn a_reload_refuses_a_token_taken_out_and_names_whose_streams_end() {
        let grant = |name: &str, token: &[u8], actions| Grant {
            name: name.into(),
            token: token.to_vec(),
            actions,
        };
        let served = ServeTokens::new(Tokens(vec![
            grant("alice", b"a-1", true),
            grant("bob", b"b-1", false),
            grant("carol", b"c-1", false),
        ]));
        let revoked = served.replace(Tokens(vec![
            // Alice may act no more: her stream stays, her next action is refused.
            grant("alice", b"a-1", false),
            // Carol's token was rotated; Bob's taken out; Dave's added.
            grant("carol", b"c-2", false),
            grant("dave", b"d-1", true),
        ]));
        assert_eq!(revoked, ["bob", "carol"]);
        let now = served.current();
        assert!(now.who(Some(b"Bearer b-1")).is_none());
        assert!(now.who(Some(b"Bearer c-1")).is_none());
        assert_eq!(now.who(Some(b"Bearer a-1")).map(|g| g.actions), Some(false));
        assert_eq!(
            now.who(Some(b"Bearer d-1")).map(|g| g.name.as_str()),
            Some("dave")
        );
    }

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
