//! SIGINT, SIGTERM and SIGHUP turned into loop inputs by a thread of `signal-hook`'s, so the
//! loop handles them between events like anything else (no work in a signal handler).

use std::sync::mpsc::Sender;

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use super::Input;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// SIGINT or SIGTERM, by name.
    Stop(&'static str),
    /// SIGHUP.
    Reload,
}

/// Starts the thread that forwards signals to `loop_input`.
pub fn forward(loop_input: Sender<Input>) -> std::io::Result<()> {
    let mut signals = Signals::new([SIGINT, SIGTERM, SIGHUP])?;
    std::thread::Builder::new()
        .name("signals".to_string())
        .spawn(move || {
            for signal in signals.forever() {
                let signal = match signal {
                    SIGHUP => Signal::Reload,
                    SIGINT => Signal::Stop("SIGINT"),
                    _ => Signal::Stop("SIGTERM"),
                };
                if loop_input.send(Input::Signal(signal)).is_err() {
                    return;
                }
            }
        })?;
    Ok(())
}
