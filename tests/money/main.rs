//! Money: cost advice, the ledger and its store, automatic release, release flows and their
//! screens.
//!
//! One test binary for this area: each module is one former test file.

#[path = "../support/cli.rs"]
mod cli;
#[path = "../release_support/server.rs"]
mod release_server;

mod cost_advice;
mod cost_auto_release;
mod cost_ledger;
mod cost_store;
mod money_tui;
mod release_flow;
mod release_providers;
mod restart_flow;
