//! What releasing a host means for each provider, as a typed request that can be shown in full
//! before it is sent (the token as `<redacted>`): HTTP calls, a local program, or a program run
//! on the host itself.

use rust_i18n::t;
use serde_json::json;

use crate::config::{Provider, ReleaseConfig};
use crate::remote::shell_quote;
use crate::words::Words;

use super::secret::{REDACTED, Secret};

pub const VAST_BASE_URL: &str = "https://console.vast.ai";
pub const RUNPOD_BASE_URL: &str = "https://rest.runpod.io/v1";
pub const LAMBDA_BASE_URL: &str = "https://cloud.lambda.ai";
pub const AUTODL_BASE_URL: &str = "https://api.autodl.com";

/// Where a provider's API lives unless `base_url` says otherwise; request paths are appended.
pub fn default_base_url(provider: Provider) -> Option<&'static str> {
    match provider {
        Provider::Vast => Some(VAST_BASE_URL),
        Provider::RunPod => Some(RUNPOD_BASE_URL),
        Provider::Lambda => Some(LAMBDA_BASE_URL),
        Provider::AutoDl => Some(AUTODL_BASE_URL),
        Provider::Command | Provider::Ssh => None,
    }
}

/// Stop keeps the disk; terminate deletes it. Restart and start go through the same flow
/// (request shown, typed confirmation, audit) but release nothing: no backup runs and the
/// host's ledger stays open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReleaseAction {
    Stop,
    Terminate,
    /// Restart the instance through the provider (a container's `reboot` restarts nothing).
    Restart,
    /// Start a stopped instance again.
    Start,
}

impl ReleaseAction {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stop => "stop",
            Self::Terminate => "terminate",
            Self::Restart => "restart",
            Self::Start => "start",
        }
    }

    /// Whether the action stops the billing of the instance (stop, terminate): those run the
    /// backup first and close the host's ledger.
    pub fn releases(self) -> bool {
        matches!(self, Self::Stop | Self::Terminate)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpMethod {
    Post,
    Put,
    Delete,
}

impl HttpMethod {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Post => "POST",
            Self::Put => "PUT",
            Self::Delete => "DELETE",
        }
    }
}

/// How the token goes into the `Authorization` header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthScheme {
    /// `Authorization: Bearer <token>` (vast.ai, RunPod, Lambda).
    Bearer,
    /// `Authorization: <token>` (AutoDL).
    Bare,
}

/// Providers that answer 200 and put the verdict in the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Envelope {
    /// The status code is the verdict.
    None,
    /// vast.ai: `{"success": false, "msg": ...}` is a refusal.
    VastSuccess,
    /// AutoDL: `{"code": "Success", ...}`; any other code is a refusal.
    AutoDlCode,
}

#[derive(Debug, Clone, PartialEq)]
pub struct HttpStep {
    pub method: HttpMethod,
    pub url: String,
    pub body: Option<serde_json::Value>,
    pub auth: AuthScheme,
    pub envelope: Envelope,
    /// Go on to the next step when the provider refuses this one: AutoDL refuses to power off
    /// an instance that is already off, which must not stop its release.
    pub refusal_ok: bool,
}

impl HttpStep {
    /// `METHOD URL` with the URL's userinfo and query hidden ([`crate::redact::url`]): the form
    /// every screen, error and audit line shows.
    pub fn shown_line(&self) -> String {
        format!("{} {}", self.method.as_str(), crate::redact::url(&self.url))
    }
}

/// One thing the release does.
#[derive(Debug, Clone, PartialEq)]
pub enum ReleaseStep {
    Http(HttpStep),
    /// A program on this machine, started without a shell.
    Local {
        argv: Vec<String>,
    },
    /// A program on the host itself, run over SSH by the caller.
    OnHost {
        argv: Vec<String>,
    },
}

impl ReleaseStep {
    /// One line for the audit log and the answer list: `METHOD URL` (redacted) or the quoted
    /// argv.
    pub fn summary(&self) -> String {
        match self {
            Self::Http(step) => step.shown_line(),
            Self::Local { argv } | Self::OnHost { argv } => quoted(argv),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    NoStop {
        provider: &'static str,
    },
    NoTerminate,
    /// The provider's API documents no restart of an instance.
    NoRestart {
        provider: &'static str,
    },
    /// The provider's API documents no start of a stopped instance.
    NoStart {
        provider: &'static str,
    },
    /// `provider = "command"` without the argv for this action (`restart_command`,
    /// `start_command`).
    MissingActionCommand {
        key: &'static str,
    },
    MissingInstanceId {
        provider: &'static str,
    },
    MissingCommand,
    /// `url` is already redacted.
    BadBaseUrl {
        url: String,
    },
}

/// Everything a release will send or run, and the token it needs (never printed).
#[derive(Debug, Clone)]
pub struct ReleaseRequest {
    pub provider: Provider,
    pub action: ReleaseAction,
    pub instance_id: Option<String>,
    pub steps: Vec<ReleaseStep>,
    token: Option<Secret>,
}

impl ReleaseRequest {
    /// The request releasing `host` as its config says. `token` may be missing for a dry run;
    /// sending then fails before anything goes out.
    pub fn build(
        host: &str,
        release: &ReleaseConfig,
        action: ReleaseAction,
        token: Option<Secret>,
    ) -> Result<Self, BuildError> {
        let provider = release.provider;
        let instance_id = release.instance_id.clone();
        let steps = match provider {
            Provider::Command => {
                let argv =
                    match action {
                        ReleaseAction::Stop | ReleaseAction::Terminate => {
                            release.command.as_ref().ok_or(BuildError::MissingCommand)?
                        }
                        ReleaseAction::Restart => release.restart_command.as_ref().ok_or(
                            BuildError::MissingActionCommand {
                                key: "restart_command",
                            },
                        )?,
                        ReleaseAction::Start => release.start_command.as_ref().ok_or(
                            BuildError::MissingActionCommand {
                                key: "start_command",
                            },
                        )?,
                    };
                vec![ReleaseStep::Local {
                    argv: command_argv(argv, host, instance_id.as_deref(), action)?,
                }]
            }
            Provider::Ssh => match action {
                ReleaseAction::Stop => vec![ReleaseStep::OnHost {
                    argv: ["shutdown", "-h", "now"].map(String::from).to_vec(),
                }],
                // The `ssh` provider is a machine of its own: `reboot` restarts it.
                ReleaseAction::Restart => vec![ReleaseStep::OnHost {
                    argv: vec!["reboot".to_string()],
                }],
                ReleaseAction::Terminate => return Err(BuildError::NoTerminate),
                ReleaseAction::Start => return Err(BuildError::NoStart { provider: "ssh" }),
            },
            api => {
                let id = instance_id
                    .as_deref()
                    .ok_or(BuildError::MissingInstanceId {
                        provider: api.as_str(),
                    })?;
                let base = base_url(release)?;
                api_steps(api, action, &base, id)?
            }
        };
        Ok(Self {
            provider,
            action,
            instance_id,
            steps,
            token,
        })
    }

    /// Whether sending needs the token (the provider's web API).
    pub fn needs_token(&self) -> bool {
        self.steps
            .iter()
            .any(|step| matches!(step, ReleaseStep::Http(_)))
    }

    pub(crate) fn token(&self) -> Option<&Secret> {
        self.token.as_ref()
    }

    /// The lines to show before sending; the token appears as `<redacted>`.
    pub fn shown(&self, host: &str) -> Vec<String> {
        let mut lines = Vec::new();
        for step in &self.steps {
            match step {
                ReleaseStep::Http(http) => {
                    lines.push(http.shown_line());
                    let scheme = match http.auth {
                        AuthScheme::Bearer => "Bearer ",
                        AuthScheme::Bare => "",
                    };
                    lines.push(format!("  Authorization: {scheme}{REDACTED}"));
                    if let Some(body) = &http.body {
                        lines.push(format!("  {body}"));
                    }
                }
                ReleaseStep::Local { argv } => {
                    let command = quoted(argv);
                    lines.push(t!("release_plan.run_here", command = command).into_owned());
                }
                ReleaseStep::OnHost { argv } => {
                    let command = quoted(argv);
                    lines.push(
                        t!("release_plan.run_on", host = host, command = command).into_owned(),
                    );
                }
            }
        }
        lines
    }

    /// Every step in one line, for the audit log.
    pub fn summary(&self) -> String {
        self.steps
            .iter()
            .map(ReleaseStep::summary)
            .collect::<Vec<_>>()
            .join("; ")
    }
}

fn base_url(release: &ReleaseConfig) -> Result<String, BuildError> {
    let base = match &release.base_url {
        Some(url) => url.as_str(),
        None => default_base_url(release.provider).unwrap_or_default(),
    };
    if !(base.starts_with("http://") || base.starts_with("https://")) {
        return Err(BuildError::BadBaseUrl {
            url: crate::redact::url(base),
        });
    }
    Ok(base.trim_end_matches('/').to_string())
}

fn api_steps(
    provider: Provider,
    action: ReleaseAction,
    base: &str,
    id: &str,
) -> Result<Vec<ReleaseStep>, BuildError> {
    let segment = path_segment(id);
    // A query in base_url (`?key=...`) stays a query: the path goes before it.
    let (base, query) = base.split_at(base.find(['?', '#']).unwrap_or(base.len()));
    let base = base.trim_end_matches('/');
    let step = |method, path: String, body, auth, envelope| HttpStep {
        method,
        url: format!("{base}{path}{query}"),
        body,
        auth,
        envelope,
        refusal_ok: false,
    };
    use AuthScheme::{Bare, Bearer};
    use HttpMethod::{Delete, Post, Put};
    let steps = match (provider, action) {
        (Provider::Vast, ReleaseAction::Stop) => vec![step(
            Put,
            format!("/api/v0/instances/{segment}/"),
            Some(json!({"state": "stopped"})),
            Bearer,
            Envelope::VastSuccess,
        )],
        (Provider::Vast, ReleaseAction::Terminate) => vec![step(
            Delete,
            format!("/api/v0/instances/{segment}/"),
            None,
            Bearer,
            Envelope::VastSuccess,
        )],
        (Provider::Vast, ReleaseAction::Restart) => vec![step(
            Put,
            format!("/api/v0/instances/reboot/{segment}/"),
            None,
            Bearer,
            Envelope::VastSuccess,
        )],
        (Provider::Vast, ReleaseAction::Start) => vec![step(
            Put,
            format!("/api/v0/instances/{segment}/"),
            Some(json!({"state": "running"})),
            Bearer,
            Envelope::VastSuccess,
        )],
        (Provider::RunPod, ReleaseAction::Restart) => vec![step(
            Post,
            format!("/pods/{segment}/restart"),
            None,
            Bearer,
            Envelope::None,
        )],
        (Provider::RunPod, ReleaseAction::Start) => vec![step(
            Post,
            format!("/pods/{segment}/start"),
            None,
            Bearer,
            Envelope::None,
        )],
        (Provider::Lambda, ReleaseAction::Restart) => vec![step(
            Post,
            "/api/v1/instance-operations/restart".to_string(),
            Some(json!({"instance_ids": [id]})),
            Bearer,
            Envelope::None,
        )],
        (Provider::Lambda, ReleaseAction::Start) => {
            return Err(BuildError::NoStart { provider: "Lambda" });
        }
        (Provider::AutoDl, ReleaseAction::Restart) => {
            return Err(BuildError::NoRestart { provider: "AutoDL" });
        }
        (Provider::AutoDl, ReleaseAction::Start) => vec![step(
            Post,
            "/api/v1/dev/instance/pro/power_on".to_string(),
            Some(json!({"instance_uuid": id, "payload": "gpu"})),
            Bare,
            Envelope::AutoDlCode,
        )],
        (Provider::RunPod, ReleaseAction::Stop) => vec![step(
            Post,
            format!("/pods/{segment}/stop"),
            None,
            Bearer,
            Envelope::None,
        )],
        (Provider::RunPod, ReleaseAction::Terminate) => vec![step(
            Delete,
            format!("/pods/{segment}"),
            None,
            Bearer,
            Envelope::None,
        )],
        (Provider::Lambda, ReleaseAction::Stop) => {
            return Err(BuildError::NoStop { provider: "Lambda" });
        }
        (Provider::Lambda, ReleaseAction::Terminate) => vec![step(
            Post,
            "/api/v1/instance-operations/terminate".to_string(),
            Some(json!({"instance_ids": [id]})),
            Bearer,
            Envelope::None,
        )],
        // Not web APIs; `build` turns them into other steps.
        (Provider::Command | Provider::Ssh, _) => Vec::new(),
        (Provider::AutoDl, action @ (ReleaseAction::Stop | ReleaseAction::Terminate)) => {
            let body = || Some(json!({"instance_uuid": id}));
            let mut power_off = step(
                Post,
                "/api/v1/dev/instance/pro/power_off".to_string(),
                body(),
                Bare,
                Envelope::AutoDlCode,
            );
            if action == ReleaseAction::Stop {
                vec![power_off]
            } else {
                power_off.refusal_ok = true;
                let release = step(
                    Post,
                    "/api/v1/dev/instance/pro/release".to_string(),
                    body(),
                    Bare,
                    Envelope::AutoDlCode,
                );
                vec![power_off, release]
            }
        }
    };
    Ok(steps.into_iter().map(ReleaseStep::Http).collect())
}

/// Percent-encodes everything but RFC 3986 unreserved characters, so an id such as `../x`
/// stays one path segment of the instance's own URL.
fn path_segment(id: &str) -> String {
    let mut out = String::with_capacity(id.len());
    for byte in id.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// Fills `{instance_id}`, `{host}` and `{action}` into the configured argv in one pass. Each
/// argument stays exactly one argument (no shell splits it), and a value that itself contains
/// a placeholder is not expanded again.
fn command_argv(
    template: &[String],
    host: &str,
    instance_id: Option<&str>,
    action: ReleaseAction,
) -> Result<Vec<String>, BuildError> {
    let mut argv = Vec::with_capacity(template.len());
    for arg in template {
        let mut out = String::with_capacity(arg.len());
        let mut rest = arg.as_str();
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            let tail = &rest[open..];
            let (value, used) = if tail.starts_with("{instance_id}") {
                let id = instance_id.ok_or(BuildError::MissingInstanceId {
                    provider: "command",
                })?;
                (id, "{instance_id}".len())
            } else if tail.starts_with("{host}") {
                (host, "{host}".len())
            } else if tail.starts_with("{action}") {
                (action.as_str(), "{action}".len())
            } else {
                ("{", 1)
            };
            out.push_str(value);
            rest = &tail[used..];
        }
        out.push_str(rest);
        argv.push(out);
    }
    Ok(argv)
}

fn quoted(argv: &[String]) -> String {
    argv.iter()
        .map(|word| shell_quote(word))
        .collect::<Vec<_>>()
        .join(" ")
}

impl ReleaseAction {
    /// The action as the reader says it: `stop` / `terminate` (`关机` / `释放`).
    pub fn words(self) -> Words {
        match self {
            ReleaseAction::Stop => Words::new("action.stop"),
            ReleaseAction::Terminate => Words::new("action.terminate"),
            ReleaseAction::Restart => Words::new("restart.action_restart"),
            ReleaseAction::Start => Words::new("restart.action_start"),
        }
    }
}

/// A release action as the reader says it, in the interface's language.
pub fn action_words(action: ReleaseAction) -> String {
    action.words().localized()
}

/// What a release action does to the instance and its data; its English is what the plan's
/// JSON and the log keep.
pub fn effect_words(provider: Provider, action: ReleaseAction) -> Words {
    use ReleaseAction::{Restart, Start, Stop, Terminate};
    let key = match (provider, action) {
        (Provider::Vast, Stop) => "effect.vast_stop",
        (Provider::Vast, Terminate) => "effect.vast_terminate",
        (Provider::Vast, Restart) => "restart.effect_vast_restart",
        (Provider::Vast, Start) => "restart.effect_vast_start",
        (Provider::RunPod, Stop) => "effect.runpod_stop",
        (Provider::RunPod, Terminate) => "effect.runpod_terminate",
        (Provider::RunPod, Restart) => "restart.effect_runpod_restart",
        (Provider::RunPod, Start) => "restart.effect_runpod_start",
        (Provider::Lambda, Restart) => "restart.effect_lambda_restart",
        (Provider::Lambda, _) => "effect.lambda",
        (Provider::AutoDl, Stop) => "effect.autodl_stop",
        (Provider::AutoDl, Terminate) => "effect.autodl_terminate",
        (Provider::AutoDl, _) => "restart.effect_autodl_start",
        (Provider::Command, Restart | Start) => "restart.effect_command",
        (Provider::Command, _) => "effect.command",
        (Provider::Ssh, Restart | Start) => "restart.effect_ssh_reboot",
        (Provider::Ssh, _) => "effect.ssh",
    };
    Words::new(key)
}

impl BuildError {
    /// Why the config cannot say how to release a host; in English, the error's `Display`.
    pub fn words(&self) -> Words {
        match self {
            BuildError::NoStop { provider } => {
                Words::new("release_error.no_stop").put("provider", provider.to_string())
            }
            BuildError::NoTerminate => Words::new("release_error.no_terminate"),
            BuildError::NoRestart { provider } => {
                Words::new("restart.no_restart").put("provider", provider.to_string())
            }
            BuildError::NoStart { provider } => {
                Words::new("restart.no_start").put("provider", provider.to_string())
            }
            BuildError::MissingActionCommand { key } => {
                Words::new("restart.missing_command").put("key", key.to_string())
            }
            BuildError::MissingInstanceId { provider } => {
                Words::new("release_error.missing_instance_id")
                    .put("provider", provider.to_string())
            }
            BuildError::MissingCommand => Words::new("release_error.missing_command"),
            BuildError::BadBaseUrl { url } => {
                Words::new("release_error.bad_base_url").put("url", format!("{url:?}"))
            }
        }
    }
}

/// English, as the log keeps it: the catalogue's English of [`BuildError::words`].
impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.words().fmt(f)
    }
}

/// What the action does to the instance and its data, in English, as the plan's JSON and the
/// log keep it (the dialog says [`effect_words`], in the reader's language).
pub fn effect(provider: Provider, action: ReleaseAction) -> String {
    effect_words(provider, action).english()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The dialog's English action words are the action's own name.
    #[test]
    fn english_action_words_are_the_actions_name() {
        for a in [
            ReleaseAction::Stop,
            ReleaseAction::Terminate,
            ReleaseAction::Restart,
            ReleaseAction::Start,
        ] {
            assert_eq!(a.words().english(), a.as_str());
        }
    }
}
