//! Writing one host's incident bundle end to end: find its recorded lines (the black box or a
//! `--record` file), add what the state directory knows (ledger, audit log, the newest check),
//! build the report and write the bundle, scrubbed. Shared by `gpufleet report` and the
//! console's `e` key.

use std::path::PathBuf;

use rust_i18n::t;
use thiserror::Error;

use crate::audit::AuditLog;
use crate::config::Config;
use crate::cost::LedgerStore;
use crate::recording::blackbox::default_dir;
use crate::report::{self, Context, Source, bundle, gather, secrets};

/// What to write.
#[derive(Debug, Clone)]
pub struct Request {
    pub host: String,
    pub since_ms: u64,
    /// The folder the bundle's folder goes in (default: the current directory).
    pub out: Option<PathBuf>,
    /// A `--record` file instead of the black box.
    pub from: Option<PathBuf>,
    /// The demo fleet's black box instead of the real one.
    pub demo: bool,
}

/// A bundle written.
#[derive(Debug, Clone)]
pub struct Written {
    pub dir: PathBuf,
    /// One line: the fault and the window.
    pub summary: String,
    /// What was read around damaged or skipped lines.
    pub warnings: Vec<String>,
}

#[derive(Debug, Error)]
pub enum WriteError {
    #[error("{}", t!("report_words.no_state_dir"))]
    NoStateDir,
    #[error("{0}")]
    Gather(#[from] report::GatherError),
    #[error("{}", t!("report_words.nothing", host = .host, place = .place))]
    Nothing { host: String, place: String },
    #[error("{0}")]
    Bundle(String),
}

/// Writes the bundle of `request.host`.
pub fn write(request: &Request, config: &Config, now_ms: u64) -> Result<Written, WriteError> {
    let source = match &request.from {
        Some(file) => Source::File(file.clone()),
        None => Source::BlackBox(default_dir(request.demo).ok_or(WriteError::NoStateDir)?),
    };
    let gathered = gather::gather(&source, &request.host, request.since_ms)?;
    if gathered.lines.is_empty() {
        return Err(WriteError::Nothing {
            host: request.host.clone(),
            place: source.describe(),
        });
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
    let dir = bundle::write(&built, &gathered, &out, &known)
        .map_err(|e| WriteError::Bundle(e.to_string()))?;
    let verdict = match &built.broken_since {
        Some(since) => t!("report_words.verdict_fault", since = since),
        None => t!("report_md.verdict_none"),
    };
    let summary = t!(
        "report_words.summary",
        verdict = verdict,
        from = built.window.from,
        to = built.window.to
    )
    .into_owned();
    Ok(Written {
        dir,
        summary,
        warnings: gathered.warnings.clone(),
    })
}
