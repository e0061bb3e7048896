//! `gpufleet watch`: the fleet with no one at the terminal. The same sources and engine as the
//! console (findings, ledgers, red lines), driven by a loop that logs structured lines on
//! stderr, saves the ledgers, sends alerts and serves `/metrics`. SIGINT and SIGTERM end it
//! cleanly (streams closed, ledgers saved, within two seconds): exit 0 after SIGTERM, 130 after
//! SIGINT (Ctrl-C), as every command.

mod asked;
mod release;
mod reload;
pub mod serve;
mod signals;
mod stop_job;

use std::sync::Arc;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use crate::alerts::{
    Alert, AlertBook, AlertState, DeliveryEvent, DeliveryOptions, Dispatcher, Money, Reporter, Sink,
};
use crate::cost::{HoldStore, LedgerStore};
use crate::diagnose::Severity;
use crate::duty::{Duties, DutyNote};
use crate::fleet::{Fleet, FleetCommand, FleetOptions, HostEvent, HostId, HostSink};
use crate::metrics::{MetricsBridge, MetricsServer, render};
use crate::recording::Recorder;
use crate::telemetry::source::{Backlogs, SourceHandle, now_ms};

pub use release::ReleaseSetup;
use reload::Why;
pub use reload::{Changes, LiveHosts, Reloaded, Reloader, Running, WatchedHost};
pub use signals::Signal;

/// How often the engine ticks: findings, ledgers, red lines, alerts.
const TICK: Duration = Duration::from_secs(1);
/// How long the sources get to close their streams at the end.
const STOP_WAIT: Duration = Duration::from_millis(1_200);
/// How long queued alerts get to go out at the end.
const ALERTS_WAIT: Duration = Duration::from_millis(500);

/// What wakes the loop.
// Samples are most of the traffic and are moved, not copied, through the channel (as in the
// console's `Event`); boxing them would cost an allocation per GPU per tick.
#[allow(clippy::large_enum_variant)]
pub enum Input {
    Host(HostId, HostEvent),
    /// A burst of one host's events read at once (a reading of each GPU), in order.
    Hosts(HostId, Vec<HostEvent>),
    Signal(Signal),
    /// A scrape waits for a page.
    Scrape,
    /// An automatic release ended: what the provider did, or why it did not happen.
    Released {
        host: String,
        outcome: Result<crate::words::Words, crate::words::Words>,
    },
    /// A provider account was synced: its inventory is joined to the fleet again.
    InventorySynced,
    /// A release, restart or start a console asked through the watcher went out (the
    /// provider's words), or was sent without being known to have happened (why): alerted,
    /// and the ledger a release closed adopted.
    ReleasedOnRequest {
        host: String,
        /// Who asked: the token's name.
        who: String,
        action: Option<crate::release::ReleaseAction>,
        outcome: Result<String, String>,
    },
    /// A job that stopped learning was stopped (`on_plateau = "stop-job"`), or why not.
    JobStopped {
        host: String,
        outcome: Result<crate::words::Words, crate::words::Words>,
    },
}

/// Starts the provider accounts' background sync, handed what to call after each account
/// synced; what it returns is stopped when the watcher ends.
pub type StartSync =
    Box<dyn FnOnce(Box<dyn Fn() + Send>) -> Option<crate::providers::BackgroundSync>>;

#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    #[error(transparent)]
    Metrics(#[from] crate::metrics::ServeError),
    #[error(transparent)]
    Serve(crate::watch::serve::SetupError),
    /// `what`: the catalogue key of what could not start.
    #[error("{}", start_words(.what, .source))]
    Start {
        what: &'static str,
        source: std::io::Error,
    },
    #[error("{}", rust_i18n::t!("watch_error.sources", why = .0))]
    Sources(String),
}

fn start_words(what: &str, source: &std::io::Error) -> String {
    rust_i18n::t!(
        "watch_error.start",
        what = rust_i18n::t!(what),
        error = source
    )
    .into_owned()
}

/// Where the hosts' events come from.
pub enum Sources {
    /// Started once for the whole fleet (the demo fleet, this machine): nothing to reload.
    Fixed(Box<dyn FnOnce(HostSink) -> Result<Vec<SourceHandle>, String>>),
    /// The configured hosts, each started on its own, so SIGHUP can add and remove hosts.
    PerHost {
        hosts: Vec<WatchedHost>,
        reloader: Box<dyn Reloader>,
    },
}

/// Everything the watcher runs with, checked before anything connects.
pub struct Setup {
    /// `--record FILE` and the black box: every host event is handed to it.
    pub recorder: Option<Recorder>,
    pub host_names: Vec<String>,
    pub options: FleetOptions,
    /// Where ledgers are stored; `None` keeps them in memory (the demo fleet).
    pub store: Option<LedgerStore>,
    pub sinks: Vec<Sink>,
    pub metrics: Option<crate::metrics::Endpoint>,
    /// `--serve ADDR`: the fleet's event stream for attached consoles.
    pub serve: Option<crate::watch::serve::ServeEndpoint>,
    /// What the served `report` bundles are made with (a reload gives it the new config).
    pub reports: crate::watch::serve::Reports,
    pub unreachable_after_ms: u64,
    /// How hosts are released automatically; `None` releases nothing (the demo fleet).
    pub release: Option<ReleaseSetup>,
    /// The provider accounts' background sync, when the config has accounts.
    pub sync: Option<StartSync>,
    /// Asks that sync for a round soon, once a release, restart or start went out.
    pub sync_soon: crate::providers::SyncSoon,
}

/// Runs until SIGINT or SIGTERM; returns the name of the signal that stopped it.
pub fn run(setup: Setup, sources: Sources) -> Result<&'static str, WatchError> {
    let (tx, rx) = mpsc::channel::<Input>();
    signals::forward(tx.clone()).map_err(|source| WatchError::Start {
        what: "watch_error.signal_handler",
        source,
    })?;
    let bridge = MetricsBridge::default();
    let scrape_tx = tx.clone();
    let wake: Arc<dyn Fn() + Send + Sync> = Arc::new(move || {
        let _ = scrape_tx.send(Input::Scrape);
    });
    let mut server = match &setup.metrics {
        Some(endpoint) => {
            let server = MetricsServer::start(
                &endpoint.listen,
                endpoint.access.clone(),
                bridge.clone(),
                Arc::clone(&wake),
            )?;
            tracing::info!(addr = %server.addr, "serving /metrics");
            Some(server)
        }
        None => None,
    };
    let mut fleet = Fleet::new(setup.host_names.clone(), setup.options.clone(), now_ms());
    resume_ledgers(&mut fleet, setup.store.as_ref());
    // One process auto-releases hosts and one sends alerts: the first console or watcher to
    // take each lock; the others take over when it stops.
    let (mut duties, notes) = Duties::start(
        "gpufleet watch",
        &mut fleet,
        setup.release.is_some(),
        !setup.sinks.is_empty(),
    );
    log_duties(notes);
    let mut release = setup.release;
    let mut have_sinks = !setup.sinks.is_empty();
    let mut dispatcher = start_alerts(setup.sinks);
    let released_tx = tx.clone();
    let synced_tx = std::sync::Mutex::new(tx.clone());
    let provider_sync = setup.sync.and_then(|start| {
        start(Box::new(move || {
            if let Ok(tx) = synced_tx.lock() {
                let _ = tx.send(Input::InventorySynced);
            }
        }))
    });
    let recorder = setup.recorder;
    let bursts = tx.clone();
    let sink = HostSink::from_sender(tx, Input::Host)
        .with_bursts(move |host, events| bursts.send(Input::Hosts(host, events)).is_ok());
    let sink = match &recorder {
        Some(recorder) => recorder.wrap(sink),
        None => sink,
    };
    let hub = crate::watch::serve::Hub::new(setup.host_names.clone());
    // What a console's release asked through the watcher runs with, kept as reloads change it.
    let asked_release = Arc::new(std::sync::Mutex::new(release.clone()));
    let (sink, serving) = match &setup.serve {
        Some(endpoint) => {
            let hands = Arc::new(asked::Asked::new(
                Arc::clone(&asked_release),
                released_tx.clone(),
            ));
            (
                hub.wrap(sink),
                Some(
                    crate::watch::serve::start(
                        endpoint,
                        hub.clone(),
                        Some(hands),
                        setup.reports.clone(),
                    )
                    .map_err(WatchError::Serve)?,
                ),
            )
        }
        None => (sink, None),
    };
    let mut fixed = Vec::new();
    let mut running: reload::Running = Vec::new();
    let mut reloader = None;
    match sources {
        Sources::Fixed(start) => fixed = start(sink.clone()).map_err(WatchError::Sources)?,
        Sources::PerHost { hosts, reloader: r } => {
            for (id, host) in hosts.into_iter().enumerate() {
                let handle = r
                    .start(&host, id, sink.clone())
                    .map_err(WatchError::Sources)?;
                running.push(Some((host, handle)));
            }
            // The money nobody watches is alerted from the start, not only after a sync.
            fleet.unwatched = r.unwatched();
            reloader = Some(r);
        }
    }
    // Each link holds back its samples (newest per GPU) once this many of its events wait, so a
    // loop held up (a slow disk under the ledger) never queues without bound.
    let mut backlogs = Backlogs::arm(&fixed);
    for (_, handle) in running.iter().flatten() {
        backlogs.add(handle);
    }
    tracing::info!(hosts = fleet.hosts.len(), "watching");
    let mut firing = AlertBook::new(setup.unreachable_after_ms);
    let mut next_tick = Instant::now();
    let mut start_up_pages = crate::start_up_pages::StartUpPages::new();
    let stopped_by;
    loop {
        let wait = next_tick.saturating_duration_since(Instant::now());
        let mut reloaded = None;
        match rx.recv_timeout(wait) {
            Ok(Input::Host(host, event)) => {
                backlogs.taken(host);
                fleet.apply(host, event);
            }
            Ok(Input::Hosts(host, events)) => {
                backlogs.taken(host);
                for event in events {
                    fleet.apply(host, event);
                }
            }
            Ok(Input::Signal(Signal::Stop(name))) => {
                tracing::info!(signal = name, "stopping");
                stopped_by = name;
                break;
            }
            Ok(Input::Signal(Signal::Reload)) => match reloader.as_mut() {
                None => tracing::warn!(
                    "SIGHUP: this fleet (demo, local GPUs or hosts named on the command line) has no config to reload"
                ),
                Some(r) => reloaded = Some((r.reload(), Why::Sighup)),
            },
            Ok(Input::InventorySynced) => {
                if let Some(r) = reloader.as_mut() {
                    reloaded = Some((r.rejoin(), Why::Inventory));
                }
            }
            Ok(Input::Released { host, outcome }) => {
                setup.sync_soon.ask();
                released(
                    &mut fleet,
                    setup.store.as_ref(),
                    &dispatcher,
                    &host,
                    outcome,
                );
            }
            Ok(Input::ReleasedOnRequest {
                host,
                who,
                action,
                outcome,
            }) => {
                setup.sync_soon.ask();
                release::alert_asked(&fleet, &dispatcher, &host, &who, action, outcome);
                if let Some(store) = setup.store.as_ref()
                    && let Ok(book) = store.load()
                {
                    let options = fleet.options.money.clone();
                    let now = fleet.now_ms;
                    fleet.money.adopt_saved(&book, &options, now);
                }
            }
            Ok(Input::JobStopped { host, outcome }) => {
                stop_job::stopped(&fleet, &dispatcher, &host, outcome);
            }
            Ok(Input::Scrape) => {
                if bridge.wanted() {
                    fleet.advance_clock(now_ms());
                    bridge.publish(render(&fleet));
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                stopped_by = "no more input";
                break;
            }
        }
        if let (Some((result, why)), Some(r)) = (reloaded, reloader.as_ref()) {
            match result {
                Err(e) => why.failed(&e),
                // A sync that changed no host (most rounds) leaves everything as it runs, but
                // for what the accounts bill that nobody watches.
                Ok(new) if why == Why::Inventory && !reload::changes_hosts(&new, &running) => {
                    fleet.unwatched = new.unwatched;
                }
                Ok(new) => {
                    if let Some(book) = fleet.book_to_store() {
                        save(&mut fleet, setup.store.as_ref(), &book);
                    }
                    let changes = reload::apply(
                        &new,
                        &mut fleet,
                        &mut running,
                        r.as_ref(),
                        &sink,
                        recorder.as_ref(),
                    );
                    for (id, host) in fleet.hosts.iter().enumerate() {
                        hub.ensure_named(id, &host.name);
                    }
                    if let Some(sinks) = &new.sinks {
                        have_sinks = !sinks.is_empty();
                    }
                    log_duties(duties.reconsider(&mut fleet, release.is_some(), have_sinks));
                    for (_, handle) in running.iter().flatten() {
                        backlogs.add(handle);
                    }
                    resume_ledgers(&mut fleet, setup.store.as_ref());
                    if new.options.interval_ms != fleet.options.interval_ms {
                        tracing::warn!("interval_ms changed: restart the watcher to apply it");
                    }
                    firing.set_unreachable_after_ms(new.unreachable_after_ms);
                    if let Some(release) = release.as_mut() {
                        release.config = new.release_config.clone();
                    }
                    if let Ok(mut asked) = asked_release.lock() {
                        asked.clone_from(&release);
                    }
                    setup.reports.set_config(new.release_config.clone());
                    if let Some(endpoint) = &setup.serve {
                        reload_tokens(endpoint, &hub, new.release_config.serve.as_ref());
                    }
                    if let Some(sinks) = new.sinks {
                        let old = std::mem::replace(&mut dispatcher, start_alerts(sinks));
                        let _ = old.finish(ALERTS_WAIT);
                    }
                    tracing::info!(
                        added = %changes.added.join(","),
                        removed = %changes.removed.join(","),
                        restarted = %changes.restarted.join(","),
                        gone = %changes.gone.join(","),
                        "{}",
                        why.message()
                    );
                }
            }
        }
        if Instant::now() >= next_tick {
            next_tick += TICK;
            if next_tick < Instant::now() {
                next_tick = Instant::now() + TICK;
            }
            if let Some(endpoint) = &setup.metrics {
                keep_serving(&mut server, endpoint, &bridge, &wake);
            }
            if let Some(handed) = start_up_pages.hand_back_when_settled(&fleet) {
                tracing::info!(
                    freed_kib = handed.freed_kib(),
                    rss_kib = handed.rss_after_kib,
                    "start-up pages handed back"
                );
            }
            log_duties(duties.poll(&mut fleet));
            if let Some(holds) = &duties.holds {
                take_holds(&mut fleet, holds);
            }
            let alerts = duties.alerts_sent_by().is_none().then_some(&dispatcher);
            for due in tick(&mut fleet, setup.store.as_ref(), &mut firing, alerts) {
                if let Some(release) = release.clone() {
                    stop_job::act(&fleet, due, release, &released_tx);
                }
            }
        }
    }
    let mut sources = fixed;
    sources.extend(running.into_iter().flatten().map(|(_, handle)| handle));
    if let Some(sync) = provider_sync {
        sync.stop(Duration::from_millis(200));
    }
    shut_down(fleet, sources, setup.store.as_ref(), dispatcher, server);
    if let Some(serving) = serving {
        serving.stop();
    }
    for problem in recorder.map(Recorder::finish).unwrap_or_default() {
        tracing::error!("{problem}");
    }
    Ok(stopped_by)
}

/// Continues the ledgers from the stored book.
fn resume_ledgers(fleet: &mut Fleet, store: Option<&LedgerStore>) {
    let Some(store) = store else {
        return;
    };
    match store.load() {
        Ok(book) => {
            let options = fleet.options.money.clone();
            let now = fleet.now_ms;
            fleet.money.resume(&book, &options, now);
        }
        Err(e) => tracing::error!(error = %e, "ledger not read; starting fresh ledgers"),
    }
}

fn start_alerts(sinks: Vec<Sink>) -> Dispatcher {
    let reporter: Reporter = Arc::new(log_delivery);
    Dispatcher::start(sinks, DeliveryOptions::default(), now_ms, reporter)
}

/// One second of the engine: findings, money, ledgers saved when due, alerts (sent when this
/// watcher is the one that sends them: `alerts`). Returns what the countdowns that ran out ask
/// for (a release, a job stopped).
fn tick(
    fleet: &mut Fleet,
    store: Option<&LedgerStore>,
    firing: &mut AlertBook,
    alerts: Option<&Dispatcher>,
) -> Vec<FleetCommand> {
    let mut due = Vec::new();
    fleet.advance_clock(now_ms());
    fleet.refresh_findings();
    for command in fleet.money_tick() {
        match command {
            FleetCommand::SaveLedgers { book } => save(fleet, store, &book),
            due_now => due.push(due_now),
        }
    }
    for alert in firing.update(fleet) {
        tracing::warn!(
            host = %alert.host,
            gpu = alert.gpu,
            label = %alert.label,
            severity = alert.severity.word(),
            state = alert.state.as_str(),
            summary = ?alert.summary,
            sent_here = alerts.is_some(),
            "alert"
        );
        if let Some(alerts) = alerts {
            alerts.send(&alert);
        }
    }
    due
}

/// `gpufleet hold HOST` requests, taken and applied.
fn take_holds(fleet: &mut Fleet, holds: &HoldStore) {
    let taken = match holds.take_all() {
        Ok(taken) => taken,
        Err(e) => {
            tracing::error!(error = %e, "holds not read");
            return;
        }
    };
    for host in taken.keys() {
        if fleet.money.hold(host) {
            tracing::warn!(host = %host, "auto-release held: the countdown is cancelled");
        } else {
            tracing::info!(host = %host, "hold asked, but no countdown was running");
        }
    }
}

/// A reload's `[serve]` tokens served from now on: a token taken out (or changed) is refused
/// and its consoles' streams end; ones that cannot be read leave the tokens as they were.
fn reload_tokens(
    endpoint: &crate::watch::serve::ServeEndpoint,
    hub: &crate::watch::serve::Hub,
    serve: Option<&crate::config::ServeConfig>,
) {
    match crate::watch::serve::Tokens::load(serve) {
        Ok(tokens) => {
            let revoked = endpoint.tokens.replace(tokens);
            let ended = hub.drop_consoles(&revoked);
            tracing::info!(
                revoked = %revoked.join(","),
                streams_ended = ended,
                "serve tokens reloaded"
            );
        }
        Err(e) => {
            tracing::warn!("serve tokens kept as they were: {e}");
        }
    }
}

/// An alert of something done to `host` (a release, a job's stop): firing once, with what the
/// host had cost, never resolved.
fn alert_once(
    fleet: &Fleet,
    alerts: &Dispatcher,
    host: &str,
    label: &str,
    severity: Severity,
    summary: String,
) {
    let money = fleet
        .watched()
        .find(|(_, h)| h.name == host)
        .map(|(id, _)| Money::of(fleet, id))
        .unwrap_or_default();
    alerts.send(&Alert {
        host: host.to_string(),
        gpu: None,
        label: label.to_string(),
        severity,
        summary,
        runbook: None,
        money,
        state: AlertState::Firing,
        at_ms: fleet.now_ms,
    });
}

/// An automatic release ended: logged, alerted, and the ledger the release closed adopted.
fn released(
    fleet: &mut Fleet,
    store: Option<&LedgerStore>,
    alerts: &Dispatcher,
    host: &str,
    outcome: Result<crate::words::Words, crate::words::Words>,
) {
    // The log line in English, the alert in the reader's language.
    let (label, severity, summary) = match &outcome {
        Ok(said) => {
            tracing::warn!(host, outcome = ?said.english(), "auto-release done");
            (
                "auto_release_done",
                Severity::Warning,
                rust_i18n::t!("alert_text.released", text = said.localized()).into_owned(),
            )
        }
        Err(said) => {
            tracing::error!(host, why = ?said.english(), "auto-release failed");
            (
                "auto_release_failed",
                Severity::Critical,
                rust_i18n::t!("alert_text.release_failed", why = said.localized()).into_owned(),
            )
        }
    };
    alert_once(fleet, alerts, host, label, severity, summary);
    if let Some(store) = store
        && let Ok(book) = store.load()
    {
        let options = fleet.options.money.clone();
        let now = fleet.now_ms;
        fleet.money.adopt_saved(&book, &options, now);
    }
}

fn save(fleet: &mut Fleet, store: Option<&LedgerStore>, book: &crate::cost::LedgerBook) {
    let Some(store) = store else {
        return;
    };
    match store.save_merging(book) {
        Ok(saved) => {
            let options = fleet.options.money.clone();
            let now = fleet.now_ms;
            fleet.money.adopt_saved(&saved, &options, now);
        }
        Err(e) => {
            tracing::error!(error = %e, "ledger not saved");
            fleet.money.save_error = Some(e.to_string());
        }
    }
}

/// Stops the sources (each link closes its channels, which ends its commands on the host),
/// saves the ledgers, lets queued alerts go, closes `/metrics`.
fn shut_down(
    fleet: Fleet,
    sources: Vec<SourceHandle>,
    store: Option<&LedgerStore>,
    alerts: Dispatcher,
    server: Option<MetricsServer>,
) {
    let started = Instant::now();
    let (done_tx, done_rx) = mpsc::channel();
    let stopping = std::thread::Builder::new()
        .name("stop-sources".to_string())
        .spawn(move || {
            for source in sources {
                source.stop_and_join();
            }
            let _ = done_tx.send(());
        });
    if stopping.is_ok() && done_rx.recv_timeout(STOP_WAIT).is_err() {
        tracing::warn!("some links were still closing; leaving them");
    }
    let mut fleet = fleet;
    if let Some(book) = fleet.book_to_store() {
        save(&mut fleet, store, &book);
    }
    let (statuses, finished) = alerts.finish(ALERTS_WAIT);
    if !finished {
        tracing::warn!("some alerts were still being delivered");
    }
    say_undelivered(&statuses);
    if let Some(server) = server {
        server.stop();
    }
    tracing::info!(took_ms = started.elapsed().as_millis() as u64, "stopped");
}

/// Starts `/metrics` again (on the address it had) if its server ended; says so in the log.
fn keep_serving(
    server: &mut Option<MetricsServer>,
    endpoint: &crate::metrics::Endpoint,
    bridge: &MetricsBridge,
    wake: &Arc<dyn Fn() + Send + Sync>,
) {
    let (listen, alive) = match server.as_ref() {
        Some(running) => (running.addr.to_string(), running.alive()),
        None => (endpoint.listen.clone(), false),
    };
    if alive {
        return;
    }
    if let Some(dead) = server.take() {
        tracing::error!(addr = %dead.addr, "/metrics stopped serving; starting it again");
        dead.stop();
    }
    match MetricsServer::start(
        &listen,
        endpoint.access.clone(),
        bridge.clone(),
        Arc::clone(wake),
    ) {
        Ok(started) => {
            tracing::info!(addr = %started.addr, "serving /metrics again");
            *server = Some(started);
        }
        Err(e) => tracing::error!(error = %e, "/metrics could not start again; trying each tick"),
    }
}

/// Names, in the log and on stderr, the alerts each sink never got.
fn say_undelivered(statuses: &[(String, crate::alerts::SinkStatus)]) {
    for (sink, status) in statuses {
        if status.undelivered.is_empty() {
            continue;
        }
        let alerts = status.undelivered.join("; ");
        tracing::error!(%sink, %alerts, "alerts not delivered before stopping");
        eprintln!(
            "gpufleet watch: {}",
            crate::words::Words::counted(
                "alert_sink_state.undelivered_at_stop",
                status.undelivered.len() as u64
            )
            .put("sink", crate::remote::sanitize(sink))
            .put("alerts", crate::remote::sanitize(&alerts))
            .localized()
        );
    }
}

fn log_duties(notes: Vec<DutyNote>) {
    for note in notes {
        if note.warning {
            tracing::warn!("{}", note.text);
        } else {
            tracing::info!("{}", note.text);
        }
    }
}

fn log_delivery(event: DeliveryEvent) {
    match event {
        DeliveryEvent::Delivered { sink, alert } => {
            tracing::debug!(sink = %sink, alert = %alert, "alert delivered")
        }
        DeliveryEvent::Retrying {
            sink,
            alert,
            why,
            after,
        } => {
            tracing::warn!(sink = %sink, alert = %alert, why = ?why, retry_in_ms = after.as_millis() as u64, "alert not delivered yet")
        }
        DeliveryEvent::Failed { sink, alert, why } => {
            tracing::error!(sink = %sink, alert = %alert, why = ?why, "alert not delivered")
        }
        DeliveryEvent::Dropped { sink, alert } => {
            tracing::error!(sink = %sink, alert = %alert, "alert dropped: the sink's queue is full")
        }
        DeliveryEvent::Down { sink, why, waiting } => {
            tracing::error!(%sink, %why, waiting, "alert sink down: its alerts wait and are tried in turn")
        }
        DeliveryEvent::Up { sink } => tracing::info!(sink = %sink, "alert sink up again"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_metrics_server_that_stopped_is_started_again_on_its_address() {
        let endpoint = crate::metrics::Endpoint {
            listen: "127.0.0.1:0".to_string(),
            access: crate::metrics::Access::Open,
        };
        let bridge = MetricsBridge::default();
        let wake: Arc<dyn Fn() + Send + Sync> = Arc::new(|| {});
        let mut server = None;
        keep_serving(&mut server, &endpoint, &bridge, &wake);
        let addr = server.as_ref().map(|s| s.addr).expect("started");
        let health = || {
            reqwest::blocking::get(format!("http://{addr}/health"))
                .map(|r| r.status().as_u16())
                .ok()
        };
        assert_eq!(health(), Some(200));
        if let Some(running) = server.as_mut() {
            running.end_thread();
        }
        assert!(!server.as_ref().is_some_and(MetricsServer::alive));
        assert_eq!(health(), None, "the ended server no longer answers");
        keep_serving(&mut server, &endpoint, &bridge, &wake);
        assert_eq!(
            server.as_ref().map(|s| s.addr),
            Some(addr),
            "the same address"
        );
        assert_eq!(health(), Some(200));
        if let Some(server) = server {
            server.stop();
        }
    }

    #[test]
    fn a_watcher_that_cannot_start_says_so_in_the_catalogues_words() {
        let error = WatchError::Start {
            what: "watch_error.signal_handler",
            source: std::io::Error::other("no signals here"),
        };
        assert_eq!(
            error.to_string(),
            "could not start the signal handler: no signals here"
        );
        let sources = WatchError::Sources("h1: no address".into());
        assert_eq!(
            sources.to_string(),
            "could not start the sources: h1: no address"
        );
        let zh = rust_i18n::t!(
            "watch_error.start",
            locale = "zh-CN",
            what = rust_i18n::t!("watch_error.signal_handler", locale = "zh-CN"),
            error = "x"
        );
        assert_eq!(zh, "无法启动信号处理：x");
    }
}
