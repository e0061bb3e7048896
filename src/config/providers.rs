//! `[[providers]]` tables: the provider accounts whose instances `gpufleet providers sync`
//! lists. Each names its platform (`kind`), how it is known when there are two accounts on one
//! platform (`name`), where its token comes from (`token_env` / `token_file`, as for
//! `[hosts.release]`), and optionally another API address or, for `kind = "command"`, the
//! program that prints the inventory.

use std::collections::HashMap;
use std::path::PathBuf;

use rust_i18n::t;
use serde::Deserialize;

use super::locate::KeyPath;
use super::problem::{Problem, problem};
use super::values::is_env_var_name;

/// How often an account is synced unless it says otherwise: five minutes.
pub const DEFAULT_SYNC_INTERVAL_S: u64 = 300;
/// The allowed `sync_interval_s`: a minute (the providers' rate limits) to a day.
pub const SYNC_INTERVAL_S_RANGE: std::ops::RangeInclusive<u64> = 60..=86_400;
/// The largest `min_balance_hours`: a year.
pub const MAX_MIN_BALANCE_HOURS: f64 = 8_760.0;

/// One account at one provider.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderAccount {
    pub kind: ProviderKind,
    /// Tells two accounts on one platform apart; the kind when absent. Unique.
    pub name: Option<String>,
    /// The name of the environment variable holding the API token.
    pub token_env: Option<String>,
    /// A file holding the API token; `~` is left for `expand_home`.
    pub token_file: Option<PathBuf>,
    /// Overrides the provider's API address (a local test server, a proxy).
    pub base_url: Option<String>,
    /// For `kind = "command"`: the argv (no shell) of a program that prints the inventory JSON.
    pub command: Option<Vec<String>>,
    /// How often the account is synced by the console and the watcher, in seconds.
    #[serde(default = "default_sync_interval_s")]
    pub sync_interval_s: u64,
    /// The balance red line: the account's balance covers fewer than this many hours at its
    /// current burn. Set, each sync also reads the balance (where the provider offers it).
    pub min_balance_hours: Option<f64>,
}

fn default_sync_interval_s() -> u64 {
    DEFAULT_SYNC_INTERVAL_S
}

impl ProviderAccount {
    /// The name it is known by: `name`, else the kind.
    pub fn display_name(&self) -> &str {
        self.name.as_deref().unwrap_or(self.kind.as_str())
    }
}

/// The platforms gpufleet can list instances of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
pub enum ProviderKind {
    #[serde(rename = "vast")]
    Vast,
    #[serde(rename = "runpod")]
    RunPod,
    #[serde(rename = "lambda")]
    Lambda,
    #[serde(rename = "autodl")]
    AutoDl,
    /// A program of the user's prints gpufleet's inventory JSON (docs/INVENTORY.md).
    #[serde(rename = "command")]
    Command,
}

impl ProviderKind {
    /// The spelling used in the config file.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Vast => "vast",
            Self::RunPod => "runpod",
            Self::Lambda => "lambda",
            Self::AutoDl => "autodl",
            Self::Command => "command",
        }
    }

    /// Whether the account is read through the provider's web API with a token.
    pub fn uses_api(self) -> bool {
        !matches!(self, Self::Command)
    }
}

/// Checks every account and that their names are unique.
pub(super) fn check_accounts(accounts: &[ProviderAccount], path: &KeyPath) -> Result<(), Problem> {
    let mut names: HashMap<&str, usize> = HashMap::new();
    for (index, account) in accounts.iter().enumerate() {
        let path = path.index(index);
        check_account(account, &path)?;
        if let Some(first) = names.insert(account.display_name(), index) {
            problem(
                path.key("name"),
                t!(
                    "config_error.account_duplicate",
                    name = account.display_name() : {:?},
                    first = first
                ),
            )?;
        }
    }
    Ok(())
}

fn check_account(account: &ProviderAccount, path: &KeyPath) -> Result<(), Problem> {
    let kind = account.kind.as_str();
    if let Some(name) = &account.name {
        let fits = !name.is_empty()
            && name.len() <= 64
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        if !fits {
            problem(path.key("name"), t!("config_error.account_name"))?;
        }
    }
    if account.token_env.is_some() && account.token_file.is_some() {
        problem(path.key("token_file"), t!("config_error.token_env_or_file"))?;
    }
    if let Some(name) = &account.token_env
        && !is_env_var_name(name)
    {
        problem(path.key("token_env"), t!("config_error.account_env_name"))?;
    }
    if account
        .token_file
        .as_ref()
        .is_some_and(|file| file.as_os_str().is_empty())
    {
        problem(path.key("token_file"), t!("config_error.not_empty"))?;
    }
    if let Some(url) = &account.base_url {
        check_base_url(url, path.key("base_url"))?;
    }
    if !SYNC_INTERVAL_S_RANGE.contains(&account.sync_interval_s) {
        problem(
            path.key("sync_interval_s"),
            t!(
                "config_error.seconds_range",
                min = SYNC_INTERVAL_S_RANGE.start(),
                max = SYNC_INTERVAL_S_RANGE.end(),
                found = account.sync_interval_s
            ),
        )?;
    }
    if let Some(hours) = account.min_balance_hours
        && !(hours > 0.0 && hours <= MAX_MIN_BALANCE_HOURS)
    {
        problem(
            path.key("min_balance_hours"),
            t!(
                "balance.config_hours",
                max = MAX_MIN_BALANCE_HOURS,
                found = hours
            ),
        )?;
    }
    if account.kind.uses_api() {
        if account.token_env.is_none() && account.token_file.is_none() {
            problem(
                path.key("kind"),
                t!("config_error.kind_needs_token", kind = kind),
            )?;
        }
        if account.command.is_some() {
            problem(
                path.key("command"),
                t!("config_error.kind_command_only", kind = kind),
            )?;
        }
        return Ok(());
    }
    match &account.command {
        Some(argv) if argv.first().is_some_and(|p| !p.trim().is_empty()) => {}
        Some(_) => problem(path.key("command"), t!("config_error.account_argv"))?,
        None => problem(
            path.key("command"),
            t!("config_error.kind_command_required"),
        )?,
    }
    for key in ["token_env", "token_file", "base_url"] {
        let given = match key {
            "token_env" => account.token_env.is_some(),
            "token_file" => account.token_file.is_some(),
            _ => account.base_url.is_some(),
        };
        if given {
            problem(path.key(key), t!("config_error.kind_command_credentials"))?;
        }
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
        let message = match scheme {
            Some(scheme) => t!("config_error.url_scheme", scheme = scheme),
            None => t!("config_error.url_no_scheme"),
        };
        return problem(path, message);
    }
    match reqwest::Url::parse(url) {
        Ok(parsed) if parsed.host_str().is_some_and(|h| !h.is_empty()) => Ok(()),
        _ => problem(path, t!("config_error.url_invalid")),
    }
}
