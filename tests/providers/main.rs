//! Provider APIs: sync, import, costs, alerts, background refresh, the console's provider views.
//!
//! One test binary for this area: each module is one former test file.

#[path = "../support/cli.rs"]
mod cli;
#[path = "../common/mod.rs"]
mod common;
#[path = "../providers_support/fleet_setup.rs"]
mod fleet_setup;
#[path = "../providers_support/server.rs"]
mod provider_api;
#[path = "../release_support/server.rs"]
mod release_server;
#[path = "../support/tmux.rs"]
mod tmux;
#[path = "../release_support/vast_list.rs"]
mod vast_list;

mod providers_alerts;
mod providers_api;
mod providers_background;
mod providers_balance;
mod providers_console;
mod providers_contrib;
mod providers_cost;
mod providers_endpoint;
mod providers_fleet;
mod providers_import;
mod providers_live;
mod providers_sync;
