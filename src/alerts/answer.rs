//! What a service's answer means: delivered, worth retrying (throttled, a server error, no
//! answer), or refused for good (a revoked hook, a bad signature). DingTalk, WeCom and Feishu
//! answer HTTP 200 for logical errors, so their `errcode`/`code` is read.

use std::time::Duration;

use crate::config::SinkKind;
use crate::remote::sanitize;
use crate::words::Words;

/// How much of a refusal's body is kept for the message.
const MAX_REASON_CHARS: usize = 160;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Delivered,
    /// Try again, after `after` when the service said how long.
    Retry {
        after: Option<Duration>,
        why: Words,
    },
    /// Trying again would not help.
    Failed(Words),
}

/// Judges one HTTP answer of `kind`; why it failed in words, said where it is shown.
pub fn judge(kind: SinkKind, status: u16, retry_after: Option<&str>, body: &str) -> Verdict {
    let say = |key: &'static str| Words::new(key).put_words("reason", reason(body));
    let told = retry_after
        .and_then(|value| value.trim().parse::<u64>().ok())
        .map(Duration::from_secs);
    let json: Option<serde_json::Value> = serde_json::from_str(body).ok();
    if status == 429 {
        let telegram_wait = json
            .as_ref()
            .and_then(|j| j["parameters"]["retry_after"].as_u64())
            .map(Duration::from_secs);
        return Verdict::Retry {
            after: told.or(telegram_wait),
            why: say("alert_answer.throttled"),
        };
    }
    if status >= 500 {
        return Verdict::Retry {
            after: told,
            why: http(status, body),
        };
    }
    if !(200..300).contains(&status) {
        return Verdict::Failed(http(status, body));
    }
    let code = |key: &str| json.as_ref().and_then(|j| j[key].as_i64());
    match kind {
        SinkKind::DingTalk => match code("errcode") {
            Some(0) => Verdict::Delivered,
            // "send too fast": DingTalk throttles the robot for minutes.
            Some(130_101) => Verdict::Retry {
                after: Some(Duration::from_secs(60)),
                why: say("alert_answer.dingtalk_throttled"),
            },
            _ => Verdict::Failed(say("alert_answer.dingtalk_refused")),
        },
        SinkKind::WeCom => match code("errcode") {
            Some(0) => Verdict::Delivered,
            _ => Verdict::Failed(say("alert_answer.wecom_refused")),
        },
        SinkKind::Feishu => match code("code").or_else(|| code("StatusCode")) {
            Some(0) => Verdict::Delivered,
            Some(11_232) => Verdict::Retry {
                after: Some(Duration::from_secs(10)),
                why: say("alert_answer.feishu_throttled"),
            },
            _ => Verdict::Failed(say("alert_answer.feishu_refused")),
        },
        SinkKind::Telegram => match json.as_ref().and_then(|j| j["ok"].as_bool()) {
            Some(true) => Verdict::Delivered,
            _ => Verdict::Failed(say("alert_answer.telegram_refused")),
        },
        SinkKind::Webhook | SinkKind::Slack | SinkKind::Ntfy => Verdict::Delivered,
    }
}

/// `HTTP 503: <the start of the body>`.
fn http(status: u16, body: &str) -> Words {
    Words::new("alert_answer.http")
        .put("status", status.to_string())
        .put_words("reason", reason(body))
}

/// `: <the start of the body>` (`：` in Chinese), cleaned of control characters; nothing for
/// an empty body. The body is the service's own words, quoted as they came.
fn reason(body: &str) -> Words {
    let clean = sanitize(body.trim());
    if clean.is_empty() {
        return Words::verbatim("");
    }
    let short: String = clean.chars().take(MAX_REASON_CHARS).collect();
    Words::new("alert_answer.reason").put("body", short)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A verdict as the reader sees it, its words said in one language.
    #[derive(Debug, PartialEq)]
    enum Said {
        Delivered,
        Retry {
            after: Option<Duration>,
            why: String,
        },
        Failed(String),
    }

    fn said(
        locale: &str,
        kind: SinkKind,
        status: u16,
        retry_after: Option<&str>,
        body: &str,
    ) -> Said {
        match judge(kind, status, retry_after, body) {
            Verdict::Delivered => Said::Delivered,
            Verdict::Retry { after, why } => Said::Retry {
                after,
                why: why.render(locale),
            },
            Verdict::Failed(why) => Said::Failed(why.render(locale)),
        }
    }

    #[test]
    fn logical_errors_in_a_200_are_failures() {
        let ding = r#"{"errcode":310000,"errmsg":"sign not match"}"#;
        assert!(
            matches!(said("en", SinkKind::DingTalk, 200, None, ding), Said::Failed(m) if m.contains("sign not match"))
        );
        assert_eq!(
            said(
                "en",
                SinkKind::DingTalk,
                200,
                None,
                r#"{"errcode":0,"errmsg":"ok"}"#
            ),
            Said::Delivered
        );
        assert!(matches!(
            said(
                "en",
                SinkKind::WeCom,
                200,
                None,
                r#"{"errcode":93000,"errmsg":"invalid webhook url"}"#
            ),
            Said::Failed(_)
        ));
        assert!(matches!(
            said(
                "en",
                SinkKind::Feishu,
                200,
                None,
                r#"{"code":19021,"msg":"sign match fail"}"#
            ),
            Said::Failed(_)
        ));
        assert_eq!(
            said(
                "en",
                SinkKind::Feishu,
                200,
                None,
                r#"{"code":0,"msg":"success","data":{}}"#
            ),
            Said::Delivered
        );
    }

    #[test]
    fn throttling_is_retried_after_what_the_service_says() {
        assert_eq!(
            said("en", SinkKind::Slack, 429, Some("7"), "rate_limited"),
            Said::Retry {
                after: Some(Duration::from_secs(7)),
                why: "throttled (HTTP 429): rate_limited".into()
            }
        );
        let tg = r#"{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 3","parameters":{"retry_after":3}}"#;
        assert!(matches!(
            said("en", SinkKind::Telegram, 429, None, tg),
            Said::Retry { after: Some(d), .. } if d == Duration::from_secs(3)
        ));
        assert!(matches!(
            said(
                "en",
                SinkKind::DingTalk,
                200,
                None,
                r#"{"errcode":130101,"errmsg":"send too fast"}"#
            ),
            Said::Retry { .. }
        ));
        assert!(matches!(
            said("en", SinkKind::Webhook, 503, None, ""),
            Said::Retry { after: None, .. }
        ));
    }

    /// The console and `gpufleet alerts test` say why a message was not delivered in the
    /// reader's language; the service's own words and the HTTP status stay as they came.
    #[test]
    fn why_it_failed_is_said_in_the_readers_language() {
        let ding = r#"{"errcode":310000,"errmsg":"sign not match"}"#;
        let failed = |locale| said(locale, SinkKind::DingTalk, 200, None, ding);
        assert_eq!(
            failed("en"),
            Said::Failed(format!("DingTalk refused it: {ding}"))
        );
        assert_eq!(failed("zh-CN"), Said::Failed(format!("钉钉拒收：{ding}")));
        assert_eq!(
            said("zh-CN", SinkKind::Slack, 429, Some("7"), "rate_limited"),
            Said::Retry {
                after: Some(Duration::from_secs(7)),
                why: "被限流（HTTP 429）：rate_limited".into()
            }
        );
        assert_eq!(
            said("zh-CN", SinkKind::Feishu, 200, None, r#"{"code":11232}"#),
            Said::Retry {
                after: Some(Duration::from_secs(10)),
                why: r#"被飞书限流：{"code":11232}"#.into()
            }
        );
        assert_eq!(
            said("zh-CN", SinkKind::WeCom, 200, None, ""),
            Said::Failed("企业微信拒收".into())
        );
        assert_eq!(
            said("zh-CN", SinkKind::Slack, 404, None, "no_service"),
            Said::Failed("HTTP 404：no_service".into())
        );
    }

    #[test]
    fn a_revoked_hook_is_not_retried_and_its_text_is_cleaned() {
        let verdict = said("en", SinkKind::Slack, 404, None, "no_service\u{1b}[31m");
        assert_eq!(verdict, Said::Failed("HTTP 404: no_service".into()));
    }
}
