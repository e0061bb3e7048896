//! The sentences `main` says itself (the binary has no catalogue of its own): each one read from
//! the interface's language, with what it names put in.

use rust_i18n::t;

/// `no host named NAME in the config`.
pub fn no_host_named(name: &str) -> String {
    t!("cli.no_host_named", host = name).into_owned()
}

/// A check report that ran but could not be stored.
pub fn report_not_kept(why: &str) -> String {
    t!("cli.report_not_kept", why = why).into_owned()
}

/// `playbook run/undo` with neither `--host` nor `--local`.
pub fn say_where_to_run() -> String {
    t!("cli.say_where").into_owned()
}

/// `--record` given to a subcommand that has nothing to record.
pub fn record_refused(subcommand: &str) -> String {
    t!("cli.record_refused", subcommand = subcommand).into_owned()
}

/// The console started without a terminal.
pub fn needs_a_terminal() -> String {
    t!("cli.needs_a_terminal").into_owned()
}

/// The console's log file could not be opened: `why`, or no state directory at all.
pub fn log_not_written(why: Option<&str>) -> String {
    match why {
        Some(why) => t!("cli.log_not_written", why = why).into_owned(),
        None => t!("cli.log_no_state_dir").into_owned(),
    }
}
