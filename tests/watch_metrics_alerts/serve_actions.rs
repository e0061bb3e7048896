//! Actions asked through the watcher (`POST /v1/actions`): a release run by the watcher with its
//! own release flow against a provider API on loopback that records every request. The
//! provider gets exactly one request for a release asked twice with the same idempotency key,
//! none for a watching token's request or an unconfirmed one; the provider's refusal comes
//! back with its words; the audit log names the token that asked.

use crate::release_server::{Server, answer};
use crate::serve_attach::{Served, free_port};

const VAST_TOKEN: &str = "vast-api-key-7";

/// A watcher of host `h1` (its SSH unreachable: a release by the API needs none) released
/// through `provider`, with a watching token and one that may act.
fn watcher(dir: &std::path::Path, provider: &Server) -> (Served, String) {
    let config = dir.join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[[hosts]]\nname = \"h1\"\nssh = \"root@127.0.0.1:1\"\n\
             [hosts.release]\nprovider = \"vast\"\ninstance_id = \"12345\"\n\
             token_env = \"GPUFLEET_TEST_VAST_TOKEN\"\nbase_url = \"{}\"\n\n\
             [serve]\n\n[[serve.tokens]]\nname = \"viewer\"\ntoken_env = \"VIEWER_TOKEN\"\n\n\
             [[serve.tokens]]\nname = \"ops-alice\"\ntoken_env = \"OPS_TOKEN\"\nactions = true\n",
            provider.base_url
        ),
    )
    .expect("config");
    let addr = format!("127.0.0.1:{}", free_port());
    let served = Served::start_with(
        dir,
        &["--config", config.to_str().expect("utf-8")],
        &addr,
        &[
            ("VIEWER_TOKEN", "view-only-1"),
            ("OPS_TOKEN", "ops-may-act-2"),
            ("GPUFLEET_TEST_VAST_TOKEN", VAST_TOKEN),
        ],
    );
    (served, addr)
}

fn post(addr: &str, token: &str, body: &str) -> (u16, serde_json::Value) {
    let response = reqwest::blocking::Client::new()
        .post(format!("http://{addr}/v1/actions"))
        .bearer_auth(token)
        .body(body.to_string())
        .send()
        .expect("post");
    let status = response.status().as_u16();
    let text = response.text().expect("body");
    (
        status,
        serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text)),
    )
}

#[test]
fn a_release_through_the_watcher_reaches_the_provider_once_for_its_key() {
    let provider = Server::start(vec![
        answer(200, r#"{"success": true}"#),
        answer(
            200,
            r#"{"success": false, "error": "invalid_args", "msg": "instance is not yours"}"#,
        ),
    ]);
    let dir = tempfile::tempdir().expect("temp");
    let (served, addr) = watcher(dir.path(), &provider);
    let release =
        r#"{"action":"release","host":"h1","release":"stop","confirm":"h1","key":"rel-h1-1"}"#;

    // A watching token may not act: refused before anything is sent.
    assert_eq!(post(&addr, "view-only-1", release).0, 403);
    // A name typed wrong confirms nothing.
    let wrong = post(
        &addr,
        "ops-may-act-2",
        r#"{"action":"release","host":"h1","confirm":"h2","key":"rel-h1-0"}"#,
    );
    assert_eq!(wrong.0, 400, "{}", wrong.1);
    assert_eq!(wrong.1["outcome"], "not_confirmed", "{}", wrong.1);
    assert!(provider.requests().is_empty(), "{:?}", provider.requests());

    // Confirmed: sent once; the same key again (a retry after a cut) reads the outcome back.
    let first = post(&addr, "ops-may-act-2", release);
    assert_eq!(first.0, 200, "{}\n{}", first.1, served.log());
    assert_eq!(first.1["outcome"], "done", "{}", first.1);
    assert!(
        first.1["said"]
            .as_str()
            .unwrap_or_default()
            .contains("stop"),
        "{}",
        first.1
    );
    assert_eq!(post(&addr, "ops-may-act-2", release), first);
    let seen = provider.requests();
    assert_eq!(seen.len(), 1, "one provider request: {seen:?}");
    assert_eq!(seen[0].method, "PUT");
    assert_eq!(seen[0].path, "/api/v0/instances/12345/");
    assert_eq!(
        seen[0].header("authorization"),
        Some(format!("Bearer {VAST_TOKEN}").as_str())
    );
    assert_eq!(seen[0].json(), serde_json::json!({"state": "stopped"}));

    // A new key is a new release; the provider's refusal comes back with its words.
    let refused = post(
        &addr,
        "ops-may-act-2",
        r#"{"action":"release","host":"h1","confirm":"h1","key":"rel-h1-2"}"#,
    );
    assert_eq!(refused.0, 409, "{}", refused.1);
    assert_eq!(refused.1["outcome"], "refused", "{}", refused.1);
    assert!(
        refused.1["error"]
            .as_str()
            .unwrap_or_default()
            .contains("instance is not yours"),
        "{}",
        refused.1
    );
    assert_eq!(provider.requests().len(), 2);

    // The audit log names who asked, each time, and holds the provider's own lines.
    let audit =
        std::fs::read_to_string(dir.path().join("watcher-state/audit.jsonl")).expect("audit");
    let asked: Vec<&str> = audit
        .lines()
        .filter(|l| l.contains("asked by ops-alice through the watcher"))
        .collect();
    assert_eq!(asked.len(), 3, "{audit}");
    assert!(asked[1].contains("\"outcome\":\"ok\""), "{audit}");
    assert!(asked[2].contains("\"outcome\":\"refused\""), "{audit}");
    assert!(!audit.contains("viewer"), "{audit}");
    assert!(!audit.contains(VAST_TOKEN), "{audit}");
    drop(served);
}
