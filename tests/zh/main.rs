//! Simplified Chinese output of the built binary (every test chooses its language with `--lang` or
//! the locale variables of the child process).
//!
//! One test binary for this area: each module is one former test file.

#[path = "../support/cli.rs"]
mod cli;
#[path = "../common/mod.rs"]
mod common;
#[path = "../providers_support/server.rs"]
mod provider_api;
#[path = "../release_support/server.rs"]
mod release_server;
#[path = "../support/tmux.rs"]
mod tmux;
#[path = "../support/watcher.rs"]
mod watcher;

mod zh_check_job;
mod zh_cli;
mod zh_config_errors;
mod zh_console_tmux;
mod zh_last_errors;
mod zh_link_reasons;
mod zh_notices_tmux;
mod zh_outputs;
mod zh_quiet_flood_tmux;
mod zh_ssh_release_errors;
