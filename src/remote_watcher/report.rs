//! `gpufleet report HOST --from URL`: the host's incident bundle made by the watcher at URL
//! (`GET /v1/report`, see `crate::watch::serve::report`) from what it recorded, written here
//! by [`crate::report::bundle::write_files`] as a bundle made here would be. The answer is
//! untrusted: only the bundle's own file names are written (any other is left out and said),
//! every text is scrubbed again of the secrets this machine knows, and what is printed of it
//! is sanitized for the terminal.

use std::io::Read;
use std::time::Duration;

use rust_i18n::t;

use crate::report::bundle;
use crate::report::write::Made;

use super::stream::AttachError;

/// How long connecting to a watcher may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long the watcher may take to make and send a bundle (a day's window is read whole).
const ANSWER_TIMEOUT: Duration = Duration::from_secs(10 * 60);
/// The largest answer read: several times a host's black box at its default cap.
const MAX_ANSWER_BYTES: u64 = 512 << 20;

/// Why no bundle came from the watcher.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// No token, a bad URL, an unreachable watcher, a refused token, another status.
    #[error(transparent)]
    Attach(#[from] AttachError),
    /// The watcher serves no host of that name.
    #[error("{}", t!("report_from.unknown_host", host = .host, url = .url))]
    UnknownHost { host: String, url: String },
    /// The watcher recorded nothing of the host in the window.
    #[error("{}", t!("report_from.nothing", host = .host, url = .url))]
    Nothing { host: String, url: String },
    /// The watcher recorded the host but never reached it: why, in its words.
    #[error("{}", t!("report_words.never_connected", host = .host, why = .why))]
    NeverConnected { host: String, why: String },
    /// The answer is no bundle (a watcher of an older gpufleet makes none, or not a watcher).
    #[error("{}", t!("report_from.not_served", url = .url, status = .status))]
    NotServed { url: String, status: u16 },
    /// The watcher could not make the bundle: why, in its words.
    #[error("{}", t!("report_from.failed", url = .url, why = .why))]
    Failed { url: String, why: String },
    /// What came back is not a bundle this build reads.
    #[error("{}", t!("report_from.bad_answer", url = .url, why = .why))]
    BadAnswer { url: String, why: String },
}

impl FetchError {
    /// Nothing to report on (exit 1), rather than an error (exit 2).
    pub fn is_nothing(&self) -> bool {
        matches!(
            self,
            Self::UnknownHost { .. } | Self::Nothing { .. } | Self::NeverConnected { .. }
        )
    }
}

/// A bundle fetched, ready to write, with the names of files the watcher sent that are not
/// the bundle's (left out).
#[derive(Debug)]
pub struct Fetched {
    pub made: Made,
    pub left_out: Vec<String>,
}

/// Asks the watcher at `base` with `token` for the bundle of `host` over the `since_ms` before
/// its newest recorded event; `known_secrets` are scrubbed from every file again.
pub(super) fn fetch_with(
    base: &str,
    token: &str,
    host: &str,
    since_ms: u64,
    known_secrets: &[String],
) -> Result<Fetched, FetchError> {
    let url = super::stream::watcher_base(base)?;
    let connect = |error: String| AttachError::Connect {
        url: url.clone(),
        error,
    };
    let client = reqwest::blocking::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .timeout(ANSWER_TIMEOUT)
        .build()
        .map_err(|e| connect(crate::error_text::chain(&e)))?;
    let query = form_urlencoded::Serializer::new(String::new())
        .append_pair("host", host)
        .append_pair("since_ms", &since_ms.to_string())
        .finish();
    let response = client
        .get(format!("{url}/v1/report?{query}"))
        .bearer_auth(token)
        .send()
        .map_err(|e| connect(crate::error_text::chain(&e)))?;
    let status = response.status().as_u16();
    if matches!(status, 401 | 403) {
        return Err(AttachError::Unauthorized(url).into());
    }
    let mut body = Vec::new();
    response
        .take(MAX_ANSWER_BYTES + 1)
        .read_to_end(&mut body)
        .map_err(|e| connect(e.to_string()))?;
    let bad = |why: String| FetchError::BadAnswer {
        url: url.clone(),
        why,
    };
    if body.len() as u64 > MAX_ANSWER_BYTES {
        return Err(bad(t!(
            "report_from.too_long",
            mib = MAX_ANSWER_BYTES >> 20
        )
        .into_owned()));
    }
    let answer: serde_json::Value = match serde_json::from_slice(&body) {
        Ok(answer) => answer,
        // Not JSON: a watcher without reports (an older one answers 404 in plain text), or
        // not a watcher at all.
        Err(_) => return Err(FetchError::NotServed { url, status }),
    };
    let text = |field: &str| said(&answer, field);
    match (status, answer["outcome"].as_str().unwrap_or_default()) {
        (200, "written") => {}
        (_, "unknown_host") => {
            return Err(FetchError::UnknownHost {
                host: host.to_string(),
                url,
            });
        }
        (_, "nothing") => {
            return Err(FetchError::Nothing {
                host: host.to_string(),
                url,
            });
        }
        (_, "never_connected") => {
            return Err(FetchError::NeverConnected {
                host: host.to_string(),
                why: text("error"),
            });
        }
        (200, other) => return Err(bad(crate::remote::sanitize(other))),
        (_, _) => {
            let why = text("error");
            return Err(FetchError::Failed {
                url,
                why: if why.is_empty() {
                    format!("HTTP {status}")
                } else {
                    why
                },
            });
        }
    }
    let mut files = Vec::new();
    let mut left_out = Vec::new();
    for file in answer["files"].as_array().map(Vec::as_slice).unwrap_or(&[]) {
        let name = file["name"].as_str().unwrap_or_default();
        let Some(text) = file["text"].as_str() else {
            return Err(bad(t!(
                "report_from.no_text",
                file = crate::remote::sanitize(name)
            )
            .into_owned()));
        };
        match bundle::file_name(name) {
            Some(name) if !files.iter().any(|(kept, _)| *kept == name) => {
                files.push((name, crate::report::secrets::clean(text, known_secrets)));
            }
            _ => left_out.push(crate::remote::sanitize(name)),
        }
    }
    if files.is_empty() {
        return Err(bad(t!("report_from.no_files").into_owned()));
    }
    let optional = |field: &str| Some(text(field)).filter(|s| !s.is_empty());
    Ok(Fetched {
        made: Made {
            host: host.to_string(),
            files,
            broken_since: optional("broken_since"),
            from: text("from"),
            to: text("to"),
            warnings: answer["warnings"]
                .as_array()
                .map(|warnings| {
                    warnings
                        .iter()
                        .map(|w| crate::remote::sanitize(w.as_str().unwrap_or_default()))
                        .collect()
                })
                .unwrap_or_default(),
        },
        left_out,
    })
}

/// A text field of a watcher's JSON answer, sanitized for the terminal; empty when absent.
pub(super) fn said(answer: &serde_json::Value, field: &str) -> String {
    answer[field]
        .as_str()
        .map(crate::remote::sanitize)
        .unwrap_or_default()
}
