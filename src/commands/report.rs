//! `gpufleet report HOST [--since 2h] [--out DIR] [--from FILE|URL]`: writes the host's incident
//! bundle, made here ([`crate::report::write`]) from the black box or a `--record` file, or
//! made by a watcher of `--from URL...` from what it recorded
//! ([`crate::remote_watcher::fetch_report`]).
//! Exit 0 written, 1 nothing recorded for the host in the window or only a host never reached
//! (said with why), 2 an error (an unreadable or damaged recording, a folder not writable, a
//! watcher unreachable or refusing the token).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use rust_i18n::t;

use crate::config::Config;
use crate::remote_watcher::{AttachToken, FetchError, fetch_report, is_watcher_url};
use crate::report::bundle;
use crate::report::write::{self, WriteError};

pub use crate::report::write::Request;

pub const EXIT_WRITTEN: u8 = 0;
pub const EXIT_NOTHING: u8 = 1;
pub const EXIT_ERROR: u8 = 2;

/// The command line of `report`.
#[derive(Debug, Clone, Copy)]
pub struct Args<'a> {
    pub host: &'a str,
    pub since_ms: u64,
    pub out: Option<&'a Path>,
    /// A recording file, or watchers' URLs.
    pub from: &'a [String],
    /// With a watcher's URL: where its token is.
    pub token_file: Option<&'a Path>,
    pub demo: bool,
}

/// Runs `report` as its command line says.
pub fn run_args(args: &Args, config: &Config, now_ms: u64) -> ExitCode {
    let urls = args.from.iter().filter(|from| is_watcher_url(from)).count();
    if urls > 0 && urls == args.from.len() {
        return run_from_watchers(args, config);
    }
    if args.from.len() > 1 {
        eprintln!("gpufleet report: {}", t!("report_from.one_file"));
        return ExitCode::from(EXIT_ERROR);
    }
    if args.token_file.is_some() {
        eprintln!(
            "gpufleet report: {}",
            t!("report_from.token_file_needs_url")
        );
        return ExitCode::from(EXIT_ERROR);
    }
    let request = Request {
        host: args.host.to_string(),
        since_ms: args.since_ms,
        out: args.out.map(Path::to_path_buf),
        from: args.from.first().map(PathBuf::from),
        demo: args.demo,
    };
    run(&request, config, now_ms)
}

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

/// The bundle a watcher of `--from` makes, written under `--out` as one made here would be.
fn run_from_watchers(args: &Args, config: &Config) -> ExitCode {
    let fetched = AttachToken::find(args.token_file)
        .map_err(FetchError::from)
        .and_then(|token| {
            let known = crate::report::secrets::known(config, &crate::release::process_env);
            fetch_report(args.from, &token, args.host, args.since_ms, &known)
        });
    let fetched = match fetched {
        Ok(fetched) => fetched,
        Err(e) => {
            eprintln!("gpufleet report: {e}");
            return ExitCode::from(if e.is_nothing() {
                EXIT_NOTHING
            } else {
                EXIT_ERROR
            });
        }
    };
    for name in &fetched.left_out {
        eprintln!(
            "gpufleet report: {}",
            t!("report_from.left_out", file = name)
        );
    }
    for warning in &fetched.made.warnings {
        eprintln!("gpufleet report: {warning}");
    }
    let out = args.out.unwrap_or(Path::new("."));
    match bundle::write_files(args.host, &fetched.made.files, out) {
        Ok(dir) => {
            crate::outln!("{}", dir.display());
            eprintln!("gpufleet report: {}", fetched.made.summary());
            ExitCode::from(EXIT_WRITTEN)
        }
        Err(e) => {
            eprintln!("gpufleet report: {e}");
            ExitCode::from(EXIT_ERROR)
        }
    }
}
