//! Why a secret (the release's API token) could not be loaded, in catalogue words: which
//! config key or variable to fix, never the value. `TokenError`'s own text is their English,
//! for the log.

use crate::words::Words;

use super::secret::TokenError;

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
