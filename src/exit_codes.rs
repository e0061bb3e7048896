//! Exit codes every command shares (each command's own codes live beside it; docs/CLI.md has
//! the full table).

/// The user cancelled: a confirmation declined or left empty, end of input at a prompt, or
/// Ctrl-C (128 + SIGINT, what a shell reports for a process Ctrl-C stopped).
pub const CANCELLED: u8 = 130;

/// The command line cannot mean anything (clap's usage errors exit 2 too).
pub const USAGE: u8 = 2;
