//! The events the console's loop consumes: what sources report about hosts (the engine's
//! [`HostEvent`]s), keys, the clock, and the bridges' reports.

use crate::fleet::{HostEvent, HostId, HostSink};
use crate::telemetry::TimestampMs;

/// Everything the app loop reacts to.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    Host {
        host: HostId,
        event: HostEvent,
    },
    /// A burst of one host's events read at once (a reading of each GPU), in order.
    Hosts {
        host: HostId,
        events: Vec<HostEvent>,
    },
    /// A key press, as the terminal reported it; `update` asks the keymap what it means.
    Key(crossterm::event::KeyEvent),
    /// A mouse click or wheel notch; `update` asks `pointer` what is under it.
    Mouse(crossterm::event::MouseEvent),
    /// SIGTERM or SIGHUP: quit as `q` does.
    Stop,
    /// The clock moved (drives stale ages and countdowns); carries the current time.
    Tick {
        now_ms: TimestampMs,
    },
    /// The terminal was resized; the next frame redraws.
    Resize,
    /// A link asks the user something; answered with `Command::AnswerPrompt`.
    Prompt(super::prompt::Prompt),
    /// The release bridge reports on a release it plans, backs up or sends.
    Release(super::release_state::ReleaseEvent),
    /// The ledgers were stored: what the file holds now (releases made by another gpufleet
    /// included), or why they could not be.
    LedgersSaved(Result<crate::cost::LedgerBook, String>),
    /// The ops bridge reports on a runbook it runs.
    Runbook(super::runbook_run::RunbookEvent),
    /// The ops bridge reports on a check it runs.
    Check(super::check_run::CheckEvent),
    /// The audit log as read (oldest first), or why it could not be.
    AuditLoaded(Result<Vec<crate::audit::AuditEntry>, String>),
    /// An incident bundle was written (its folder and what it says), or why not.
    ReportWritten(Result<String, String>),
    /// A Prometheus scrape waits for `/metrics`.
    Scrape,
    /// `gpufleet hold HOST` was run in a shell for these hosts (cancel their auto-release
    /// countdowns), or why the requests could not be read.
    Holds(Result<Vec<String>, String>),
    /// Alerts that fired or resolved this tick, and who sent them.
    Alerts {
        alerts: Vec<crate::alerts::Alert>,
        sender: super::alert_log::AlertSender,
    },
    /// A sink's worker reports on one alert.
    AlertDelivery(crate::alerts::DeliveryEvent),
    /// This console took a duty over (auto-release, alerts) or learnt who holds one.
    Duties(Vec<crate::duty::DutyNote>),
    /// The money nobody watches, from the provider inventory just synced.
    Unwatched(Vec<super::unwatched::UnwatchedLine>),
    /// A provider account was synced: the inventory is to be joined to the fleet again.
    InventorySynced,
    /// The inventory joined again changed the fleet's hosts, or could not be joined.
    HostsJoined(Result<super::unwatched::JoinedHosts, String>),
    /// A job that stopped learning was stopped (what happened, in words), or why not.
    JobStopped {
        host: String,
        outcome: Result<String, String>,
    },
    /// A host's dead-man switch was pushed back (what happened, in words), or why not.
    DeadManHeld {
        outcome: Result<String, String>,
    },
    /// What the watcher answered an attached console's hold: a notice, a warning when refused.
    WatcherAnswer {
        text: String,
        warning: bool,
    },
    /// A watcher the console is attached to added a host (a reload): it is watched under `id`
    /// from now on.
    HostAdded {
        id: HostId,
        name: String,
    },
}

/// Where the console's sources, bridges and input thread send their events; the loop owns the
/// receiving end.
pub type EventSink = std::sync::mpsc::Sender<Event>;

/// A sink for sources that wraps their host events into the console's channel.
pub fn host_sink(sink: EventSink) -> HostSink {
    let bursts = sink.clone();
    HostSink::from_sender(sink, |host, event| Event::Host { host, event })
        .with_bursts(move |host, events| bursts.send(Event::Hosts { host, events }).is_ok())
}
