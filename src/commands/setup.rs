//! What every command line goes through before its command runs: the language (the flag or the
//! locale, then the config's), Ctrl-C for one-shot commands, the hosts it names, the flags a
//! command does not take, the commands that need no config, and the config loaded with the
//! providers' synced instances joined to it.

use std::process::ExitCode;

use crate::cli::{Cli, CliCommand};
use crate::commands::{demo, diagnose_file, fleet_inventory, host_words, standalone};
use crate::config::lang::Lang;
use crate::config::{self, Config};
use crate::providers::fleet_hosts::GoneHost;
use crate::words::Words;

/// What a command that reads the config runs with.
pub struct Setup {
    /// The config with the synced instances joined.
    pub config: Config,
    /// The config as the user wrote it, joined again after each provider sync.
    pub user_config: Config,
    /// Synced instances that are gone from their account.
    pub gone: Vec<GoneHost>,
    /// Hosts named on the command line.
    pub named: Vec<String>,
    /// `--interval-ms`, else the config's.
    pub interval_ms: u64,
}

/// How the command line goes on after [`prepare`].
pub enum Prepared {
    /// Its command runs with this setup.
    Ready(Box<Setup>),
    /// It ended here (a command that needs no config ran, or the line was refused).
    Done(ExitCode),
}

/// Everything before the command's own work; see the module's doc.
pub fn prepare(cli: &Cli, subcommand: Option<&str>) -> anyhow::Result<Prepared> {
    // The flag or the locale until the config is read, so that what is said before it (or
    // about it) is in the language asked for where one was.
    Lang::choose(cli.global.lang, None, locale_var).apply();
    let drives_a_fleet = matches!(
        cli.command,
        None | Some(CliCommand::Watch { .. })
            | Some(CliCommand::Replay { .. })
            | Some(CliCommand::Attach { .. })
    );
    if !drives_a_fleet {
        standalone::exit_cancelled_on_interrupt();
    }
    let named = match host_words::named_hosts(cli, subcommand) {
        Ok(named) => named,
        Err(e) => return Ok(Prepared::Done(usage_error(&e))),
    };
    if cli.record.is_some() && !drives_a_fleet {
        let refused = record_refused(subcommand.unwrap_or_default()).localized();
        eprintln!("gpufleet: {refused}");
        return Ok(Prepared::Done(ExitCode::from(crate::exit_codes::USAGE)));
    }
    if let Some(refusal) = demo::refusal(cli) {
        eprintln!("gpufleet: {refusal}");
        return Ok(Prepared::Done(ExitCode::from(crate::exit_codes::USAGE)));
    }
    if cli.global.lang.is_none()
        && matches!(
            cli.command,
            Some(
                CliCommand::Diagnose { .. } | CliCommand::Audit { .. } | CliCommand::Config { .. }
            )
        )
    {
        // These run without the config, but speak its language when it names one and can be
        // read; one that cannot is left to the command itself (`config check` reports it).
        let config_lang = load_config(cli).ok().and_then(|c| c.lang());
        Lang::choose(None, config_lang, locale_var).apply();
    }
    // Files an older version left readable by others are made private, once per start.
    if let Some(state) = crate::paths::state_dir() {
        crate::state_file::tighten_tree(&state);
    }
    if let Some(CliCommand::Diagnose { file, json }) = &cli.command {
        return Ok(Prepared::Done(diagnose_file::run(file.as_deref(), *json)));
    }
    if let Some(code) = standalone::run(cli) {
        return Ok(Prepared::Done(code));
    }
    let config = load_config(cli)?;
    Lang::choose(cli.global.lang, config.lang(), locale_var).apply();
    // The synced instances join the fleet here, once, for every driver (the console and the
    // watcher join them again after each background sync, from the user's config as loaded).
    let user_config = config.clone();
    let (config, gone) = fleet_inventory::for_command(cli, config);
    if let Err(e) = host_words::check_words(&named, &config, cli.global.ssh_config.as_deref()) {
        return Ok(Prepared::Done(usage_error(&e)));
    }
    if cli.command.is_none()
        && let Some(code) = console_needs_a_terminal()
    {
        return Ok(Prepared::Done(code));
    }
    let interval_ms = cli.global.interval_ms.unwrap_or(config.interval_ms);
    Ok(Prepared::Ready(Box::new(Setup {
        config,
        user_config,
        gone,
        named,
        interval_ms,
    })))
}

/// The console draws on a terminal and reads keys from one; under cron, `ssh host gpufleet` or
/// a pipe it says so in one line and exits 2 before touching the terminal or stdout.
pub fn console_needs_a_terminal() -> Option<ExitCode> {
    use std::io::IsTerminal;
    if std::io::stdin().is_terminal() && std::io::stdout().is_terminal() {
        return None;
    }
    eprintln!("gpufleet: {}", needs_a_terminal().localized());
    Some(ExitCode::from(2))
}

/// A command line that cannot mean anything: said on stderr, exit 2 (as clap's usage errors).
fn usage_error(e: &host_words::WordError) -> ExitCode {
    eprintln!("gpufleet: {}", e.words().localized());
    ExitCode::from(crate::exit_codes::USAGE)
}

fn load_config(cli: &Cli) -> anyhow::Result<Config> {
    match &cli.global.config {
        Some(path) => Ok(config::load(path)?),
        None => match config::default_path() {
            Some(path) => Ok(config::load_optional(&path)?.unwrap_or_default()),
            None => Ok(Config::default()),
        },
    }
}

/// Reads the locale variables for [`Lang::choose`].
fn locale_var(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// `no host named NAME in the config`: a host a one-shot command (`check`, `runbook run`) was
/// given that names nothing it can reach.
pub(crate) fn no_host_named(name: &str) -> Words {
    Words::new("cli.no_host_named").put("host", name)
}

/// `--record` given to a subcommand that has nothing to record.
fn record_refused(subcommand: &str) -> Words {
    Words::new("cli.record_refused").put("subcommand", subcommand)
}

/// The console started without a terminal.
fn needs_a_terminal() -> Words {
    Words::new("cli.needs_a_terminal")
}
