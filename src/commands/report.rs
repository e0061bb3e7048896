//! `gpufleet report HOST [--since 2h] [--out DIR] [--from FILE]`: gathers the host's recorded
//! events, builds the report and writes the bundle. Exit 0 written, 1 nothing recorded for the
//! host in the window, 2 an error (an unreadable or damaged recording, a folder not writable).

use std::path::PathBuf;
use std::process::ExitCode;

use crate::audit::AuditLog;
use crate::config::Config;
use crate::cost::LedgerStore;
use crate::recording::blackbox::default_dir;
use crate::report::{self, Context, Source, bundle, gather, secrets};

pub const EXIT_WRITTEN: u8 = 0;
pub const EXIT_NOTHING: u8 = 1;
pub const EXIT_ERROR: u8 = 2;

/// What the command line asked for.
pub struct Request {
    pub host: String,
    pub since_ms: u64,
    pub out: Option<PathBuf>,
    pub from: Option<PathBuf>,
    /// The demo fleet's black box instead of the real one.
    pub demo: bool,
}

pub fn run(request: &Request, config: &Config, now_ms: u64) -> ExitCode {
    let fail = |message: String| {
        eprintln!("gpufleet report: {message}");
        ExitCode::from(EXIT_ERROR)
    };
    let source = match &request.from {
        Some(file) => Source::File(file.clone()),
        None => match default_dir(request.demo) {
            Some(dir) => Source::BlackBox(dir),
            None => {
                return fail(
                    "no state directory for the black box: set GPUFLEET_STATE_DIR or \
                     XDG_STATE_HOME, or give a recording with --from"
                        .to_string(),
                );
            }
        },
    };
    let gathered = match gather::gather(&source, &request.host, request.since_ms) {
        Ok(gathered) => gathered,
        Err(e) => return fail(e.to_string()),
    };
    for warning in &gathered.warnings {
        eprintln!("gpufleet report: {warning}");
    }
    if gathered.lines.is_empty() {
        eprintln!(
            "gpufleet report: nothing recorded for {} in {} (the console and `gpufleet watch` \
             keep a black box of the hosts they watch; `--from FILE` reads a --record file)",
            request.host,
            source.describe()
        );
        return ExitCode::from(EXIT_NOTHING);
    }
    // The demo fleet has no ledgers, checks or audit entries of its own.
    let book = (!request.demo)
        .then(|| LedgerStore::open_default().ok()?.load().ok())
        .flatten();
    let audit = (!request.demo)
        .then(|| AuditLog::open_default().ok()?.read_all().ok())
        .flatten()
        .unwrap_or_default();
    let check = (!request.demo)
        .then(|| {
            crate::check::storage::load_latest(&request.host)
                .ok()
                .flatten()
        })
        .flatten();
    let ctx = Context {
        config,
        book: book.as_ref(),
        audit: &audit,
        check: check.as_ref(),
        now_ms,
    };
    let built = report::build(&request.host, &source, &gathered, &ctx);
    let known = secrets::known(config, &crate::release::process_env);
    let out = request.out.clone().unwrap_or_else(|| PathBuf::from("."));
    match bundle::write(&built, &gathered, &out, &known) {
        Ok(dir) => {
            println!("{}", dir.display());
            eprintln!(
                "gpufleet report: {} ({} to {}); the ticket text is in report.md",
                match &built.broken_since {
                    Some(since) => format!("fault since {since}"),
                    None => "no fault recorded".to_string(),
                },
                built.window.from,
                built.window.to
            );
            ExitCode::from(EXIT_WRITTEN)
        }
        Err(e) => fail(e.to_string()),
    }
}
