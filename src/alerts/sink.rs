//! A sink ready to send: its address and secrets loaded (from the environment or files, never
//! the config), which alerts it takes, and the HTTP request each service documents for one
//! message: Slack's incoming webhooks
//! (<https://docs.slack.dev/messaging/sending-messages-using-incoming-webhooks>), Feishu's
//! custom bot (<https://open.feishu.cn/document/client-docs/bot-v3/add-custom-bot>), DingTalk's
//! custom robot (<https://open.dingtalk.com/document/robots/custom-robot-access>), WeCom's group
//! robot (<https://developer.work.weixin.qq.com/document/path/91770>), ntfy's publish API
//! (<https://docs.ntfy.sh/publish/>) and Telegram's `sendMessage`
//! (<https://core.telegram.org/bots/api#sendmessage>).

use std::time::Duration;

use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::config::{AlertSink, MinSeverity, SinkKind};
use crate::diagnose::Severity;
use crate::release::{Secret, SecretSource, TokenError, load_secret};
use crate::telemetry::TimestampMs;

use super::message::{Alert, AlertState, truncate_bytes};
use crate::words::Words;

/// Chat services cut or refuse long messages: WeCom text 2048 bytes, ntfy 4096 bytes, Telegram
/// 4096 characters, Feishu bodies 20 KB. Alerts are short; these only bound a hostile summary.
const WECOM_MAX_BYTES: usize = 2_048;
const NTFY_MAX_BYTES: usize = 4_096;
const TELEGRAM_MAX_BYTES: usize = 4_000;
const CHAT_MAX_BYTES: usize = 4_000;

/// Why a sink could not be loaded. Its `Display` is in the interface's language;
/// [`SinkError::said`] words it in a given one.
#[derive(Debug, thiserror::Error)]
pub enum SinkError {
    /// Which key to fix; the value is never shown.
    #[error("{}", self.words().localized())]
    Secret {
        sink: String,
        #[source]
        source: TokenError,
    },
    #[error("{}", self.words().localized())]
    BadUrl { sink: String, from: String },
}

impl SinkError {
    /// The error in words; the sink's name, keys and variables as written.
    pub fn words(&self) -> Words {
        match self {
            Self::Secret { sink, source } => Words::new("alert_sink.secret")
                .put("sink", format!("{sink:?}"))
                .put_words("error", source.words()),
            Self::BadUrl { sink, from } => Words::new("alert_sink.bad_url")
                .put("sink", format!("{sink:?}"))
                .put("from", from.to_string()),
        }
    }
}

/// One HTTP request to make.
#[derive(Debug)]
pub struct HttpRequest {
    pub url: reqwest::Url,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
}

/// A sink with its secrets in memory.
#[derive(Debug)]
pub struct Sink {
    pub name: String,
    pub kind: SinkKind,
    url: reqwest::Url,
    secret: Option<Secret>,
    token: Option<Secret>,
    chat_id: Option<String>,
    pub min_severity: MinSeverity,
    pub hosts: Option<Vec<String>>,
    pub per_minute: u32,
    /// Such as "url_file ... is open to other users".
    pub warnings: Vec<String>,
}

impl Sink {
    /// Loads the sink's address and secrets. `env` looks up an environment variable.
    pub fn load(
        config: &AlertSink,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, SinkError> {
        let name = config.display_name().to_string();
        let secret_err = |source| SinkError::Secret {
            sink: name.clone(),
            source,
        };
        let mut warnings = Vec::new();
        let (url_text, from) = match &config.url {
            Some(url) => (Secret::new(url.clone()), "url".to_string()),
            None => {
                let source = SecretSource {
                    what: "alert_sink.what_url",
                    env: config.url_env.as_deref(),
                    file: config.url_file.as_deref(),
                    env_key: "url_env",
                    file_key: "url_file",
                    table: "[[alerts]]",
                };
                let loaded = load_secret(&source, env).map_err(secret_err)?;
                warnings.extend(loaded.warnings);
                let from = match &config.url_env {
                    Some(var) => format!("${var}"),
                    None => "url_file".to_string(),
                };
                (loaded.secret, from)
            }
        };
        let url = reqwest::Url::parse(url_text.expose())
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https") && u.host_str().is_some())
            .ok_or_else(|| SinkError::BadUrl {
                sink: name.clone(),
                from,
            })?;
        let mut optional = |what,
                            env_name: &Option<String>,
                            file: &Option<std::path::PathBuf>,
                            env_key,
                            file_key| {
            if env_name.is_none() && file.is_none() {
                return Ok(None);
            }
            let source = SecretSource {
                what,
                env: env_name.as_deref(),
                file: file.as_deref(),
                env_key,
                file_key,
                table: "[[alerts]]",
            };
            let loaded = load_secret(&source, env).map_err(secret_err)?;
            warnings.extend(loaded.warnings);
            Ok(Some(loaded.secret))
        };
        let secret = optional(
            "alert_sink.what_secret",
            &config.secret_env,
            &config.secret_file,
            "secret_env",
            "secret_file",
        )?;
        let token = optional(
            "token",
            &config.token_env,
            &config.token_file,
            "token_env",
            "token_file",
        )?;
        Ok(Self {
            name,
            kind: config.kind,
            url,
            secret,
            token,
            chat_id: config.chat_id.clone(),
            min_severity: config.min_severity,
            hosts: config.hosts.clone(),
            per_minute: config
                .per_minute
                .unwrap_or_else(|| config.kind.default_per_minute()),
            warnings,
        })
    }

    /// Whether this sink takes `alert`: severe enough, and about one of its hosts.
    pub fn wants(&self, alert: &Alert) -> bool {
        let least = match self.min_severity {
            MinSeverity::Info => Severity::Info,
            MinSeverity::Warning => Severity::Warning,
            MinSeverity::Critical => Severity::Critical,
        };
        alert.severity >= least
            && self
                .hosts
                .as_ref()
                .is_none_or(|hosts| hosts.contains(&alert.host))
    }

    /// The one request that delivers `alert`; `now_ms` signs it where the service signs.
    pub fn request(&self, alert: &Alert, now_ms: TimestampMs) -> HttpRequest {
        let mut url = self.url.clone();
        let mut headers = vec![("Content-Type", "application/json".to_string())];
        let text = alert.text();
        let body = match self.kind {
            SinkKind::Webhook => alert.json(),
            SinkKind::Slack => serde_json::json!({ "text": truncate_bytes(&text, CHAT_MAX_BYTES) }),
            SinkKind::Feishu => {
                let mut body = serde_json::json!({
                    "msg_type": "text",
                    "content": { "text": truncate_bytes(&text, CHAT_MAX_BYTES) },
                });
                if let Some(secret) = &self.secret {
                    let seconds = now_ms / 1000;
                    body["timestamp"] = seconds.to_string().into();
                    body["sign"] = feishu_sign(seconds, secret.expose()).into();
                }
                body
            }
            SinkKind::DingTalk => {
                if let Some(secret) = &self.secret {
                    url.query_pairs_mut()
                        .append_pair("timestamp", &now_ms.to_string())
                        .append_pair("sign", &dingtalk_sign(now_ms, secret.expose()));
                }
                serde_json::json!({
                    "msgtype": "text",
                    "text": { "content": truncate_bytes(&text, CHAT_MAX_BYTES) },
                })
            }
            SinkKind::WeCom => serde_json::json!({
                "msgtype": "text",
                "text": { "content": truncate_bytes(&text, WECOM_MAX_BYTES) },
            }),
            SinkKind::Telegram => serde_json::json!({
                "chat_id": telegram_chat(self.chat_id.as_deref().unwrap_or_default()),
                "text": truncate_bytes(&text, TELEGRAM_MAX_BYTES),
                "disable_notification": alert.state == AlertState::Resolved
                    || alert.severity == Severity::Info,
            }),
            SinkKind::Ntfy => {
                headers = vec![
                    ("Content-Type", "text/plain; charset=utf-8".to_string()),
                    ("Title", header_safe(&alert.title())),
                    ("Priority", ntfy_priority(alert).to_string()),
                    ("Tags", ntfy_tags(alert).to_string()),
                ];
                let body = truncate_bytes(&text, NTFY_MAX_BYTES).into_bytes();
                return self.with_token(HttpRequest { url, headers, body });
            }
        };
        let body = serde_json::to_vec(&body).unwrap_or_default();
        self.with_token(HttpRequest { url, headers, body })
    }

    fn with_token(&self, mut request: HttpRequest) -> HttpRequest {
        if let Some(token) = &self.token {
            request
                .headers
                .push(("Authorization", format!("Bearer {}", token.expose())));
        }
        request
    }

    /// How long one request may take.
    pub fn timeout(&self) -> Duration {
        Duration::from_secs(10)
    }
}

/// Feishu: HMAC-SHA256 keyed with `timestamp + "\n" + secret` over an empty message, Base64.
fn feishu_sign(seconds: u64, secret: &str) -> String {
    let key = format!("{seconds}\n{secret}");
    hmac_base64(key.as_bytes(), b"")
}

/// DingTalk: HMAC-SHA256 keyed with the secret over `timestamp_ms + "\n" + secret`, Base64
/// (the query encoding is done by the URL).
fn dingtalk_sign(millis: u64, secret: &str) -> String {
    hmac_base64(secret.as_bytes(), format!("{millis}\n{secret}").as_bytes())
}

fn hmac_base64(key: &[u8], message: &[u8]) -> String {
    // HMAC takes a key of any length; `new_from_slice` cannot fail for it.
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(key) else {
        return String::new();
    };
    mac.update(message);
    base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
}

/// A numeric chat id goes as a number, `@channel` as a string.
fn telegram_chat(chat: &str) -> serde_json::Value {
    chat.parse::<i64>()
        .map(serde_json::Value::from)
        .unwrap_or_else(|_| serde_json::Value::from(chat))
}

/// ntfy's 1..5: urgent for critical, high for warning; a resolve is default.
fn ntfy_priority(alert: &Alert) -> u8 {
    match (alert.state, alert.severity) {
        (AlertState::Resolved, _) | (_, Severity::Info) => 3,
        (_, Severity::Warning) => 4,
        (_, Severity::Critical) => 5,
    }
}

/// ntfy shows known tag names as emoji.
fn ntfy_tags(alert: &Alert) -> &'static str {
    match (alert.state, alert.severity) {
        (AlertState::Resolved, _) => "white_check_mark",
        (_, Severity::Critical) => "rotating_light",
        _ => "warning",
    }
}

/// A header value holds no line breaks or other controls, and stays ASCII (ntfy reads UTF-8
/// titles, but HTTP headers are safest in ASCII).
fn header_safe(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii() && !c.is_ascii_control() {
                c
            } else {
                '?'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sink that cannot load says so in the reader's language: the sink, the config keys and
    /// the variable as written, never the secret.
    #[test]
    fn a_sink_that_cannot_load_is_said_in_the_readers_language() {
        let missing = SinkError::Secret {
            sink: "ops".into(),
            source: TokenError::NotConfigured {
                what: "alert_sink.what_secret",
                env_key: "secret_env",
                file_key: "secret_file",
                table: "[[alerts]]",
            },
        };
        assert_eq!(
            missing.words().render("en"),
            "alert sink \"ops\": no signing secret configured: set secret_env or secret_file in [[alerts]]"
        );
        assert_eq!(
            missing.words().render("zh-CN"),
            "告警接收端 \"ops\"：没有配置签名密钥：请在 [[alerts]] 中设置 secret_env 或 secret_file"
        );
        let bad = SinkError::BadUrl {
            sink: "ops".into(),
            from: "$OPS_HOOK".into(),
        };
        assert_eq!(
            bad.words().render("en"),
            "alert sink \"ops\": the address from $OPS_HOOK is not an http:// or https:// URL"
        );
        assert_eq!(
            bad.words().render("zh-CN"),
            "告警接收端 \"ops\"：来自 $OPS_HOOK 的地址不是 http:// 或 https:// 开头的 URL"
        );
    }
}
