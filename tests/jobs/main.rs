//! Jobs on hosts: finding, probing, logs, actions and reports, over real sshd.
//!
//! One test binary for this area: each module is one former test file.

#[path = "../support/cli.rs"]
mod cli;
#[path = "../common/mod.rs"]
mod common;
#[path = "../release_support/server.rs"]
mod release_server;
#[path = "../support/tmux.rs"]
mod tmux;
#[path = "../support/watcher.rs"]
mod watcher;

mod job_actions_ssh;
mod job_find_ssh;
mod job_logs;
mod job_probe_ssh;
mod job_ssh;
mod report_ssh;
