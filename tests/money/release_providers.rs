//! Each provider's release against a real HTTP server on loopback: method, path, the
//! Authorization header exactly as the provider wants it, the body, and the provider's answers
//! (2xx, 401, 403, 404, 500, a refusal in a 200, no answer at all); plus the local command and
//! the SSH shutdown.

use crate::release_server as server;

use std::cell::RefCell;
use std::path::Path;

use gpufleet::config::{self, ReleaseConfig};
use gpufleet::release::{
    BuildError, HostRunner, ReleaseAction, ReleaseRequest, Secret, SendError, SendFailure,
    SendOptions, StepAnswer, send,
};
use server::{Reply, Server, answer};

const TOKEN: &str = "tok-3f9a1c-SECRET";

struct NoSsh;

impl HostRunner for NoSsh {
    fn run(&self, _: &str, _: &[String], _: &mut dyn FnMut(&str)) -> Result<Option<i32>, String> {
        panic!("no step of this release runs on the host")
    }
}

fn release_config(provider: &str, base_url: &str, extra: &str) -> ReleaseConfig {
    let text = format!(
        "[[hosts]]\nname = \"h1\"\nssh = \"root@h.example.com:22\"\n[hosts.release]\n\
         provider = \"{provider}\"\ninstance_id = \"12345\"\ntoken_env = \"API_TOKEN\"\n\
         base_url = \"{base_url}\"\n{extra}"
    );
    let config = config::parse(&text, Path::new("c.toml")).unwrap();
    config.hosts[0].release.clone().unwrap()
}

fn fast() -> SendOptions {
    SendOptions {
        connect_timeout_ms: 2_000,
        total_timeout_ms: 400,
    }
}

fn release(
    provider: &str,
    action: ReleaseAction,
    replies: Vec<Reply>,
) -> (Server, Result<Vec<StepAnswer>, SendFailure>) {
    let server = Server::start(replies);
    let config = release_config(provider, &server.base_url, "");
    let request = ReleaseRequest::build("h1", &config, action, Some(Secret::new(TOKEN))).unwrap();
    let result = send(&request, "h1", &NoSsh, &fast());
    (server, result)
}

fn ok() -> Vec<Reply> {
    vec![answer(200, "{}")]
}

#[test]
fn vast_stop_puts_state_stopped_with_bearer() {
    let (server, result) = release(
        "vast",
        ReleaseAction::Stop,
        vec![answer(200, r#"{"success": true}"#)],
    );
    let answers = result.unwrap();
    let seen = server.requests();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].method, "PUT");
    assert_eq!(seen[0].path, "/api/v0/instances/12345/");
    assert_eq!(
        seen[0].header("authorization"),
        Some(format!("Bearer {TOKEN}").as_str())
    );
    assert_eq!(seen[0].header("content-type"), Some("application/json"));
    assert_eq!(seen[0].json(), serde_json::json!({"state": "stopped"}));
    assert_eq!(answers[0].status, Some(200));
    assert!(answers[0].text.contains("success"), "{answers:?}");
}

#[test]
fn vast_terminate_deletes_the_instance() {
    let (server, result) = release("vast", ReleaseAction::Terminate, ok());
    result.unwrap();
    let seen = server.requests();
    assert_eq!(seen[0].method, "DELETE");
    assert_eq!(seen[0].path, "/api/v0/instances/12345/");
    assert_eq!(
        seen[0].header("authorization"),
        Some(format!("Bearer {TOKEN}").as_str())
    );
    assert_eq!(seen[0].body, "");
}

#[test]
fn vast_success_false_in_a_200_is_a_refusal() {
    let body = r#"{"success": false, "error": "invalid_args", "msg": "instance is not yours"}"#;
    let (_, result) = release("vast", ReleaseAction::Stop, vec![answer(200, body)]);
    let failure = result.unwrap_err();
    assert_eq!(
        failure.error,
        SendError::Refused {
            text: "instance is not yours".into()
        }
    );
}

#[test]
fn runpod_stop_and_terminate() {
    let (server, result) = release("runpod", ReleaseAction::Stop, ok());
    result.unwrap();
    let seen = server.requests();
    assert_eq!(
        (seen[0].method.as_str(), seen[0].path.as_str()),
        ("POST", "/pods/12345/stop")
    );
    assert_eq!(
        seen[0].header("authorization"),
        Some(format!("Bearer {TOKEN}").as_str())
    );

    let (server, result) = release("runpod", ReleaseAction::Terminate, ok());
    result.unwrap();
    let seen = server.requests();
    assert_eq!(
        (seen[0].method.as_str(), seen[0].path.as_str()),
        ("DELETE", "/pods/12345")
    );
    assert_eq!(
        seen[0].header("authorization"),
        Some(format!("Bearer {TOKEN}").as_str())
    );
}

#[test]
fn lambda_terminates_by_id_list_and_has_no_stop() {
    let body = r#"{"data": {"terminated_instances": [{"id": "12345", "status": "terminating"}]}}"#;
    let (server, result) = release("lambda", ReleaseAction::Terminate, vec![answer(200, body)]);
    result.unwrap();
    let seen = server.requests();
    assert_eq!(seen[0].method, "POST");
    assert_eq!(seen[0].path, "/api/v1/instance-operations/terminate");
    assert_eq!(
        seen[0].header("authorization"),
        Some(format!("Bearer {TOKEN}").as_str())
    );
    assert_eq!(
        seen[0].json(),
        serde_json::json!({"instance_ids": ["12345"]})
    );

    let config = release_config("lambda", "http://127.0.0.1:9", "");
    let error = ReleaseRequest::build("h1", &config, ReleaseAction::Stop, None).unwrap_err();
    assert_eq!(error, BuildError::NoStop { provider: "Lambda" });
    assert!(error.to_string().contains("--terminate"), "{error}");
}

#[test]
fn autodl_power_off_uses_the_bare_token() {
    let (server, result) = release(
        "autodl",
        ReleaseAction::Stop,
        vec![answer(
            200,
            r#"{"code": "Success", "msg": "", "data": null}"#,
        )],
    );
    result.unwrap();
    let seen = server.requests();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].method, "POST");
    assert_eq!(seen[0].path, "/api/v1/dev/instance/pro/power_off");
    assert_eq!(seen[0].header("authorization"), Some(TOKEN));
    assert_eq!(
        seen[0].json(),
        serde_json::json!({"instance_uuid": "12345"})
    );
}

#[test]
fn autodl_release_powers_off_first_and_goes_on_if_already_off() {
    let (server, result) = release(
        "autodl",
        ReleaseAction::Terminate,
        vec![
            answer(
                200,
                r#"{"code": "InstanceAlreadyShutdown", "msg": "already off"}"#,
            ),
            answer(200, r#"{"code": "Success", "msg": ""}"#),
        ],
    );
    let answers = result.unwrap();
    let paths: Vec<String> = server.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(
        paths,
        [
            "/api/v1/dev/instance/pro/power_off",
            "/api/v1/dev/instance/pro/release"
        ]
    );
    assert!(answers[0].text.contains("already off"), "{answers:?}");
    for request in server.requests() {
        assert_eq!(request.header("authorization"), Some(TOKEN));
        assert_eq!(
            request.json(),
            serde_json::json!({"instance_uuid": "12345"})
        );
    }
}

#[test]
fn autodl_release_refused_is_an_error() {
    let (_, result) = release(
        "autodl",
        ReleaseAction::Terminate,
        vec![
            answer(200, r#"{"code": "Success"}"#),
            answer(
                200,
                r#"{"code": "InstanceNotShutdown", "msg": "power off first"}"#,
            ),
        ],
    );
    let failure = result.unwrap_err();
    assert_eq!(failure.done.len(), 1, "the power-off went through");
    assert_eq!(
        failure.error,
        SendError::Refused {
            text: "InstanceNotShutdown: power off first".into()
        }
    );
}

#[test]
fn provider_errors_are_named() {
    let cases = [
        (401, "token rejected"),
        (403, "token rejected"),
        (404, "instance not found"),
        (500, "server failed"),
        (418, "unexpected answer HTTP 418"),
    ];
    for (status, words) in cases {
        let (server, result) = release(
            "runpod",
            ReleaseAction::Stop,
            vec![answer(status, r#"{"error": "nope"}"#)],
        );
        let error = result.unwrap_err().error;
        let text = error.to_string();
        assert!(text.contains(words), "{status}: {text}");
        assert!(text.contains("nope"), "{status}: {text}");
        assert_eq!(server.requests().len(), 1);
    }
}

#[test]
fn a_server_that_never_answers_times_out() {
    let (server, result) = release("vast", ReleaseAction::Stop, vec![Reply::Silent]);
    let error = result.unwrap_err().error;
    assert!(
        matches!(
            error,
            SendError::Timeout {
                timeout_ms: 400,
                ..
            }
        ),
        "{error:?}"
    );
    assert!(error.to_string().contains("no answer"), "{error}");
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn a_closed_port_is_unreachable() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let config = release_config("vast", &url, "");
    let request =
        ReleaseRequest::build("h1", &config, ReleaseAction::Stop, Some(Secret::new(TOKEN)))
            .unwrap();
    let error = send(&request, "h1", &NoSsh, &fast()).unwrap_err().error;
    assert!(matches!(error, SendError::Unreachable { .. }), "{error:?}");
}

#[test]
fn an_echoed_token_and_escapes_never_reach_the_screen() {
    let hostile = format!(
        "{{\"error\": \"bad token {TOKEN}\", \"x\": \"\u{1b}]0;pwned\u{7}\u{1b}[2J{}\"}}",
        "A".repeat(2_000)
    );
    let (_, result) = release(
        "vast",
        ReleaseAction::Stop,
        vec![Reply::Answer(401, hostile)],
    );
    let failure = result.unwrap_err();
    let shown = failure.to_string();
    assert!(!shown.contains(TOKEN), "{shown}");
    assert!(shown.contains("<redacted>"), "{shown}");
    assert!(!shown.contains('\u{1b}'), "{shown:?}");
    assert!(shown.chars().count() < 500, "cut short: {}", shown.len());
    assert!(!format!("{failure:?}").contains(TOKEN));
}

#[test]
fn the_shown_request_redacts_the_token() {
    let config = release_config("autodl", "http://127.0.0.1:9/", "");
    let request = ReleaseRequest::build(
        "h1",
        &config,
        ReleaseAction::Terminate,
        Some(Secret::new(TOKEN)),
    )
    .unwrap();
    let shown = request.shown("h1").join("\n");
    assert_eq!(
        shown,
        "POST http://127.0.0.1:9/api/v1/dev/instance/pro/power_off\n  Authorization: <redacted>\n  \
         {\"instance_uuid\":\"12345\"}\nPOST http://127.0.0.1:9/api/v1/dev/instance/pro/release\n  \
         Authorization: <redacted>\n  {\"instance_uuid\":\"12345\"}"
    );
    assert!(!format!("{request:?}").contains(TOKEN));
    assert_eq!(format!("{}", Secret::new(TOKEN)), "<redacted>");
}

#[test]
fn default_base_urls_are_the_providers_own() {
    let text = "[[hosts]]\nname = \"h1\"\nssh = \"h\"\n[hosts.release]\nprovider = \"runpod\"\n\
                instance_id = \"p/1\"\ntoken_env = \"T\"\n";
    let config = config::parse(text, Path::new("c.toml")).unwrap();
    let release = config.hosts[0].release.clone().unwrap();
    let request = ReleaseRequest::build("h1", &release, ReleaseAction::Stop, None).unwrap();
    assert_eq!(
        request.summary(),
        "POST https://rest.runpod.io/v1/pods/p%2F1/stop"
    );
}

#[test]
fn a_command_gets_whole_arguments_and_no_shell() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("pwned");
    let text = format!(
        "[[hosts]]\nname = \"h1\"\nssh = \"h\"\n[hosts.release]\nprovider = \"command\"\n\
         instance_id = \"x; touch {}\"\ncommand = [\"printf\", \"[%s] [%s] [%s]\", \
         \"{{instance_id}}\", \"--host={{host}}\", \"{{action}}\"]\n",
        marker.display()
    );
    let config = config::parse(&text, Path::new("c.toml")).unwrap();
    let release = config.hosts[0].release.clone().unwrap();
    let request = ReleaseRequest::build("h1", &release, ReleaseAction::Stop, None).unwrap();
    let answers = send(&request, "h1", &NoSsh, &fast()).unwrap();
    assert_eq!(
        answers[0].text,
        format!("[x; touch {}] [--host=h1] [stop]", marker.display())
    );
    assert!(!marker.exists());
}

#[test]
fn a_failing_or_hanging_command_is_an_error() {
    let build = |argv: &str| {
        let text = format!(
            "[[hosts]]\nname = \"h1\"\nssh = \"h\"\n[hosts.release]\nprovider = \"command\"\n\
             command = {argv}\n"
        );
        let config = config::parse(&text, Path::new("c.toml")).unwrap();
        let release = config.hosts[0].release.clone().unwrap();
        ReleaseRequest::build("h1", &release, ReleaseAction::Stop, None).unwrap()
    };
    let error = send(
        &build(r#"["sh", "-c", "echo no quota >&2; exit 3"]"#),
        "h1",
        &NoSsh,
        &fast(),
    )
    .unwrap_err()
    .error;
    assert_eq!(
        error.to_string(),
        "sh -c 'echo no quota >&2; exit 3' failed (exit 3): no quota"
    );
    let error = send(&build(r#"["sleep", "5"]"#), "h1", &NoSsh, &fast())
        .unwrap_err()
        .error;
    assert!(
        matches!(error, SendError::CommandTimeout { .. }),
        "{error:?}"
    );
}

struct FakeSsh {
    seen: RefCell<Vec<(String, Vec<String>)>>,
}

impl HostRunner for FakeSsh {
    fn run(
        &self,
        host: &str,
        argv: &[String],
        _: &mut dyn FnMut(&str),
    ) -> Result<Option<i32>, String> {
        self.seen
            .borrow_mut()
            .push((host.to_string(), argv.to_vec()));
        Ok(None)
    }
}

#[test]
fn ssh_shuts_the_host_down_through_the_callers_runner() {
    let text = "[[hosts]]\nname = \"h1\"\nssh = \"h\"\n[hosts.release]\nprovider = \"ssh\"\n";
    let config = config::parse(text, Path::new("c.toml")).unwrap();
    let release = config.hosts[0].release.clone().unwrap();
    let request = ReleaseRequest::build("h1", &release, ReleaseAction::Stop, None).unwrap();
    assert_eq!(request.shown("h1"), ["run on h1 over SSH: shutdown -h now"]);
    let runner = FakeSsh {
        seen: RefCell::new(Vec::new()),
    };
    let answers = send(&request, "h1", &runner, &fast()).unwrap();
    assert_eq!(
        runner.seen.into_inner(),
        [(
            "h1".to_string(),
            vec!["shutdown".to_string(), "-h".into(), "now".into()]
        )]
    );
    assert_eq!(answers[0].status, None);
    let error = ReleaseRequest::build("h1", &release, ReleaseAction::Terminate, None).unwrap_err();
    assert_eq!(error, BuildError::NoTerminate);
}
