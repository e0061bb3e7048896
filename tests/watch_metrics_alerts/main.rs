//! The headless watcher, its /metrics, alert sinks, duties and URL redaction.
//!
//! One test binary for this area: each module is one former test file.

#[path = "../common/mod.rs"]
mod common;
#[path = "../release_support/server.rs"]
mod release_server;
#[path = "../support/tmux.rs"]
mod tmux;
#[path = "../release_support/vast_list.rs"]
mod vast_list;
#[path = "../support/watcher.rs"]
mod watcher;

mod alerts_delivery;
mod alerts_sinks;
mod duties;
mod federation;
mod metrics_guard;
mod metrics_page;
mod metrics_serve;
mod serve_actions;
mod serve_attach;
mod sink_down;
mod url_redaction;
mod watch;
mod watch_auto_release;
mod watch_dead_man;
