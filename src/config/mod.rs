//! The TOML config file: hosts to watch, what they cost, how to release them and the fleet's red
//! lines, checked strictly with messages of the form `file:line: key: message`. The message is
//! read from the catalogue (`config_error.*`) in the language set when the file is read: `main`
//! sets `--lang` or the locale's before it reads the config, so a mistake in the file (even one
//! next to `language = "zh-CN"`) is said in that language; the file, line, key and the values
//! found stay as they are written.

mod alerts;
mod billing_prices;
mod dead_man;
mod jobs;
pub mod lang;
pub(crate) mod locate;
mod problem;
mod providers;
mod serve;
mod ssh_target;
mod validate;
mod values;

use std::path::{Path, PathBuf};

use serde::Deserialize;
use thiserror::Error;

use locate::{Document, Located};

pub use alerts::{AlertSink, MinSeverity, SinkKind};
pub use billing_prices::BillingPrices;
pub use dead_man::{DeadManConfig, DeadManPlan, MAX_AFTER_MINUTES, provider_stop_command};
pub use jobs::{
    DEFAULT_STOP_GRACE_S, JobConfig, OnPlateau, PATTERN_GROUPS, PatternError, compile_pattern,
};
pub use providers::{DEFAULT_SYNC_INTERVAL_S, ProviderAccount, ProviderKind};
pub use serve::{ServeConfig, ServeToken};
pub use ssh_target::{SshTarget, SshTargetError, parse_ssh_target};
pub use validate::{INTERVAL_MS_RANGE, check_interval_ms};
pub use values::{CudaVersion, Rfc3339};

/// Everything the config file can say. `Config::default()` is a valid config with no hosts.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// A bundled theme name or the stem of a file in the user's theme directory.
    pub theme: Option<String>,
    /// The interface's language, `en` or `zh-CN`; `--lang` overrides it, the locale stands in
    /// when it is missing.
    pub language: Option<String>,
    /// How often each host is sampled, 100..=60000.
    pub interval_ms: u64,
    /// How much history is kept per GPU, at least 10.
    pub history_minutes: u32,
    /// Hides every action that changes a host, as `--read-only` does.
    pub read_only: bool,
    /// Utilization below this counts as idle, which is what costs money for nothing.
    pub idle_util_pct: f64,
    /// Utilization at or above this counts as busy.
    pub busy_util_pct: f64,
    /// How long a GPU must stay idle before it is reported as idle.
    pub idle_minutes: u64,
    /// The window a job's use of its GPUs is judged over (`input_bound`, `card_oversized`,
    /// `card_undersized`), 10..=3600 seconds.
    pub job_window_s: u64,
    pub hosts: Vec<HostConfig>,
    pub budget: Option<Budget>,
    /// Where alerts go: one `[[alerts]]` table per sink.
    pub alerts: Vec<AlertSink>,
    /// A host that has sent nothing for this long raises the `unreachable` alert.
    pub unreachable_minutes: u64,
    /// How long an auto-release counts down (announced, and cancellable with `gpufleet hold`).
    pub countdown_s: u64,
    /// `/metrics` for Prometheus.
    pub metrics: Option<MetricsConfig>,
    /// Provider accounts whose instances are synced: one `[[providers]]` table per account.
    pub providers: Vec<ProviderAccount>,
    /// The fleet's event stream for attached consoles (`watch --serve`).
    pub serve: Option<ServeConfig>,
}

/// Where `/metrics` is served.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetricsConfig {
    /// `ADDRESS:PORT`, such as `127.0.0.1:9400`.
    pub listen: String,
    /// The name of the environment variable holding the bearer token a scrape must send,
    /// never the token.
    pub token_env: Option<String>,
    /// Serves an address off loopback with no token: anyone who reaches it reads the fleet.
    #[serde(default)]
    pub allow_unauthenticated: bool,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            theme: None,
            language: None,
            interval_ms: 1_000,
            history_minutes: 15,
            read_only: false,
            idle_util_pct: 5.0,
            busy_util_pct: 70.0,
            idle_minutes: 10,
            job_window_s: 120,
            hosts: Vec::new(),
            budget: None,
            alerts: Vec::new(),
            unreachable_minutes: 5,
            countdown_s: 300,
            metrics: None,
            providers: Vec::new(),
            serve: None,
        }
    }
}

impl Config {
    /// The language the config asks for (checked when the file was read).
    pub fn lang(&self) -> Option<crate::config::lang::Lang> {
        self.language
            .as_deref()
            .and_then(crate::config::lang::Lang::from_tag)
    }

    pub fn host(&self, name: &str) -> Option<&HostConfig> {
        self.hosts.iter().find(|host| host.name == name)
    }
}

/// One rented machine.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostConfig {
    /// Unique across the file; shown in the fleet table.
    pub name: String,
    pub ssh: SshTarget,
    /// As written; `~` is left for [`expand_home`] so the config stays portable.
    pub identity_file: Option<PathBuf>,
    /// The name of the environment variable holding the SSH password, never the password.
    pub password_env: Option<String>,
    pub price_per_hour: Option<f64>,
    /// ISO 4217 code such as `USD` or `CNY`.
    pub currency: Option<String>,
    pub billing_started: Option<Rfc3339>,
    /// The command (argv, no shell) that saves what matters before a release.
    pub backup: Option<Vec<String>>,
    #[serde(default)]
    pub auto_release: bool,
    /// This host's auto-release countdown, instead of the top-level `countdown_s`.
    pub countdown_s: Option<u64>,
    /// Red lines of this host alone: money spent in this rental, hours billed.
    pub max_spend: Option<f64>,
    pub max_hours: Option<f64>,
    /// Red line: the host has billed without a break (since it was rented or last started)
    /// for longer than this many hours: a `timeout` on the rented machine itself.
    pub max_run_hours: Option<f64>,
    /// `[hosts.prices]`: what the same host costs on daily, weekly and monthly billing, for
    /// `gpufleet cost --advice` (the hourly price stays `price_per_hour`).
    pub prices: Option<BillingPrices>,
    pub expect: Option<Expect>,
    pub release: Option<ReleaseConfig>,
    /// `[[hosts.jobs]]`: the job's log when its stdout is not a file, and how it is judged.
    #[serde(default)]
    pub jobs: Vec<JobConfig>,
    /// `[hosts.dead_man]`: stops the instance when no gpufleet has watched it for a while.
    pub dead_man: Option<DeadManConfig>,
    /// When `price_per_hour` took effect, where the provider inventory says (a synced
    /// instance's price history); never read from the file.
    #[serde(skip)]
    pub price_since_ms: Option<u64>,
}

/// What the host was rented as, checked against what it reports.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// A substring of the model name, such as `RTX 4090` or `H200`.
    pub gpu: Option<String>,
    pub count: Option<u32>,
    /// Memory of each GPU.
    pub memory_gib: Option<f64>,
    pub min_cuda: Option<CudaVersion>,
}

/// How to stop paying for a host.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReleaseConfig {
    pub provider: Provider,
    pub instance_id: Option<String>,
    /// The name of the environment variable holding the API token.
    pub token_env: Option<String>,
    /// A file holding the API token; `~` is left for [`expand_home`].
    pub token_file: Option<PathBuf>,
    /// Overrides the provider's API address (a local test server, a proxy).
    pub base_url: Option<String>,
    /// The argv run for `provider = "command"`; `{instance_id}` is filled in.
    pub command: Option<Vec<String>>,
    /// The argv `gpufleet restart` runs for `provider = "command"`.
    pub restart_command: Option<Vec<String>>,
    /// The argv `gpufleet start` runs for `provider = "command"`.
    pub start_command: Option<Vec<String>>,
    /// How a runbook's reboot step restarts this host; unset, a container goes through the
    /// provider and a machine reboots.
    pub restart: Option<RestartVia>,
}

/// `restart = "provider" | "reboot"` in `[hosts.release]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RestartVia {
    /// The provider's restart (a container: `reboot` inside restarts nothing).
    Provider,
    /// `reboot` on the host (a machine of its own).
    Reboot,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
pub enum Provider {
    #[serde(rename = "vast")]
    Vast,
    #[serde(rename = "runpod")]
    RunPod,
    #[serde(rename = "lambda")]
    Lambda,
    #[serde(rename = "autodl")]
    AutoDl,
    /// A user-supplied command does the release.
    #[serde(rename = "command")]
    Command,
    /// The host is shut down over SSH.
    #[serde(rename = "ssh")]
    Ssh,
}

impl Provider {
    /// The spelling used in the config file.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Vast => "vast",
            Self::RunPod => "runpod",
            Self::Lambda => "lambda",
            Self::AutoDl => "autodl",
            Self::Command => "command",
            Self::Ssh => "ssh",
        }
    }

    /// Whether releasing goes through the provider's web API, which needs an instance id and a
    /// token.
    pub fn uses_api(self) -> bool {
        matches!(
            self,
            Self::Vast | Self::RunPod | Self::Lambda | Self::AutoDl
        )
    }
}

/// Fleet-wide red lines.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Budget {
    /// Total spend across hosts, in the hosts' currency.
    pub max_spend: Option<f64>,
    pub max_hours: Option<f64>,
}

#[derive(Debug, Error)]
pub enum ConfigError {
    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The file is not TOML, or a value has the wrong type or an unknown key.
    #[error("{}:{line}: {}{message}", .path.display(), key_prefix(.key))]
    Parse {
        path: PathBuf,
        line: usize,
        key: String,
        message: String,
    },
    /// The file is well-formed but a value breaks a rule.
    #[error("{}:{line}: {}{message}", .path.display(), key_prefix(.key))]
    Invalid {
        path: PathBuf,
        line: usize,
        key: String,
        message: String,
    },
}

fn key_prefix(key: &str) -> String {
    if key.is_empty() {
        String::new()
    } else {
        format!("{key}: ")
    }
}

/// `~/.config/gpufleet/config.toml` on Linux; `None` when there is no home directory.
pub fn default_path() -> Option<PathBuf> {
    config_dir().map(|dir| dir.join("config.toml"))
}

/// gpufleet's XDG config directory, `~/.config/gpufleet` on Linux.
pub fn config_dir() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "gpufleet").map(|dirs| dirs.config_dir().to_owned())
}

/// Where user themes live (`<config dir>/themes`): the directory to pass to
/// `Theme::load_named`, kept apart from `config.toml` so no theme name can pick up the config.
pub fn themes_dir() -> Option<PathBuf> {
    config_dir().map(|dir| dir.join("themes"))
}

/// Replaces a leading `~` with the home directory; other paths come back unchanged.
pub fn expand_home(path: &Path) -> PathBuf {
    let Ok(rest) = path.strip_prefix("~") else {
        return path.to_owned();
    };
    match directories::BaseDirs::new() {
        Some(dirs) => dirs.home_dir().join(rest),
        None => path.to_owned(),
    }
}

pub fn load(path: &Path) -> Result<Config, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Io {
        path: path.to_owned(),
        source,
    })?;
    parse(&text, path)
}

/// Like [`load`], but a file that does not exist is `Ok(None)`: the default location is
/// allowed to be empty, a path given with `--config` is not.
pub fn load_optional(path: &Path) -> Result<Option<Config>, ConfigError> {
    match std::fs::read_to_string(path) {
        Ok(text) => parse(&text, path).map(Some),
        Err(source) if source.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(ConfigError::Io {
            path: path.to_owned(),
            source,
        }),
    }
}

/// Parses and validates `text`; `path` is only used to name the file in errors.
pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
    let doc = Document::parse(text).map_err(|located| parse_error(path, located))?;
    // Before deserializing, so that an inline secret gets its own advice rather than
    // "unknown key".
    if let Some(problem) = validate::inline_secret(&doc) {
        return Err(invalid(path, &doc, problem));
    }
    let config: Config = doc
        .deserialize()
        .map_err(|located| parse_error(path, located))?;
    validate::check(&config).map_err(|problem| invalid(path, &doc, problem))?;
    Ok(config)
}

fn parse_error(path: &Path, located: Located) -> ConfigError {
    ConfigError::Parse {
        path: path.to_owned(),
        line: located.line,
        key: located.key,
        message: located.message,
    }
}

fn invalid(path: &Path, doc: &Document<'_>, problem: problem::Problem) -> ConfigError {
    ConfigError::Invalid {
        path: path.to_owned(),
        line: doc.line_of(&problem.path),
        key: problem.path.to_string(),
        message: problem.message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_config_passes_validation() {
        assert!(validate::check(&Config::default()).is_ok());
    }

    #[test]
    fn an_empty_file_is_the_default_config() {
        let parsed = parse("", Path::new("c.toml")).map_err(|e| e.to_string());
        assert_eq!(parsed, Ok(Config::default()));
    }

    #[test]
    fn unquoted_toml_datetime_is_accepted_for_billing_started() {
        let text = "[[hosts]]\nname = \"a\"\nssh = \"a\"\nbilling_started = 2026-11-29T08:00:00Z\n";
        let config = parse(text, Path::new("c.toml")).map_err(|e| e.to_string());
        let started = config.map(|c| c.hosts[0].billing_started.as_ref().map(Rfc3339::unix_ms));
        assert_eq!(started, Ok(Some(1_795_939_200_000)));
    }

    #[test]
    fn the_language_is_en_or_zh_cn_and_a_wrong_one_names_its_line() {
        let chinese = parse(
            "theme = \"dark\"\nlanguage = \"zh-CN\"\n",
            Path::new("c.toml"),
        );
        assert_eq!(
            chinese.map(|c| c.lang()).map_err(|e| e.to_string()),
            Ok(Some(crate::config::lang::Lang::ZhCn))
        );
        let wrong =
            parse("\nlanguage = \"zh_CN\"\n", Path::new("c.toml")).map_err(|e| e.to_string());
        let message = wrong.expect_err("zh_CN is not a tag");
        assert!(message.contains("c.toml:2"), "{message}");
        assert!(message.contains("language"), "{message}");
        assert!(message.contains("en, zh-CN"), "{message}");
    }

    #[test]
    fn home_is_expanded_only_at_the_start() {
        assert_eq!(expand_home(Path::new("/a/~/b")), PathBuf::from("/a/~/b"));
        assert_ne!(
            expand_home(Path::new("~/.ssh/id")),
            PathBuf::from("~/.ssh/id")
        );
    }
}
