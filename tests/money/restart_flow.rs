//! `gpufleet restart` and `gpufleet start` against a loopback provider: each provider's request
//! (method, path, body, Authorization), the ones a provider does not document refused with the
//! way out named, and the flow: `--yes` sends vast.ai's reboot, the token never shows (screen,
//! audit log), `--read-only` and an empty confirmation send nothing, no backup runs and the
//! host's ledger stays open.

use crate::release_server as server;

use std::cell::RefCell;
use std::io::Cursor;
use std::path::Path;

use gpufleet::audit::{AuditKind, AuditLog};
use gpufleet::commands::money::{EXIT_CANCELLED, EXIT_OK, EXIT_REFUSED, MoneyEnv, release_command};
use gpufleet::commands::restart::RestartArgs;
use gpufleet::config::{self, Config, ReleaseConfig};
use gpufleet::cost::LedgerStore;
use gpufleet::release::{
    BuildError, HostRunner, ReleaseAction, ReleaseRequest, ReleaseStep, Secret, SendOptions, send,
};
use server::{Reply, Server, answer};

const TOKEN: &str = "vast-key-5d2b91aa-SECRET";
const HOST: &str = "a100-1";
const NOW_MS: u64 = 1_795_939_200_000 + 3 * 3_600_000;

/// Records what it was asked to run on the host; a restart runs nothing there.
#[derive(Default)]
struct Host {
    seen: RefCell<Vec<Vec<String>>>,
}

impl HostRunner for Host {
    fn run(
        &self,
        _: &str,
        argv: &[String],
        _: &mut dyn FnMut(&str),
    ) -> Result<Option<i32>, String> {
        self.seen.borrow_mut().push(argv.to_vec());
        Ok(Some(0))
    }
}

fn fast() -> SendOptions {
    SendOptions {
        connect_timeout_ms: 2_000,
        total_timeout_ms: 400,
    }
}

fn release_table(provider: &str, base_url: &str, extra: &str) -> ReleaseConfig {
    let text = format!(
        "[[hosts]]\nname = \"h1\"\nssh = \"root@h.example.com:22\"\n[hosts.release]\n\
         provider = \"{provider}\"\ninstance_id = \"12345\"\ntoken_env = \"API_TOKEN\"\n\
         base_url = \"{base_url}\"\n{extra}"
    );
    let config = config::parse(&text, Path::new("c.toml")).unwrap();
    config.hosts[0].release.clone().unwrap()
}

/// Sends `action` for a host of `provider` to a loopback server answering `reply`.
fn sent(provider: &str, action: ReleaseAction, reply: &str) -> Vec<server::Recorded> {
    let server = Server::start(vec![answer(200, reply)]);
    let table = release_table(provider, &server.base_url, "");
    let request = ReleaseRequest::build("h1", &table, action, Some(Secret::new("tok-1"))).unwrap();
    send(&request, "h1", &Host::default(), &fast()).unwrap();
    server.requests()
}

#[test]
fn vast_restart_puts_the_reboot_and_start_puts_state_running() {
    let seen = sent("vast", ReleaseAction::Restart, r#"{"success": true}"#);
    assert_eq!(seen.len(), 1);
    assert_eq!(
        (seen[0].method.as_str(), seen[0].path.as_str()),
        ("PUT", "/api/v0/instances/reboot/12345/")
    );
    assert_eq!(seen[0].header("authorization"), Some("Bearer tok-1"));
    assert_eq!(seen[0].body, "");

    let seen = sent("vast", ReleaseAction::Start, r#"{"success": true}"#);
    assert_eq!(
        (seen[0].method.as_str(), seen[0].path.as_str()),
        ("PUT", "/api/v0/instances/12345/")
    );
    assert_eq!(seen[0].json(), serde_json::json!({"state": "running"}));
    assert_eq!(seen[0].header("authorization"), Some("Bearer tok-1"));
}

#[test]
fn runpod_restart_and_start_post_to_the_pod() {
    for (action, path) in [
        (ReleaseAction::Restart, "/pods/12345/restart"),
        (ReleaseAction::Start, "/pods/12345/start"),
    ] {
        let seen = sent("runpod", action, "{}");
        assert_eq!(
            (seen[0].method.as_str(), seen[0].path.as_str()),
            ("POST", path)
        );
        assert_eq!(seen[0].header("authorization"), Some("Bearer tok-1"));
    }
}

#[test]
fn lambda_restarts_by_id_list_and_cannot_start() {
    let seen = sent("lambda", ReleaseAction::Restart, r#"{"data": {}}"#);
    assert_eq!(seen[0].method, "POST");
    assert_eq!(seen[0].path, "/api/v1/instance-operations/restart");
    assert_eq!(
        seen[0].json(),
        serde_json::json!({"instance_ids": ["12345"]})
    );
    assert_eq!(seen[0].header("authorization"), Some("Bearer tok-1"));

    let table = release_table("lambda", "http://127.0.0.1:9", "");
    let error = ReleaseRequest::build("h1", &table, ReleaseAction::Start, None).unwrap_err();
    assert_eq!(error, BuildError::NoStart { provider: "Lambda" });
    assert!(
        error.to_string().contains("provider = \"command\""),
        "{error}"
    );
}

#[test]
fn autodl_powers_on_with_gpus_and_refuses_a_restart() {
    let seen = sent(
        "autodl",
        ReleaseAction::Start,
        r#"{"code": "Success", "msg": "", "data": null}"#,
    );
    assert_eq!(seen[0].method, "POST");
    assert_eq!(seen[0].path, "/api/v1/dev/instance/pro/power_on");
    assert_eq!(seen[0].header("authorization"), Some("tok-1"));
    assert_eq!(
        seen[0].json(),
        serde_json::json!({"instance_uuid": "12345", "payload": "gpu"})
    );

    let table = release_table("autodl", "http://127.0.0.1:9", "");
    let error = ReleaseRequest::build("h1", &table, ReleaseAction::Restart, None).unwrap_err();
    assert_eq!(error, BuildError::NoRestart { provider: "AutoDL" });
    let said = error.to_string();
    assert!(said.contains("restart_command"), "{said}");
    assert!(said.contains("provider's site"), "{said}");
}

#[test]
fn the_command_provider_runs_its_own_restart_and_start_commands() {
    let text = "[[hosts]]\nname = \"h1\"\nssh = \"root@h.example.com:22\"\n[hosts.release]\n\
                provider = \"command\"\ninstance_id = \"i-9\"\n\
                command = [\"cloudctl\", \"stop\", \"{instance_id}\"]\n\
                restart_command = [\"cloudctl\", \"reboot\", \"{instance_id}\", \"{host}\"]\n";
    let config = config::parse(text, Path::new("c.toml")).unwrap();
    let table = config.hosts[0].release.clone().unwrap();
    let request = ReleaseRequest::build("h1", &table, ReleaseAction::Restart, None).unwrap();
    assert_eq!(
        request.steps,
        [ReleaseStep::Local {
            argv: ["cloudctl", "reboot", "i-9", "h1"]
                .map(String::from)
                .to_vec()
        }]
    );
    let error = ReleaseRequest::build("h1", &table, ReleaseAction::Start, None).unwrap_err();
    assert_eq!(
        error,
        BuildError::MissingActionCommand {
            key: "start_command"
        }
    );

    let wrong = "[[hosts]]\nname = \"h1\"\nssh = \"root@h.example.com:22\"\n[hosts.release]\n\
                 provider = \"vast\"\ninstance_id = \"1\"\ntoken_env = \"K\"\n\
                 restart_command = [\"x\"]\n";
    let error = config::parse(wrong, Path::new("c.toml")).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("hosts[0].release.restart_command"),
        "{error}"
    );
}

#[test]
fn the_ssh_provider_reboots_the_machine_and_cannot_start_it() {
    let text = "[[hosts]]\nname = \"h1\"\nssh = \"root@h.example.com:22\"\n[hosts.release]\n\
                provider = \"ssh\"\n";
    let config = config::parse(text, Path::new("c.toml")).unwrap();
    let table = config.hosts[0].release.clone().unwrap();
    let request = ReleaseRequest::build("h1", &table, ReleaseAction::Restart, None).unwrap();
    assert_eq!(
        request.steps,
        [ReleaseStep::OnHost {
            argv: vec!["reboot".to_string()]
        }]
    );
    let error = ReleaseRequest::build("h1", &table, ReleaseAction::Start, None).unwrap_err();
    assert_eq!(error, BuildError::NoStart { provider: "ssh" });
}

/// A vast.ai host with a backup, a price and a ledger, its token in a file.
struct Fixture {
    dir: tempfile::TempDir,
    server: Server,
    config: Config,
}

impl Fixture {
    fn new(replies: Vec<Reply>) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let token_file = dir.path().join("vast_api_key");
        std::fs::write(&token_file, format!("{TOKEN}\n")).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&token_file, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        let server = Server::start(replies);
        let text = format!(
            "[[hosts]]\nname = \"{HOST}\"\nssh = \"root@connect.example.com:38291\"\n\
             price_per_hour = 30.0\ncurrency = \"CNY\"\n\
             billing_started = \"2026-11-29T08:00:00Z\"\n\
             backup = [\"rsync\", \"-a\", \"/root/ckpt/\", \"nas:ckpt/\"]\n\
             [hosts.release]\nprovider = \"vast\"\ninstance_id = \"12345\"\n\
             token_file = \"{}\"\nbase_url = \"{}\"\n",
            token_file.display(),
            server.base_url
        );
        let config = config::parse(&text, Path::new("c.toml")).unwrap();
        Self {
            dir,
            server,
            config,
        }
    }

    fn store(&self) -> LedgerStore {
        LedgerStore::at(self.dir.path().join("ledger.json"))
    }

    fn audit(&self) -> AuditLog {
        AuditLog::at(self.dir.path().join("audit.jsonl"))
    }

    /// Runs the command as `gpufleet restart` / `start` does, `typed` on stdin.
    fn run(&self, args: &RestartArgs, read_only: bool, host: &Host, typed: &str) -> (u8, String) {
        let no_env = |_: &str| None;
        let clock = || NOW_MS;
        let env = MoneyEnv {
            simulated: false,
            store: self.store(),
            audit: self.audit(),
            runner: host,
            send: fast(),
            env: &no_env,
            clock: &clock,
        };
        let mut input = Cursor::new(typed.as_bytes().to_vec());
        let mut out = Vec::new();
        let release = args.release_args(read_only);
        let code = release_command(&self.config, &release, &env, &mut input, &mut out);
        (code, String::from_utf8(out).unwrap())
    }
}

fn restart(yes: bool) -> RestartArgs {
    RestartArgs {
        host: HOST.to_string(),
        action: ReleaseAction::Restart,
        dry_run: false,
        json: false,
        yes,
        wait: false,
    }
}

#[test]
fn restart_yes_sends_vasts_reboot_without_showing_the_token_or_closing_the_ledger() {
    let fx = Fixture::new(vec![answer(200, r#"{"success": true}"#)]);
    let host = Host::default();
    let (code, screen) = fx.run(&restart(true), false, &host, "");
    assert_eq!(code, EXIT_OK, "{screen}");

    let seen = fx.server.requests();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].method, "PUT");
    assert_eq!(seen[0].path, "/api/v0/instances/reboot/12345/");
    assert_eq!(
        seen[0].header("authorization"),
        Some(format!("Bearer {TOKEN}").as_str())
    );

    assert!(
        screen.contains("restart a100-1 (vast, instance 12345)"),
        "{screen}"
    );
    assert!(screen.contains("without losing its GPUs"), "{screen}");
    assert!(
        screen.contains("Authorization: Bearer <redacted>"),
        "{screen}"
    );
    assert!(
        screen.contains("a100-1: restart sent and accepted"),
        "{screen}"
    );
    assert!(
        !screen.contains("backup"),
        "a restart runs no backup: {screen}"
    );
    assert!(!screen.contains(TOKEN), "{screen}");

    assert!(
        host.seen.borrow().is_empty(),
        "no backup runs for a restart"
    );
    let book = fx.store().load().unwrap();
    assert!(
        book.hosts.get(HOST).is_none_or(|h| h.released.is_none()),
        "a restart bills on: the ledger stays open"
    );

    let audit = std::fs::read_to_string(fx.audit().path()).unwrap();
    assert!(!audit.contains(TOKEN), "{audit}");
    let entries = fx.audit().read_all().unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].kind, AuditKind::Release);
    assert_eq!(entries[0].step.as_deref(), Some("restart"));
    assert_eq!(entries[0].outcome, "ok");
    assert!(
        entries[0].command.contains("PUT http://127.0.0.1:")
            && entries[0]
                .command
                .ends_with("/api/v0/instances/reboot/12345/"),
        "{}",
        entries[0].command
    );
}

#[test]
fn read_only_and_an_empty_confirmation_send_nothing() {
    let fx = Fixture::new(vec![answer(200, r#"{"success": true}"#)]);
    let host = Host::default();
    let (code, screen) = fx.run(&restart(true), true, &host, "");
    assert_eq!(code, EXIT_REFUSED, "{screen}");
    assert!(
        screen.contains("gpufleet restart: read-only mode: restarting and starting"),
        "{screen}"
    );

    let mut start = restart(false);
    start.action = ReleaseAction::Start;
    let (code, screen) = fx.run(&start, false, &host, "\n");
    assert_eq!(code, EXIT_CANCELLED, "{screen}");
    assert!(screen.contains("type a100-1 to start it"), "{screen}");
    assert!(screen.contains("{\"state\":\"running\"}"), "{screen}");

    assert!(fx.server.requests().is_empty(), "nothing was sent");
    assert!(host.seen.borrow().is_empty());
}

/// Stopping an AutoDL host says how long AutoDL keeps a shut-down instance; a vast.ai stop's
/// effect already says its storage bills on.
#[test]
fn an_autodl_stop_says_the_instance_is_deleted_after_15_days() {
    let text = "[[hosts]]\nname = \"a\"\nssh = \"root@h.example.com:22\"\n[hosts.release]\n\
                provider = \"autodl\"\ninstance_id = \"u-1\"\ntoken_env = \"K\"\n";
    let config = config::parse(text, Path::new("c.toml")).unwrap();
    let env = |_: &str| Some("tok".to_string());
    let flow = gpufleet::release::ReleaseFlow::start(
        &config,
        "a",
        Some(ReleaseAction::Stop),
        false,
        None,
        &env,
    )
    .unwrap();
    let lines = flow.plan().lines().join("\n");
    assert!(lines.contains("shut down for 15 days"), "{lines}");
    let flow = gpufleet::release::ReleaseFlow::start(
        &config,
        "a",
        Some(ReleaseAction::Start),
        false,
        None,
        &env,
    )
    .unwrap();
    let lines = flow.plan().lines().join("\n");
    assert!(!lines.contains("15 days"), "{lines}");
    assert!(lines.contains("powers the instance on"), "{lines}");
}
