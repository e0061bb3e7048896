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
use crate::recording::Line;
use crate::recording::blackbox::default_dir;
use crate::recording::wire::Event;
use crate::recording::wire_notice::words_from_wire;
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
    /// Recorded, but the host was never reached: nothing to report on, and why.
    #[error("{}", t!("report_words.never_connected", host = .host, why = .why))]
    NeverConnected { host: String, why: String },
    #[error("{0}")]
    Bundle(String),
}

/// Why a host whose recorded lines hold no connection and no reading was never reached: the
/// newest failure's few words in the reader's language (its whole reason where it has none),
/// or that it was still connecting. `None` once the host connected.
fn never_connected(lines: &[Line]) -> Option<String> {
    let reached = lines
        .iter()
        .any(|l| matches!(l.event, Event::Connected { .. } | Event::Sample { .. }));
    if reached {
        return None;
    }
    let failure = lines.iter().rev().find_map(|l| match &l.event {
        Event::Disconnected {
            reason,
            summary,
            reason_words,
            summary_words,
            ..
        } => Some(if summary.is_empty() {
            words_from_wire(reason, reason_words.clone())
                .map_or_else(|| reason.clone(), |w| w.localized())
        } else {
            words_from_wire(summary, summary_words.clone())
                .map_or_else(|| summary.clone(), |w| w.localized())
        }),
        _ => None,
    });
    Some(failure.unwrap_or_else(|| t!("report_words.still_connecting").into_owned()))
}

/// A bundle made, not yet written: its files and what its summary says.
#[derive(Debug, Clone)]
pub struct Made {
    pub host: String,
    pub files: bundle::Files,
    /// When the host's fault began (UTC, RFC 3339); `None` when no fault was recorded.
    pub broken_since: Option<String>,
    /// The window, UTC.
    pub from: String,
    pub to: String,
    /// What was read around damaged or skipped lines.
    pub warnings: Vec<String>,
}

impl Made {
    /// One line: the fault and the window, in the reader's language.
    pub fn summary(&self) -> String {
        let verdict = match &self.broken_since {
            Some(since) => t!("report_words.verdict_fault", since = since),
            None => t!("report_md.verdict_none"),
        };
        t!(
            "report_words.summary",
            verdict = verdict,
            from = self.from,
            to = self.to
        )
        .into_owned()
    }
}

/// Makes the bundle of `request.host` (its `out` is not used).
pub fn make(request: &Request, config: &Config, now_ms: u64) -> Result<Made, WriteError> {
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
    if let Some(why) = never_connected(&gathered.lines) {
        return Err(WriteError::NeverConnected {
            host: request.host.clone(),
            why,
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
    Ok(Made {
        host: request.host.clone(),
        files: bundle::render(&built, &gathered, &known),
        broken_since: built.broken_since.clone(),
        from: built.window.from.clone(),
        to: built.window.to.clone(),
        warnings: gathered.warnings.clone(),
    })
}

/// Writes the bundle of `request.host` under `request.out`.
pub fn write(request: &Request, config: &Config, now_ms: u64) -> Result<Written, WriteError> {
    let made = make(request, config, now_ms)?;
    let out = request.out.clone().unwrap_or_else(|| PathBuf::from("."));
    let dir = bundle::write_files(&made.host, &made.files, &out)
        .map_err(|e| WriteError::Bundle(e.to_string()))?;
    Ok(Written {
        dir,
        summary: made.summary(),
        warnings: made.warnings,
    })
}
