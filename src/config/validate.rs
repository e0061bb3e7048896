//! The rules a well-typed config must still follow: ranges, unique names, and secrets kept out
//! of the file.

use std::collections::HashMap;

use super::locate::{Document, KeyPath};
use super::problem::{Problem, problem};
use super::values::is_env_var_name;
use super::{Budget, Config, Expect, HostConfig, Provider, ReleaseConfig};

const TOKEN_KEYS: &[&str] = &[
    "token",
    "api_key",
    "apikey",
    "api_token",
    "access_token",
    "auth_token",
    "secret",
];
const PASSWORD_KEYS: &[&str] = &["password", "passwd", "passphrase"];

/// A key that looks like it holds a secret. Config files get shared, pasted into issues and
/// committed, so a secret must never be written in one; say where it belongs instead.
pub(super) fn inline_secret(doc: &Document<'_>) -> Option<Problem> {
    doc.keys().into_iter().find_map(|(path, _)| {
        let name = path.last_key()?.to_ascii_lowercase();
        let advice = if PASSWORD_KEYS.contains(&name.as_str()) {
            "do not write a password in the config file; put it in an environment variable and \
             give that variable's name as password_env"
        } else if TOKEN_KEYS.contains(&name.as_str()) {
            "do not write a token in the config file; put it in an environment variable named by \
             token_env, or in a file named by token_file"
        } else {
            return None;
        };
        Some(Problem {
            path,
            message: advice.to_owned(),
        })
    })
}

/// An automatic release must leave time to notice the announcement and hold it.
const MIN_COUNTDOWN_S: u64 = 10;

/// How often a host may be sampled, in milliseconds.
pub const INTERVAL_MS_RANGE: std::ops::RangeInclusive<u64> = 100..=60_000;

/// The one rule for a sample interval (the config's `interval_ms` and `--interval-ms`); the
/// error says the allowed range.
pub fn check_interval_ms(interval_ms: u64) -> Result<(), String> {
    if INTERVAL_MS_RANGE.contains(&interval_ms) {
        Ok(())
    } else {
        Err(format!(
            "must be from {} to {} milliseconds, found {interval_ms}",
            INTERVAL_MS_RANGE.start(),
            INTERVAL_MS_RANGE.end()
        ))
    }
}

pub(super) fn check(config: &Config) -> Result<(), Problem> {
    let root = KeyPath::root();
    if let Some(theme) = &config.theme {
        check_theme_name(theme, root.key("theme"))?;
    }
    if let Some(language) = &config.language
        && crate::config::lang::Lang::from_tag(language).is_none()
    {
        problem(
            root.key("language"),
            format!(
                "{language:?} is not a language gpufleet speaks; use one of: {}",
                crate::config::lang::TAGS.join(", ")
            ),
        )?;
    }
    if let Err(message) = check_interval_ms(config.interval_ms) {
        problem(root.key("interval_ms"), message)?;
    }
    if config.history_minutes < 10 {
        problem(
            root.key("history_minutes"),
            format!("must be at least 10, found {}", config.history_minutes),
        )?;
    }
    check_percent(config.idle_util_pct, root.key("idle_util_pct"))?;
    check_percent(config.busy_util_pct, root.key("busy_util_pct"))?;
    if config.idle_util_pct >= config.busy_util_pct {
        problem(
            root.key("busy_util_pct"),
            format!(
                "must be above idle_util_pct ({}), found {}",
                config.idle_util_pct, config.busy_util_pct
            ),
        )?;
    }
    if config.idle_minutes == 0 {
        problem(root.key("idle_minutes"), "must be at least 1")?;
    }
    if !(10..=3600).contains(&config.job_window_s) {
        problem(
            root.key("job_window_s"),
            format!(
                "must be from 10 to 3600 seconds, found {}",
                config.job_window_s
            ),
        )?;
    }

    let mut first_use: HashMap<&str, usize> = HashMap::new();
    for (index, host) in config.hosts.iter().enumerate() {
        let path = root.key("hosts").index(index);
        check_host(host, &path)?;
        if let Some(first) = first_use.insert(&host.name, index) {
            problem(
                path.key("name"),
                format!(
                    "duplicate host name {:?}, already used by hosts[{first}]",
                    host.name
                ),
            )?;
        }
    }
    if let Some(budget) = &config.budget {
        check_budget(budget, &root.key("budget"))?;
    }
    if config.countdown_s < MIN_COUNTDOWN_S {
        problem(
            root.key("countdown_s"),
            format!(
                "must be at least {MIN_COUNTDOWN_S} seconds, found {}",
                config.countdown_s
            ),
        )?;
    }
    if config.unreachable_minutes == 0 {
        problem(root.key("unreachable_minutes"), "must be at least 1")?;
    }
    if let Some(metrics) = &config.metrics
        && metrics.listen.parse::<std::net::SocketAddr>().is_err()
    {
        problem(
            root.key("metrics").key("listen"),
            format!(
                "must be ADDRESS:PORT such as \"127.0.0.1:9400\", found {:?}",
                metrics.listen
            ),
        )?;
    }
    let host_names: Vec<&str> = config.hosts.iter().map(|h| h.name.as_str()).collect();
    let mut sink_names: HashMap<&str, usize> = HashMap::new();
    for (index, sink) in config.alerts.iter().enumerate() {
        let path = root.key("alerts").index(index);
        super::alerts::check_sink(sink, &host_names, &path)?;
        if let Some(first) = sink_names.insert(sink.display_name(), index) {
            problem(
                path.key("name"),
                format!(
                    "two sinks are called {:?} (alerts[{first}] too); give each a name",
                    sink.display_name()
                ),
            )?;
        }
    }
    super::providers::check_accounts(&config.providers, &root.key("providers"))?;
    Ok(())
}

/// The theme name becomes a file name in the user's theme directory, so it must not be a path.
fn check_theme_name(name: &str, path: KeyPath) -> Result<(), Problem> {
    let safe = !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if safe {
        Ok(())
    } else {
        problem(
            path,
            format!(
                "{name:?} is not a theme name; use a bundled name (dark, light, high-contrast, \
                 ansi16) or the stem of a .toml file in the themes directory"
            ),
        )
    }
}

fn check_percent(value: f64, path: KeyPath) -> Result<(), Problem> {
    if (0.0..=100.0).contains(&value) {
        Ok(())
    } else {
        problem(path, format!("must be from 0 to 100, found {value}"))
    }
}

fn check_host(host: &HostConfig, path: &KeyPath) -> Result<(), Problem> {
    if host.name.trim().is_empty() {
        problem(path.key("name"), "must not be empty")?;
    }
    if host.name.chars().any(char::is_control) {
        problem(path.key("name"), "must not contain control characters")?;
    }
    if host
        .identity_file
        .as_ref()
        .is_some_and(|file| file.as_os_str().is_empty())
    {
        problem(path.key("identity_file"), "must not be empty")?;
    }
    if let Some(name) = &host.password_env {
        check_env_name(name, path.key("password_env"), "the password")?;
    }
    if let Some(price) = host.price_per_hour
        && !(price.is_finite() && price >= 0.0)
    {
        problem(
            path.key("price_per_hour"),
            format!("must be 0 or more, found {price}"),
        )?;
    }
    for (key, limit) in [
        ("max_spend", host.max_spend),
        ("max_hours", host.max_hours),
        ("max_run_hours", host.max_run_hours),
    ] {
        if let Some(v) = limit
            && !(v.is_finite() && v > 0.0)
        {
            problem(path.key(key), format!("must be more than 0, found {v}"))?;
        }
    }
    if let Some(countdown) = host.countdown_s
        && countdown < MIN_COUNTDOWN_S
    {
        problem(
            path.key("countdown_s"),
            format!("must be at least {MIN_COUNTDOWN_S} seconds, found {countdown}"),
        )?;
    }
    if let Some(currency) = &host.currency
        && !(currency.len() == 3 && currency.bytes().all(|b| b.is_ascii_uppercase()))
    {
        problem(
            path.key("currency"),
            format!("must be a 3-letter code in capitals such as USD or CNY, found {currency:?}"),
        )?;
    }
    if let Some(argv) = &host.backup {
        check_argv(argv, path.key("backup"))?;
    }
    if host.auto_release && host.release.is_none() {
        problem(
            path.key("auto_release"),
            "needs a [hosts.release] table saying how to release this host",
        )?;
    }
    if let Some((index, _)) = host.jobs.iter().enumerate().find(|(_, job)| {
        job.on_plateau == Some(super::jobs::OnPlateau::Release) && host.release.is_none()
    }) {
        problem(
            path.key("jobs").index(index).key("on_plateau"),
            "\"release\" needs a [hosts.release] table saying how to release this host",
        )?;
    }
    if let Some(expect) = &host.expect {
        check_expect(expect, &path.key("expect"))?;
    }
    if let Some(release) = &host.release {
        check_release(release, &path.key("release"))?;
    }
    super::jobs::check_jobs(&host.jobs, &path.key("jobs"))?;
    if let Some(prices) = &host.prices {
        super::billing_prices::check_prices(prices, &path.key("prices"))?;
    }
    Ok(())
}

fn check_env_name(name: &str, path: KeyPath, holds: &str) -> Result<(), Problem> {
    if is_env_var_name(name) {
        Ok(())
    } else {
        problem(
            path,
            format!(
                "must be the NAME of an environment variable that holds {holds} \
                 (capitals, digits and '_', like VAST_API_KEY), not the secret itself"
            ),
        )
    }
}

fn check_argv(argv: &[String], path: KeyPath) -> Result<(), Problem> {
    match argv.first() {
        Some(program) if !program.trim().is_empty() => Ok(()),
        _ => problem(
            path,
            "must be a command as a list of words, such as [\"rsync\", \"-a\", \"src/\", \"dst/\"]",
        ),
    }
}

fn check_expect(expect: &Expect, path: &KeyPath) -> Result<(), Problem> {
    if expect.gpu.as_ref().is_some_and(|gpu| gpu.trim().is_empty()) {
        problem(path.key("gpu"), "must not be empty")?;
    }
    if expect.count == Some(0) {
        problem(path.key("count"), "must be at least 1")?;
    }
    if let Some(memory) = expect.memory_gib
        && !(memory.is_finite() && memory > 0.0)
    {
        problem(
            path.key("memory_gib"),
            format!("must be above 0, found {memory}"),
        )?;
    }
    Ok(())
}

fn check_release(release: &ReleaseConfig, path: &KeyPath) -> Result<(), Problem> {
    let provider = release.provider.as_str();
    if release.token_env.is_some() && release.token_file.is_some() {
        problem(
            path.key("token_file"),
            "give either token_env or token_file, not both",
        )?;
    }
    if let Some(name) = &release.token_env {
        check_env_name(name, path.key("token_env"), "the token")?;
    }
    if release
        .token_file
        .as_ref()
        .is_some_and(|file| file.as_os_str().is_empty())
    {
        problem(path.key("token_file"), "must not be empty")?;
    }
    if release
        .instance_id
        .as_ref()
        .is_some_and(|id| id.trim().is_empty())
    {
        problem(path.key("instance_id"), "must not be empty")?;
    }
    if release.provider.uses_api() {
        if release.instance_id.is_none() {
            problem(
                path.key("instance_id"),
                format!("is required with provider = \"{provider}\""),
            )?;
        }
        if release.token_env.is_none() && release.token_file.is_none() {
            problem(
                path.key("provider"),
                format!("provider = \"{provider}\" needs token_env or token_file"),
            )?;
        }
    }
    if let Some(url) = &release.base_url {
        check_base_url(url, path.key("base_url"))?;
    }
    match (&release.command, release.provider) {
        (Some(argv), Provider::Command) => check_argv(argv, path.key("command"))?,
        (None, Provider::Command) => problem(
            path.key("command"),
            "is required with provider = \"command\"",
        )?,
        (Some(_), _) => problem(
            path.key("command"),
            format!("is only used with provider = \"command\", not \"{provider}\""),
        )?,
        (None, _) => {}
    }
    Ok(())
}

/// An API address: `http://` or `https://` with a host. Only the scheme is echoed in the
/// error: the rest of the address may hold a token.
pub(super) fn check_base_url(url: &str, path: KeyPath) -> Result<(), Problem> {
    let scheme = url
        .split_once("://")
        .map(|(scheme, _)| scheme)
        .filter(|s| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric()));
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        let found = match scheme {
            Some(scheme) => format!("found a {scheme}:// address"),
            None => "found no scheme".to_string(),
        };
        return problem(
            path,
            format!("must start with http:// or https://, {found}"),
        );
    }
    match reqwest::Url::parse(url) {
        Ok(parsed) if parsed.host_str().is_some_and(|h| !h.is_empty()) => Ok(()),
        _ => problem(
            path,
            "is not a valid address; write it like https://api.example.com or http://127.0.0.1:8080",
        ),
    }
}

fn check_budget(budget: &Budget, path: &KeyPath) -> Result<(), Problem> {
    if let Some(spend) = budget.max_spend
        && !(spend.is_finite() && spend >= 0.0)
    {
        problem(
            path.key("max_spend"),
            format!("must be 0 or more, found {spend}"),
        )?;
    }
    if let Some(hours) = budget.max_hours
        && !(hours.is_finite() && hours > 0.0)
    {
        problem(
            path.key("max_hours"),
            format!("must be above 0, found {hours}"),
        )?;
    }
    Ok(())
}
