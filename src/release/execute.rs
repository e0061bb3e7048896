//! Sending a release request: HTTP calls with timeouts and the provider's answer checked, a
//! local program with a deadline, or a program on the host through the caller's SSH runner.
//! Whatever comes back is sanitized, cut short and scrubbed of the token before anyone sees it.

use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use reqwest::blocking::Client;
use reqwest::header::{ACCEPT, AUTHORIZATION, HeaderValue};

use crate::remote::sanitize as clean;
use crate::words::Words;

use super::request::{AuthScheme, Envelope, HttpMethod, HttpStep, ReleaseRequest, ReleaseStep};
use super::secret::{REDACTED, Secret};

/// How much of an answer is shown.
const SHOWN_CHARS: usize = 300;
/// How much of an answer is read at all; a provider has no reason to say more.
const READ_LIMIT_BYTES: u64 = 64 * 1024;

/// Runs a program on a host over SSH (the backup, the `ssh` provider's shutdown). The console's
/// SSH layer implements it; tests use a fake.
pub trait HostRunner {
    /// Runs `argv` (no shell interprets it) on `host`, handing each output line to `on_line`.
    /// Returns the exit status, `None` when the connection ended without one.
    fn run(
        &self,
        host: &str,
        argv: &[String],
        on_line: &mut dyn FnMut(&str),
    ) -> Result<Option<i32>, String>;
}

/// Timeouts of one release.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SendOptions {
    pub connect_timeout_ms: u64,
    /// For each HTTP call as a whole, and for a local command.
    pub total_timeout_ms: u64,
}

impl Default for SendOptions {
    fn default() -> Self {
        Self {
            connect_timeout_ms: 10_000,
            total_timeout_ms: 30_000,
        }
    }
}

/// What one step got back, ready to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepAnswer {
    /// `METHOD URL` or the quoted argv.
    pub step: String,
    /// The HTTP status or the exit status.
    pub status: Option<i32>,
    /// The answer, sanitized and cut to a few hundred characters.
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    Client(String),
    NoToken,
    BadToken,
    TokenRejected {
        status: u16,
        text: String,
    },
    NotFound {
        text: String,
    },
    ServerError {
        status: u16,
        text: String,
    },
    Unexpected {
        status: u16,
        text: String,
    },
    Refused {
        text: String,
    },
    /// `url` is redacted ([`crate::redact::url`]), as in every variant.
    Timeout {
        url: String,
        timeout_ms: u64,
    },
    Unreachable {
        url: String,
        message: String,
    },
    /// The answer could not be read to its end; `message` is what the OS or reqwest said.
    ReadAnswer {
        url: String,
        message: String,
    },
    Spawn {
        program: String,
        message: String,
    },
    /// A local release command with no program.
    EmptyCommand,
    CommandTimeout {
        program: String,
        timeout_ms: u64,
    },
    CommandFailed {
        command: String,
        status: CommandStatus,
        text: String,
    },
    Remote {
        message: String,
    },
}

/// How a release command that failed ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandStatus {
    Exit(i32),
    Signal,
}

/// A failed send and the steps that did succeed before it (AutoDL may be powered off but not
/// released).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{error}")]
pub struct SendFailure {
    pub done: Vec<StepAnswer>,
    pub error: SendError,
}

/// Sends every step in order, stopping at the first failure.
pub fn send(
    request: &ReleaseRequest,
    host: &str,
    runner: &dyn HostRunner,
    options: &SendOptions,
) -> Result<Vec<StepAnswer>, SendFailure> {
    let mut done = Vec::new();
    let fail = |done: Vec<StepAnswer>, error| SendFailure { done, error };
    let token = request.token();
    let client = if request.needs_token() {
        if token.is_none() {
            return Err(fail(done, SendError::NoToken));
        }
        match http_client(options) {
            Ok(client) => Some(client),
            Err(e) => return Err(fail(done, e)),
        }
    } else {
        None
    };
    for step in &request.steps {
        let outcome = match (step, &client, token) {
            (ReleaseStep::Http(http), Some(client), Some(token)) => {
                send_http(client, http, token, options)
            }
            (ReleaseStep::Http(_), _, _) => Err(SendError::NoToken),
            (ReleaseStep::Local { argv }, _, _) => run_local(argv, options),
            (ReleaseStep::OnHost { argv }, _, _) => run_on_host(runner, host, argv),
        };
        match outcome {
            Ok(answer) => done.push(answer),
            Err(SendError::Refused { text }) if refusal_ok(step) => done.push(StepAnswer {
                step: step.summary(),
                status: None,
                text: rust_i18n::t!("release_plan.answer_refused_ok", text = text).into_owned(),
            }),
            Err(error) => return Err(fail(done, error)),
        }
    }
    Ok(done)
}

/// The HTTP client every provider call uses (releases and inventory syncs): the timeouts of
/// `options`, no redirects (one could carry the token to another host; none of these APIs
/// sends one), gpufleet's user agent.
pub(crate) fn http_client(options: &SendOptions) -> Result<Client, SendError> {
    Client::builder()
        .connect_timeout(Duration::from_millis(options.connect_timeout_ms))
        .timeout(Duration::from_millis(options.total_timeout_ms))
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("gpufleet/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| SendError::Client(root_cause(&e)))
}

/// The `Authorization` header for `token` in the provider's scheme, marked sensitive so
/// reqwest never prints it.
pub(crate) fn auth_header(auth: AuthScheme, token: &Secret) -> Result<HeaderValue, SendError> {
    let header = match auth {
        AuthScheme::Bearer => format!("Bearer {}", token.expose()),
        AuthScheme::Bare => token.expose().to_string(),
    };
    let mut value = HeaderValue::from_str(&header).map_err(|_| SendError::BadToken)?;
    value.set_sensitive(true);
    Ok(value)
}

fn refusal_ok(step: &ReleaseStep) -> bool {
    matches!(step, ReleaseStep::Http(http) if http.refusal_ok)
}

fn send_http(
    client: &Client,
    step: &HttpStep,
    token: &Secret,
    options: &SendOptions,
) -> Result<StepAnswer, SendError> {
    let method = match step.method {
        HttpMethod::Post => reqwest::Method::POST,
        HttpMethod::Put => reqwest::Method::PUT,
        HttpMethod::Delete => reqwest::Method::DELETE,
    };
    let auth = auth_header(step.auth, token)?;
    let mut request = client
        .request(method, &step.url)
        .header(ACCEPT, "application/json")
        .header(AUTHORIZATION, auth);
    if let Some(body) = &step.body {
        request = request.json(body);
    }
    // reqwest's errors print the URL, userinfo and query included.
    let response = request
        .send()
        .map_err(|e| transport_error(&e.without_url(), step, options))?;
    let url_secrets = crate::redact::secrets(&step.url);
    let status = response.status().as_u16();
    let mut bytes = Vec::new();
    response
        .take(READ_LIMIT_BYTES)
        .read_to_end(&mut bytes)
        .map_err(|e| SendError::ReadAnswer {
            url: crate::redact::url(&step.url),
            message: crate::redact::scrub(&e.to_string(), &url_secrets),
        })?;
    // A server may echo the request back, URL secrets and all.
    let raw = crate::redact::scrub(&String::from_utf8_lossy(&bytes), &url_secrets);
    let text = shown_text(&raw, Some(token));
    match status {
        200..=299 => {
            if let Some(refusal) = envelope_refusal(step.envelope, &raw) {
                return Err(SendError::Refused {
                    text: shown_text(&refusal, Some(token)),
                });
            }
            Ok(StepAnswer {
                step: step.shown_line(),
                status: Some(i32::from(status)),
                text,
            })
        }
        401 | 403 => Err(SendError::TokenRejected { status, text }),
        404 => Err(SendError::NotFound { text }),
        500..=599 => Err(SendError::ServerError { status, text }),
        _ => Err(SendError::Unexpected { status, text }),
    }
}

/// The refusal a 2xx body carries, for providers that answer 200 either way.
fn envelope_refusal(envelope: Envelope, body: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(body).ok()?;
    let message = || {
        ["msg", "message", "error"]
            .iter()
            .find_map(|key| value.get(key).and_then(|v| v.as_str()))
            .filter(|text| !text.is_empty())
            .map(str::to_string)
    };
    match envelope {
        Envelope::None => None,
        Envelope::VastSuccess => (value.get("success") == Some(&serde_json::Value::Bool(false)))
            .then(|| message().unwrap_or_else(|| "success: false".to_string())),
        Envelope::AutoDlCode => {
            let code = value.get("code")?.as_str()?;
            (code != "Success").then(|| match message() {
                Some(text) => format!("{code}: {text}"),
                None => code.to_string(),
            })
        }
    }
}

fn transport_error(error: &reqwest::Error, step: &HttpStep, options: &SendOptions) -> SendError {
    if error.is_timeout() {
        SendError::Timeout {
            url: crate::redact::url(&step.url),
            timeout_ms: options.total_timeout_ms,
        }
    } else {
        SendError::Unreachable {
            url: crate::redact::url(&step.url),
            message: crate::redact::scrub(&root_cause(error), &crate::redact::secrets(&step.url)),
        }
    }
}

/// The innermost cause ("Connection refused (os error 111)"), which says more than reqwest's
/// own "error sending request".
pub(crate) fn root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = error;
    while let Some(next) = cause.source() {
        cause = next;
    }
    clean(&cause.to_string())
}

/// Untrusted text made fit to show: the token scrubbed out (a server may echo headers back),
/// line breaks as spaces, control characters and escapes removed, cut to [`SHOWN_CHARS`].
pub fn shown_text(raw: &str, token: Option<&Secret>) -> String {
    let mut text = raw.to_string();
    if let Some(token) = token.filter(|t| !t.expose().is_empty()) {
        text = text.replace(token.expose(), REDACTED);
    }
    let text = clean(&text.replace(['\r', '\n'], " "));
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.chars().count() <= SHOWN_CHARS {
        text
    } else {
        let mut cut: String = text.chars().take(SHOWN_CHARS).collect();
        cut.push('…');
        cut
    }
}

/// What a local program printed and how it ended.
pub(crate) struct Captured {
    pub status: std::process::ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// Standard output went past the limit: what is in `stdout` is its first part only.
    pub stdout_cut: bool,
}

/// Runs `argv` (no shell), stdin empty, for at most `timeout_ms`; keeps at most `limit_bytes`
/// of each output stream (a program that prints more has its pipe closed on it). A background
/// grandchild holding the pipes open is waited for only briefly after the program exits.
pub(crate) fn capture(
    argv: &[String],
    timeout_ms: u64,
    limit_bytes: u64,
) -> Result<Captured, SendError> {
    let Some((program, args)) = argv.split_first() else {
        return Err(SendError::EmptyCommand);
    };
    let spawn_error = |e: std::io::Error| SendError::Spawn {
        program: program.clone(),
        message: e.to_string(),
    };
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(spawn_error)?;
    let reader = |pipe: Option<Box<dyn Read + Send>>| {
        let (sender, receiver) = mpsc::channel();
        if let Some(pipe) = pipe {
            thread::spawn(move || {
                let mut bytes = Vec::new();
                // One byte past the limit tells a long output from one exactly at it.
                let _ = pipe.take(limit_bytes + 1).read_to_end(&mut bytes);
                let _ = sender.send(bytes);
            });
        }
        receiver
    };
    let stdout = reader(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = reader(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let deadline = Instant::now() + Duration::from_millis(timeout_ms);
    let status = loop {
        match child.try_wait().map_err(spawn_error)? {
            Some(status) => break status,
            None if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(SendError::CommandTimeout {
                    program: program.clone(),
                    timeout_ms,
                });
            }
            None => thread::sleep(Duration::from_millis(20)),
        }
    };
    let grace = Instant::now() + Duration::from_millis(500);
    let collect = |receiver: mpsc::Receiver<Vec<u8>>| {
        receiver
            .recv_timeout(grace.saturating_duration_since(Instant::now()))
            .unwrap_or_default()
    };
    let mut stdout = collect(stdout);
    let mut stderr = collect(stderr);
    let limit = usize::try_from(limit_bytes).unwrap_or(usize::MAX);
    let stdout_cut = stdout.len() > limit;
    stdout.truncate(limit);
    stderr.truncate(limit);
    Ok(Captured {
        status,
        stdout,
        stderr,
        stdout_cut,
    })
}

fn run_local(argv: &[String], options: &SendOptions) -> Result<StepAnswer, SendError> {
    let captured = capture(argv, options.total_timeout_ms, READ_LIMIT_BYTES)?;
    let mut raw = captured.stdout;
    raw.push(b' ');
    raw.extend_from_slice(&captured.stderr);
    let text = shown_text(&String::from_utf8_lossy(&raw), None);
    let command = ReleaseStep::Local {
        argv: argv.to_vec(),
    }
    .summary();
    let status = captured.status;
    if status.success() {
        Ok(StepAnswer {
            step: command,
            status: status.code(),
            text,
        })
    } else {
        Err(SendError::CommandFailed {
            command,
            status: status
                .code()
                .map_or(CommandStatus::Signal, CommandStatus::Exit),
            text,
        })
    }
}

fn run_on_host(
    runner: &dyn HostRunner,
    host: &str,
    argv: &[String],
) -> Result<StepAnswer, SendError> {
    let mut lines = Vec::new();
    let result = runner.run(host, argv, &mut |line| lines.push(line.to_string()));
    let text = shown_text(&lines.join(" "), None);
    let command = ReleaseStep::OnHost {
        argv: argv.to_vec(),
    }
    .summary();
    match result {
        Ok(Some(0)) => Ok(StepAnswer {
            step: command,
            status: Some(0),
            text,
        }),
        // A host that shuts down drops the connection before it can report a status.
        Ok(None) => Ok(StepAnswer {
            step: command,
            status: None,
            text: rust_i18n::t!("release_plan.answer_closed").into_owned(),
        }),
        Ok(Some(code)) => Err(SendError::CommandFailed {
            command,
            status: CommandStatus::Exit(code),
            text,
        }),
        Err(message) => Err(SendError::Remote {
            message: shown_text(&message, None),
        }),
    }
}

/// `: what the provider said`, or nothing when it said nothing.
pub(super) fn detail(text: &str) -> Words {
    if text.is_empty() {
        Words::verbatim("")
    } else {
        Words::new("release_error.detail").put("text", text.to_string())
    }
}

impl SendError {
    /// Why sending a release failed; in English, the error's `Display`.
    pub fn words(&self) -> Words {
        match self {
            SendError::Client(why) => {
                Words::new("release_error.client").put("why", why.to_string())
            }
            SendError::NoToken => Words::new("release_error.no_token"),
            SendError::BadToken => Words::new("release_error.bad_token"),
            SendError::TokenRejected { status, text } => Words::new("release_error.token_rejected")
                .put("status", status.to_string())
                .put_words("detail", detail(text)),
            SendError::NotFound { text } => {
                Words::new("release_error.not_found").put_words("detail", detail(text))
            }
            SendError::ServerError { status, text } => Words::new("release_error.server_error")
                .put("status", status.to_string())
                .put_words("detail", detail(text)),
            SendError::Unexpected { status, text } => Words::new("release_error.unexpected")
                .put("status", status.to_string())
                .put_words("detail", detail(text)),
            SendError::Refused { text } => {
                Words::new("release_error.refused").put("text", text.to_string())
            }
            SendError::Timeout { url, timeout_ms } => Words::new("release_error.timeout")
                .put("url", url.to_string())
                .put("ms", timeout_ms.to_string()),
            SendError::Unreachable { url, message } => Words::new("release_error.unreachable")
                .put("url", url.to_string())
                .put("why", message.to_string()),
            SendError::ReadAnswer { url, message } => Words::new("release_error.unreachable")
                .put("url", url.to_string())
                .put_words(
                    "why",
                    Words::new("release_words.reading_answer").put("why", message.to_string()),
                ),
            SendError::EmptyCommand => Words::new("release_error.spawn")
                .put("program", "")
                .put_words("why", Words::new("release_words.empty_command")),
            SendError::Spawn { program, message } => Words::new("release_error.spawn")
                .put("program", program.to_string())
                .put("why", message.to_string()),
            SendError::CommandTimeout {
                program,
                timeout_ms,
            } => Words::new("release_error.command_timeout")
                .put("program", program.to_string())
                .put("ms", timeout_ms.to_string()),
            SendError::CommandFailed {
                command,
                status,
                text,
            } => Words::new("release_error.command_failed")
                .put("command", command.to_string())
                .put_words("status", status.words())
                .put_words("detail", detail(text)),
            SendError::Remote { message } => {
                Words::new("release_error.remote").put("why", message.to_string())
            }
        }
    }
}

impl CommandStatus {
    /// How a failed release command ended: `exit 3` (`退出码 3`), killed by a signal.
    pub fn words(self) -> Words {
        match self {
            CommandStatus::Exit(code) => {
                Words::new("release_words.exit").put("code", code.to_string())
            }
            CommandStatus::Signal => Words::new("release_words.signal"),
        }
    }
}

/// English, for the log: `exit 3`, `killed by a signal`.
impl std::fmt::Display for CommandStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.words().fmt(f)
    }
}

/// English, as the log and the audit log keep it: the catalogue's English of
/// [`SendError::words`].
impl std::fmt::Display for SendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.words().fmt(f)
    }
}
