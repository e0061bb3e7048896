//! The engine: the fleet's state below any front end. Host identity and events, each host's
//! link state, GPU samples and history, findings, and the money (ledgers, red lines, the
//! auto-release countdowns). Sources feed it events; the console and the watcher are two
//! drivers of it and neither re-implements what it does. It names no pane, key or colour.

pub mod dead_man;
pub mod disk;
pub mod event;
pub mod event_log;
pub mod fault_end;
pub mod history;
pub mod host;
pub mod idle_trail;
pub mod job;
pub mod job_actions;
pub mod job_cpu;
pub mod job_found;
pub mod money;
pub mod notice;
pub mod outage;
pub mod revision;
pub mod sink;
pub mod state;
pub mod unwatched;

pub use event::{HostEvent, HostId};
pub use notice::DownWords;
pub use sink::HostSink;
pub use state::{FindingsRefresh, Fleet, FleetCommand, FleetOptions};
