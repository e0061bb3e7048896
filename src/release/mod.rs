//! Releasing a rented instance: the providers' APIs (vast.ai, RunPod, Lambda, AutoDL), a local
//! command, or `shutdown` over SSH; requests shown before they are sent, tokens that never print,
//! and the UI-independent flow (plan, backup, typed confirmation, send, ledger closed, audit).
//!
//! `send` blocks (reqwest's blocking client, connect 10 s, total 30 s): call it from a worker
//! thread, never from the UI thread or from inside a tokio runtime.

mod execute;
mod flow;
mod plan_json;
mod record;
mod request;
mod secret;
mod simulated;

pub use execute::{HostRunner, SendError, SendFailure, SendOptions, StepAnswer, send, shown_text};
pub(crate) use execute::{auth_header, capture, http_client, root_cause};
pub use flow::{BackupOutcome, FlowError, ReleaseFlow, ReleasePlan, ReleaseReport, Unattended};
pub use record::Unrecorded;
pub use request::{
    AUTODL_BASE_URL, AuthScheme, BuildError, Envelope, HttpMethod, HttpStep, LAMBDA_BASE_URL,
    RUNPOD_BASE_URL, ReleaseAction, ReleaseRequest, ReleaseStep, VAST_BASE_URL, default_base_url,
};
pub use request::{action_words, effect, effect_words};
pub use secret::{
    LoadedToken, REDACTED, Secret, SecretSource, TokenError, load_secret, load_token, process_env,
};
