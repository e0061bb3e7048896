//! The console's terminal: raw mode, the alternate screen and mouse reporting are switched on
//! together and always switched off together, on every way out: a normal return, an error
//! (the guard's `Drop`), a panic (the panic hook, before the message is printed) and SIGTERM or
//! SIGHUP (turned into a clean quit by [`forward_signals`]).
//!
//! Mouse reporting asks only for clicks and the wheel (xterm modes 1000 and 1006, SGR
//! encoding): no motion events, so moving the mouse costs nothing; turning it off turns off
//! every mode a mouse-capturing program may use.

use std::io::{Write, stdout};
use std::sync::Once;

use crossterm::event::DisableMouseCapture;
use ratatui::DefaultTerminal;
use signal_hook::consts::{SIGHUP, SIGTERM};
use signal_hook::iterator::Signals;

use crate::app::event::{Event, EventSink};

/// Clicks and the wheel (1000), reported in SGR form (1006), which has no column limit.
const MOUSE_ON: &[u8] = b"\x1b[?1000h\x1b[?1006h";

/// The terminal while the console owns it; dropping it gives the terminal back.
pub struct TerminalGuard {
    terminal: DefaultTerminal,
}

impl TerminalGuard {
    /// Raw mode, the alternate screen and mouse reporting; on failure nothing stays switched on.
    pub fn enter() -> std::io::Result<TerminalGuard> {
        let terminal = match ratatui::try_init() {
            Ok(terminal) => terminal,
            Err(error) => {
                restore();
                return Err(error);
            }
        };
        // After ratatui's hook (raw mode, alternate screen), so ours runs first.
        install_panic_hook();
        let mut out = stdout();
        if let Err(error) = out.write_all(MOUSE_ON).and_then(|()| out.flush()) {
            restore();
            return Err(error);
        }
        Ok(TerminalGuard { terminal })
    }

    pub fn terminal(&mut self) -> &mut DefaultTerminal {
        &mut self.terminal
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}

/// Mouse reporting off, raw mode off, the alternate screen left; errors are ignored (there is
/// nothing better to do with a terminal that is gone).
pub fn restore() {
    let _ = crossterm::execute!(stdout(), DisableMouseCapture);
    let _ = ratatui::try_restore();
}

/// Once per process: a panic switches mouse reporting off before the hook installed before it
/// (ratatui's, which restores the rest and prints the message).
fn install_panic_hook() {
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let _ = crossterm::execute!(stdout(), DisableMouseCapture);
            previous(info);
        }));
    });
}

/// SIGTERM and SIGHUP end the console as `q` does (ledgers saved, terminal restored) instead of
/// killing it with the terminal left in raw mode; a second one, or one after the loop ended,
/// restores the terminal and exits at once (128 + the signal, as the shell reports a kill).
pub fn forward_signals(sink: EventSink, loop_thread: std::thread::Thread) -> std::io::Result<()> {
    let mut signals = Signals::new([SIGTERM, SIGHUP])?;
    std::thread::Builder::new()
        .name("console-signals".to_string())
        .spawn(move || {
            let mut asked = false;
            for signal in signals.forever() {
                if !asked && sink.send(Event::Stop).is_ok() {
                    asked = true;
                    loop_thread.unpark();
                    continue;
                }
                restore();
                std::process::exit(128 + signal);
            }
        })?;
    Ok(())
}
