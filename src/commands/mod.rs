//! Subcommands that start a driver of their own (the console is `main`'s default).

pub mod allocator;
pub mod audit;
pub mod check_cli;
pub mod cli_words;
pub mod config_file;
pub mod console;
pub mod cost_advice;
pub mod cost_inventory;
pub mod demo;
pub mod diagnose_file;
pub mod fit;
pub mod fleet_inventory;
pub mod fleet_reload;
pub mod help;
pub mod hold;
pub mod host_words;
pub mod logging;
pub mod parse_error;
pub mod playbook_cli;
pub mod providers;
pub mod providers_import;
pub mod record;
pub mod report;
pub mod shell_docs;
pub mod standalone;
pub mod watch;
