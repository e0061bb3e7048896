//! Subcommands that start a driver of their own (the console is `main`'s default).

pub mod hold;
pub mod watch;
