//! gpufleet: a terminal console for rented GPUs.

pub mod alerts;
pub mod app;
pub mod audit;
pub mod check;
pub mod cli;
pub mod config;
pub mod cost;
pub mod diagnose;
pub mod error_text;
pub mod fleet;
pub mod host_runner;
pub mod launch;
pub mod metrics;
pub mod money_cli;
pub mod paths;
pub mod playbook;
pub mod redact;
pub mod release;
pub mod remote;
pub mod snapshot;
pub mod state_file;
pub mod telemetry;
pub mod theme;
pub mod ui;
pub mod units;
pub mod utc;
