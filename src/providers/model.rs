//! One instance as gpufleet keeps it, whatever provider it came from: id, label, state, GPUs,
//! the SSH endpoint, the price in force and the storage that goes on billing when it is stopped;
//! an account's balance; and an instance as the reports name it.

use serde::{Deserialize, Serialize};

/// Whether the instance is billed for compute now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InstanceState {
    Running,
    /// Off, its disk kept (and usually still billed).
    Stopped,
    /// Anything else: starting, provisioning, failed, being deleted.
    Other,
}

impl InstanceState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Stopped => "stopped",
            Self::Other => "other",
        }
    }
}

/// How the endpoint reaches the instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SshRoute {
    /// Straight to the instance's own sshd (a public address and port).
    Direct,
    /// Through the provider's SSH proxy.
    Proxy,
}

/// Where to log in, as the provider's own CLI would.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SshEndpoint {
    pub user: String,
    pub host: String,
    pub port: u16,
    pub route: SshRoute,
}

impl SshEndpoint {
    /// `user@host:port`, the form `[[hosts]] ssh` takes.
    pub fn target(&self) -> String {
        if self.host.contains(':') {
            format!("{}@[{}]:{}", self.user, self.host, self.port)
        } else {
            format!("{}@{}:{}", self.user, self.host, self.port)
        }
    }
}

/// One instance of one account, as the provider described it at the last sync.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Instance {
    /// The provider's id, as text (vast's are numbers).
    pub id: String,
    /// The user's name for it, when it has one.
    pub label: Option<String>,
    pub state: InstanceState,
    /// The provider's own word for the state (`running`, `EXITED`, `shutdown`, ...).
    pub status: String,
    pub gpu_model: Option<String>,
    pub gpu_count: Option<u32>,
    /// `None` when the API gives no endpoint (stopped, still starting, no public port).
    pub ssh: Option<SshEndpoint>,
    /// What it costs per hour now, in `currency`.
    pub price_per_hour: Option<f64>,
    /// ISO 4217: `USD`, `CNY`.
    pub currency: Option<String>,
    /// When it (last) started, by the provider's clock; `None` where the API has no such time.
    pub started_ms: Option<u64>,
    pub disk_gb: Option<f64>,
    /// What its storage costs per hour while it is stopped, in `currency`, where known.
    pub stopped_storage_per_hour: Option<f64>,
    /// When it was (last) shut down, by the provider's clock, where the API says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_ms: Option<u64>,
}

impl Instance {
    /// An instance with only its id, state and status known.
    pub fn new(id: impl Into<String>, state: InstanceState, status: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            label: None,
            state,
            status: status.into(),
            gpu_model: None,
            gpu_count: None,
            ssh: None,
            price_per_hour: None,
            currency: None,
            started_ms: None,
            disk_gb: None,
            stopped_storage_per_hour: None,
            stopped_ms: None,
        }
    }
}

/// An account's balance as its provider gave it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Balance {
    /// What is left to spend (negative: owed).
    pub amount: f64,
    /// ISO 4217: `USD`, `CNY`.
    pub currency: String,
    /// What the account spends an hour now, by the provider's own count, where it gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spend_per_hour: Option<f64>,
}

/// One instance, as the cost report names it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Named {
    pub provider: String,
    pub account: String,
    pub instance_id: String,
    pub label: Option<String>,
    pub currency: Option<String>,
}

impl Named {
    /// `provider account id (label)`, as the cost report and the console's panel name it.
    pub fn describe(&self) -> String {
        let label = self
            .label
            .as_deref()
            .map(|l| format!(" ({l})"))
            .unwrap_or_default();
        format!(
            "{} {} {}{label}",
            self.provider, self.account, self.instance_id
        )
    }
}
