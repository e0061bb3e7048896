//! One account's HTTP calls: the release code's client (timeouts, no redirects) and its
//! `Authorization` header, requests paced to the provider's documented limit, 429 answered by
//! waiting (`Retry-After` when the provider sends one, else a backoff of our own), and every
//! other answer judged: the token rejected, not found, the server failing, an HTML page where
//! JSON belongs, JSON cut short. Error texts are sanitized and scrubbed of the token; a 2xx
//! body is never quoted (AutoDL's carries the root password).

use std::io::Read;
use std::thread;
use std::time::{Duration, Instant};

use reqwest::Url;
use reqwest::blocking::Client;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, RETRY_AFTER};

use crate::release::{AuthScheme, Secret, SendError, auth_header, root_cause, shown_text};

/// The most of one answer that is read; a page of 25 vast instances is ~100 KB.
pub const MAX_ANSWER_BYTES: u64 = 16 * 1024 * 1024;

/// How fast an account may be asked, and how a 429 is waited out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pace {
    /// The least time between two requests.
    pub min_gap_ms: u64,
    /// The first wait after a 429 without `Retry-After`; each next wait doubles.
    pub backoff_ms: u64,
    /// How many times a 429 is retried before the sync of the account gives up.
    pub retries: u32,
    /// The longest `Retry-After` honoured; a longer one ends the sync with its value.
    pub max_retry_after_s: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    #[error("{0}")]
    Send(SendError),
    #[error("{}{}", rust_i18n::t!("provider_fetch.token_rejected", status = .status), detail(.text))]
    TokenRejected { status: u16, text: String },
    #[error("{}{}", rust_i18n::t!("provider_fetch.not_found", url = .url), detail(.text))]
    NotFound { url: String, text: String },
    #[error("{}{}", rust_i18n::t!("provider_fetch.rate_limited", tries = .tries), after(*.retry_after_s))]
    RateLimited {
        tries: u32,
        retry_after_s: Option<u64>,
    },
    #[error("{}{}", rust_i18n::t!("provider_fetch.server", status = .status), detail(.text))]
    Server { status: u16, text: String },
    #[error("{}{}", rust_i18n::t!("provider_fetch.unexpected", status = .status), detail(.text))]
    Unexpected { status: u16, text: String },
    #[error("{}{}", rust_i18n::t!("provider_fetch.html", status = .status), detail(.title))]
    Html { status: u16, title: String },
    #[error("{}", rust_i18n::t!("provider_fetch.bad_json", why = .why))]
    BadJson { why: String },
    #[error("{}", rust_i18n::t!("provider_fetch.shape", what = .what))]
    Shape { what: String },
    #[error("{}", rust_i18n::t!("provider_fetch.refused", text = .text))]
    Refused { text: String },
}

/// The answer lacks `field` (`no "data"`).
pub fn no_field(field: &str) -> FetchError {
    FetchError::Shape {
        what: rust_i18n::t!("provider_shape.no_field", field = field).into_owned(),
    }
}

/// The answer lacks the list `field` (`no "pods" list`).
pub fn no_list(field: &str) -> FetchError {
    FetchError::Shape {
        what: rust_i18n::t!("provider_shape.no_list", field = field).into_owned(),
    }
}

fn detail(text: &str) -> String {
    if text.is_empty() {
        String::new()
    } else {
        format!(": {text}")
    }
}

fn after(retry_after_s: Option<u64>) -> String {
    retry_after_s.map_or_else(String::new, |s| {
        rust_i18n::t!("provider_fetch.asks_to_wait", seconds = s).into_owned()
    })
}

/// A GET or a POST with a JSON body.
#[derive(Debug, Clone)]
pub enum Method {
    Get,
    Post(serde_json::Value),
}

/// Sends one account's requests in turn, paced.
pub struct Fetcher<'a> {
    client: &'a Client,
    token: &'a Secret,
    auth: AuthScheme,
    pace: Pace,
    base: Url,
    timeout_ms: u64,
    last_sent: Option<Instant>,
    /// Requests sent, 429 retries included (for tests and the bench).
    pub sent: u32,
}

impl<'a> Fetcher<'a> {
    /// `base` is the checked `base_url` (or the provider's address); paths are appended to its
    /// path, its query kept.
    pub fn new(
        client: &'a Client,
        token: &'a Secret,
        auth: AuthScheme,
        pace: Pace,
        base: &str,
        timeout_ms: u64,
    ) -> Result<Self, FetchError> {
        let base = Url::parse(base).map_err(|_| FetchError::Shape {
            what: rust_i18n::t!("provider_fetch.base_url", url = crate::redact::url(base))
                .into_owned(),
        })?;
        Ok(Self {
            client,
            token,
            auth,
            pace,
            base,
            timeout_ms,
            last_sent: None,
            sent: 0,
        })
    }

    /// The address of `path` with `query` pairs added.
    pub fn url(&self, path: &str, query: &[(&str, &str)]) -> Url {
        let mut url = self.base.clone();
        let joined = format!("{}{path}", self.base.path().trim_end_matches('/'));
        url.set_path(&joined);
        if !query.is_empty() {
            let mut pairs = url.query_pairs_mut();
            for (key, value) in query {
                pairs.append_pair(key, value);
            }
        }
        url
    }

    /// Sends the request (waiting out 429s) and parses the 2xx answer as JSON.
    pub fn json(&mut self, method: &Method, url: &Url) -> Result<serde_json::Value, FetchError> {
        let mut wait_ms = self.pace.backoff_ms;
        let mut tries = 0;
        loop {
            self.wait_turn();
            tries += 1;
            let answer = self.send_once(method, url)?;
            if answer.status != 429 {
                return judge(answer, url, self.token);
            }
            if tries > self.pace.retries {
                return Err(FetchError::RateLimited {
                    tries,
                    retry_after_s: answer.retry_after_s,
                });
            }
            let pause_ms = match answer.retry_after_s {
                Some(s) if s > self.pace.max_retry_after_s => {
                    return Err(FetchError::RateLimited {
                        tries,
                        retry_after_s: Some(s),
                    });
                }
                Some(s) => s.saturating_mul(1000),
                None => {
                    let pause = wait_ms;
                    wait_ms = wait_ms.saturating_mul(2);
                    pause
                }
            };
            tracing::debug!(url = %crate::redact::url(url.as_str()), pause_ms, "429, waiting");
            thread::sleep(Duration::from_millis(pause_ms));
        }
    }

    fn wait_turn(&mut self) {
        if let Some(last) = self.last_sent {
            let due = last + Duration::from_millis(self.pace.min_gap_ms);
            let now = Instant::now();
            if due > now {
                thread::sleep(due - now);
            }
        }
        self.last_sent = Some(Instant::now());
        self.sent += 1;
    }

    fn send_once(&self, method: &Method, url: &Url) -> Result<Answer, FetchError> {
        let auth = auth_header(self.auth, self.token).map_err(FetchError::Send)?;
        let mut request = match method {
            Method::Get => self.client.get(url.clone()),
            Method::Post(body) => self.client.post(url.clone()).json(body),
        };
        request = request
            .header(ACCEPT, "application/json")
            .header(AUTHORIZATION, auth);
        let shown_url = crate::redact::url(url.as_str());
        let url_secrets = crate::redact::secrets(url.as_str());
        let response = request.send().map_err(|e| {
            let e = e.without_url();
            FetchError::Send(if e.is_timeout() {
                SendError::Timeout {
                    url: shown_url.clone(),
                    timeout_ms: self.timeout_ms,
                }
            } else {
                SendError::Unreachable {
                    url: shown_url.clone(),
                    message: crate::redact::scrub(&root_cause(&e), &url_secrets),
                }
            })
        })?;
        let status = response.status().as_u16();
        let retry_after_s = response
            .headers()
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        let html = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.to_ascii_lowercase().contains("text/html"));
        let mut bytes = Vec::new();
        response
            .take(MAX_ANSWER_BYTES)
            .read_to_end(&mut bytes)
            .map_err(|e| {
                FetchError::Send(SendError::ReadAnswer {
                    url: shown_url.clone(),
                    message: crate::redact::scrub(&root_cause(&e), &url_secrets),
                })
            })?;
        let text = crate::redact::scrub(&String::from_utf8_lossy(&bytes), &url_secrets);
        Ok(Answer {
            status,
            retry_after_s,
            html,
            text,
        })
    }
}

struct Answer {
    status: u16,
    retry_after_s: Option<u64>,
    html: bool,
    text: String,
}

fn looks_like_html(answer: &Answer) -> bool {
    answer.html || answer.text.trim_start().starts_with('<')
}

/// The `<title>` of an HTML page, made fit to show.
fn html_title(text: &str, token: &Secret) -> String {
    let lower = text.to_ascii_lowercase();
    let title = lower
        .find("<title>")
        .and_then(|open| {
            let from = open + "<title>".len();
            lower[from..]
                .find("</title>")
                .map(|len| &text[from..from + len])
        })
        .unwrap_or_default();
    shown_text(title, Some(token))
}

fn judge(answer: Answer, url: &Url, token: &Secret) -> Result<serde_json::Value, FetchError> {
    let status = answer.status;
    let text = || {
        if looks_like_html(&answer) {
            rust_i18n::t!(
                "provider_fetch.an_html_page",
                title = html_title(&answer.text, token)
            )
            .into_owned()
        } else {
            shown_text(&answer.text, Some(token))
        }
    };
    match status {
        200..=299 => {}
        401 | 403 => {
            return Err(FetchError::TokenRejected {
                status,
                text: text(),
            });
        }
        404 => {
            return Err(FetchError::NotFound {
                url: crate::redact::url(url.as_str()),
                text: text(),
            });
        }
        500..=599 => {
            return Err(FetchError::Server {
                status,
                text: text(),
            });
        }
        _ => {
            return Err(FetchError::Unexpected {
                status,
                text: text(),
            });
        }
    }
    if looks_like_html(&answer) {
        return Err(FetchError::Html {
            status,
            title: html_title(&answer.text, token),
        });
    }
    serde_json::from_str(&answer.text).map_err(|e| FetchError::BadJson {
        why: if e.is_eof() {
            rust_i18n::t!(
                "provider_fetch.ends_early_at",
                line = e.line(),
                column = e.column()
            )
            .into_owned()
        } else {
            rust_i18n::t!(
                "provider_fetch.json_error_at",
                kind = kind(&e),
                line = e.line(),
                column = e.column()
            )
            .into_owned()
        },
    })
}

fn kind(error: &serde_json::Error) -> String {
    match error.classify() {
        serde_json::error::Category::Syntax => rust_i18n::t!("provider_fetch.syntax_error"),
        serde_json::error::Category::Data => rust_i18n::t!("provider_fetch.unexpected_data"),
        serde_json::error::Category::Eof => rust_i18n::t!("provider_fetch.ends_early"),
        serde_json::error::Category::Io => rust_i18n::t!("provider_fetch.read_error"),
    }
    .into_owned()
}
