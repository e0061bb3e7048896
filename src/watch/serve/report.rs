//! `GET /v1/report?host=NAME&since_ms=MS`: one host's incident bundle made by the watcher from
//! what it keeps (its black box, ledgers, audit log and the host's newest check), as
//! `gpufleet report` makes it there, answered as JSON with the bundle's files for
//! `gpufleet report HOST --from URL` to write on the reader's machine. Any valid token may ask:
//! it reads what the watcher recorded and runs nothing on hosts. Only a host the watcher
//! serves is reported on, one bundle at a time, on a worker thread; the heap the bundle took
//! is handed back after.

use std::sync::{Arc, Mutex};

use serde::Serialize;

use crate::config::Config;
use crate::report::write::{Made, Request, WriteError};

/// The longest window a bundle may span: the black box keeps less than this.
pub const MAX_SINCE_MS: u64 = 31 * 86_400_000;

/// What the watcher makes bundles with: its config (prices, secrets to scrub) as reloads keep
/// it, and whether its fleet is the demo's (whose black box is the demo's folder).
#[derive(Clone)]
pub struct Reports {
    config: Arc<Mutex<Config>>,
    demo: bool,
    /// One bundle is made at a time: a window's lines are read into memory.
    one_at_a_time: Arc<tokio::sync::Semaphore>,
}

impl std::fmt::Debug for Reports {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reports")
            .field("demo", &self.demo)
            .finish_non_exhaustive()
    }
}

/// What a report request asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Asked {
    pub host: String,
    pub since_ms: u64,
}

/// Why a report request is refused before anything is read (400), in the watcher's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadQuery {
    #[error("give host=NAME")]
    NoHost,
    #[error("give since_ms=MILLISECONDS, from 1 to {MAX_SINCE_MS}")]
    BadSince,
    #[error("{0} is given twice")]
    Twice(&'static str),
}

/// Reads the query of a report request: `host` (percent-encoded) and `since_ms`.
pub fn parse_query(query: &str) -> Result<Asked, BadQuery> {
    let mut host = None;
    let mut since = None;
    for (name, value) in form_urlencoded::parse(query.as_bytes()) {
        match name.as_ref() {
            "host" if host.is_some() => return Err(BadQuery::Twice("host")),
            "host" => host = Some(value.into_owned()),
            "since_ms" if since.is_some() => return Err(BadQuery::Twice("since_ms")),
            "since_ms" => since = Some(value.into_owned()),
            _ => {}
        }
    }
    let host = host.filter(|h| !h.is_empty()).ok_or(BadQuery::NoHost)?;
    let since_ms = since
        .and_then(|s| s.parse::<u64>().ok())
        .filter(|ms| (1..=MAX_SINCE_MS).contains(ms))
        .ok_or(BadQuery::BadSince)?;
    Ok(Asked { host, since_ms })
}

/// One file of the bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct File {
    pub name: &'static str,
    pub text: String,
}

/// The answer: a status and what it says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Answer {
    #[serde(skip)]
    pub status: u16,
    /// `written`, or why not: `unknown_host`, `nothing`, `never_connected`, `failed`.
    pub outcome: &'static str,
    pub host: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<File>,
    /// When the host's fault began (UTC); absent when no fault was recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub broken_since: Option<String>,
    /// The window (UTC).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// What was read around damaged lines of the black box.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Why not, in the watcher's words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Answer {
    fn not(status: u16, outcome: &'static str, host: &str, error: Option<String>) -> Self {
        Self {
            status,
            outcome,
            host: host.to_string(),
            files: Vec::new(),
            broken_since: None,
            from: None,
            to: None,
            warnings: Vec::new(),
            error,
        }
    }

    fn written(made: Made) -> Self {
        Self {
            status: 200,
            outcome: "written",
            host: made.host,
            files: made
                .files
                .into_iter()
                .map(|(name, text)| File { name, text })
                .collect(),
            broken_since: made.broken_since,
            from: Some(made.from),
            to: Some(made.to),
            warnings: made.warnings,
            error: None,
        }
    }
}

impl Reports {
    /// Bundles made with `config`, from the demo's black box when `demo`.
    pub fn new(config: Config, demo: bool) -> Self {
        Self {
            config: Arc::new(Mutex::new(config)),
            demo,
            one_at_a_time: Arc::new(tokio::sync::Semaphore::new(1)),
        }
    }

    /// The config a reload gave.
    pub fn set_config(&self, config: Config) {
        if let Ok(mut kept) = self.config.lock() {
            *kept = config;
        }
    }

    /// Makes the bundle `asked` for, when `known` (the watcher serves the host): waits for
    /// the bundle being made before, then reads on a worker thread.
    pub async fn answer(&self, asked: Asked, known: bool) -> Answer {
        if !known {
            return Answer::not(404, "unknown_host", &asked.host, None);
        }
        let Ok(_turn) = self.one_at_a_time.acquire().await else {
            return Answer::not(503, "failed", &asked.host, None);
        };
        let config = self.config.lock().map(|c| c.clone()).unwrap_or_default();
        let demo = self.demo;
        let host = asked.host.clone();
        let made = tokio::task::spawn_blocking(move || {
            let request = Request {
                host: asked.host,
                since_ms: asked.since_ms,
                out: None,
                from: None,
                demo,
            };
            let made =
                crate::report::write::make(&request, &config, crate::telemetry::source::now_ms());
            crate::start_up_pages::trim_heap();
            made
        })
        .await;
        match made {
            Ok(Ok(made)) => Answer::written(made),
            Ok(Err(e @ WriteError::Nothing { .. })) => {
                Answer::not(404, "nothing", &host, Some(e.to_string()))
            }
            Ok(Err(WriteError::NeverConnected { why, .. })) => {
                Answer::not(404, "never_connected", &host, Some(why))
            }
            Ok(Err(e)) => Answer::not(500, "failed", &host, Some(e.to_string())),
            Err(_) => Answer::not(
                500,
                "failed",
                &host,
                Some("the bundle was not made".to_string()),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_names_one_host_percent_encoded_and_a_bounded_window() {
        assert_eq!(
            parse_query("host=gpu%20east%2F1&since_ms=7200000"),
            Ok(Asked {
                host: "gpu east/1".to_string(),
                since_ms: 7_200_000
            })
        );
        assert_eq!(parse_query("since_ms=10"), Err(BadQuery::NoHost));
        assert_eq!(parse_query("host=&since_ms=10"), Err(BadQuery::NoHost));
        assert_eq!(parse_query("host=a"), Err(BadQuery::BadSince));
        assert_eq!(parse_query("host=a&since_ms=0"), Err(BadQuery::BadSince));
        assert_eq!(
            parse_query(&format!("host=a&since_ms={}", MAX_SINCE_MS + 1)),
            Err(BadQuery::BadSince)
        );
        assert_eq!(
            parse_query("host=a&host=b&since_ms=10"),
            Err(BadQuery::Twice("host"))
        );
    }

    #[test]
    fn a_host_the_watcher_does_not_serve_is_not_looked_for() {
        let reports = Reports::new(Config::default(), true);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        let answer = runtime.block_on(reports.answer(
            Asked {
                host: "../../etc".to_string(),
                since_ms: 1_000,
            },
            false,
        ));
        assert_eq!((answer.status, answer.outcome), (404, "unknown_host"));
        assert!(answer.files.is_empty());
    }
}
