//! `kind = "command"`: a program of the user's (argv, no shell) prints gpufleet's inventory
//! JSON, version 1 (docs/INVENTORY.md), on stdout. It gets [`TIMEOUT_MS`] and at most
//! [`MAX_OUTPUT_BYTES`] of output; anything else it prints is refused with the reason, and what
//! it writes on stderr is shown, sanitized and cut short, when it fails.

use serde::Deserialize;

use super::Listing;
use super::model::{Instance, InstanceState, SshEndpoint, SshRoute};
use crate::release::{SendError, capture, shown_text};

/// The inventory schema version this gpufleet reads.
pub const INVENTORY_VERSION: u64 = 1;
/// Cloud CLIs page through regions; a minute is plenty.
pub const TIMEOUT_MS: u64 = 60_000;
/// 8 MiB: some 20 000 instances.
pub const MAX_OUTPUT_BYTES: u64 = 8 * 1024 * 1024;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    #[error("{0}")]
    Run(SendError),
    #[error("{}{}", rust_i18n::t!("provider_command.failed", program = .program, status = .status), detail(.stderr))]
    Failed {
        program: String,
        status: String,
        stderr: String,
    },
    #[error("{}", rust_i18n::t!("provider_command.too_long", program = .program, mib = MAX_OUTPUT_BYTES / 1024 / 1024))]
    TooLong { program: String },
    #[error("{}", rust_i18n::t!("provider_command.bad_inventory", program = .program, why = .why))]
    BadInventory { program: String, why: String },
}

fn detail(text: &str) -> String {
    if text.is_empty() {
        String::new()
    } else {
        format!(": {text}")
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Document {
    gpufleet_inventory: u64,
    instances: Vec<Entry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    id: String,
    label: Option<String>,
    state: InstanceState,
    status: Option<String>,
    gpu_model: Option<String>,
    gpu_count: Option<u32>,
    ssh: Option<Ssh>,
    price_per_hour: Option<f64>,
    currency: Option<String>,
    started_at: Option<String>,
    disk_gb: Option<f64>,
    stopped_storage_per_hour: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Ssh {
    user: String,
    host: String,
    port: u16,
    route: Option<SshRoute>,
}

/// Runs `argv` and reads the inventory it prints.
pub fn list(argv: &[String]) -> Result<Listing, CommandError> {
    let program = argv.first().cloned().unwrap_or_default();
    let captured = capture(argv, TIMEOUT_MS, MAX_OUTPUT_BYTES).map_err(CommandError::Run)?;
    if captured.stdout_cut {
        return Err(CommandError::TooLong { program });
    }
    if !captured.status.success() {
        let status = captured.status.code().map_or_else(
            || rust_i18n::t!("release_words.signal").into_owned(),
            |c| rust_i18n::t!("release_words.exit", code = c).into_owned(),
        );
        return Err(CommandError::Failed {
            program,
            status,
            stderr: shown_text(&String::from_utf8_lossy(&captured.stderr), None),
        });
    }
    parse(&captured.stdout).map_err(|why| CommandError::BadInventory { program, why })
}

/// Reads inventory JSON (docs/INVENTORY.md); the error says what and where.
pub fn parse(bytes: &[u8]) -> Result<Listing, String> {
    // The version first, so a newer document is told apart from a broken one.
    let version = serde_json::from_slice::<serde_json::Value>(bytes)
        .map_err(|e| format!("{e}"))?
        .get("gpufleet_inventory")
        .and_then(serde_json::Value::as_u64);
    match version {
        Some(INVENTORY_VERSION) => {}
        Some(newer) => {
            return Err(rust_i18n::t!(
                "provider_command.newer",
                newer = newer,
                reads = INVENTORY_VERSION
            )
            .into_owned());
        }
        None => return Err(rust_i18n::t!("provider_command.no_version").into_owned()),
    }
    let doc: Document = serde_json::from_slice(bytes).map_err(|e| format!("{e}"))?;
    debug_assert_eq!(doc.gpufleet_inventory, INVENTORY_VERSION);
    let mut listing = Listing::default();
    for (index, entry) in doc.instances.into_iter().enumerate() {
        listing.instances.push(instance(entry).map_err(|why| {
            rust_i18n::t!("provider_command.at_instance", index = index, why = why).into_owned()
        })?);
    }
    Ok(listing)
}

fn instance(entry: Entry) -> Result<Instance, String> {
    let clean = |text: String| {
        let text = crate::remote::sanitize(&text);
        let text: String = text.trim().chars().take(200).collect();
        (!text.is_empty()).then_some(text)
    };
    let id =
        clean(entry.id).ok_or_else(|| rust_i18n::t!("provider_command.empty_id").into_owned())?;
    let status = entry
        .status
        .and_then(clean)
        .unwrap_or_else(|| entry.state.as_str().to_string());
    let mut instance = Instance::new(id, entry.state, status);
    instance.label = entry.label.and_then(clean);
    instance.gpu_model = entry.gpu_model.and_then(clean);
    instance.gpu_count = entry.gpu_count;
    if let Some(ssh) = entry.ssh {
        let host_fits = !ssh.host.is_empty()
            && !ssh.host.starts_with('-')
            && ssh
                .host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':'));
        let user_fits = !ssh.user.is_empty()
            && !ssh.user.starts_with('-')
            && ssh
                .user
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
        if !host_fits || !user_fits || ssh.port == 0 {
            return Err(rust_i18n::t!("provider_command.bad_ssh").into_owned());
        }
        instance.ssh = Some(SshEndpoint {
            user: ssh.user,
            host: ssh.host,
            port: ssh.port,
            route: ssh.route.unwrap_or(SshRoute::Direct),
        });
    }
    for (key, value) in [
        ("price_per_hour", entry.price_per_hour),
        ("disk_gb", entry.disk_gb),
        ("stopped_storage_per_hour", entry.stopped_storage_per_hour),
    ] {
        if value.is_some_and(|v| !(v.is_finite() && v >= 0.0)) {
            return Err(rust_i18n::t!("provider_command.negative", key = key).into_owned());
        }
    }
    instance.price_per_hour = entry.price_per_hour;
    instance.disk_gb = entry.disk_gb;
    instance.stopped_storage_per_hour = entry.stopped_storage_per_hour;
    if let Some(currency) = entry.currency {
        if !(currency.len() == 3 && currency.bytes().all(|b| b.is_ascii_uppercase())) {
            return Err(rust_i18n::t!("provider_command.currency").into_owned());
        }
        instance.currency = Some(currency);
    }
    if let Some(text) = entry.started_at {
        let time = crate::config::Rfc3339::parse(&text)?;
        instance.started_ms = u64::try_from(time.unix_ms()).ok();
    }
    Ok(instance)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_newer_version_is_named_as_such() {
        let err = parse(br#"{"gpufleet_inventory": 2, "instances": []}"#).unwrap_err();
        assert!(err.contains("version 2"), "{err}");
    }

    #[test]
    fn unknown_keys_and_bad_hosts_are_refused_with_their_place() {
        let err = parse(br#"{"gpufleet_inventory": 1, "instances": [{"id": "a", "state": "running", "prize": 1}]}"#).unwrap_err();
        assert!(err.contains("prize"), "{err}");
        let err = parse(br#"{"gpufleet_inventory": 1, "instances": [{"id": "a", "state": "running", "ssh": {"user": "root", "host": "-oProxyCommand=x", "port": 22}}]}"#).unwrap_err();
        assert!(err.starts_with("instances[0]"), "{err}");
    }
}
