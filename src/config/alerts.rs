//! `[[alerts]]` tables: where alerts go (one table per sink), which ones, and where each sink's
//! secrets come from. Checked here; the secrets themselves are read only when a sink is used.

use std::path::PathBuf;

use rust_i18n::t;
use serde::Deserialize;

use super::locate::KeyPath;
use super::problem::{Problem, problem};
use super::values::is_env_var_name;

/// One alert destination.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AlertSink {
    /// How `gpufleet alert test NAME` and the console name it; the kind when absent.
    pub name: Option<String>,
    pub kind: SinkKind,
    /// The address written out; only for kinds whose address holds no secret.
    pub url: Option<String>,
    /// The environment variable holding the address.
    pub url_env: Option<String>,
    /// A file holding the address; `~` is left for `expand_home`.
    pub url_file: Option<PathBuf>,
    /// DingTalk's or Feishu's signing secret, by environment variable or file.
    pub secret_env: Option<String>,
    pub secret_file: Option<PathBuf>,
    /// A bearer token sent as `Authorization` (generic webhook, ntfy), by variable or file.
    pub token_env: Option<String>,
    pub token_file: Option<PathBuf>,
    /// Telegram's chat: a number, or `@channelname`.
    pub chat_id: Option<String>,
    /// Alerts below this severity are not sent here.
    #[serde(default)]
    pub min_severity: MinSeverity,
    /// Only these hosts' alerts (names from `[[hosts]]`); all hosts when absent.
    pub hosts: Option<Vec<String>>,
    /// At most this many messages a minute; the service's documented limit when absent.
    pub per_minute: Option<u32>,
}

impl AlertSink {
    /// The name it is known by.
    pub fn display_name(&self) -> &str {
        self.name.as_deref().unwrap_or(self.kind.as_str())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SinkKind {
    /// One JSON object per alert, POSTed to any address.
    Webhook,
    Slack,
    Feishu,
    DingTalk,
    WeCom,
    Ntfy,
    Telegram,
}

impl SinkKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Webhook => "webhook",
            Self::Slack => "slack",
            Self::Feishu => "feishu",
            Self::DingTalk => "dingtalk",
            Self::WeCom => "wecom",
            Self::Ntfy => "ntfy",
            Self::Telegram => "telegram",
        }
    }

    /// Whether the service's address itself is the credential (a webhook key, a bot token),
    /// so it must come from an environment variable or a file, never the config.
    pub fn url_is_secret(self) -> bool {
        !matches!(self, Self::Webhook | Self::Ntfy)
    }

    /// Whether the service signs requests with a shared secret.
    pub fn signs(self) -> bool {
        matches!(self, Self::Feishu | Self::DingTalk)
    }

    /// Whether a bearer token may be sent.
    pub fn takes_token(self) -> bool {
        matches!(self, Self::Webhook | Self::Ntfy)
    }

    /// The service's documented rate limit, per minute (Feishu 100/min; DingTalk and WeCom
    /// 20/min; Slack about 1/s; ntfy's default burst then 1 per 5 s; Telegram about 20/min
    /// per group).
    pub fn default_per_minute(self) -> u32 {
        match self {
            Self::Webhook => 60,
            Self::Slack => 60,
            Self::Feishu => 100,
            Self::DingTalk | Self::WeCom => 20,
            Self::Ntfy => 12,
            Self::Telegram => 20,
        }
    }
}

/// The least severity sent to a sink.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MinSeverity {
    Info,
    #[default]
    Warning,
    Critical,
}

/// The rules an `[[alerts]]` table must follow beyond its types.
pub(super) fn check_sink(
    sink: &AlertSink,
    host_names: &[&str],
    path: &KeyPath,
) -> Result<(), Problem> {
    let kind = sink.kind.as_str();
    if let Some(name) = &sink.name
        && (name.trim().is_empty() || name.chars().any(char::is_control))
    {
        problem(path.key("name"), t!("config_error.sink_name"))?;
    }
    let given = [
        sink.url.is_some(),
        sink.url_env.is_some(),
        sink.url_file.is_some(),
    ];
    match given.iter().filter(|set| **set).count() {
        0 => problem(
            path.key("kind"),
            t!("config_error.sink_needs_address", kind = kind),
        )?,
        1 => {}
        _ => problem(path.key("url"), t!("config_error.sink_one_url"))?,
    }
    if let Some(url) = &sink.url {
        if sink.kind.url_is_secret() {
            problem(
                path.key("url"),
                t!("config_error.sink_url_secret", kind = kind),
            )?;
        }
        check_http_url(url, path.key("url"))?;
    }
    for (key, value) in [
        ("url_env", &sink.url_env),
        ("secret_env", &sink.secret_env),
        ("token_env", &sink.token_env),
    ] {
        if let Some(name) = value
            && !is_env_var_name(name)
        {
            problem(
                path.key(key),
                t!("config_error.not_env_name", name = name : {:?}),
            )?;
        }
    }
    if (sink.secret_env.is_some() || sink.secret_file.is_some()) && !sink.kind.signs() {
        problem(
            path.key("secret_env"),
            t!("config_error.sink_no_secret", kind = kind),
        )?;
    }
    if sink.secret_env.is_some() && sink.secret_file.is_some() {
        problem(path.key("secret_file"), t!("config_error.sink_one_secret"))?;
    }
    if (sink.token_env.is_some() || sink.token_file.is_some()) && !sink.kind.takes_token() {
        problem(
            path.key("token_env"),
            t!("config_error.sink_no_token", kind = kind),
        )?;
    }
    if sink.token_env.is_some() && sink.token_file.is_some() {
        problem(path.key("token_file"), t!("config_error.sink_one_token"))?;
    }
    match (&sink.chat_id, sink.kind) {
        (None, SinkKind::Telegram) => {
            problem(path.key("chat_id"), t!("config_error.telegram_needs_chat"))?
        }
        (Some(_), kind) if kind != SinkKind::Telegram => {
            problem(path.key("chat_id"), t!("config_error.chat_only_telegram"))?
        }
        (Some(chat), _) if !valid_chat_id(chat) => problem(
            path.key("chat_id"),
            t!("config_error.chat_id_bad", chat = chat : {:?}),
        )?,
        _ => {}
    }
    if let Some(hosts) = &sink.hosts {
        for (index, host) in hosts.iter().enumerate() {
            if !host_names.contains(&host.as_str()) {
                problem(
                    path.key("hosts").index(index),
                    t!("config_error.sink_unknown_host", host = host : {:?}),
                )?;
            }
        }
    }
    if sink.per_minute == Some(0) {
        problem(path.key("per_minute"), t!("config_error.at_least_1"))?;
    }
    Ok(())
}

/// An `http://` or `https://` address with a host.
fn check_http_url(url: &str, path: KeyPath) -> Result<(), Problem> {
    match reqwest::Url::parse(url) {
        Ok(parsed)
            if matches!(parsed.scheme(), "http" | "https") && parsed.host_str().is_some() =>
        {
            Ok(())
        }
        // The text is not echoed: a mistyped address may still hold a key.
        _ => problem(path, t!("config_error.http_url")),
    }
}

fn valid_chat_id(chat: &str) -> bool {
    let number = chat.strip_prefix('-').unwrap_or(chat);
    let channel = chat.strip_prefix('@');
    (!number.is_empty() && number.chars().all(|c| c.is_ascii_digit()))
        || channel.is_some_and(|name| {
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}
