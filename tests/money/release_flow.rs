//! The release flow end to end against a loopback provider: typed confirmation (default Cancel,
//! wrong name refuses), read-only refuses before anything runs, a failed backup blocks, a dry run
//! sends nothing, the ledger is closed and the audit log written, and the token never shows up
//! in the audit file, on screen, in errors or in Debug output.

use crate::release_server as server;

use std::cell::RefCell;
use std::collections::HashMap;
use std::io::Cursor;
use std::path::Path;

use gpufleet::audit::{AuditKind, AuditLog};
use gpufleet::commands::money::{
    EXIT_CANCELLED, EXIT_FAILED, EXIT_OK, EXIT_REFUSED, MoneyEnv, ReleaseArgs, release_command,
};
use gpufleet::config::{self, Config};
use gpufleet::cost::{LedgerBook, LedgerState, LedgerStore};
use gpufleet::release::{
    FlowError, HostRunner, ReleaseAction, ReleaseFlow, SendOptions, Unattended,
};
use server::{Reply, Server, answer};

const TOKEN: &str = "vast-key-77e1d0c9-SECRET";
const HOST: &str = "a100-1";
const NOW_MS: u64 = 1_795_939_200_000 + 3 * 3_600_000;

/// Records what it was asked to run; answers with the scripted exit status.
struct FakeSsh {
    status: Result<Option<i32>, String>,
    seen: RefCell<Vec<Vec<String>>>,
}

impl FakeSsh {
    fn exiting(status: i32) -> Self {
        Self {
            status: Ok(Some(status)),
            seen: RefCell::new(Vec::new()),
        }
    }
}

impl HostRunner for FakeSsh {
    fn run(
        &self,
        host: &str,
        argv: &[String],
        on_line: &mut dyn FnMut(&str),
    ) -> Result<Option<i32>, String> {
        assert_eq!(host, HOST);
        self.seen.borrow_mut().push(argv.to_vec());
        on_line("sending incremental file list\u{1b}[31m");
        on_line("ckpt/step-9000.pt");
        self.status.clone()
    }
}

struct Fixture {
    dir: tempfile::TempDir,
    server: Server,
    config: Config,
}

impl Fixture {
    fn new(replies: Vec<Reply>, extra_host: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let token_file = dir.path().join("vast_api_key");
        std::fs::write(&token_file, format!("{TOKEN}\n")).unwrap();
        set_mode(&token_file, 0o600);
        let server = Server::start(replies);
        let text = format!(
            "[[hosts]]\nname = \"{HOST}\"\nssh = \"root@connect.example.com:38291\"\n\
             price_per_hour = 30.0\ncurrency = \"CNY\"\n\
             billing_started = \"2026-11-29T08:00:00Z\"\n{extra_host}\n\
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

    fn with_backup(replies: Vec<Reply>) -> Self {
        Self::new(
            replies,
            r#"backup = ["rsync", "-a", "/root/ckpt/", "user@nas.example.com:ckpt/"]"#,
        )
    }

    fn store(&self) -> LedgerStore {
        LedgerStore::at(self.dir.path().join("ledger.json"))
    }

    fn audit(&self) -> AuditLog {
        AuditLog::at(self.dir.path().join("audit.jsonl"))
    }

    fn audit_text(&self) -> String {
        std::fs::read_to_string(self.audit().path()).unwrap_or_default()
    }

    /// Runs `gpufleet release` with `typed` on stdin; returns the exit code and the screen.
    fn release(&self, args: &ReleaseArgs, runner: &FakeSsh, typed: &str) -> (u8, String) {
        self.release_as(args, runner, typed, false)
    }

    /// [`Fixture::release`], as the demo runs it when `simulated`.
    fn release_as(
        &self,
        args: &ReleaseArgs,
        runner: &FakeSsh,
        typed: &str,
        simulated: bool,
    ) -> (u8, String) {
        let no_env = |_: &str| None;
        let clock = || NOW_MS;
        let env = MoneyEnv {
            simulated,
            store: self.store(),
            audit: self.audit(),
            runner,
            send: SendOptions {
                connect_timeout_ms: 2_000,
                total_timeout_ms: 400,
            },
            env: &no_env,
            clock: &clock,
        };
        let mut input = Cursor::new(typed.as_bytes().to_vec());
        let mut out = Vec::new();
        let code = release_command(&self.config, args, &env, &mut input, &mut out);
        (code, String::from_utf8(out).unwrap())
    }
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn args(action: Option<ReleaseAction>) -> ReleaseArgs {
    ReleaseArgs {
        host: HOST.to_string(),
        action,
        dry_run: false,
        yes: false,
        read_only: false,
        override_failed_backup: false,
        force: false,
        json: false,
    }
}

fn ok() -> Vec<Reply> {
    vec![answer(200, r#"{"success": true}"#)]
}

#[test]
fn empty_input_cancels_and_sends_nothing() {
    let fx = Fixture::new(ok(), "");
    let (code, screen) = fx.release(&args(None), &FakeSsh::exiting(0), "\n");
    assert_eq!(code, EXIT_CANCELLED, "{screen}");
    assert!(screen.contains("cancelled; nothing was sent"), "{screen}");
    let (code, _) = fx.release(&args(None), &FakeSsh::exiting(0), "");
    assert_eq!(code, EXIT_CANCELLED, "end of input is Cancel too");
    assert!(fx.server.requests().is_empty());
}

#[test]
fn a_wrong_name_refuses() {
    let fx = Fixture::new(ok(), "");
    let (code, screen) = fx.release(&args(None), &FakeSsh::exiting(0), "a100-2\n");
    assert_eq!(code, EXIT_CANCELLED, "{screen}");
    assert!(
        screen.contains("\"a100-2\" is not the host name \"a100-1\""),
        "{screen}"
    );
    assert!(fx.server.requests().is_empty());
}

#[test]
fn the_typed_name_releases_closes_the_ledger_and_audits() {
    let fx = Fixture::new(ok(), "");
    let (code, screen) = fx.release(&args(None), &FakeSsh::exiting(0), "a100-1\n");
    assert_eq!(code, EXIT_OK, "{screen}");
    assert!(
        screen.contains("stop a100-1 (vast, instance 12345)"),
        "{screen}"
    );
    assert!(screen.contains("its disk is kept"), "{screen}");
    assert!(
        screen.contains("spent so far: 90.00 CNY over 3h00m billed"),
        "{screen}"
    );
    assert!(screen.contains("PUT http://127.0.0.1:"), "{screen}");
    assert!(
        screen.contains("a100-1: stop sent and accepted"),
        "{screen}"
    );
    assert_eq!(fx.server.requests().len(), 1);

    let book = fx.store().load().unwrap();
    let released = book.hosts[HOST].released.clone().unwrap();
    assert_eq!((released.at_ms, released.action.as_str()), (NOW_MS, "stop"));
    assert_eq!(book.hosts[HOST].billed_ms, 3 * 3_600_000);

    let entries = fx.audit().read_all().unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].kind, AuditKind::Release);
    assert_eq!(entries[0].outcome, "ok");
    assert_eq!(entries[0].exit_status, Some(200));
    assert!(entries[0].command.starts_with("PUT http://127.0.0.1:"));
}

#[test]
fn read_only_refuses_before_anything_runs() {
    let fx = Fixture::with_backup(ok());
    let runner = FakeSsh::exiting(0);
    let mut read_only = args(None);
    read_only.read_only = true;
    read_only.yes = true;
    let (code, screen) = fx.release(&read_only, &runner, "a100-1\n");
    assert_eq!(code, EXIT_REFUSED, "{screen}");
    assert!(screen.contains("read-only"), "{screen}");

    let mut config_read_only = fx.config.clone();
    config_read_only.read_only = true;
    let error = ReleaseFlow::start(&config_read_only, HOST, None, false, None, &|_| None);
    assert!(matches!(error, Err(FlowError::ReadOnly)));

    assert!(runner.seen.borrow().is_empty(), "the backup did not run");
    assert!(fx.server.requests().is_empty(), "nothing was sent");
    assert_eq!(fx.audit_text(), "");
}

#[test]
fn a_failed_backup_blocks_unless_overridden() {
    let fx = Fixture::with_backup(ok());
    let runner = FakeSsh::exiting(23);
    let (code, screen) = fx.release(&args(None), &runner, "a100-1\n");
    assert_eq!(code, EXIT_FAILED, "{screen}");
    assert!(screen.contains("  | ckpt/step-9000.pt"), "{screen}");
    assert!(!screen.contains('\u{1b}'), "backup output is sanitized");
    assert!(
        screen.contains("the backup failed (exit 23); not releasing a100-1"),
        "{screen}"
    );
    assert!(fx.server.requests().is_empty());
    assert_eq!(
        runner.seen.borrow()[0],
        ["rsync", "-a", "/root/ckpt/", "user@nas.example.com:ckpt/"]
    );
    let entries = fx.audit().read_all().unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(
        (entries[0].kind, entries[0].outcome.as_str()),
        (AuditKind::Backup, "failed")
    );

    let mut overriding = args(None);
    overriding.override_failed_backup = true;
    let (code, screen) = fx.release(&overriding, &runner, "a100-1\n");
    assert_eq!(code, EXIT_OK, "{screen}");
    assert!(screen.contains("releasing anyway"), "{screen}");
    assert_eq!(fx.server.requests().len(), 1);
}

#[test]
fn a_good_backup_runs_before_the_release() {
    let fx = Fixture::with_backup(ok());
    let mut yes = args(Some(ReleaseAction::Terminate));
    yes.yes = true;
    let (code, screen) = fx.release(&yes, &FakeSsh::exiting(0), "");
    assert_eq!(code, EXIT_OK, "{screen}");
    assert!(screen.contains("backup done"), "{screen}");
    assert!(screen.contains("deletes its disk"), "{screen}");
    assert_eq!(fx.server.requests()[0].method, "DELETE");
    let kinds: Vec<_> = fx
        .audit()
        .read_all()
        .unwrap()
        .iter()
        .map(|e| e.kind)
        .collect();
    assert_eq!(kinds, [AuditKind::Backup, AuditKind::Release]);
}

#[test]
fn a_dry_run_shows_everything_and_sends_nothing() {
    let fx = Fixture::with_backup(ok());
    let runner = FakeSsh::exiting(0);
    let mut dry = args(Some(ReleaseAction::Terminate));
    dry.dry_run = true;
    let (code, screen) = fx.release(&dry, &runner, "");
    assert_eq!(code, EXIT_OK, "{screen}");
    assert!(screen.contains("DELETE http://127.0.0.1:"), "{screen}");
    assert!(
        screen.contains("Authorization: Bearer <redacted>"),
        "{screen}"
    );
    assert!(
        screen.contains("backup first, on a100-1: rsync -a"),
        "{screen}"
    );
    assert!(
        screen.contains("dry run: nothing was run or sent"),
        "{screen}"
    );
    assert!(fx.server.requests().is_empty());
    assert!(runner.seen.borrow().is_empty());
    assert_eq!(fx.store().load().unwrap(), LedgerBook::default());
    let entries = fx.audit().read_all().unwrap();
    assert!(entries[0].dry_run && entries[0].outcome == "dry_run");
}

#[test]
fn provider_errors_leave_the_ledger_open_and_are_audited() {
    let fx = Fixture::new(vec![answer(404, r#"{"msg": "no such instance"}"#)], "");
    let (code, screen) = fx.release(&args(None), &FakeSsh::exiting(0), "a100-1\n");
    assert_eq!(code, EXIT_FAILED, "{screen}");
    assert!(screen.contains("instance not found (HTTP 404)"), "{screen}");
    let book = fx.store().load().unwrap();
    assert!(
        book.hosts
            .get(HOST)
            .is_none_or(|s: &LedgerState| s.released.is_none())
    );
    let entries = fx.audit().read_all().unwrap();
    assert_eq!(
        (entries[0].outcome.as_str(), entries[0].exit_status),
        ("not_found", Some(404))
    );
}

#[test]
fn the_token_never_shows_up() {
    let echo = format!(r#"{{"error": "bad key {TOKEN}"}}"#);
    let fx = Fixture::with_backup(vec![
        Reply::Answer(401, echo.clone()),
        Reply::Answer(200, echo.clone()),
        Reply::Answer(401, echo),
    ]);
    let runner = FakeSsh::exiting(0);
    let mut screens = String::new();
    let mut dry = args(None);
    dry.dry_run = true;
    screens += &fx.release(&dry, &runner, "").1;
    let (code, screen) = fx.release(&args(None), &runner, "a100-1\n");
    assert_eq!(code, EXIT_FAILED);
    assert!(screen.contains("token rejected"), "{screen}");
    screens += &screen;
    let (code, screen) = fx.release(&args(None), &runner, "a100-1\n");
    assert_eq!(code, EXIT_OK);
    screens += &screen;
    assert!(screens.contains("<redacted>"), "{screens}");

    let mut flow = ReleaseFlow::start(&fx.config, HOST, None, false, None, &|_| None).unwrap();
    let debug = format!("{flow:?} {:?}", flow.plan());
    flow.confirm(HOST).unwrap();
    flow.run_backup(&runner, &fx.audit(), NOW_MS, &mut |_| {})
        .unwrap();
    let error = flow
        .send(
            &runner,
            &SendOptions::default(),
            &fx.store(),
            &fx.audit(),
            NOW_MS,
        )
        .unwrap_err()
        .to_string();
    assert!(error.contains("token rejected"), "{error}");

    let requests = fx.server.requests();
    assert_eq!(
        requests[0].header("authorization"),
        Some(format!("Bearer {TOKEN}").as_str()),
        "the token did go to the provider"
    );
    for (what, text) in [
        ("screen", screens),
        ("audit log", fx.audit_text()),
        (
            "ledger",
            std::fs::read_to_string(fx.store().path()).unwrap(),
        ),
        ("debug", debug),
        ("error", error),
    ] {
        assert!(!text.contains(TOKEN), "the token is in the {what}: {text}");
        assert!(
            !text.contains("77e1d0c9"),
            "part of the token is in the {what}"
        );
    }
}

#[test]
fn a_token_file_open_to_others_is_warned_about() {
    let fx = Fixture::new(ok(), "");
    let token_file = fx.dir.path().join("vast_api_key");
    set_mode(&token_file, 0o644);
    let mut dry = args(None);
    dry.dry_run = true;
    let (_, screen) = fx.release(&dry, &FakeSsh::exiting(0), "");
    assert!(
        screen.contains("open to other users (mode 644)"),
        "{screen}"
    );
}

#[test]
fn a_missing_token_refuses_before_the_backup() {
    let fx = Fixture::with_backup(ok());
    std::fs::remove_file(fx.dir.path().join("vast_api_key")).unwrap();
    let runner = FakeSsh::exiting(0);
    let (code, screen) = fx.release(&args(None), &runner, "a100-1\n");
    assert_eq!(code, EXIT_REFUSED, "{screen}");
    assert!(
        screen.contains("cannot release without the API token"),
        "{screen}"
    );
    assert!(runner.seen.borrow().is_empty());
    assert!(fx.server.requests().is_empty());
}

#[test]
fn token_env_is_read_through_the_lookup() {
    let text = format!(
        "[[hosts]]\nname = \"{HOST}\"\nssh = \"h\"\n[hosts.release]\nprovider = \"runpod\"\n\
         instance_id = \"p1\"\ntoken_env = \"RUNPOD_API_KEY\"\nbase_url = \"http://127.0.0.1:9\"\n"
    );
    let config = config::parse(&text, Path::new("c.toml")).unwrap();
    let vars = HashMap::from([("RUNPOD_API_KEY".to_string(), format!(" {TOKEN}\n"))]);
    let lookup = |name: &str| vars.get(name).cloned();
    let flow = ReleaseFlow::start(&config, HOST, None, false, None, &lookup).unwrap();
    assert_eq!(flow.plan().token_problem, None);
    let missing = ReleaseFlow::start(&config, HOST, None, false, None, &|_| None).unwrap();
    assert_eq!(
        missing.plan().token_problem.as_deref(),
        Some("the environment variable RUNPOD_API_KEY (token_env) is not set")
    );
}

#[test]
fn lambda_without_terminate_is_refused_with_advice() {
    let text = format!(
        "[[hosts]]\nname = \"{HOST}\"\nssh = \"h\"\n[hosts.release]\nprovider = \"lambda\"\n\
         instance_id = \"i1\"\ntoken_env = \"LAMBDA_API_KEY\"\n"
    );
    let config = config::parse(&text, Path::new("c.toml")).unwrap();
    let error = ReleaseFlow::start(&config, HOST, None, false, None, &|_| None).unwrap_err();
    assert!(error.to_string().contains("use --terminate"), "{error}");
    let unknown = ReleaseFlow::start(&config, "nope", None, false, None, &|_| None).unwrap_err();
    assert!(matches!(unknown, FlowError::UnknownHost(_)));
}

#[test]
fn steps_cannot_be_skipped() {
    let fx = Fixture::with_backup(ok());
    let runner = FakeSsh::exiting(0);
    let (store, audit) = (fx.store(), fx.audit());
    let options = SendOptions::default();
    let mut flow = ReleaseFlow::start(&fx.config, HOST, None, false, None, &|_| None).unwrap();
    let send = |flow: &mut ReleaseFlow| flow.send(&runner, &options, &store, &audit, NOW_MS);
    assert!(matches!(send(&mut flow), Err(FlowError::NotConfirmed)));
    flow.confirm(HOST).unwrap();
    assert!(matches!(send(&mut flow), Err(FlowError::BackupNotRun)));
    flow.run_backup(&runner, &audit, NOW_MS, &mut |_| {})
        .unwrap();
    send(&mut flow).unwrap();
    assert!(matches!(send(&mut flow), Err(FlowError::AlreadySent)));
    assert_eq!(fx.server.requests().len(), 1);
}

#[test]
fn an_auto_release_is_audited_as_such() {
    let fx = Fixture::new(ok(), "");
    let mut flow = ReleaseFlow::start(&fx.config, HOST, None, false, None, &|_| None).unwrap();
    flow.confirm_unattended(Unattended::AutoRelease);
    let runner = FakeSsh::exiting(0);
    flow.send(
        &runner,
        &SendOptions::default(),
        &fx.store(),
        &fx.audit(),
        NOW_MS,
    )
    .unwrap();
    let entries = fx.audit().read_all().unwrap();
    assert_eq!(entries[0].kind, AuditKind::AutoRelease);
}

/// The demo's releases: the same plan, backup and typed confirmation, but the provider that
/// answers is the simulated one, in-process; the loopback provider of the config is never
/// asked, and every audit line says it was simulated.
#[test]
fn a_simulated_release_asks_no_server_and_marks_its_audit_lines_simulated() {
    let fx = Fixture::with_backup(vec![answer(500, "a simulated release must not get here")]);
    let runner = FakeSsh::exiting(0);
    let (code, screen) = fx.release_as(&args(None), &runner, "a100-1\n", true);
    assert_eq!(code, EXIT_OK, "{screen}");
    assert!(screen.starts_with("[simulated] a demo host"), "{screen}");
    assert!(
        screen.contains("/api/v0/instances/12345/ (simulated): 200 {\"success\": true}"),
        "{screen}"
    );
    assert!(fx.server.requests().is_empty(), "the provider was asked");
    let entries = fx.audit().read_all().expect("audit");
    assert_eq!(entries.len(), 2, "backup and release: {entries:?}");
    assert!(entries.iter().all(|e| e.simulated), "{entries:?}");
    assert!(fx.audit_text().contains("\"simulated\":true"));
    // The (scratch) ledger records the release as for a real one.
    let book = fx.store().load().expect("ledger");
    assert!(book.hosts[HOST].released.is_some());
}
