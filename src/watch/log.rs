//! The watcher's log: structured lines (`tracing`) on stderr, for a pipe or journald; no colour,
//! one line per event, `key=value` fields. `-v` adds delivery and debug detail, `-q` keeps only
//! warnings and errors.

use tracing::Level;

/// Installs the subscriber; `verbosity` is the number of `-v` minus `-q` (0: info).
pub fn init(verbosity: i8) {
    let level = match verbosity {
        i8::MIN..=-1 => Level::WARN,
        0 => Level::INFO,
        1 => Level::DEBUG,
        _ => Level::TRACE,
    };
    let subscriber = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_target(false)
        .with_max_level(level)
        .finish();
    // A second call (tests running the watcher twice in one process) keeps the first one.
    let _ = tracing::subscriber::set_global_default(subscriber);
}
