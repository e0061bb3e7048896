//! Subcommands that need no config and no host: `config`, `completions`, `man`, `audit`; and
//! the Ctrl-C handler every one-shot command gets.

use rust_i18n::t;
use std::process::ExitCode;

use crate::audit::AuditLog;
use crate::cli::{Cli, CliCommand, ConfigAction};
use crate::commands::{audit, config_file, shell_docs};
use crate::exit_codes;

/// Runs `cli`'s subcommand when it is one of these; `None` leaves it to the caller.
pub fn run(cli: &Cli) -> Option<ExitCode> {
    let (mut out, mut err) = (crate::commands::stdout::Stdout, std::io::stderr());
    let code = match cli.command.as_ref()? {
        CliCommand::Config { action } => {
            let explicit = cli.global.config.as_deref();
            match action {
                ConfigAction::Init => config_file::init(explicit, &mut out, &mut err),
                ConfigAction::Path => config_file::path(explicit, &mut out, &mut err),
                ConfigAction::Check => config_file::check(explicit, &mut out, &mut err),
            }
        }
        CliCommand::Completions { shell } => {
            shell_docs::completions(*shell, &mut out);
            0
        }
        CliCommand::Man => match shell_docs::man(&mut out) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("gpufleet man: {e}");
                1
            }
        },
        CliCommand::Audit { json, limit } => match AuditLog::open_default() {
            Ok(log) => audit::run(&log, *json, *limit, &mut out, &mut err),
            Err(e) => {
                eprintln!("gpufleet audit: {e}");
                audit::EXIT_UNREADABLE
            }
        },
        _ => return None,
    };
    Some(ExitCode::from(code))
}

/// Ctrl-C during a one-shot command (a prompt, a check, a snapshot) exits 130 with nothing more
/// written, the code of every cancelled action. The console reads Ctrl-C as a key and the
/// watcher handles SIGINT itself; neither calls this.
pub fn exit_cancelled_on_interrupt() {
    // SAFETY: the handler calls only `_exit`, which is async-signal-safe.
    let registered = unsafe {
        signal_hook::low_level::register(signal_hook::consts::SIGINT, || {
            signal_hook::low_level::exit(i32::from(exit_codes::CANCELLED))
        })
    };
    if let Err(e) = registered {
        eprintln!("gpufleet: {}", t!("cli.no_interrupt_handler", why = e));
    }
}
