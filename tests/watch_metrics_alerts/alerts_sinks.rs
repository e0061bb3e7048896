//! `gpufleet alert test` against each sink kind, through the real binary and a real HTTP server
//! on loopback standing in for the service: the request must have the body the service
//! documents (and, for Feishu and DingTalk, a signature checked here by Python's own HMAC),
//! refusals and unreachable sinks are reported per sink, and no address key, signing secret or
//! token is ever printed.

use crate::release_server as server;
use crate::tmux;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use server::{Recorded, Reply, Server, answer};
use tmux::binary;

const KEY: &str = "KEYc0ffee-8d1e";
const SIGNING: &str = "SECd00d-5ign";
const BEARER: &str = "tk_b3arer";

fn run(dir: &Path, config: &str, args: &[&str], env: &[(&str, String)]) -> Output {
    let path = dir.join("config.toml");
    std::fs::write(&path, config).expect("config");
    let mut command = Command::new(binary());
    command
        .args(["alert", "test"])
        .args(args)
        .arg("--config")
        .arg(&path)
        .env("GPUFLEET_STATE_DIR", dir.join("state"))
        .stdin(Stdio::null());
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().expect("run gpufleet")
}

fn shown(out: &Output) -> String {
    format!(
        "exit {:?}\n{}{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn assert_no_secret(text: &str) {
    for secret in [KEY, SIGNING, BEARER] {
        assert!(!text.contains(secret), "{secret} shown: {text}");
    }
}

/// One sink of `kind` whose address comes from `$ALERT_URL`.
fn one_sink(kind: &str, extra: &str) -> String {
    format!("[[alerts]]\nkind = \"{kind}\"\nurl_env = \"ALERT_URL\"\n{extra}")
}

/// Sends a test alert to one sink answered by `reply`; returns the request seen and the output.
fn exchange(
    kind: &str,
    extra: &str,
    path: &str,
    reply: Reply,
    env: &[(&str, String)],
) -> (Recorded, Output) {
    let dir = tempfile::tempdir().expect("temp");
    let server = Server::start(vec![reply]);
    let mut env = env.to_vec();
    env.push(("ALERT_URL", format!("{}{path}", server.base_url)));
    let out = run(dir.path(), &one_sink(kind, extra), &[], &env);
    assert_no_secret(&shown(&out));
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "{}", shown(&out));
    (requests[0].clone(), out)
}

/// The text of the test alert, wherever a service's body keeps it.
fn assert_says_it_works(text: &serde_json::Value) {
    let text = text.as_str().expect("the message text");
    assert!(text.contains("this sink works"), "{text}");
}

fn python_hmac_base64(key: &str, message: &str) -> String {
    let out = Command::new("python3")
        .args([
            "-c",
            "import base64,hmac,hashlib,sys;\
             print(base64.b64encode(hmac.new(sys.argv[1].encode(),sys.argv[2].encode(),hashlib.sha256).digest()).decode())",
            key,
            message,
        ])
        .output()
        .expect("python3 computes the reference HMAC");
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .expect("utf-8")
        .trim()
        .to_string()
}

fn query(path: &str, key: &str) -> Option<String> {
    let url = reqwest::Url::parse(&format!("http://x{path}")).expect("path");
    url.query_pairs()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.into_owned())
}

#[test]
fn the_generic_webhook_gets_one_json_object_with_the_documented_fields() {
    let (request, out) = exchange(
        "webhook",
        "token_env = \"HOOK_TOKEN\"\n",
        "/hooks/gpu",
        answer(204, ""),
        &[("HOOK_TOKEN", BEARER.to_string())],
    );
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("webhook: delivered"));
    assert_eq!(request.method, "POST");
    assert_eq!(request.path, "/hooks/gpu");
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {BEARER}").as_str())
    );
    let body = request.json();
    for key in ["host", "gpu", "label", "severity", "summary", "state", "at"] {
        assert!(body.get(key).is_some(), "{key} missing: {body}");
    }
    assert_eq!(body["label"], "test");
    assert_eq!(body["state"], "firing");
    let at = body["at"].as_str().expect("at");
    assert!(
        at.ends_with('Z') && at.len() == 24 && &at[10..11] == "T",
        "{at}"
    );
}

#[test]
fn slack_gets_text() {
    let (request, out) = exchange(
        "slack",
        "",
        &format!("/services/T0/B0/{KEY}"),
        answer(200, "ok"),
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let text = request.json()["text"].as_str().expect("text").to_string();
    assert!(
        text.contains("test") && text.contains("this sink works"),
        "{text}"
    );
}

#[test]
fn feishu_gets_a_text_message_signed_in_the_body() {
    let (request, out) = exchange(
        "feishu",
        "secret_env = \"FEISHU_SECRET\"\n",
        &format!("/open-apis/bot/v2/hook/{KEY}"),
        answer(200, r#"{"code":0,"msg":"success","data":{}}"#),
        &[("FEISHU_SECRET", SIGNING.to_string())],
    );
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let body = request.json();
    assert_eq!(body["msg_type"], "text");
    assert_says_it_works(&body["content"]["text"]);
    let timestamp = body["timestamp"]
        .as_str()
        .expect("timestamp in seconds, as a string");
    let seconds: u64 = timestamp.parse().expect("seconds");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs();
    assert!(now.abs_diff(seconds) < 60, "{seconds} vs {now}");
    // Feishu: HMAC-SHA256 keyed with "timestamp\nsecret" over an empty message.
    let expected = python_hmac_base64(&format!("{timestamp}\n{SIGNING}"), "");
    assert_eq!(body["sign"], expected.as_str());
}

#[test]
fn dingtalk_gets_text_signed_in_the_query() {
    let (request, out) = exchange(
        "dingtalk",
        "secret_env = \"DING_SECRET\"\n",
        &format!("/robot/send?access_token={KEY}"),
        answer(200, r#"{"errcode":0,"errmsg":"ok"}"#),
        &[("DING_SECRET", SIGNING.to_string())],
    );
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    assert_eq!(query(&request.path, "access_token").as_deref(), Some(KEY));
    let timestamp = query(&request.path, "timestamp").expect("timestamp");
    assert_eq!(timestamp.len(), 13, "milliseconds: {timestamp}");
    // DingTalk: HMAC-SHA256 keyed with the secret over "timestamp\nsecret".
    let expected = python_hmac_base64(SIGNING, &format!("{timestamp}\n{SIGNING}"));
    assert_eq!(
        query(&request.path, "sign").as_deref(),
        Some(expected.as_str())
    );
    let body = request.json();
    assert_eq!(body["msgtype"], "text");
    assert_says_it_works(&body["text"]["content"]);
}

#[test]
fn a_dingtalk_refusal_inside_http_200_is_not_delivered() {
    let (_, out) = exchange(
        "dingtalk",
        "",
        &format!("/robot/send?access_token={KEY}"),
        answer(
            200,
            r#"{"errcode":310000,"errmsg":"keywords not in content"}"#,
        ),
        &[],
    );
    assert_eq!(out.status.code(), Some(1), "{}", shown(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("dingtalk: NOT delivered") && text.contains("keywords not in content"),
        "{text}"
    );
}

#[test]
fn wecom_gets_text() {
    let (request, out) = exchange(
        "wecom",
        "",
        &format!("/cgi-bin/webhook/send?key={KEY}"),
        answer(200, r#"{"errcode":0,"errmsg":"ok"}"#),
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let body = request.json();
    assert_eq!(body["msgtype"], "text");
    assert_says_it_works(&body["text"]["content"]);
}

#[test]
fn ntfy_gets_the_message_as_the_body_with_title_and_priority_headers() {
    let (request, out) = exchange(
        "ntfy",
        "",
        "/gpufleet-alerts",
        answer(200, r#"{"id":"x"}"#),
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    assert_eq!(request.path, "/gpufleet-alerts");
    assert!(request.body.contains("this sink works"), "{}", request.body);
    assert!(request.header("title").is_some_and(|t| t.contains("test")));
    assert_eq!(request.header("priority"), Some("3"));
}

#[test]
fn telegram_gets_send_message_with_the_chat() {
    let (request, out) = exchange(
        "telegram",
        "chat_id = \"-1001234\"\n",
        &format!("/bot{KEY}/sendMessage"),
        answer(200, r#"{"ok":true,"result":{"message_id":1}}"#),
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let body = request.json();
    assert_eq!(body["chat_id"], -1_001_234);
    assert_says_it_works(&body["text"]);
}

#[test]
fn an_unreachable_sink_and_a_missing_secret_are_clear_errors() {
    let dir = tempfile::tempdir().expect("temp");
    // Nothing listens on port 9 of loopback.
    let out = run(
        dir.path(),
        &one_sink("slack", ""),
        &[],
        &[("ALERT_URL", format!("http://127.0.0.1:9/services/{KEY}"))],
    );
    let text = shown(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("slack: NOT delivered"), "{text}");
    assert_no_secret(&text);

    let out = run(dir.path(), &one_sink("slack", ""), &[], &[]);
    let text = shown(&out);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(
        text.contains("ALERT_URL") && text.contains("url_env"),
        "{text}"
    );

    let out = run(
        dir.path(),
        &one_sink("slack", ""),
        &["nosuch"],
        &[("ALERT_URL", "http://127.0.0.1:9/".into())],
    );
    assert_eq!(out.status.code(), Some(2), "{}", shown(&out));
    assert!(shown(&out).contains("no alert sink named \"nosuch\""));
}

#[test]
fn a_key_written_in_the_config_is_refused_with_file_line_and_key() {
    let dir = tempfile::tempdir().expect("temp");
    let config =
        format!("[[alerts]]\nkind = \"slack\"\nurl = \"https://hooks.slack.com/services/{KEY}\"\n");
    let out = run(dir.path(), &config, &[], &[]);
    let text = shown(&out);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("config.toml:3: alerts[0].url:"), "{text}");
    assert!(text.contains("url_env"), "{text}");
    assert_no_secret(&text);
}
