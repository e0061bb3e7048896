//! `POST /v1/actions`: what an attached console asks the watcher to do, run by the watcher
//! with its own audit log naming who asked (the token's name). Only a token with
//! `actions = true` may ask (403 otherwise). Each request carries an idempotency key: a request
//! repeated with the same key (a network cut before the answer came) gets the first answer
//! again and never runs twice, so a console reads the outcome back by asking again.
//!
//! The actions served are `hold` (cancel a host's auto-release countdown, as `gpufleet hold`),
//! `release`, `restart` and `start` (the release flow, run by the watcher with the name typed
//! in the console's dialog as its confirmation), `stop-job` (a job's process sent SIGINT, then
//! SIGTERM after its grace period), `check` (the acceptance check, its report in the answer)
//! and `runbook-step` (one step of a runbook, named by the runbook's id, the step's id and the
//! typed parameters: the watcher builds the command from its own catalogue, never from the
//! console's words); the watcher runs them on its own SSH sessions ([`Hands`]). Others are
//! answered 501.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex};

use serde::{Deserialize, Serialize};

use crate::audit::{AuditEntry, AuditKind, AuditLog};
use crate::cost::HoldStore;
use crate::job::stop::StopJob;
use crate::release::ReleaseAction;
use crate::telemetry::source::now_ms;

/// Outcomes remembered by idempotency key (the oldest forgotten first).
const REMEMBERED: usize = 1_024;
/// The longest request body read.
pub const MAX_BODY_BYTES: usize = 16 << 10;
/// The longest idempotency key.
const MAX_KEY_BYTES: usize = 128;

/// What a console asks.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Request {
    /// `hold`, `release`, `restart`, `start`, `stop-job`, `check` or `runbook-step`.
    pub action: String,
    pub host: String,
    /// Chosen by the console, the same for every try of one action.
    pub key: String,
    /// A release's action, `stop` (the default) or `terminate`.
    #[serde(default)]
    pub release: Option<String>,
    /// A release's confirmation: the host's name as typed in the console's dialog.
    #[serde(default)]
    pub confirm: Option<String>,
    /// A stop-job's process.
    #[serde(default)]
    pub pid: Option<u32>,
    /// A stop-job's seconds from SIGINT to SIGTERM.
    #[serde(default)]
    pub grace: Option<u64>,
    /// A runbook step's run: the console's name for one run of a runbook, so the watcher keeps
    /// what that run's earlier steps found on the host.
    #[serde(default)]
    pub run: Option<String>,
    /// A runbook step's runbook id.
    #[serde(default)]
    pub runbook: Option<String>,
    /// A runbook step's id.
    #[serde(default)]
    pub step: Option<String>,
    /// A runbook step's parameters as typed (name, value).
    #[serde(default)]
    pub params: BTreeMap<String, String>,
    /// A runbook step's command as the console showed it and the user confirmed it: the
    /// watcher runs the command it builds itself, and only when it is this one.
    #[serde(default)]
    pub command: Vec<String>,
}

/// One runbook step asked through the watcher, with who asked.
#[derive(Debug, Clone)]
pub struct StepAsk {
    pub host: String,
    pub run: String,
    pub runbook: String,
    pub step: String,
    pub params: Vec<(String, String)>,
    pub command: Vec<String>,
    pub who: String,
}

/// How a runbook step asked through the watcher ran: its output and status.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stepped {
    pub exit_status: Option<i32>,
    pub timed_out: bool,
    /// Its output, merged, each line free of control characters.
    pub output: Vec<String>,
}

/// A job's stop asked through the watcher, with who asked.
#[derive(Debug, Clone)]
pub struct StopJobAsk {
    pub host: String,
    pub stop: StopJob,
    pub who: String,
}

/// A check asked through the watcher, with who asked.
#[derive(Debug, Clone)]
pub struct CheckAsk {
    pub host: String,
    pub who: String,
}

/// How a stop-job or a check asked through the watcher ended, in the watcher's words (English).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ran {
    /// It ran: what it did (a check: its status word) and, for a check, the report.
    Done {
        said: String,
        report: Option<String>,
    },
    /// Not run (`read_only`, a host the watcher cannot reach by SSH): why.
    Refused(String),
    /// Run, and it failed: why.
    Failed(String),
    /// This watcher runs nothing on hosts (the demo fleet).
    Unavailable,
}

/// What the watcher runs for its consoles, with its own config, tokens and SSH sessions.
pub trait Hands: Send + Sync {
    /// A release, restart or start, by the watcher's release flow.
    fn release(&self, ask: &ReleaseAsk) -> Released;
    /// A job's process stopped: SIGINT, then SIGTERM after its grace period.
    fn stop_job(&self, ask: &StopJobAsk) -> Ran;
    /// The acceptance check of a host, its report rendered as `gpufleet check` prints it.
    fn check(&self, ask: &CheckAsk) -> Ran;
    /// One runbook step, its command built from the watcher's own catalogue.
    fn step(&self, ask: &StepAsk) -> Result<Stepped, Ran>;
}

/// A release asked through the watcher, with who asked (the token's name).
#[derive(Debug, Clone)]
pub struct ReleaseAsk {
    pub host: String,
    pub action: Option<ReleaseAction>,
    /// The name typed in the console's dialog: the release flow checks it as its own.
    pub typed: String,
    pub who: String,
}

/// How a release asked through the watcher ended, with the watcher's words (English).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Released {
    /// The provider accepted it: what it did.
    Accepted(String),
    /// Not sent, or the provider refused it: why.
    Refused(String),
    /// The typed name did not confirm the release: nothing was sent.
    NotConfirmed(String),
    /// Sent but not known to have happened (a timeout, a broken answer): why.
    Failed(String),
    /// This watcher releases nothing (no ledger store, the demo fleet).
    Unavailable,
}

/// The answer: an HTTP status and what it says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Outcome {
    #[serde(skip)]
    pub status: u16,
    /// `done` (a release: the provider accepted it), or what was refused (`unknown_host`,
    /// `not_served`, `not_confirmed`, `refused`, `failed`, `bad_release`).
    pub outcome: String,
    pub action: String,
    pub host: String,
    /// What was done (a release: the provider's acceptance; a check: its status).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub said: Option<String>,
    /// A check's report, as `gpufleet check` prints it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<String>,
    /// A runbook step's exit status (none: killed, timed out or the connection dropped).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_status: Option<i32>,
    /// A runbook step that ran past its timeout.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub timed_out: bool,
    /// A runbook step's output.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub output: Vec<String>,
    /// The watcher's words when it refused or failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One key's outcome: none while its action runs, then the outcome, told to the tries that
/// wait for it.
#[derive(Default)]
struct Keyed {
    outcome: Mutex<Option<Outcome>>,
    done: Condvar,
}

impl Keyed {
    fn finish(&self, outcome: &Outcome) {
        if let Ok(mut kept) = self.outcome.lock() {
            *kept = Some(outcome.clone());
        }
        self.done.notify_all();
    }

    /// The outcome, once the first try of the key has it.
    fn wait(&self, request: &Request) -> Outcome {
        let Ok(mut kept) = self.outcome.lock() else {
            return failed(request, "the watcher's action memory is poisoned".into());
        };
        loop {
            if let Some(outcome) = kept.as_ref() {
                return outcome.clone();
            }
            kept = match self.done.wait(kept) {
                Ok(kept) => kept,
                Err(_) => return failed(request, "the watcher's action memory is poisoned".into()),
            };
        }
    }
}

#[derive(Default)]
struct Remembered {
    by_key: HashMap<String, Arc<Keyed>>,
    order: VecDeque<String>,
    /// One lock a host: its actions run one at a time, other hosts' beside them.
    hosts: HashMap<String, Arc<Mutex<()>>>,
}

/// The actions a watcher runs for its consoles; clones share what they remember.
#[derive(Clone, Default)]
pub struct Actions {
    remembered: Arc<Mutex<Remembered>>,
    hands: Option<Arc<dyn Hands>>,
}

/// Why a request is refused before it is run (400).
#[derive(Debug, PartialEq, Eq)]
pub enum BadRequest {
    NotJson(String),
    BadKey,
}

impl std::fmt::Display for BadRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotJson(why) => write!(f, "not an action request: {why}"),
            Self::BadKey => write!(
                f,
                "the idempotency key must be 1 to {MAX_KEY_BYTES} printable ASCII characters"
            ),
        }
    }
}

/// Reads a request body.
pub fn parse(body: &[u8]) -> Result<Request, BadRequest> {
    let request: Request =
        serde_json::from_slice(body).map_err(|e| BadRequest::NotJson(e.to_string()))?;
    let key_ok = !request.key.is_empty()
        && request.key.len() <= MAX_KEY_BYTES
        && request.key.bytes().all(|b| b.is_ascii_graphic());
    if !key_ok {
        return Err(BadRequest::BadKey);
    }
    Ok(request)
}

impl Actions {
    /// Actions run on hosts by `hands` (none: they are answered 501).
    pub fn new(hands: Option<Arc<dyn Hands>>) -> Self {
        Self {
            remembered: Arc::default(),
            hands,
        }
    }

    /// Runs `request` for `who` unless its key was seen: then the first outcome, not run again
    /// (a retry that comes while the first try runs waits for its outcome). `known` says
    /// whether the watcher watches a host of that name. A host's actions run one at a time;
    /// different hosts' run side by side, so a long check of one host never holds up the
    /// release of another.
    pub fn run(&self, who: &str, request: &Request, known: bool) -> Outcome {
        let (keyed, host, first) = {
            let Ok(mut remembered) = self.remembered.lock() else {
                return failed(request, "the watcher's action memory is poisoned".into());
            };
            let host = Arc::clone(remembered.hosts.entry(request.host.clone()).or_default());
            match remembered.by_key.get(&request.key) {
                Some(keyed) => (Arc::clone(keyed), host, false),
                None => {
                    let keyed = Arc::new(Keyed::default());
                    remembered
                        .by_key
                        .insert(request.key.clone(), Arc::clone(&keyed));
                    remembered.order.push_back(request.key.clone());
                    while remembered.order.len() > REMEMBERED {
                        if let Some(oldest) = remembered.order.pop_front() {
                            remembered.by_key.remove(&oldest);
                        }
                    }
                    // Hosts no longer asked about are forgotten (their lock free).
                    if remembered.hosts.len() > REMEMBERED {
                        remembered
                            .hosts
                            .retain(|_, lock| Arc::strong_count(lock) > 1);
                    }
                    (keyed, host, true)
                }
            }
        };
        if !first {
            return keyed.wait(request);
        }
        let outcome = {
            // A poisoned lock is still held: the host's actions stay one at a time.
            let _turn = host.lock();
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                match request.action.as_str() {
                    "release" | "restart" | "start" => self.release(who, request, known),
                    "stop-job" => self.stop_job(who, request, known),
                    "check" => self.check(who, request, known),
                    "runbook-step" => self.step(who, request, known),
                    _ => execute(who, request, known),
                }
            }))
            // The tries waiting for the key get an answer rather than waiting for ever.
            .unwrap_or_else(|_| failed(request, "the action stopped unexpectedly".into()))
        };
        keyed.finish(&outcome);
        outcome
    }

    fn release(&self, who: &str, request: &Request, known: bool) -> Outcome {
        let Some(hands) = &self.hands else {
            return answer(request, 501, "not_served");
        };
        if !known {
            return answer(request, 404, "unknown_host");
        }
        // A restart or start names itself; a release says which in `release`.
        let action = match (request.action.as_str(), request.release.as_deref()) {
            ("restart", None) => Some(ReleaseAction::Restart),
            ("start", None) => Some(ReleaseAction::Start),
            ("release", None) => None,
            ("release", Some("stop")) => Some(ReleaseAction::Stop),
            ("release", Some("terminate")) => Some(ReleaseAction::Terminate),
            (_, Some(other)) => {
                return Outcome {
                    error: Some(format!(
                        "unknown release action {:?}: stop or terminate",
                        crate::remote::sanitize(other)
                    )),
                    ..answer(request, 400, "bad_release")
                };
            }
            (_, None) => return answer(request, 501, "not_served"),
        };
        let ask = ReleaseAsk {
            host: request.host.clone(),
            action,
            typed: request.confirm.clone().unwrap_or_default(),
            who: who.to_string(),
        };
        let (status, word, said, error) = match hands.release(&ask) {
            Released::Accepted(said) => (200, "done", Some(said), None),
            Released::Refused(why) => (409, "refused", None, Some(why)),
            Released::NotConfirmed(why) => (400, "not_confirmed", None, Some(why)),
            Released::Failed(why) => (502, "failed", None, Some(why)),
            Released::Unavailable => return answer(request, 501, "not_served"),
        };
        Outcome {
            said,
            error,
            ..answer(request, status, word)
        }
    }

    fn stop_job(&self, who: &str, request: &Request, known: bool) -> Outcome {
        let Some(hands) = &self.hands else {
            return answer(request, 501, "not_served");
        };
        if !known {
            return answer(request, 404, "unknown_host");
        }
        let grace = request.grace.unwrap_or(crate::config::DEFAULT_STOP_GRACE_S);
        let stop = match request.pid.map(|pid| StopJob::new(pid, grace)) {
            Some(Ok(stop)) if grace <= MAX_GRACE_S => stop,
            Some(Ok(_)) => {
                return Outcome {
                    error: Some(format!("the grace period is at most {MAX_GRACE_S} s")),
                    ..answer(request, 400, "bad_stop")
                };
            }
            Some(Err(crate::job::stop::StopJobError::BadPid(pid))) => {
                return Outcome {
                    error: Some(format!("process {pid}: not a job's PID")),
                    ..answer(request, 400, "bad_stop")
                };
            }
            None => {
                return Outcome {
                    error: Some("a stop-job names the job's `pid`".to_string()),
                    ..answer(request, 400, "bad_stop")
                };
            }
        };
        let ask = StopJobAsk {
            host: request.host.clone(),
            stop,
            who: who.to_string(),
        };
        ran(request, hands.stop_job(&ask))
    }

    fn check(&self, who: &str, request: &Request, known: bool) -> Outcome {
        let Some(hands) = &self.hands else {
            return answer(request, 501, "not_served");
        };
        if !known {
            return answer(request, 404, "unknown_host");
        }
        let ask = CheckAsk {
            host: request.host.clone(),
            who: who.to_string(),
        };
        ran(request, hands.check(&ask))
    }

    fn step(&self, who: &str, request: &Request, known: bool) -> Outcome {
        let Some(hands) = &self.hands else {
            return answer(request, 501, "not_served");
        };
        if !known {
            return answer(request, 404, "unknown_host");
        }
        let (Some(run), Some(runbook), Some(step)) =
            (&request.run, &request.runbook, &request.step)
        else {
            return Outcome {
                error: Some("a runbook step names its `run`, `runbook` and `step`".to_string()),
                ..answer(request, 400, "bad_step")
            };
        };
        let ask = StepAsk {
            host: request.host.clone(),
            run: run.clone(),
            runbook: runbook.clone(),
            step: step.clone(),
            params: request
                .params
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            command: request.command.clone(),
            who: who.to_string(),
        };
        match hands.step(&ask) {
            Ok(stepped) => Outcome {
                exit_status: stepped.exit_status,
                timed_out: stepped.timed_out,
                output: stepped.output,
                ..answer(request, 200, "done")
            },
            Err(not) => ran(request, not),
        }
    }
}

/// The longest grace period asked: a request holds the watcher's actions while it waits.
const MAX_GRACE_S: u64 = 600;

fn ran(request: &Request, ran: Ran) -> Outcome {
    match ran {
        Ran::Done { said, report } => Outcome {
            said: Some(said),
            report,
            ..answer(request, 200, "done")
        },
        Ran::Refused(why) => Outcome {
            error: Some(why),
            ..answer(request, 409, "refused")
        },
        Ran::Failed(why) => Outcome {
            error: Some(why),
            ..answer(request, 502, "failed")
        },
        Ran::Unavailable => answer(request, 501, "not_served"),
    }
}

fn answer(request: &Request, status: u16, outcome: &str) -> Outcome {
    Outcome {
        status,
        outcome: outcome.to_string(),
        action: request.action.clone(),
        host: request.host.clone(),
        said: None,
        report: None,
        exit_status: None,
        timed_out: false,
        output: Vec::new(),
        error: None,
    }
}

fn failed(request: &Request, error: String) -> Outcome {
    Outcome {
        error: Some(error),
        ..answer(request, 500, "failed")
    }
}

fn execute(who: &str, request: &Request, known: bool) -> Outcome {
    if request.action != "hold" {
        return answer(request, 501, "not_served");
    }
    if !known {
        return answer(request, 404, "unknown_host");
    }
    let at_ms = now_ms();
    let held = HoldStore::open_default()
        .map_err(|e| e.to_string())
        .and_then(|store| store.hold(&request.host, at_ms).map_err(|e| e.to_string()));
    if let Err(e) = held {
        return failed(request, e);
    }
    let entry = AuditEntry {
        at_ms,
        host: request.host.clone(),
        kind: AuditKind::AutoReleaseHold,
        command: format!(
            "gpufleet hold {} (asked by {} through the watcher)",
            crate::remote::sanitize(&request.host),
            crate::remote::sanitize(who)
        ),
        outcome: "requested".to_string(),
        exit_status: None,
        runbook: None,
        step: None,
        dry_run: false,
        simulated: false,
    };
    if let Err(e) = AuditLog::open_default()
        .map_err(|e| e.to_string())
        .and_then(|log| log.append(&entry).map_err(|e| e.to_string()))
    {
        tracing::warn!(host = %request.host, "the hold was recorded, not its audit line: {e}");
    }
    tracing::info!(host = %request.host, by = who, "hold asked through the watcher");
    answer(request, 200, "done")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_repeated_with_its_key_gets_the_first_outcome_without_running_again() {
        let actions = Actions::default();
        let request = parse(br#"{"action":"reboot","host":"a","key":"k-1"}"#).expect("request");
        let first = actions.run("ops", &request, true);
        assert_eq!(first.status, 501);
        // The same key again, even for a host now unknown: the first answer, not a new run.
        assert_eq!(actions.run("ops", &request, false), first);
        let other = parse(br#"{"action":"hold","host":"a","key":"k-2"}"#).expect("request");
        assert_eq!(actions.run("ops", &other, false).status, 404);
    }

    /// Records what it is asked to release; the typed name `a` is accepted.
    #[derive(Default)]
    struct Releasing(Mutex<Vec<(String, Option<ReleaseAction>, String)>>);

    impl Hands for Releasing {
        fn release(&self, ask: &ReleaseAsk) -> Released {
            if let Ok(mut seen) = self.0.lock() {
                seen.push((ask.who.clone(), ask.action, ask.typed.clone()));
            }
            match ask.typed.as_str() {
                "a" => Released::Accepted("stop sent and accepted".into()),
                _ => Released::NotConfirmed("typed the wrong name".into()),
            }
        }
        fn stop_job(&self, _: &StopJobAsk) -> Ran {
            Ran::Unavailable
        }
        fn check(&self, _: &CheckAsk) -> Ran {
            Ran::Unavailable
        }
        fn step(&self, _: &StepAsk) -> Result<Stepped, Ran> {
            Err(Ran::Unavailable)
        }
    }

    #[test]
    fn a_release_runs_once_per_key_and_its_answer_says_what_the_provider_did() {
        let hands = Arc::new(Releasing::default());
        let actions = Actions::new(Some(hands.clone()));
        let asked =
            parse(br#"{"action":"release","host":"a","release":"stop","confirm":"a","key":"r-1"}"#)
                .expect("request");
        let first = actions.run("ops", &asked, true);
        assert_eq!((first.status, first.outcome.as_str()), (200, "done"));
        assert_eq!(first.said.as_deref(), Some("stop sent and accepted"));
        assert_eq!(actions.run("ops", &asked, true), first);
        let wrong = parse(br#"{"action":"release","host":"a","confirm":"b","key":"r-2"}"#)
            .expect("request");
        assert_eq!(actions.run("ops", &wrong, true).status, 400);
        let odd = parse(br#"{"action":"release","host":"a","release":"nuke","key":"r-3"}"#)
            .expect("request");
        assert_eq!(actions.run("ops", &odd, true).outcome, "bad_release");
        let restart = parse(br#"{"action":"restart","host":"a","confirm":"a","key":"r-4"}"#)
            .expect("request");
        assert_eq!(actions.run("ops", &restart, true).status, 200);
        let mixed =
            parse(br#"{"action":"start","host":"a","release":"stop","confirm":"a","key":"r-5"}"#)
                .expect("request");
        assert_eq!(actions.run("ops", &mixed, true).outcome, "bad_release");
        assert_eq!(
            hands.0.lock().map(|r| r.clone()).unwrap_or_default(),
            vec![
                (
                    "ops".to_string(),
                    Some(ReleaseAction::Stop),
                    "a".to_string()
                ),
                ("ops".to_string(), None, "b".to_string()),
                (
                    "ops".to_string(),
                    Some(ReleaseAction::Restart),
                    "a".to_string()
                ),
            ]
        );
        // Without a release flow (the demo fleet), a release is not served.
        let none = Actions::default().run("ops", &asked, true);
        assert_eq!((none.status, none.outcome.as_str()), (501, "not_served"));
    }

    /// Checks that run until told to end, each saying when it started; releases at once.
    struct Slow {
        started: Mutex<std::sync::mpsc::Sender<String>>,
        end: Mutex<std::sync::mpsc::Receiver<()>>,
        checks: std::sync::atomic::AtomicUsize,
    }

    impl Hands for Slow {
        fn release(&self, _: &ReleaseAsk) -> Released {
            Released::Accepted("released".into())
        }
        fn stop_job(&self, _: &StopJobAsk) -> Ran {
            Ran::Unavailable
        }
        fn check(&self, ask: &CheckAsk) -> Ran {
            self.checks
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            if let Ok(started) = self.started.lock() {
                let _ = started.send(ask.host.clone());
            }
            if let Ok(end) = self.end.lock() {
                let _ = end.recv();
            }
            Ran::Done {
                said: "pass".into(),
                report: Some("checked".into()),
            }
        }
        fn step(&self, _: &StepAsk) -> Result<Stepped, Ran> {
            Err(Ran::Unavailable)
        }
    }

    #[test]
    fn a_long_check_holds_up_its_own_host_only_and_its_retry_waits_for_its_outcome() {
        use std::sync::mpsc::channel;
        use std::time::Duration;
        let (started_tx, started) = channel();
        let (end, end_rx) = channel();
        let hands = Arc::new(Slow {
            started: Mutex::new(started_tx),
            end: Mutex::new(end_rx),
            checks: Default::default(),
        });
        let actions = Actions::new(Some(hands.clone()));
        let run = |body: &'static str| {
            let actions = actions.clone();
            let (tx, rx) = channel();
            std::thread::spawn(move || {
                let request = parse(body.as_bytes()).expect("request");
                let _ = tx.send(actions.run("ops", &request, true));
            });
            rx
        };
        let check = run(r#"{"action":"check","host":"a","key":"c-1"}"#);
        assert_eq!(
            started.recv_timeout(Duration::from_secs(5)).ok().as_deref(),
            Some("a")
        );
        // Another host's release is answered while the check runs.
        let release_b =
            run(r#"{"action":"release","host":"b","release":"stop","confirm":"b","key":"r-b"}"#);
        let released = release_b
            .recv_timeout(Duration::from_secs(5))
            .expect("not held up");
        assert_eq!((released.status, released.outcome.as_str()), (200, "done"));
        // The check's retry and a release of the same host wait for the check.
        let retry = run(r#"{"action":"check","host":"a","key":"c-1"}"#);
        let release_a =
            run(r#"{"action":"release","host":"a","release":"stop","confirm":"a","key":"r-a"}"#);
        assert!(retry.recv_timeout(Duration::from_millis(300)).is_err());
        assert!(release_a.recv_timeout(Duration::from_millis(100)).is_err());
        end.send(()).expect("end the check");
        let first = check.recv_timeout(Duration::from_secs(5)).expect("check");
        assert_eq!(first.report.as_deref(), Some("checked"));
        assert_eq!(
            retry.recv_timeout(Duration::from_secs(5)).expect("retry"),
            first
        );
        let released = release_a
            .recv_timeout(Duration::from_secs(5))
            .expect("after it");
        assert_eq!(released.status, 200);
        assert_eq!(hands.checks.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    #[test]
    fn a_stop_job_needs_a_jobs_pid_and_a_bounded_grace_and_a_step_its_names() {
        let actions = Actions::new(Some(Arc::new(Releasing::default())));
        let asked = |body: &str| {
            let request = parse(body.as_bytes()).expect("request");
            let outcome = actions.run("ops", &request, true);
            (outcome.status, outcome.outcome)
        };
        let bad = (400, "bad_stop".to_string());
        assert_eq!(
            asked(r#"{"action":"stop-job","host":"a","pid":1,"key":"s1"}"#),
            bad
        );
        assert_eq!(asked(r#"{"action":"stop-job","host":"a","key":"s2"}"#), bad);
        assert_eq!(
            asked(r#"{"action":"stop-job","host":"a","pid":4242,"grace":601,"key":"s3"}"#),
            bad
        );
        // Well formed: handed to the watcher's hands (which run nothing here).
        assert_eq!(
            asked(r#"{"action":"stop-job","host":"a","pid":4242,"grace":5,"key":"s4"}"#).0,
            501
        );
        assert_eq!(
            asked(r#"{"action":"runbook-step","host":"a","runbook":"power-limit","key":"r1"}"#),
            (400, "bad_step".to_string())
        );
    }

    #[test]
    fn a_request_needs_json_and_a_printable_key() {
        assert!(matches!(parse(b"hold a"), Err(BadRequest::NotJson(_))));
        assert_eq!(
            parse(br#"{"action":"hold","host":"a","key":"two words"}"#).err(),
            Some(BadRequest::BadKey)
        );
        assert_eq!(
            parse(br#"{"action":"hold","host":"a","key":""}"#).err(),
            Some(BadRequest::BadKey)
        );
    }
}
