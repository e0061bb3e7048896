//! The rules a well-typed config must still follow: ranges, unique names, and secrets kept out
//! of the file.

use std::collections::HashMap;

use rust_i18n::t;

use super::locate::{Document, KeyPath};
use super::problem::{Problem, problem};
use super::values::is_env_var_name;
use super::{Budget, Config, Expect, HostConfig, MetricsConfig, Provider, ReleaseConfig};

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
            t!("config_error.secret_password")
        } else if TOKEN_KEYS.contains(&name.as_str()) {
            t!("config_error.secret_token")
        } else {
            return None;
        };
        Some(Problem {
            path,
            message: advice.into_owned(),
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
        Err(t!(
            "config_error.interval_ms",
            min = INTERVAL_MS_RANGE.start(),
            max = INTERVAL_MS_RANGE.end(),
            found = interval_ms
        )
        .into_owned())
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
            t!(
                "cli_value.not_a_language",
                value = language : {:?},
                tags = crate::config::lang::TAGS.join(", ")
            ),
        )?;
    }
    if let Err(message) = check_interval_ms(config.interval_ms) {
        problem(root.key("interval_ms"), message)?;
    }
    if config.history_minutes < 10 {
        problem(
            root.key("history_minutes"),
            t!(
                "config_error.at_least",
                min = 10,
                found = config.history_minutes
            ),
        )?;
    }
    check_percent(config.idle_util_pct, root.key("idle_util_pct"))?;
    check_percent(config.busy_util_pct, root.key("busy_util_pct"))?;
    if config.idle_util_pct >= config.busy_util_pct {
        problem(
            root.key("busy_util_pct"),
            t!(
                "config_error.above_idle",
                idle = config.idle_util_pct,
                found = config.busy_util_pct
            ),
        )?;
    }
    if config.idle_minutes == 0 {
        problem(root.key("idle_minutes"), t!("config_error.at_least_1"))?;
    }
    if !(10..=3600).contains(&config.job_window_s) {
        problem(
            root.key("job_window_s"),
            t!(
                "config_error.seconds_range",
                min = 10,
                max = 3600,
                found = config.job_window_s
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
                t!(
                    "config_error.duplicate_host",
                    name = host.name : {:?},
                    first = first
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
            t!(
                "config_error.at_least_seconds",
                min = MIN_COUNTDOWN_S,
                found = config.countdown_s
            ),
        )?;
    }
    if config.unreachable_minutes == 0 {
        problem(
            root.key("unreachable_minutes"),
            t!("config_error.at_least_1"),
        )?;
    }
    if let Some(metrics) = &config.metrics {
        check_metrics(metrics, &root.key("metrics"))?;
    }
    let host_names: Vec<&str> = config.hosts.iter().map(|h| h.name.as_str()).collect();
    let mut sink_names: HashMap<&str, usize> = HashMap::new();
    for (index, sink) in config.alerts.iter().enumerate() {
        let path = root.key("alerts").index(index);
        super::alerts::check_sink(sink, &host_names, &path)?;
        if let Some(first) = sink_names.insert(sink.display_name(), index) {
            problem(
                path.key("name"),
                t!(
                    "config_error.duplicate_sink",
                    name = sink.display_name() : {:?},
                    first = first
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
        problem(path, t!("config_error.theme_name", name = name : {:?}))
    }
}

fn check_percent(value: f64, path: KeyPath) -> Result<(), Problem> {
    if (0.0..=100.0).contains(&value) {
        Ok(())
    } else {
        problem(path, t!("config_error.percent", found = value))
    }
}

fn check_host(host: &HostConfig, path: &KeyPath) -> Result<(), Problem> {
    if host.name.trim().is_empty() {
        problem(path.key("name"), t!("config_error.not_empty"))?;
    }
    if host.name.chars().any(char::is_control) {
        problem(path.key("name"), t!("config_error.no_control"))?;
    }
    if host
        .identity_file
        .as_ref()
        .is_some_and(|file| file.as_os_str().is_empty())
    {
        problem(path.key("identity_file"), t!("config_error.not_empty"))?;
    }
    if let Some(name) = &host.password_env {
        check_env_name(name, path.key("password_env"), Holds::Password)?;
    }
    if let Some(price) = host.price_per_hour
        && !(price.is_finite() && price >= 0.0)
    {
        problem(
            path.key("price_per_hour"),
            t!("config_error.zero_or_more", found = price),
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
            problem(path.key(key), t!("config_error.more_than_zero", found = v))?;
        }
    }
    if let Some(countdown) = host.countdown_s
        && countdown < MIN_COUNTDOWN_S
    {
        problem(
            path.key("countdown_s"),
            t!(
                "config_error.at_least_seconds",
                min = MIN_COUNTDOWN_S,
                found = countdown
            ),
        )?;
    }
    if let Some(currency) = &host.currency
        && !(currency.len() == 3 && currency.bytes().all(|b| b.is_ascii_uppercase()))
    {
        problem(
            path.key("currency"),
            t!("config_error.currency", found = currency : {:?}),
        )?;
    }
    if let Some(argv) = &host.backup {
        check_argv(argv, path.key("backup"))?;
    }
    if host.auto_release && host.release.is_none() {
        problem(
            path.key("auto_release"),
            t!("config_error.auto_release_needs_table"),
        )?;
    }
    if let Some((index, _)) = host.jobs.iter().enumerate().find(|(_, job)| {
        job.on_plateau == Some(super::jobs::OnPlateau::Release) && host.release.is_none()
    }) {
        problem(
            path.key("jobs").index(index).key("on_plateau"),
            t!("config_error.plateau_release_needs_table"),
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
    super::dead_man::check_dead_man(host, &path.key("dead_man"))?;
    Ok(())
}

/// What a `*_env` key's variable holds, which its error names.
#[derive(Debug, Clone, Copy)]
enum Holds {
    Password,
    Token,
}

fn check_env_name(name: &str, path: KeyPath, holds: Holds) -> Result<(), Problem> {
    if is_env_var_name(name) {
        return Ok(());
    }
    let message = match holds {
        Holds::Password => t!("config_error.env_name_password"),
        Holds::Token => t!("config_error.env_name_token"),
    };
    problem(path, message)
}

/// `[metrics]`: an address, a token's variable name, and no open listener off loopback unless
/// the file says so.
fn check_metrics(metrics: &MetricsConfig, path: &KeyPath) -> Result<(), Problem> {
    let Ok(listen) = metrics.listen.parse::<std::net::SocketAddr>() else {
        return problem(
            path.key("listen"),
            t!("config_error.metrics_listen", found = metrics.listen : {:?}),
        );
    };
    if let Some(name) = &metrics.token_env {
        check_env_name(name, path.key("token_env"), Holds::Token)?;
    } else if !listen.ip().is_loopback() && !metrics.allow_unauthenticated {
        problem(
            path.key("listen"),
            t!("metrics_access.config_open", found = metrics.listen : {:?}),
        )?;
    }
    Ok(())
}

fn check_argv(argv: &[String], path: KeyPath) -> Result<(), Problem> {
    match argv.first() {
        Some(program) if !program.trim().is_empty() => Ok(()),
        _ => problem(path, t!("config_error.argv")),
    }
}

fn check_expect(expect: &Expect, path: &KeyPath) -> Result<(), Problem> {
    if expect.gpu.as_ref().is_some_and(|gpu| gpu.trim().is_empty()) {
        problem(path.key("gpu"), t!("config_error.not_empty"))?;
    }
    if expect.count == Some(0) {
        problem(path.key("count"), t!("config_error.at_least_1"))?;
    }
    if let Some(memory) = expect.memory_gib
        && !(memory.is_finite() && memory > 0.0)
    {
        problem(
            path.key("memory_gib"),
            t!("config_error.above_zero", found = memory),
        )?;
    }
    Ok(())
}

fn check_release(release: &ReleaseConfig, path: &KeyPath) -> Result<(), Problem> {
    let provider = release.provider.as_str();
    if release.token_env.is_some() && release.token_file.is_some() {
        problem(path.key("token_file"), t!("config_error.token_env_or_file"))?;
    }
    if let Some(name) = &release.token_env {
        check_env_name(name, path.key("token_env"), Holds::Token)?;
    }
    if release
        .token_file
        .as_ref()
        .is_some_and(|file| file.as_os_str().is_empty())
    {
        problem(path.key("token_file"), t!("config_error.not_empty"))?;
    }
    if release
        .instance_id
        .as_ref()
        .is_some_and(|id| id.trim().is_empty())
    {
        problem(path.key("instance_id"), t!("config_error.not_empty"))?;
    }
    if release.provider.uses_api() {
        if release.instance_id.is_none() {
            problem(
                path.key("instance_id"),
                t!("config_error.required_with_provider", provider = provider),
            )?;
        }
        if release.token_env.is_none() && release.token_file.is_none() {
            problem(
                path.key("provider"),
                t!("config_error.provider_needs_token", provider = provider),
            )?;
        }
    }
    if let Some(url) = &release.base_url {
        super::providers::check_base_url(url, path.key("base_url"))?;
    }
    match (&release.command, release.provider) {
        (Some(argv), Provider::Command) => check_argv(argv, path.key("command"))?,
        (None, Provider::Command) => {
            problem(path.key("command"), t!("config_error.command_required"))?
        }
        (Some(_), _) => problem(
            path.key("command"),
            t!("config_error.command_only", provider = provider),
        )?,
        (None, _) => {}
    }
    for (argv, key) in [
        (&release.restart_command, "restart_command"),
        (&release.start_command, "start_command"),
    ] {
        match (argv, release.provider) {
            (Some(argv), Provider::Command) => check_argv(argv, path.key(key))?,
            (Some(_), _) => problem(
                path.key(key),
                t!("config_error.command_only", provider = provider),
            )?,
            (None, _) => {}
        }
    }
    Ok(())
}

fn check_budget(budget: &Budget, path: &KeyPath) -> Result<(), Problem> {
    if let Some(spend) = budget.max_spend
        && !(spend.is_finite() && spend >= 0.0)
    {
        problem(
            path.key("max_spend"),
            t!("config_error.zero_or_more", found = spend),
        )?;
    }
    if let Some(hours) = budget.max_hours
        && !(hours.is_finite() && hours > 0.0)
    {
        problem(
            path.key("max_hours"),
            t!("config_error.above_zero", found = hours),
        )?;
    }
    Ok(())
}
