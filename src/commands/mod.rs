//! Every subcommand's code, one module each (`main` only dispatches): what every command line
//! goes through first (`setup.rs`), the console, `snapshot` and `watch` (`fleet_drive.rs`), the
//! one-shot commands, and the words and helpers they share.

pub mod allocator;
pub mod attach;
pub mod audit;
pub mod check_cli;
pub mod config_file;
pub mod console;
pub mod cost;
pub mod cost_advice;
pub mod cost_inventory;
pub mod demo;
pub mod diagnose_file;
pub mod fit;
pub mod fleet_drive;
pub mod fleet_inventory;
pub mod fleet_reload;
pub mod help;
pub mod hold;
pub mod host_words;
pub mod logging;
pub mod money;
pub mod parse_error;
pub mod providers;
pub mod providers_import;
pub mod record;
pub mod release;
pub mod report;
pub mod restart;
pub mod runbook;
pub mod setup;
pub mod shell_docs;
pub mod standalone;
pub mod stdout;
pub mod watch;
