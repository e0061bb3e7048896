//! The secrets this process can know of (API tokens, passwords, alert addresses and signing
//! secrets the config names by variable or file), so every file of a bundle can be scrubbed
//! of them on the way out, whatever text carried them in.

use crate::config::Config;
use crate::redact::{MIN_SECRET_CHARS, scrub};

/// The values of every secret the config refers to that this process can read, longest first.
pub fn known(config: &Config, env: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    let mut vars: Vec<&str> = Vec::new();
    let mut files: Vec<&std::path::Path> = Vec::new();
    for host in &config.hosts {
        vars.extend(host.password_env.as_deref());
        if let Some(release) = &host.release {
            vars.extend(release.token_env.as_deref());
            files.extend(release.token_file.as_deref());
        }
    }
    for sink in &config.alerts {
        vars.extend(sink.url_env.as_deref());
        vars.extend(sink.secret_env.as_deref());
        vars.extend(sink.token_env.as_deref());
        files.extend(sink.url_file.as_deref());
        files.extend(sink.secret_file.as_deref());
        files.extend(sink.token_file.as_deref());
    }
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let mut urls: Vec<String> = config
        .alerts
        .iter()
        .filter_map(|sink| sink.url.clone())
        .collect();
    for sink in &config.alerts {
        urls.extend(sink.url_env.as_deref().and_then(env));
        urls.extend(sink.url_file.as_deref().and_then(|path| {
            std::fs::read_to_string(crate::paths::expand_tilde(path, home.as_deref())).ok()
        }));
    }
    let mut found: Vec<String> = vars.into_iter().filter_map(env).collect();
    found.extend(files.into_iter().filter_map(|path| {
        std::fs::read_to_string(crate::paths::expand_tilde(path, home.as_deref())).ok()
    }));
    let mut out: Vec<String> = Vec::new();
    for value in found {
        let value = value.trim().to_string();
        // A URL's own secret pieces (its query, its userinfo) too.
        out.extend(crate::redact::secrets(&value));
        out.push(value);
    }
    // An alert address's secret path parts (a Slack hook's, a Telegram bot's token), which a
    // host or a job may print bare.
    for url in urls {
        out.extend(crate::redact::path_secrets(url.trim()));
    }
    out.retain(|s| s.len() >= MIN_SECRET_CHARS);
    out.sort_by_key(|s| std::cmp::Reverse(s.len()));
    out.dedup();
    out
}

/// `text` with every known secret replaced by `***`.
pub fn clean(text: &str, secrets: &[String]) -> String {
    scrub(text, secrets)
}
