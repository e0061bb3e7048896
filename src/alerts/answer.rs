//! What a service's answer means: delivered, worth retrying (throttled, a server error, no
//! answer), or refused for good (a revoked hook, a bad signature). DingTalk, WeCom and Feishu
//! answer HTTP 200 for logical errors, so their `errcode`/`code` is read.

use std::time::Duration;

use crate::config::SinkKind;
use crate::remote::sanitize;

/// How much of a refusal's body is kept for the message.
const MAX_REASON_CHARS: usize = 160;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Delivered,
    /// Try again, after `after` when the service said how long.
    Retry {
        after: Option<Duration>,
        why: String,
    },
    /// Trying again would not help.
    Failed(String),
}

/// Judges one HTTP answer of `kind`; why it failed in the interface's language.
pub fn judge(kind: SinkKind, status: u16, retry_after: Option<&str>, body: &str) -> Verdict {
    judge_in(&rust_i18n::locale(), kind, status, retry_after, body)
}

/// [`judge`], why it failed in `locale`.
pub fn judge_in(
    locale: &str,
    kind: SinkKind,
    status: u16,
    retry_after: Option<&str>,
    body: &str,
) -> Verdict {
    let say =
        |key: &str| rust_i18n::t!(key, locale = locale, reason = reason(locale, body)).into_owned();
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
            why: format!("HTTP {status}{}", reason(locale, body)),
        };
    }
    if !(200..300).contains(&status) {
        return Verdict::Failed(format!("HTTP {status}{}", reason(locale, body)));
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

/// `: <the start of the body>` (`：` in Chinese), cleaned of control characters; nothing for
/// an empty body. The body is the service's own words, quoted as they came.
fn reason(locale: &str, body: &str) -> String {
    let clean = sanitize(body.trim());
    if clean.is_empty() {
        return String::new();
    }
    let short: String = clean.chars().take(MAX_REASON_CHARS).collect();
    rust_i18n::t!("alert_answer.reason", locale = locale, body = short).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logical_errors_in_a_200_are_failures() {
        let ding = r#"{"errcode":310000,"errmsg":"sign not match"}"#;
        assert!(
            matches!(judge(SinkKind::DingTalk, 200, None, ding), Verdict::Failed(m) if m.contains("sign not match"))
        );
        assert_eq!(
            judge(
                SinkKind::DingTalk,
                200,
                None,
                r#"{"errcode":0,"errmsg":"ok"}"#
            ),
            Verdict::Delivered
        );
        assert!(matches!(
            judge(
                SinkKind::WeCom,
                200,
                None,
                r#"{"errcode":93000,"errmsg":"invalid webhook url"}"#
            ),
            Verdict::Failed(_)
        ));
        assert!(matches!(
            judge(
                SinkKind::Feishu,
                200,
                None,
                r#"{"code":19021,"msg":"sign match fail"}"#
            ),
            Verdict::Failed(_)
        ));
        assert_eq!(
            judge(
                SinkKind::Feishu,
                200,
                None,
                r#"{"code":0,"msg":"success","data":{}}"#
            ),
            Verdict::Delivered
        );
    }

    #[test]
    fn throttling_is_retried_after_what_the_service_says() {
        assert_eq!(
            judge(SinkKind::Slack, 429, Some("7"), "rate_limited"),
            Verdict::Retry {
                after: Some(Duration::from_secs(7)),
                why: "throttled (HTTP 429): rate_limited".into()
            }
        );
        let tg = r#"{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 3","parameters":{"retry_after":3}}"#;
        assert!(matches!(
            judge(SinkKind::Telegram, 429, None, tg),
            Verdict::Retry { after: Some(d), .. } if d == Duration::from_secs(3)
        ));
        assert!(matches!(
            judge(
                SinkKind::DingTalk,
                200,
                None,
                r#"{"errcode":130101,"errmsg":"send too fast"}"#
            ),
            Verdict::Retry { .. }
        ));
        assert!(matches!(
            judge(SinkKind::Webhook, 503, None, ""),
            Verdict::Retry { after: None, .. }
        ));
    }

    /// The console and `gpufleet alerts test` say why a message was not delivered in the
    /// reader's language; the service's own words and the HTTP status stay as they came.
    #[test]
    fn why_it_failed_is_said_in_the_readers_language() {
        let ding = r#"{"errcode":310000,"errmsg":"sign not match"}"#;
        let failed = |locale| judge_in(locale, SinkKind::DingTalk, 200, None, ding);
        assert_eq!(
            failed("en"),
            Verdict::Failed(format!("DingTalk refused it: {ding}"))
        );
        assert_eq!(
            failed("zh-CN"),
            Verdict::Failed(format!("钉钉拒收：{ding}"))
        );
        assert_eq!(
            judge_in("zh-CN", SinkKind::Slack, 429, Some("7"), "rate_limited"),
            Verdict::Retry {
                after: Some(Duration::from_secs(7)),
                why: "被限流（HTTP 429）：rate_limited".into()
            }
        );
        assert_eq!(
            judge_in("zh-CN", SinkKind::Feishu, 200, None, r#"{"code":11232}"#),
            Verdict::Retry {
                after: Some(Duration::from_secs(10)),
                why: r#"被飞书限流：{"code":11232}"#.into()
            }
        );
        assert_eq!(
            judge_in("zh-CN", SinkKind::WeCom, 200, None, ""),
            Verdict::Failed("企业微信拒收".into())
        );
        assert_eq!(
            judge_in("zh-CN", SinkKind::Slack, 404, None, "no_service"),
            Verdict::Failed("HTTP 404：no_service".into())
        );
    }

    #[test]
    fn a_revoked_hook_is_not_retried_and_its_text_is_cleaned() {
        let verdict = judge(SinkKind::Slack, 404, None, "no_service\u{1b}[31m");
        assert_eq!(verdict, Verdict::Failed("HTTP 404: no_service".into()));
    }
}
