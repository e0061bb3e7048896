//! One watcher's event stream: the request (bearer token), the header line checked as a
//! recording's is (format, version), then one [`Line`] at a time; blank lines (the watcher's
//! heartbeat) are passed over. Anything that is not a line of the format ends the stream with
//! an error rather than being guessed at.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::time::Duration;

use rust_i18n::t;

use crate::recording::read::{MAX_LINE_BYTES, check_header};
use crate::recording::wire::{Header, Line};

/// How long connecting to a watcher may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// The response header giving how many state lines follow the header line.
const STATE_LINES_HEADER: &str = "x-gpufleet-state-lines";

/// Why a watcher's stream cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum AttachError {
    #[error("{}", t!("attach.no_token"))]
    NoToken,
    #[error("{}", t!("attach.token_file", path = .path.display(), error = .error))]
    TokenFile {
        path: std::path::PathBuf,
        error: String,
    },
    #[error("{}", t!("attach.bad_url", url = .0 : {:?}))]
    BadUrl(String),
    #[error("{}", t!("attach.connect", url = .url, error = .error))]
    Connect { url: String, error: String },
    #[error("{}", t!("attach.unauthorized", url = .0))]
    Unauthorized(String),
    #[error("{}", t!("attach.status", url = .url, status = .status))]
    Status { url: String, status: u16 },
    /// The stream is not of a format this build reads (a newer watcher, or not a watcher).
    #[error("{}", t!("attach.format", url = .url, why = .why))]
    Format { url: String, why: String },
    #[error("{}", t!("attach.ended", url = .0))]
    Ended(String),
}

/// An open stream, its header read.
pub struct EventStream {
    pub url: String,
    pub header: Header,
    /// State lines the watcher said follow the header (what rebuilds its hosts now).
    pub state_lines: Option<usize>,
    reader: BufReader<Box<dyn Read + Send>>,
}

/// Whether `text` is a watcher's URL (`http://…`, `https://…`), rather than a file's name.
pub fn is_watcher_url(text: &str) -> bool {
    text.starts_with("http://") || text.starts_with("https://")
}

/// `base` as the watcher's URL that paths are put after (without a trailing `/`).
pub(super) fn watcher_base(base: &str) -> Result<String, AttachError> {
    let url = base.trim_end_matches('/');
    if !is_watcher_url(url) {
        return Err(AttachError::BadUrl(base.to_string()));
    }
    Ok(url.to_string())
}

/// Opens `base`'s event stream (`base` is the watcher's URL, `http://host:port`) with `token`.
pub fn open(base: &str, token: &str) -> Result<EventStream, AttachError> {
    let url = watcher_base(base)?;
    let connect = |error: String| AttachError::Connect {
        url: url.clone(),
        error,
    };
    let client = reqwest::blocking::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        // The stream lasts as long as the watcher; the heartbeat says it is alive.
        .timeout(None::<Duration>)
        .build()
        .map_err(|e| connect(crate::error_text::chain(&e)))?;
    let response = client
        .get(format!("{url}/v1/events"))
        .bearer_auth(token)
        .send()
        .map_err(|e| connect(crate::error_text::chain(&e)))?;
    match response.status().as_u16() {
        200 => {}
        401 | 403 => return Err(AttachError::Unauthorized(url)),
        status => return Err(AttachError::Status { url, status }),
    }
    let state_lines = response
        .headers()
        .get(STATE_LINES_HEADER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok());
    let body: Box<dyn Read + Send> = Box::new(response);
    let mut reader = BufReader::new(body);
    let first = read_line(&mut reader, &url)?.ok_or_else(|| AttachError::Ended(url.clone()))?;
    let header = check_header(&first, Path::new(&url), 1).map_err(|e| AttachError::Format {
        url: url.clone(),
        why: e.to_string(),
    })?;
    Ok(EventStream {
        url,
        header,
        state_lines,
        reader,
    })
}

impl EventStream {
    /// The next event line; `None` when the watcher closed the stream.
    pub fn next_line(&mut self) -> Result<Option<Line>, AttachError> {
        loop {
            let Some(text) = read_line(&mut self.reader, &self.url)? else {
                return Ok(None);
            };
            if text.trim().is_empty() {
                continue;
            }
            return serde_json::from_str::<Line>(&text).map(Some).map_err(|e| {
                AttachError::Format {
                    url: self.url.clone(),
                    why: t!("recording_error.not_an_event", why = e).into_owned(),
                }
            });
        }
    }
}

/// One whole line without its newline; `None` at the end of the stream (a line cut short by
/// the end is dropped: the watcher stopped mid-line).
fn read_line(
    reader: &mut BufReader<Box<dyn Read + Send>>,
    url: &str,
) -> Result<Option<String>, AttachError> {
    let mut bytes = Vec::new();
    reader
        .by_ref()
        .take(MAX_LINE_BYTES + 1)
        .read_until(b'\n', &mut bytes)
        .map_err(|e| AttachError::Connect {
            url: url.to_string(),
            error: e.to_string(),
        })?;
    if bytes.last() != Some(&b'\n') {
        if bytes.len() as u64 > MAX_LINE_BYTES {
            return Err(AttachError::Format {
                url: url.to_string(),
                why: t!("recording_error.line_too_long", bytes = MAX_LINE_BYTES).into_owned(),
            });
        }
        return Ok(None);
    }
    bytes.pop();
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| AttachError::Format {
            url: url.to_string(),
            why: t!("recording_error.not_utf8").into_owned(),
        })
}
