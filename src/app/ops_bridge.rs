//! The runtime's side of acting on hosts: runs runbooks (see `runbook_bridge`) and checks on
//! worker threads, keeps each check's report, and reads the audit log for its view, reporting
//! back as events. Where each host is (this machine or an SSH host) is known only here.

use rust_i18n::t;

use std::collections::HashMap;
use std::path::PathBuf;
use std::thread::JoinHandle;

use crate::app::check_run::{CheckEvent, done_event};
use crate::app::command::Command;
use crate::app::event::Event;
use crate::app::event::EventSink;
use crate::app::runbook_bridge::{RunHandle, RunSpec, spawn_run};
use crate::app::runbook_run::RunbookEvent;
use crate::audit::AuditLog;
use crate::check::storage::{load_latest_under, save_under};
use crate::check::{
    CheckError, CheckOptions, CheckProgress, CheckTarget, ExpectFlags, Status, expect_from_flags,
    run_check,
};
use crate::config::Expect;
use crate::fleet::HostId;
use crate::remote::{LinkOptions, RemoteHost};
use crate::remote_watcher::{Ask, WatcherActions};
use crate::runbook::{Runbook, Target};
use crate::telemetry::source::StopFlag;
use crate::ui::format::clean;

/// Where the console's hosts are.
#[derive(Debug, Clone, Default)]
pub enum OpsFleet {
    /// Simulated: nothing runs.
    #[default]
    Demo,
    /// This machine.
    Local,
    /// SSH hosts, in the model's host order.
    Ssh {
        hosts: Vec<RemoteHost>,
        link: LinkOptions,
    },
    /// The demo fleet, in the model's host order: where each host's runbooks run and its check
    /// (or why it has none); the simulator answers, nothing runs anywhere.
    Simulated {
        runbooks: Vec<Target>,
        checks: Vec<Result<CheckTarget, String>>,
    },
}

/// What the ops bridge works with; tests give it temporary directories.
#[derive(Debug, Clone, Default)]
pub struct OpsSetup {
    pub fleet: OpsFleet,
    /// What each configured host was rented as, by host name.
    pub expects: HashMap<String, Expect>,
    /// `None` without a state directory: no runbook runs (every step must be audited).
    pub audit: Option<AuditLog>,
    /// Where check reports are kept; `None` keeps none.
    pub checks_dir: Option<PathBuf>,
    pub check: CheckOptions,
    /// What `e` writes incident reports with; `None` where there is nothing to report on (a
    /// replay).
    pub report: Option<ReportSetup>,
    /// An attached console's watchers: its checks run there, on the watcher's SSH sessions.
    pub watcher: Option<WatcherActions>,
}

/// The config (prices, secrets to scrub) and which black box the console's reports read.
#[derive(Debug, Clone)]
pub struct ReportSetup {
    pub config: crate::config::Config,
    pub demo: bool,
}

/// Executes the runbook, check and audit-log commands of `update`.
pub struct OpsBridge {
    setup: OpsSetup,
    sink: EventSink,
    runs: HashMap<u64, RunHandle>,
    checks: HashMap<u64, StopFlag>,
    workers: Vec<JoinHandle<()>>,
}

impl OpsBridge {
    pub fn new(setup: OpsSetup, sink: EventSink) -> Self {
        Self {
            setup,
            sink,
            runs: HashMap::new(),
            checks: HashMap::new(),
            workers: Vec::new(),
        }
    }

    /// Runs one command; the ones that are not about runbooks, checks or the audit log are
    /// ignored.
    pub fn execute(&mut self, command: Command) {
        match command {
            Command::StartRunbook {
                id,
                host,
                runbook,
                params,
                read_only,
            } => self.start_runbook(id, host, *runbook, params, read_only),
            Command::AnswerStep { id, confirmed } => {
                if let Some(run) = self.runs.get(&id) {
                    let _ = run.answers.send(confirmed);
                }
            }
            Command::StopRunbook { id } => {
                if let Some(run) = self.runs.remove(&id) {
                    run.stop.set();
                }
            }
            Command::StartCheck { id, host } => self.start_check(id, host),
            Command::StopCheck { id } => {
                if let Some(stop) = self.checks.remove(&id) {
                    stop.set();
                }
            }
            Command::LoadAudit => self.load_audit(),
            Command::WriteReport { host } => self.write_report(host),
            _ => {}
        }
    }

    /// Writes `host`'s incident bundle (the last two hours, into the current directory) on a
    /// worker thread.
    fn write_report(&mut self, host: String) {
        if let Some(watcher) = self.setup.watcher.clone() {
            return self.write_watchers_report(host, watcher);
        }
        let Some(setup) = self.setup.report.clone() else {
            self.report(Event::ReportWritten(Err(
                t!("ops.no_black_box").into_owned()
            )));
            return;
        };
        let sink = self.sink.clone();
        let worker = std::thread::Builder::new()
            .name("gpufleet-report".to_string())
            .spawn(move || {
                let request = crate::report::write::Request {
                    host,
                    since_ms: 2 * 3_600_000,
                    out: None,
                    from: None,
                    demo: setup.demo,
                };
                let written = crate::report::write::write(
                    &request,
                    &setup.config,
                    crate::telemetry::source::now_ms(),
                )
                .map(|w| format!("{} · {}", w.dir.display(), w.summary))
                .map_err(|e| e.to_string());
                let _ = sink.send(Event::ReportWritten(written));
            });
        match worker {
            Ok(worker) => self.keep(worker),
            Err(e) => self.report(Event::ReportWritten(Err(e.to_string()))),
        }
    }

    /// An attached console's `e`: the watcher makes the host's bundle from what it recorded
    /// (the last two hours), written into the current directory here, on a worker thread.
    fn write_watchers_report(&mut self, host: String, watcher: WatcherActions) {
        let config = self.setup.report.as_ref().map(|setup| setup.config.clone());
        let sink = self.sink.clone();
        let worker = std::thread::Builder::new()
            .name("gpufleet-report".to_string())
            .spawn(move || {
                // The secrets' files are read here, not on the console's loop.
                let known = config
                    .map(|config| {
                        crate::report::secrets::known(&config, &crate::release::process_env)
                    })
                    .unwrap_or_default();
                let written = watcher
                    .report_named(&host, 2 * 3_600_000, &known)
                    .map_err(|e| e.to_string())
                    .and_then(|fetched| {
                        let made = fetched.made;
                        crate::report::bundle::write_files(
                            &made.host,
                            &made.files,
                            std::path::Path::new("."),
                        )
                        .map(|dir| format!("{} · {}", dir.display(), made.summary()))
                        .map_err(|e| e.to_string())
                    });
                let _ = sink.send(Event::ReportWritten(written));
            });
        match worker {
            Ok(worker) => self.keep(worker),
            Err(e) => self.report(Event::ReportWritten(Err(e.to_string()))),
        }
    }

    /// Waits for the worker threads still running (tests).
    pub fn join_workers(&mut self) {
        for worker in self.workers.drain(..) {
            let _ = worker.join();
        }
    }

    fn keep(&mut self, worker: JoinHandle<()>) {
        self.workers.retain(|w| !w.is_finished());
        self.workers.push(worker);
    }

    fn report(&self, event: Event) {
        // The loop is gone only when the console is quitting.
        let _ = self.sink.send(event);
    }

    fn remote(&self, host: HostId) -> Result<(RemoteHost, LinkOptions), String> {
        match &self.setup.fleet {
            OpsFleet::Ssh { hosts, link } => hosts
                .get(host)
                .map(|h| (h.clone(), link.clone()))
                .ok_or_else(|| t!("ops.no_host", host = host).into_owned()),
            _ => Err(t!("ops.not_ssh").into_owned()),
        }
    }

    fn start_runbook(
        &mut self,
        id: u64,
        host: HostId,
        runbook: Runbook,
        params: Vec<(String, String)>,
        read_only: bool,
    ) {
        let refuse = |text: &str| {
            Event::Runbook(RunbookEvent::Finished {
                id,
                text: t!("ops.not_started", why = text).into_owned(),
                good: false,
            })
        };
        // An attached console's steps run on the watcher (the target here only says there is
        // no provider to restart through).
        let watcher = self.setup.watcher.clone().map(|watcher| {
            let name = watcher.shown(host).unwrap_or_default();
            (watcher, host, name)
        });
        let target = match &self.setup.fleet {
            _ if watcher.is_some() => Ok(Target::Local),
            OpsFleet::Demo => Err(t!("ops.demo_simulated").into_owned()),
            OpsFleet::Local => Ok(Target::Local),
            OpsFleet::Ssh { .. } => self.remote(host).map(|(h, l)| Target::Remote(h, l)),
            OpsFleet::Simulated { runbooks, .. } => runbooks
                .get(host)
                .cloned()
                .ok_or_else(|| t!("ops.no_host", host = host).into_owned()),
        };
        let target = match target {
            Ok(target) => target,
            Err(why) => return self.report(refuse(&why)),
        };
        let Some(audit) = self.setup.audit.clone() else {
            return self.report(refuse(&t!("ops.no_state_audit")));
        };
        let release = match &target {
            Target::Remote(remote, _) => self
                .setup
                .report
                .as_ref()
                .and_then(|r| r.config.host(&remote.name))
                .and_then(|h| h.release.clone()),
            _ => None,
        };
        let spec = RunSpec {
            id,
            target,
            runbook,
            params,
            read_only,
            audit,
            release,
            watcher,
        };
        match spawn_run(spec, self.sink.clone()) {
            Ok((handle, worker)) => {
                self.runs.retain(|_, run| !run.stop.is_set());
                self.runs.insert(id, handle);
                self.keep(worker);
            }
            Err(e) => self.report(refuse(&t!("ops.no_worker", error = e))),
        }
    }

    /// An attached console's check: the watcher runs it and answers with the finished report;
    /// meanwhile the pane says it runs on the watcher.
    fn check_by_watcher(&mut self, id: u64, host: HostId, watcher: WatcherActions) {
        self.report(Event::Check(CheckEvent::Progress {
            id,
            phase: t!("watcher_actions.check_phase").into_owned(),
            fraction: 0.0,
            message: t!("watcher_actions.check_running").into_owned(),
            reading: None,
        }));
        let sink = self.sink.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("check-{id}"))
            .spawn(move || {
                let event = match watcher.ask(host, &Ask::Check) {
                    Ok(answer) => CheckEvent::Done {
                        id,
                        status: match answer.said.as_deref() {
                            Some("pass") => Status::Pass,
                            Some("skip") => Status::Skip,
                            Some("warn") => Status::Warn,
                            _ => Status::Fail,
                        },
                        report: answer.report.unwrap_or_default(),
                        previous: None,
                        note: Some(t!("watcher_actions.check_kept").into_owned()),
                    },
                    Err(e) => CheckEvent::Failed {
                        id,
                        reason: e.to_string(),
                    },
                };
                let _ = sink.send(Event::Check(event));
            });
        match spawned {
            Ok(worker) => self.keep(worker),
            Err(e) => self.report(Event::Check(CheckEvent::Failed {
                id,
                reason: t!("ops.no_worker", error = e).into_owned(),
            })),
        }
    }

    fn start_check(&mut self, id: u64, host: HostId) {
        if let Some(watcher) = self.setup.watcher.clone() {
            return self.check_by_watcher(id, host, watcher);
        }
        let failed = |reason: String| Event::Check(CheckEvent::Failed { id, reason });
        let target = match &self.setup.fleet {
            OpsFleet::Demo => Err(t!("ops.demo_simulated").into_owned()),
            OpsFleet::Local => Ok((CheckTarget::Local, None)),
            OpsFleet::Ssh { .. } => self.remote(host).map(|(h, l)| {
                let expect = self.setup.expects.get(&h.name).cloned();
                (CheckTarget::Remote(h, l), expect)
            }),
            OpsFleet::Simulated { checks, .. } => match checks.get(host) {
                Some(Ok(target)) => Ok((target.clone(), None)),
                Some(Err(why)) => Err(why.clone()),
                None => Err(t!("ops.no_host", host = host).into_owned()),
            },
        };
        let (target, base) = match target {
            Ok(found) => found,
            Err(why) => return self.report(failed(why)),
        };
        let expect = match expect_from_flags(&ExpectFlags::default(), base.as_ref()) {
            Ok(expect) => expect,
            Err(e) => return self.report(failed(clean(&e.to_string()))),
        };
        let stop = StopFlag::default();
        let worker_stop = stop.clone();
        let sink = self.sink.clone();
        let options = self.setup.check.clone();
        let root = self.setup.checks_dir.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("check-{id}"))
            .spawn(move || {
                let progress_sink = sink.clone();
                let mut progress = |p: CheckProgress| {
                    let _ = progress_sink.send(Event::Check(CheckEvent::Progress {
                        id,
                        phase: p.phase.label(),
                        fraction: p.fraction,
                        message: p.message,
                        reading: p.reading,
                    }));
                };
                let event = match run_check(target, &expect, &options, &mut progress, &worker_stop)
                {
                    Ok(report) => {
                        let (previous, note) = match &root {
                            Some(root) => {
                                let previous = load_latest_under(root, &report.host).ok().flatten();
                                let note = match save_under(root, &report) {
                                    Ok(path) => {
                                        t!("ops.kept_in", path = path.display()).into_owned()
                                    }
                                    Err(e) => t!("ops.not_kept", error = e).into_owned(),
                                };
                                (previous, note)
                            }
                            None => (None, t!("ops.not_kept_no_state").into_owned()),
                        };
                        done_event(id, &report, previous.as_ref(), Some(note))
                    }
                    Err(CheckError::Stopped) => CheckEvent::Failed {
                        id,
                        reason: t!("ops.check_cancelled").into_owned(),
                    },
                    Err(e) => CheckEvent::Failed {
                        id,
                        reason: clean(&e.words().localized()),
                    },
                };
                let _ = sink.send(Event::Check(event));
            });
        match spawned {
            Ok(worker) => {
                self.checks.insert(id, stop);
                self.keep(worker);
            }
            Err(e) => self.report(failed(t!("ops.no_worker", error = e).into_owned())),
        }
    }

    fn load_audit(&mut self) {
        let Some(audit) = self.setup.audit.clone() else {
            return self.report(Event::AuditLoaded(Err(t!("ops.no_state").into_owned())));
        };
        let sink = self.sink.clone();
        let spawned = std::thread::Builder::new()
            .name("audit-read".to_string())
            .spawn(move || {
                let read = audit.read_all().map_err(|e| clean(&e.to_string()));
                let _ = sink.send(Event::AuditLoaded(read));
            });
        match spawned {
            Ok(worker) => self.keep(worker),
            Err(e) => self.report(Event::AuditLoaded(Err(
                t!("ops.no_worker", error = e).into_owned()
            ))),
        }
    }
}

impl Drop for OpsBridge {
    /// The console is quitting: every step and check still running is stopped.
    fn drop(&mut self) {
        for run in self.runs.values() {
            run.stop.set();
        }
        for stop in self.checks.values() {
            stop.set();
        }
    }
}
