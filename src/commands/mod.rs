//! Subcommands that start a driver of their own (the console is `main`'s default).

pub mod config_file;
pub mod hold;
pub mod shell_docs;
pub mod host_words;
pub mod watch;
