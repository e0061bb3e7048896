//! `gpufleet completions SHELL` and `gpufleet man`: both generated from the clap definition, so
//! they always list the subcommands and options this binary has.

use std::io::Write;

use clap::CommandFactory;

use crate::cli::Cli;

/// Prints `shell`'s completion script for `gpufleet`.
pub fn completions(shell: clap_complete::Shell, out: &mut dyn Write) {
    let mut command = Cli::command();
    clap_complete::generate(shell, &mut command, "gpufleet", out);
}

/// Prints the man page, section 1, in roff.
pub fn man(out: &mut dyn Write) -> std::io::Result<()> {
    clap_mangen::Man::new(Cli::command()).render(out)
}
