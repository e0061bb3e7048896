//! A resolved host, as plain data: where it is ([`Endpoint`]), who logs in with which keys,
//! how its key is checked, and how it is reached ([`Proxy`]: directly, through a
//! `ProxyCommand`, or through a jump host that is a [`RemoteHost`] in turn).

use std::fmt;
use std::path::PathBuf;

use crate::remote::host_settings::HostSettings;
use crate::remote::ssh_options::HostKeySettings;

/// A fully resolved address: nothing is left for ssh config or defaults to fill in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub user: String,
    pub host: String,
    pub port: u16,
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.host.contains(':') {
            write!(f, "{}@[{}]:{}", self.user, self.host, self.port)
        } else {
            write!(f, "{}@{}:{}", self.user, self.host, self.port)
        }
    }
}

/// One host the link connects to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteHost {
    /// The name shown in the UI.
    pub name: String,
    pub target: Endpoint,
    /// Keys to offer, in order; empty means none exist.
    pub identity_files: Vec<PathBuf>,
    /// The name of the environment variable holding the password (never the password).
    pub password_env: Option<String>,
    /// How the host's key is checked, from the ssh config.
    pub host_keys: HostKeySettings,
    /// How the host is reached: directly, or through a proxy command or jump host.
    pub proxy: Proxy,
    /// Timeouts, keepalives, the agent and the notes of the ssh config.
    pub settings: HostSettings,
    /// The job's log as the config names it (`[[hosts.jobs]] log`, an absolute path, globs
    /// allowed), read when no GPU process's stdout or stderr is a file.
    pub job_log: Option<String>,
    /// The dead-man switch the link arms on the host (`[hosts.dead_man]`).
    pub dead_man: Option<crate::config::DeadManPlan>,
    /// A host of the config without `[hosts.dead_man]`: a switch an earlier config left running
    /// there is disarmed at connect (a host named on the command line is left alone).
    pub disarm_stray_switch: bool,
}

/// How a host is reached (`ProxyCommand` / `ProxyJump` in the ssh config).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Proxy {
    /// A TCP connection to the host itself.
    #[default]
    Direct,
    /// A command whose stdin and stdout carry the session.
    Command(ProxyCommand),
    /// A `direct-tcpip` channel of this jump host's session; the jump host carries how it is
    /// reached in turn (the chain `ProxyJump a,b` is `b` reached through `a`).
    Jump(Box<JumpHost>),
}

/// A jump host: the name it was given in `ProxyJump` and what it resolved to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JumpHost {
    /// As written in `ProxyJump` (`bastion`, `admin@bastion:2222`), for messages.
    pub spec: String,
    pub host: RemoteHost,
}

/// A proxy command with its `%` tokens expanded, run by the user's shell. Its text is never
/// printed (it may carry a token), only said to exist.
#[derive(Clone, PartialEq, Eq)]
pub struct ProxyCommand(pub(crate) String);

impl fmt::Debug for ProxyCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ProxyCommand(..)")
    }
}
