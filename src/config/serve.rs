//! `[serve]`: where `gpufleet watch --serve` serves the fleet's event stream to attached
//! consoles, and the tokens that may read it (`[[serve.tokens]]`, each by name, its secret
//! read from an environment variable or a file, never written in the config).

use std::path::PathBuf;

use serde::Deserialize;

/// Where the event stream is served and to whom.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServeConfig {
    /// `ADDRESS:PORT`, such as `127.0.0.1:9410`; `--serve ADDR` overrides it.
    pub listen: Option<String>,
    /// Serves an address off loopback in plain HTTP: the tokens and the fleet cross the network
    /// unencrypted (TLS, an SSH tunnel or a TLS proxy in front is the safe way).
    pub allow_plaintext: bool,
    /// The certificate chain (PEM) to serve HTTPS with, with `tls_key`.
    pub tls_cert: Option<PathBuf>,
    /// The certificate's private key (PEM).
    pub tls_key: Option<PathBuf>,
    /// Who may attach; with none, one token with every right from `GPUFLEET_SERVE_TOKEN`.
    pub tokens: Vec<ServeToken>,
}

/// One bearer token of `[[serve.tokens]]`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServeToken {
    /// Who holds it: the name the watcher's log and audit log give its requests.
    pub name: String,
    /// The environment variable holding the token.
    pub token_env: Option<String>,
    /// A file holding the token (its first line).
    pub token_file: Option<PathBuf>,
    /// Whether it may ask the watcher to act (`POST /v1/actions`); watching only when false.
    #[serde(default)]
    pub actions: bool,
}
