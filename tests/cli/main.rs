//! The command line: commands, config, exit codes, faults, generated help and completions, JSON,
//! pipes, ranges, words.
//!
//! One test binary for this area: each module is one former test file.

#[path = "../support/cli.rs"]
mod cli;
#[path = "../support/tmux.rs"]
mod tmux;

mod cli_commands;
mod cli_config;
mod cli_exit_codes;
mod cli_faults;
mod cli_generated;
mod cli_json;
mod cli_pipes;
mod cli_ranges;
mod cli_words;
mod config;
