//! Why a secret (the release's API token) could not be loaded, in the language of the
//! interface: which config key or variable to fix, never the value. `TokenError`'s own text
//! is their English, for the log.

use rust_i18n::t;

use super::secret::TokenError;

/// Why the API token could not be loaded (which key to fix, never the value).
pub fn token_error_words(error: &TokenError) -> String {
    token_error_words_in(error, &rust_i18n::locale())
}

/// [`token_error_words`] in `locale`; in `en`, the error's `Display` (the log's text).
pub fn token_error_words_in(error: &TokenError, locale: &str) -> String {
    // What the secret is: the release's is the token; other secrets name their catalogue key
    // (`alert_sink.what_url`), or keep their name where the catalogue has none.
    let what = |what: &str| match what {
        "token" => t!("release_error.what_token", locale = locale).into_owned(),
        key => t!(key, locale = locale).into_owned(),
    };
    match error {
        TokenError::NotConfigured {
            what: w,
            env_key,
            file_key,
            table,
        } => t!(
            "release_error.token_not_configured",
            locale = locale,
            what = what(w),
            env_key = env_key,
            file_key = file_key,
            table = table
        ),
        TokenError::EnvMissing { name, key } => {
            t!(
                "release_error.env_missing",
                locale = locale,
                name = name,
                key = key
            )
        }
        TokenError::EnvEmpty { name, key } => t!(
            "release_error.env_empty",
            locale = locale,
            name = name,
            key = key
        ),
        TokenError::File { path, key, source } => t!(
            "release_error.token_file",
            locale = locale,
            key = key,
            path = path.display(),
            why = source
        ),
        TokenError::FileEmpty { path, key } => {
            t!(
                "release_error.token_file_empty",
                locale = locale,
                key = key,
                path = path.display()
            )
        }
        TokenError::Malformed { what: w, from } => {
            t!(
                "release_error.token_malformed",
                locale = locale,
                what = what(w),
                from = from
            )
        }
    }
    .into_owned()
}

/// English, as the log keeps it: the catalogue's English
/// ([`token_error_words_in`]).
impl std::fmt::Display for TokenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&token_error_words_in(self, "en"))
    }
}
