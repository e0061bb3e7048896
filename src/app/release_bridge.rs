//! The runtime's side of money: stores the ledgers and runs releases for the dialog (plan,
//! backup over SSH, send), on worker threads wherever they may block, reporting back as events.
//! The release flows, and the tokens in them, stay here; the model only gets what can be shown.

use rust_i18n::t;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crate::app::command::Command;
use crate::app::event::Event;
use crate::app::event::EventSink;
use crate::app::release_state::{BackupResult, Confirmation, PlanView, ReleaseEvent};
use crate::audit::AuditLog;
use crate::config::Config;
use crate::cost::{HoldStore, HostCost, LedgerBook, LedgerStore};
use crate::fleet::HostId;
use crate::host_runner::SshRunner;
use crate::release::{
    BackupOutcome, BuildError, FlowError, HostRunner, ReleaseAction, ReleaseFlow, ReleaseRequest,
    SendOptions, StepAnswer, Unattended,
};
use crate::remote::{SshSettings, shell_quote};
use crate::remote_watcher::{Ask, WatcherActions};
use crate::telemetry::source::now_ms;
use crate::ui::format::clean;

/// Looks up the token's environment variable.
pub type EnvLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// Runs the backup (and the `ssh` provider's shutdown) over SSH with the console's own settings.
pub struct SshHostRunner {
    pub ssh: SshSettings,
    pub config: Config,
    pub interval_ms: u64,
}

impl HostRunner for SshHostRunner {
    fn run(
        &self,
        host: &str,
        argv: &[String],
        on_line: &mut dyn FnMut(&str),
    ) -> Result<Option<i32>, String> {
        SshRunner {
            ssh: &self.ssh,
            config: &self.config,
            interval_ms: self.interval_ms,
        }
        .run(host, argv, on_line)
    }
}

/// What the bridge works with; tests give it a temporary state directory and a fake runner.
pub struct BridgeSetup {
    /// The hosts that may be released (none for the demo fleet).
    pub config: Config,
    pub read_only: bool,
    /// `None` when there is no state directory: nothing is saved and nothing released.
    pub store: Option<LedgerStore>,
    pub audit: Option<AuditLog>,
    pub runner: Arc<dyn HostRunner + Send + Sync>,
    pub env: EnvLookup,
    pub send: SendOptions,
    /// Where `gpufleet hold HOST` leaves its requests; `None` takes none.
    pub holds: Option<HoldStore>,
    /// The demo fleet: releases are marked simulated and the simulated provider answers them.
    pub simulated: bool,
    /// Asks the provider accounts' sync for a round soon once a release, restart or start
    /// went out.
    pub sync_soon: crate::providers::SyncSoon,
}

/// A runner for consoles that run nothing on hosts.
struct NoRunner;

impl HostRunner for NoRunner {
    fn run(
        &self,
        host: &str,
        _: &[String],
        _: &mut dyn FnMut(&str),
    ) -> Result<Option<i32>, String> {
        Err(t!("release.no_runner", host = host).into_owned())
    }
}

impl BridgeSetup {
    /// A bridge that stores nothing and releases nothing (no config hosts).
    pub fn inert() -> Self {
        Self {
            config: Config::default(),
            read_only: true,
            store: None,
            audit: None,
            runner: Arc::new(NoRunner),
            env: Arc::new(|_| None),
            send: SendOptions::default(),
            holds: None,
            simulated: false,
            sync_soon: crate::providers::SyncSoon::default(),
        }
    }
}

type SharedFlow = Arc<Mutex<ReleaseFlow>>;

/// Executes the money commands of `update`.
pub struct ReleaseBridge {
    setup: BridgeSetup,
    sink: EventSink,
    flows: HashMap<u64, SharedFlow>,
    saving: Option<JoinHandle<()>>,
    workers: Vec<JoinHandle<()>>,
    /// An attached console's watchers, which run its releases and holds.
    watcher: Option<WatcherActions>,
}

impl ReleaseBridge {
    /// The hosts `gpufleet hold` asked about since the last look (taken from the file), or
    /// why they could not be read; `None` when this console takes no holds.
    pub fn take_holds(&self) -> Option<Result<Vec<String>, String>> {
        let holds = self.setup.holds.as_ref()?;
        Some(
            holds
                .take_all()
                .map(|taken| taken.into_keys().collect())
                .map_err(|e| e.to_string()),
        )
    }

    /// Starts taking `gpufleet hold` requests (this console took auto-release over).
    pub fn set_holds(&mut self, holds: Option<HoldStore>) {
        self.setup.holds = holds;
    }

    /// The hosts that may be released, after the provider inventory was joined again (a
    /// synced host's release is planned and sent from it; a `backup` still runs through the
    /// runner as it was set up).
    pub fn set_config(&mut self, config: Config) {
        self.setup.config = config;
    }

    pub fn new(setup: BridgeSetup, sink: EventSink) -> Self {
        Self {
            setup,
            sink,
            flows: HashMap::new(),
            saving: None,
            workers: Vec::new(),
            watcher: None,
        }
    }

    /// Sends releases and holds to the watchers an attached console follows.
    pub fn set_watcher(&mut self, watcher: Option<WatcherActions>) {
        self.watcher = watcher;
    }

    /// An attached console's stop-job: the watcher stops the job over its own SSH session, and
    /// its answer comes back as the stop's outcome.
    fn stop_job_by_watcher(&mut self, host: String, stop: crate::job::stop::StopJob) {
        let Some(watcher) = self.watcher.clone() else {
            return;
        };
        let sink = self.sink.clone();
        let pid = stop.pid();
        let ask = Ask::StopJob {
            pid,
            grace: stop.grace_s,
        };
        let spawned = std::thread::Builder::new()
            .name("ask-watcher".to_string())
            .spawn(move || {
                let outcome = match watcher.ask_named(&host, &ask) {
                    Ok(answer) => Ok(answer.said.unwrap_or_default()),
                    Err(e) => Err(t!("job_action.stop_failed", pid = pid, why = e).into_owned()),
                };
                let _ = sink.send(Event::JobStopped { host, outcome });
            });
        self.keep_asking(spawned);
    }

    /// Keeps the thread that asks the watcher, or says why none could start.
    fn keep_asking(&mut self, spawned: std::io::Result<JoinHandle<()>>) {
        match spawned {
            Ok(worker) => self.workers.push(worker),
            Err(e) => {
                let _ = self.sink.send(Event::WatcherAnswer {
                    text: t!("attach_action.failed", why = e.to_string()).into_owned(),
                    warning: true,
                });
            }
        }
    }

    /// Asks the watcher on a worker thread; its answer comes back as the dialog's outcome (a
    /// release) or a notice (a hold).
    fn ask_watcher(&mut self, id: u64, host: HostId, ask: Ask) {
        let Some(watcher) = self.watcher.clone() else {
            return;
        };
        let sink = self.sink.clone();
        let spawned = std::thread::Builder::new()
            .name("ask-watcher".to_string())
            .spawn(move || {
                let answered = watcher.ask(host, &ask);
                let event = match (&ask, answered) {
                    (Ask::Release { .. }, Ok(answer)) => Event::Release(ReleaseEvent::Sent {
                        id,
                        answers: answer.said.into_iter().collect(),
                        problems: Vec::new(),
                    }),
                    (Ask::Release { .. }, Err(e)) => Event::Release(ReleaseEvent::SendFailed {
                        id,
                        reason: e.to_string(),
                        answers: Vec::new(),
                    }),
                    (Ask::Hold, Ok(_)) => Event::WatcherAnswer {
                        text: t!("attach_action.held").into_owned(),
                        warning: false,
                    },
                    (Ask::Hold, Err(e)) => Event::WatcherAnswer {
                        text: e.to_string(),
                        warning: true,
                    },
                    // Asked by name (`stop_job`); checks and steps are the ops bridge's.
                    (Ask::StopJob { .. } | Ask::Check | Ask::Step { .. }, _) => return,
                };
                let _ = sink.send(event);
            });
        self.keep_asking(spawned);
    }

    /// Runs one command; the ones that are not about money are ignored.
    pub fn execute(&mut self, command: Command) {
        match command {
            Command::SaveLedgers { book, last } => self.save(book, last),
            Command::PlanRelease {
                id,
                host,
                action,
                fallback,
                cost,
            } => self.plan(id, &host, action, fallback, cost.as_ref()),
            Command::RunBackup { id } => self.backup(id),
            Command::SendRelease {
                id,
                confirmation,
                override_backup,
            } => self.send(id, confirmation, override_backup),
            Command::CancelRelease { id } => {
                self.flows.remove(&id);
            }
            Command::StopJob { host, stop } if self.watcher.is_some() => {
                self.stop_job_by_watcher(host, stop);
            }
            Command::StopJob { host, stop } => {
                let setup = crate::app::stop_job_bridge::StopSetup {
                    runner: &self.setup.runner,
                    audit: self.setup.audit.clone(),
                    read_only: self.setup.read_only,
                    sink: self.sink.clone(),
                };
                if let Some(worker) = crate::app::stop_job_bridge::spawn(setup, host, stop) {
                    self.workers.push(worker);
                }
            }
            Command::DisarmDeadMen { hosts } => {
                crate::app::dead_man_bridge::disarm(&self.setup.runner, &hosts);
            }
            Command::HoldDeadMan { host } => {
                let plan = self
                    .setup
                    .config
                    .host(&host)
                    .and_then(|h| h.dead_man_plan());
                let runner = &self.setup.runner;
                let sink = self.sink.clone();
                if let Some(worker) = crate::app::dead_man_bridge::hold(runner, host, plan, sink) {
                    self.workers.push(worker);
                }
            }
            Command::AskWatcher { id, host, ask } => self.ask_watcher(id, host, ask),
            // Runbooks, checks and the audit log are the ops bridge's.
            _ => {}
        }
    }

    /// Waits for the worker threads still running (tests; the console exits without waiting
    /// for a backup).
    pub fn join_workers(&mut self) {
        for worker in self.workers.drain(..) {
            let _ = worker.join();
        }
        if let Some(saving) = self.saving.take() {
            let _ = saving.join();
        }
    }

    fn report(&self, event: ReleaseEvent) {
        // The loop is gone only when the console is quitting.
        let _ = self.sink.send(Event::Release(event));
    }

    fn save(&mut self, book: LedgerBook, last: bool) {
        let Some(store) = self.setup.store.clone() else {
            let _ = self
                .sink
                .send(Event::LedgersSaved(Err(t!("ops.no_state").into_owned())));
            return;
        };
        let previous = self.saving.take();
        if last {
            // The final save must land after any periodic one still writing.
            if let Some(previous) = previous {
                let _ = previous.join();
            }
            let _ = store.save_merging(&book);
            return;
        }
        if let Some(previous) = previous {
            if !previous.is_finished() {
                // The disk is slow: skip this round, the next one carries the same data.
                self.saving = Some(previous);
                return;
            }
            let _ = previous.join();
        }
        let sink = self.sink.clone();
        let spawned = std::thread::Builder::new()
            .name("ledger-save".to_string())
            .spawn(move || {
                let saved = store.save_merging(&book).map_err(|e| e.to_string());
                let _ = sink.send(Event::LedgersSaved(saved));
            });
        match spawned {
            Ok(handle) => self.saving = Some(handle),
            Err(e) => {
                let _ = self.sink.send(Event::LedgersSaved(Err(t!(
                    "release.no_save_thread",
                    error = e
                )
                .into_owned())));
            }
        }
    }

    fn plan(
        &mut self,
        id: u64,
        host: &str,
        action: ReleaseAction,
        fallback: bool,
        cost: Option<&HostCost>,
    ) {
        let setup = &self.setup;
        if setup.store.is_none() || setup.audit.is_none() {
            self.report(ReleaseEvent::PlanFailed {
                id,
                reason: t!("release.no_state").into_owned(),
            });
            return;
        }
        let start = |action| {
            ReleaseFlow::start(
                &setup.config,
                host,
                Some(action),
                setup.read_only,
                cost,
                &*setup.env,
            )
        };
        let mut started = start(action);
        if fallback
            && matches!(
                started,
                Err(FlowError::Build(
                    BuildError::NoStop { .. } | BuildError::NoTerminate
                ))
            )
            && let Some(other) = other(action)
        {
            started = start(other);
        }
        match started {
            Ok(mut flow) => {
                if setup.simulated {
                    flow.simulate();
                }
                let plan = plan_view(&flow, &setup.config);
                self.flows.insert(id, Arc::new(Mutex::new(flow)));
                self.report(ReleaseEvent::Planned { id, plan });
            }
            Err(e) => self.report(ReleaseEvent::PlanFailed {
                id,
                reason: clean(&e.words().localized()),
            }),
        }
    }

    fn backup(&mut self, id: u64) {
        let (Some(flow), Some(audit)) = (self.flows.get(&id).cloned(), self.setup.audit.clone())
        else {
            return self.report(ReleaseEvent::BackupDone {
                id,
                result: BackupResult::Failed(t!("release.gone").into_owned()),
            });
        };
        let runner = Arc::clone(&self.setup.runner);
        let sink = self.sink.clone();
        self.spawn("release-backup", id, move || {
            let Ok(mut flow) = flow.lock() else {
                return ReleaseEvent::BackupDone {
                    id,
                    result: BackupResult::Failed(t!("release.state_lost").into_owned()),
                };
            };
            let mut on_line = |line: &str| {
                let _ = sink.send(Event::Release(ReleaseEvent::BackupLine {
                    id,
                    line: line.to_string(),
                }));
            };
            let result = match flow.run_backup(&*runner, &audit, now_ms(), &mut on_line) {
                Ok(BackupOutcome::Succeeded) => BackupResult::Succeeded,
                Ok(BackupOutcome::NotConfigured) => BackupResult::NotConfigured,
                Ok(BackupOutcome::Failed(why)) => BackupResult::Failed(why.clone()),
                Err(e) => BackupResult::Failed(clean(&e.words().localized())),
            };
            ReleaseEvent::BackupDone { id, result }
        });
    }

    fn send(&mut self, id: u64, confirmation: Confirmation, override_backup: bool) {
        let (Some(flow), Some(store), Some(audit)) = (
            self.flows.get(&id).cloned(),
            self.setup.store.clone(),
            self.setup.audit.clone(),
        ) else {
            return self.report(ReleaseEvent::SendFailed {
                id,
                reason: t!("release.gone_nothing_sent").into_owned(),
                answers: Vec::new(),
            });
        };
        let runner = Arc::clone(&self.setup.runner);
        let options = self.setup.send;
        let sync_soon = self.setup.sync_soon.clone();
        self.spawn("release-send", id, move || {
            let failed = |reason: String, answers| ReleaseEvent::SendFailed {
                id,
                reason,
                answers,
            };
            let Ok(mut flow) = flow.lock() else {
                return failed(t!("release.state_lost").into_owned(), Vec::new());
            };
            if override_backup {
                flow.override_failed_backup();
            }
            match confirmation {
                Confirmation::Typed(typed) => {
                    if let Err(e) = flow.confirm(&typed) {
                        return failed(
                            t!("release.nothing_sent", error = e.words().localized()).into_owned(),
                            Vec::new(),
                        );
                    }
                }
                Confirmation::Unattended => flow.confirm_unattended(Unattended::AutoRelease),
            }
            let sent = flow.send(&*runner, &options, &store, &audit, now_ms());
            // What went out shows in the inventory at the next round, asked for soon.
            if matches!(sent, Ok(_) | Err(FlowError::Send { .. })) {
                sync_soon.ask();
            }
            match sent {
                Ok(report) => ReleaseEvent::Sent {
                    id,
                    answers: report.answers.iter().map(answer_line).collect(),
                    problems: report.problems.iter().map(|p| clean(p)).collect(),
                },
                Err(FlowError::Send { failure, audit }) => {
                    let mut reason = clean(&failure.error.words().localized());
                    if let Some(why) = audit {
                        reason.push_str(&t!("release.audit_unwritten", why = clean(&why)));
                    }
                    failed(reason, failure.done.iter().map(answer_line).collect())
                }
                Err(e) => failed(clean(&e.words().localized()), Vec::new()),
            }
        });
    }

    /// Runs `work` on a thread of its own and reports what it returns.
    fn spawn(&mut self, name: &str, id: u64, work: impl FnOnce() -> ReleaseEvent + Send + 'static) {
        let sink = self.sink.clone();
        let spawned = std::thread::Builder::new()
            .name(name.to_string())
            .spawn(move || {
                let _ = sink.send(Event::Release(work()));
            });
        match spawned {
            Ok(handle) => {
                self.workers.retain(|w| !w.is_finished());
                self.workers.push(handle);
            }
            Err(e) => self.report(ReleaseEvent::SendFailed {
                id,
                reason: t!("release.no_worker", error = e).into_owned(),
                answers: Vec::new(),
            }),
        }
    }
}

/// The release action the dialog can switch to; a restart or start has none.
fn other(action: ReleaseAction) -> Option<ReleaseAction> {
    match action {
        ReleaseAction::Stop => Some(ReleaseAction::Terminate),
        ReleaseAction::Terminate => Some(ReleaseAction::Stop),
        ReleaseAction::Restart | ReleaseAction::Start => None,
    }
}

fn answer_line(answer: &StepAnswer) -> String {
    let status = answer.status.map(|s| format!(" {s}")).unwrap_or_default();
    clean(&format!("{}:{status} {}", answer.step, answer.text))
}

/// What the dialog shows of a planned flow, all of it sanitized.
fn plan_view(flow: &ReleaseFlow, config: &Config) -> PlanView {
    let plan = flow.plan();
    let other_action = other(plan.action);
    let release = config
        .host(&plan.host)
        .and_then(|host| host.release.as_ref());
    let other_action = other_action.filter(|&other| {
        release
            .is_some_and(|release| ReleaseRequest::build(&plan.host, release, other, None).is_ok())
    });
    PlanView {
        provider: if plan.simulated {
            t!("release.simulated", provider = plan.provider.as_str()).into_owned()
        } else {
            plan.provider.as_str().to_string()
        },
        instance_id: plan.instance_id.as_deref().map(clean),
        action: plan.action,
        effect: crate::release::effect_words(plan.provider, plan.action).localized(),
        backup: plan.backup.as_ref().map(|argv| {
            clean(
                &argv
                    .iter()
                    .map(|word| shell_quote(word))
                    .collect::<Vec<_>>()
                    .join(" "),
            )
        }),
        request: plan
            .request
            .shown(&plan.host)
            .iter()
            .map(|line| clean(line))
            .collect(),
        warnings: plan.warnings.iter().map(|w| clean(w)).collect(),
        token_problem: plan.token_problem.as_deref().map(clean),
        other_action,
    }
}
