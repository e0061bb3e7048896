//! End to end: the release binary in tmux against real sshd hosts (terminal, flood, outage).
//!
//! One test binary for this area: each module is one former test file.

#[path = "../common/mod.rs"]
mod common;
#[path = "../support/tmux.rs"]
mod tmux;

mod e2e_connect_threads;
mod e2e_console_terminal;
mod e2e_flood;
mod e2e_outage;
mod e2e_ssh;
mod e2e_tmux;
