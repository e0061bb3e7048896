//! gpufleet: a terminal console for rented GPUs.

// The message catalogues (`locales/en.toml`, `locales/zh-CN.toml`), compiled in; a key missing
// from Chinese falls back to English. `config::lang` picks the one `t!` reads.
// The catalogues are static tables that the build script makes of `locales/*.toml`
// (`catalogue.rs`); the macro is pointed at a folder that holds none, so it parses nothing into
// maps at start.
rust_i18n::i18n!(
    "locales/compiled",
    fallback = "en",
    backend = crate::catalogue::Catalogue
);

pub mod alerts;
pub mod app;
pub mod audit;
mod catalogue;
pub mod cells;
pub mod check;
pub mod cli;
pub mod cli_values;
pub mod commands;
pub mod config;
pub mod cost;
pub mod demo;
pub mod diagnose;
pub mod duty;
pub mod error_text;
pub mod exit_codes;
pub mod fleet;
pub mod host_runner;
pub mod job;
pub mod launch;
pub mod metrics;
pub mod paths;
pub mod providers;
pub mod recording;
pub mod redact;
pub mod release;
pub mod remote;
pub mod remote_watcher;
pub mod report;
pub mod runbook;
pub mod snapshot;
pub mod snapshot_jobs;
pub mod start_up_pages;
pub mod state_file;
pub mod telemetry;
pub mod theme;
pub mod ui;
pub mod units;
pub mod utc;
pub mod watch;
pub mod words;
