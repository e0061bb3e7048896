//! Runbooks: local and sshd execution, device runs, the picker and confirmation screens.
//!
//! One test binary for this area: each module is one former test file.

#[path = "../common/mod.rs"]
mod common;
#[path = "../release_support/server.rs"]
mod release_server;
#[path = "../support/runbook_common.rs"]
mod runbook_common;

mod runbook_data;
mod runbook_device;
mod runbook_local;
mod runbook_restart;
mod runbook_sshd;
mod runbook_tui;
