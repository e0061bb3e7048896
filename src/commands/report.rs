//! `gpufleet report HOST [--since 2h] [--out DIR] [--from FILE]`: writes the host's incident
//! bundle ([`crate::report::write`]). Exit 0 written, 1 nothing recorded for the host in the
//! window or only a host never reached (said with why), 2 an error (an unreadable or damaged recording, a folder not writable).

use std::process::ExitCode;

use crate::config::Config;
use crate::report::write::{self, WriteError};

pub use crate::report::write::Request;

pub const EXIT_WRITTEN: u8 = 0;
pub const EXIT_NOTHING: u8 = 1;
pub const EXIT_ERROR: u8 = 2;

pub fn run(request: &Request, config: &Config, now_ms: u64) -> ExitCode {
    // The demo's hosts have the demo's prices, not the config's.
    let config = crate::launch::money_config(config, request.demo);
    match write::write(request, &config, now_ms) {
        Ok(written) => {
            for warning in &written.warnings {
                eprintln!("gpufleet report: {warning}");
            }
            crate::outln!("{}", written.dir.display());
            eprintln!("gpufleet report: {}", written.summary);
            ExitCode::from(EXIT_WRITTEN)
        }
        Err(e @ (WriteError::Nothing { .. } | WriteError::NeverConnected { .. })) => {
            eprintln!("gpufleet report: {e}");
            ExitCode::from(EXIT_NOTHING)
        }
        Err(e) => {
            eprintln!("gpufleet report: {e}");
            ExitCode::from(EXIT_ERROR)
        }
    }
}
