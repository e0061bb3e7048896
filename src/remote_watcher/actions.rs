//! What an attached console asks its watcher to do (`POST /v1/actions`, see `crate::watch::serve`):
//! a release, restart or start (the name typed in the console's dialog as its confirmation)
//! or a hold, sent to the watcher that has the host, under the host's name there. Each action
//! gets one
//! idempotency key, sent again on every try: a try cut before its answer came is asked again
//! and reads the outcome back, so the watcher never runs one action twice. A token that may
//! only watch gets the watcher's 403, said as such.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rust_i18n::t;

use crate::fleet::HostId;
use crate::release::ReleaseAction;
use crate::telemetry::source::now_ms;

/// How long connecting to a watcher may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long one try may take in all (a release waits for the provider).
const TRY_TIMEOUT: Duration = Duration::from_secs(120);
/// How long one try of a check may take (its benchmarks and sustained load).
const CHECK_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// Tries of one action when the connection fails, each with the same key.
const TRIES: u32 = 3;
/// The wait before the second try, doubled before each next one.
const FIRST_RETRY: Duration = Duration::from_millis(500);

/// What the console asks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ask {
    /// Cancel the host's auto-release countdown on the watcher (`gpufleet hold`).
    Hold,
    /// Release, restart or start the host: `typed` is the name typed in the dialog.
    Release {
        action: ReleaseAction,
        typed: String,
    },
    /// Stop a job's process: SIGINT, then SIGTERM after `grace` seconds.
    StopJob { pid: u32, grace: u64 },
    /// Run the host's acceptance check on the watcher; its report comes back.
    Check,
    /// Run one runbook step on the watcher, which builds its command from its own catalogue
    /// and runs it only when it is `command` (the one shown here and confirmed). `run` names
    /// the console's run of the runbook.
    Step {
        run: String,
        runbook: String,
        step: String,
        params: Vec<(String, String)>,
        command: Vec<String>,
    },
}

/// What the watcher said it did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Answer {
    /// What was done (a release: the provider's acceptance; a check: its status word).
    pub said: Option<String>,
    /// A check's report, as `gpufleet check` prints it (sanitized).
    pub report: Option<String>,
    /// A runbook step's exit status.
    pub exit_status: Option<i32>,
    /// A runbook step that ran past its timeout.
    pub timed_out: bool,
    /// A runbook step's output, each line sanitized.
    pub output: Vec<String>,
}

impl Ask {
    fn word(&self) -> &'static str {
        match self {
            Ask::Hold => "hold",
            // A restart or start is asked by its own name.
            Ask::Release { action, .. } if !action.releases() => action.as_str(),
            Ask::Release { .. } => "release",
            Ask::StopJob { .. } => "stop-job",
            Ask::Check => "check",
            Ask::Step { .. } => "runbook-step",
        }
    }

    /// How long one try may take: a check or a job's grace period takes longer.
    fn try_timeout(&self) -> Duration {
        match self {
            Ask::Check | Ask::Step { .. } => CHECK_TIMEOUT,
            Ask::StopJob { grace, .. } => TRY_TIMEOUT + Duration::from_secs(*grace),
            Ask::Hold | Ask::Release { .. } => TRY_TIMEOUT,
        }
    }
}

/// Why the watcher did not do what was asked; said in the reader's language, with the
/// watcher's own words (English) quoted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AskError {
    #[error("{}", t!("attach_action.watch_only", url = .0))]
    WatchOnly(String),
    #[error("{}", t!("attach_action.unknown_host", host = .0))]
    UnknownHost(String),
    #[error("{}", t!("attach_action.not_served", url = .0))]
    NotServed(String),
    #[error("{}", t!("attach_action.not_confirmed", why = .0))]
    NotConfirmed(String),
    #[error("{}", t!("attach_action.refused", why = .0))]
    Refused(String),
    #[error("{}", t!("attach_action.failed", why = .0))]
    Failed(String),
    #[error("{}", t!("attach_action.unreachable", url = .url, error = .error))]
    Unreachable { url: String, error: String },
}

/// Where one console host is on its watcher.
#[derive(Debug, Clone)]
struct Route {
    url: String,
    /// The host's name on the watcher.
    name: String,
    /// The host's name in this console (`name@watcher` where names clash).
    shown: String,
}

/// Sends a console's actions to the watchers that have its hosts.
#[derive(Clone)]
pub struct WatcherActions {
    /// By console host id; a host a watcher adds later is routed when it comes.
    routes: Arc<Mutex<Vec<Option<Route>>>>,
    /// The bearer token (the console's own); never shown.
    token: String,
}

impl std::fmt::Debug for WatcherActions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WatcherActions")
            .field("routes", &self.routes)
            .finish_non_exhaustive()
    }
}

/// Keys made by this console so far (with the process and the time, unique to the action).
static ASKED: AtomicU64 = AtomicU64::new(0);

impl WatcherActions {
    pub(super) fn new(routes: Vec<(HostId, String, String, String)>, token: String) -> Self {
        let mut table: Vec<Option<Route>> = Vec::new();
        for (id, url, name, shown) in routes {
            if table.len() <= id {
                table.resize(id + 1, None);
            }
            table[id] = Some(Route { url, name, shown });
        }
        Self {
            routes: Arc::new(Mutex::new(table)),
            token,
        }
    }

    /// Routes console host `id` (a host a watcher added later) to `name` on `url`.
    pub(super) fn add(&self, id: HostId, url: String, name: String, shown: String) {
        if let Ok(mut routes) = self.routes.lock() {
            if routes.len() <= id {
                routes.resize(id + 1, None);
            }
            routes[id] = Some(Route { url, name, shown });
        }
    }

    /// Asks the watcher of console host `host` to do `ask`; what it said it did when it did.
    pub fn ask(&self, host: HostId, ask: &Ask) -> Result<Answer, AskError> {
        let route = self
            .routes
            .lock()
            .ok()
            .and_then(|routes| routes.get(host).cloned().flatten());
        let Some(route) = route else {
            return Err(AskError::UnknownHost(host.to_string()));
        };
        self.ask_route(&route, ask)
    }

    /// The name this console shows console host `host` under.
    pub fn shown(&self, host: HostId) -> Option<String> {
        self.routes
            .lock()
            .ok()
            .and_then(|routes| routes.get(host).cloned().flatten())
            .map(|route| route.shown)
    }

    /// Where the host this console shows as `shown` is asked.
    fn route_named(&self, shown: &str) -> Option<Route> {
        self.routes.lock().ok().and_then(|routes| {
            routes
                .iter()
                .flatten()
                .find(|route| route.shown == shown)
                .cloned()
        })
    }

    /// As [`Self::ask`], for the host this console shows as `shown`.
    pub fn ask_named(&self, shown: &str, ask: &Ask) -> Result<Answer, AskError> {
        let route = self.route_named(shown);
        let Some(route) = route else {
            return Err(AskError::UnknownHost(shown.to_string()));
        };
        self.ask_route(&route, ask)
    }

    /// The incident bundle of the host this console shows as `shown`, made by its watcher
    /// over the `since_ms` before the host's newest recorded event (`report --from`).
    pub fn report_named(
        &self,
        shown: &str,
        since_ms: u64,
        known_secrets: &[String],
    ) -> Result<super::Fetched, super::FetchError> {
        let route = self.route_named(shown);
        let Some(route) = route else {
            return Err(super::FetchError::UnknownHost {
                host: shown.to_string(),
                url: String::new(),
            });
        };
        let mut fetched = super::report::fetch_with(
            &route.url,
            &self.token,
            &route.name,
            since_ms,
            known_secrets,
        )?;
        // Named here as this console shows it.
        fetched.made.host = route.shown;
        Ok(fetched)
    }

    fn ask_route(&self, route: &Route, ask: &Ask) -> Result<Answer, AskError> {
        let key = format!(
            "{}-{}-{}",
            std::process::id(),
            now_ms(),
            ASKED.fetch_add(1, Ordering::Relaxed)
        );
        let mut body = serde_json::json!({
            "action": ask.word(),
            "host": route.name,
            "key": key,
        });
        if let Ask::Release { action, typed } = ask {
            // The dialog checked the name as this console shows it; the watcher checks it
            // again as it names the host.
            let typed = if *typed == route.shown {
                route.name.clone()
            } else {
                typed.clone()
            };
            if action.releases() {
                body["release"] = action.as_str().into();
            }
            body["confirm"] = typed.into();
        }
        if let Ask::StopJob { pid, grace } = ask {
            body["pid"] = (*pid).into();
            body["grace"] = (*grace).into();
        }
        if let Ask::Step {
            run,
            runbook,
            step,
            params,
            command,
        } = ask
        {
            body["run"] = run.as_str().into();
            body["runbook"] = runbook.as_str().into();
            body["step"] = step.as_str().into();
            body["params"] = params
                .iter()
                .map(|(name, value)| (name.clone(), serde_json::Value::from(value.as_str())))
                .collect::<serde_json::Map<_, _>>()
                .into();
            body["command"] = command.clone().into();
        }
        let unreachable = |error: String| AskError::Unreachable {
            url: route.url.clone(),
            error,
        };
        let client = reqwest::blocking::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(ask.try_timeout())
            .build()
            .map_err(|e| unreachable(crate::error_text::chain(&e)))?;
        let url = format!("{}/v1/actions", route.url);
        let mut wait = FIRST_RETRY;
        let mut tries = 0;
        let response = loop {
            tries += 1;
            match client
                .post(&url)
                .bearer_auth(&self.token)
                .json(&body)
                .send()
            {
                Ok(response) => break response,
                Err(e) if tries >= TRIES => return Err(unreachable(crate::error_text::chain(&e))),
                Err(e) => {
                    tracing::warn!(watcher = %route.url, "an action's try failed, asking again with its key: {e}");
                    std::thread::sleep(wait);
                    wait *= 2;
                }
            }
        };
        let status = response.status().as_u16();
        let answer: serde_json::Value = response.json().unwrap_or_default();
        let text = |field: &str| super::report::said(&answer, field);
        match (status, answer["outcome"].as_str().unwrap_or_default()) {
            (200, "done") => Ok(Answer {
                said: Some(text("said")).filter(|s| !s.is_empty()),
                // The report's lines kept, each sanitized.
                report: answer["report"].as_str().map(|report| {
                    report
                        .lines()
                        .map(crate::remote::sanitize)
                        .collect::<Vec<_>>()
                        .join("\n")
                }),
                exit_status: answer["exit_status"]
                    .as_i64()
                    .and_then(|code| i32::try_from(code).ok()),
                timed_out: answer["timed_out"].as_bool().unwrap_or(false),
                output: answer["output"]
                    .as_array()
                    .map(|lines| {
                        lines
                            .iter()
                            .map(|line| crate::remote::sanitize(line.as_str().unwrap_or_default()))
                            .collect()
                    })
                    .unwrap_or_default(),
            }),
            (403, _) => Err(AskError::WatchOnly(route.url.clone())),
            (404, _) => Err(AskError::UnknownHost(route.name.clone())),
            (501, _) => Err(AskError::NotServed(route.url.clone())),
            (_, "not_confirmed") => Err(AskError::NotConfirmed(text("error"))),
            (_, "refused") => Err(AskError::Refused(text("error"))),
            (_, _) => {
                let why = text("error");
                Err(AskError::Failed(if why.is_empty() {
                    format!("HTTP {status}")
                } else {
                    why
                }))
            }
        }
    }
}
