//! `gpufleet attach URL...`: a watcher's fleet (`gpufleet watch --serve`) as a source of host
//! events, like replay: the event stream (`GET /v1/events`, the recording format) read over
//! HTTP with a bearer token and fed into the console's `HostSink`. The console opens no SSH
//! session of its own. Several watchers' fleets show as one, a host tagged with its watcher
//! where names clash. When a watcher goes away its hosts keep their last state, shown
//! unresponsive, and the stream is opened again with backoff. A stream of a newer format is
//! refused with a clear error, never misread. The console's actions (a release, restart or
//! start, a hold, a job's stop, a check, a runbook's steps) are sent to the watcher, which runs
//! them (`actions.rs`). `report --from URL` fetches a host's incident bundle the watcher made
//! (`report.rs`).

mod actions;
mod report;
mod source;
mod stream;

pub use actions::{Answer, Ask, AskError, WatcherActions};
pub use report::{FetchError, Fetched};
pub use source::{Attach, AttachToken, NewHost, TOKEN_ENV, fetch_report, read_once, spawn};
pub use stream::{AttachError, EventStream, is_watcher_url, open};
