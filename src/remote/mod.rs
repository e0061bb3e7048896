//! SSH hosts: resolving them, checking their keys, logging in, and the per-host link that
//! streams `nvidia-smi` over one long-lived session and turns its lines into `HostEvent`s.
//!
//! Each link runs on its own thread and owns its session; the UI only ever receives events.

mod accel_tools;
mod ask_again;
mod auth;
mod backoff;
mod bridge;
mod connect;
mod credentials;
mod digest;
mod error;
mod exec;
mod host;
mod host_key_check;
mod host_pattern;
mod host_settings;
mod known_hosts;
mod link;
mod option_policy;
mod proxy;
mod proxy_config;
mod quote;
mod resolve_named;
mod sanitize;
mod session_pages;
mod ssh_config_file;
mod ssh_config_match;
mod ssh_options;
mod target;
mod transport;
mod wait;

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

pub(crate) use accel_tools::{Probed, Tool, probe_answer, probe_argv};
pub use ask_again::AskAgain;
pub use connect::MAX_CONCURRENT_HANDSHAKES;
pub use credentials::{
    ChannelPrompter, HostKeyPrompt, PromptContext, PromptRequest, Prompter, Secret,
};
pub use digest::fingerprint;
pub use error::RemoteError;
pub use exec::{ExecOutcome, ExecRequest, exec};
pub use host::{Endpoint, JumpHost, Proxy, ProxyCommand, RemoteHost};
pub use host_settings::{Agent, HostSettings};
pub use link::dead_man::{
    Answer as DeadManAnswer, Step as DeadManStep, local_owner as dead_man_owner,
    read_answer as read_dead_man_answer, switch_command as dead_man_command,
};
pub use link::host_kind::{HostKind, probe as host_kind_probe};
pub use link::{read_once, spawn_link};
pub use quote::{CommandError, RemoteCommand, shell_quote};
pub use resolve_named::{ResolveError, SshSettings, link_options, resolve_named};
pub use sanitize::sanitize;
pub use ssh_options::{HostKeySettings, StrictHostKeys};
pub use target::{local_machine_name, resolve, ssh_config_names};

/// How a link behaves; `Default` is what the console uses.
#[derive(Clone)]
pub struct LinkOptions {
    /// The `-lms` cadence of the telemetry stream.
    pub interval_ms: u32,
    /// The known_hosts file; `None` is `~/.ssh/known_hosts`.
    pub known_hosts: Option<PathBuf>,
    /// Trust and record keys of hosts not yet on file, without asking (never a changed key).
    pub accept_new_host_keys: bool,
    /// Honour `StrictHostKeyChecking no` from the ssh config (`--allow-strict-host-key-checking-no`);
    /// without it such a host is refused.
    pub allow_strict_host_key_checking_no: bool,
    /// Try the keys of the ssh-agent at `$SSH_AUTH_SOCK` first.
    pub use_agent: bool,
    /// Follow the kernel log for Xid lines.
    pub follow_kernel: bool,
    /// The program name (or path) of nvidia-smi on the hosts.
    pub nvidia_smi: String,
    pub connect_timeout_ms: u64,
    /// Limit on each blocking step of the handshake and login.
    pub handshake_timeout_ms: u64,
    pub keepalive_interval_s: u32,
    /// Silence after which the link is declared dead and reconnected.
    pub dead_after_ms: u64,
    /// How often the process list is fetched while someone looks at the host (its view open in
    /// the console); every fetch starts an `nvidia-smi` on the host, the link's main cost there.
    pub processes_interval_ms: u64,
    /// How often otherwise (the watcher, a console showing the fleet): enough for the findings
    /// that name who holds a GPU's memory.
    pub processes_unwatched_interval_ms: u64,
    /// How often the full query refreshes the fields the stream leaves out (names, totals,
    /// limits, ECC); the stream carries only what changes every tick, to keep nvidia-smi cheap.
    pub detail_interval_ms: u64,
    /// How long `Connected` waits for the driver/CUDA versions before going out without them.
    pub versions_wait_ms: u64,
    /// Delay before restarting a telemetry stream that failed (GPU lost, driver gone, ...).
    pub telemetry_retry_ms: u64,
    pub reconnect_base_ms: u64,
    pub reconnect_cap_ms: u64,
    /// Overall limit for [`read_once`].
    pub snapshot_timeout_ms: u64,
    /// Asks the user about unknown host keys, passphrases and passwords; `None` is headless.
    pub prompter: Option<Arc<dyn Prompter>>,
    /// Where a person answers the questions: a link whose host key was declined waits here to
    /// be asked again instead of ending. `None` ends it.
    pub ask_again: Option<AskAgain>,
    /// Where a host's endpoint may have moved while it was down (an instance of a provider's
    /// inventory restarted on a new port or address): asked before each reconnect attempt.
    pub endpoints: Option<Arc<dyn EndpointLookup>>,
}

/// The newest endpoint known for a host, by its name; `None` where nothing says (the link
/// keeps the one it has).
pub trait EndpointLookup: Send + Sync {
    fn endpoint(&self, host: &str) -> Option<Endpoint>;
}

impl Default for LinkOptions {
    fn default() -> Self {
        Self {
            interval_ms: 1_000,
            known_hosts: None,
            accept_new_host_keys: false,
            allow_strict_host_key_checking_no: false,
            use_agent: true,
            follow_kernel: true,
            nvidia_smi: "nvidia-smi".to_string(),
            connect_timeout_ms: 10_000,
            handshake_timeout_ms: 15_000,
            keepalive_interval_s: 5,
            dead_after_ms: 15_000,
            processes_interval_ms: 5_000,
            processes_unwatched_interval_ms: 30_000,
            detail_interval_ms: 60_000,
            versions_wait_ms: 3_000,
            telemetry_retry_ms: 10_000,
            reconnect_base_ms: 1_000,
            reconnect_cap_ms: 30_000,
            snapshot_timeout_ms: 30_000,
            prompter: None,
            ask_again: None,
            endpoints: None,
        }
    }
}

impl fmt::Debug for LinkOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LinkOptions")
            .field("interval_ms", &self.interval_ms)
            .field("known_hosts", &self.known_hosts)
            .field("accept_new_host_keys", &self.accept_new_host_keys)
            .field(
                "allow_strict_host_key_checking_no",
                &self.allow_strict_host_key_checking_no,
            )
            .field("use_agent", &self.use_agent)
            .field("follow_kernel", &self.follow_kernel)
            .field("nvidia_smi", &self.nvidia_smi)
            .field("keepalive_interval_s", &self.keepalive_interval_s)
            .field("dead_after_ms", &self.dead_after_ms)
            .field("prompter", &self.prompter.as_ref().map(|_| "..."))
            .finish_non_exhaustive()
    }
}
