//! Standard output of the one-shot commands. A reader that goes away early (`| head -3`) ends
//! the command as it ends any Unix tool: killed by SIGPIPE, quietly (no panic, no "Broken
//! pipe"; a shell reports 141). Rust ignores SIGPIPE, so without this every `println!` into a
//! closed pipe panicked. Any other failure to write (a full disk) is said in one line on stderr
//! and the command exits 1.
//!
//! Commands print through [`out!`](crate::out) and [`outln!`](crate::outln), and hand
//! [`Stdout`] wherever a writer is wanted (clap's completions and man page included, which
//! would panic on the error themselves).

use std::io::{self, Write};

use rust_i18n::t;

/// Standard output, ending the process quietly once its reader is gone.
#[derive(Debug, Default, Clone, Copy)]
pub struct Stdout;

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        quiet(io::stdout().write(buf))
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        quiet(io::stdout().write_all(buf))
    }

    fn write_fmt(&mut self, args: std::fmt::Arguments<'_>) -> io::Result<()> {
        quiet(io::stdout().write_fmt(args))
    }

    fn flush(&mut self) -> io::Result<()> {
        quiet(io::stdout().flush())
    }
}

/// `result`, unless it says the reader went away: then the process ends.
fn quiet<T>(result: io::Result<T>) -> io::Result<T> {
    match result {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => reader_gone(),
        other => other,
    }
}

/// Ends the process as SIGPIPE's default action does, as a C tool would have ended.
fn reader_gone() -> ! {
    // Resets SIGPIPE to its default and raises it; the exit is only reached where it fails.
    let _ = signal_hook::low_level::emulate_default_handler(signal_hook::consts::SIGPIPE);
    std::process::exit(128 + signal_hook::consts::SIGPIPE)
}

/// Prints `args` on standard output (what [`out!`](crate::out) expands to): a closed pipe
/// ends the process quietly, another error is said on stderr and exits 1.
pub fn print(args: std::fmt::Arguments<'_>) {
    let written = Stdout.write_fmt(args).and_then(|()| Stdout.flush());
    if let Err(e) = written {
        eprintln!("gpufleet: {}", t!("cli.stdout_failed", why = e));
        std::process::exit(1);
    }
}

/// `print!` for commands: see [`print`](crate::commands::stdout::print).
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::commands::stdout::print(format_args!($($arg)*))
    };
}

/// `println!` for commands: see [`print`](crate::commands::stdout::print).
#[macro_export]
macro_rules! outln {
    () => {
        $crate::commands::stdout::print(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::commands::stdout::print(format_args!("{}\n", format_args!($($arg)*)))
    };
}
