//! The synced inventory kept in the state directory (`inventory.json`, written only through
//! the state-file writer: locked, atomic, private). Per account: the last good sync's time and
//! instances, and why the last attempt failed when it did; a failed sync changes nothing else,
//! so the last good inventory stays, with its age. Per instance: when it was first and last
//! seen, when it disappeared from the account (`gone_ms`, kept [`GONE_KEPT_MS`], never silently
//! dropped), and the price in force from each change on.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::state_file::{StateFile, StateFileError};

use super::model::{Balance, Instance};

/// The stored file's format version.
pub const STORE_VERSION: u64 = 1;
/// The file's name in the state directory.
pub const FILE_NAME: &str = "inventory.json";
/// How long an instance that disappeared is kept, marked gone: 30 days.
pub const GONE_KEPT_MS: u64 = 30 * 24 * 3600 * 1000;
/// The most price changes kept per instance (the newest).
pub const MAX_PRICE_POINTS: usize = 64;

/// Everything stored, by account name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stored {
    pub version: u64,
    pub accounts: BTreeMap<String, AccountRecord>,
}

impl Default for Stored {
    fn default() -> Self {
        Self {
            version: STORE_VERSION,
            accounts: BTreeMap::new(),
        }
    }
}

/// One account's inventory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AccountRecord {
    /// The account's kind (`vast`, `command`, ...).
    pub provider: String,
    /// The last sync that succeeded; `None` when none has.
    pub synced_ms: Option<u64>,
    /// The last attempt, good or bad.
    pub attempted_ms: u64,
    /// Why the last attempt failed; `None` when it succeeded.
    pub error: Option<String>,
    pub instances: Vec<StoredInstance>,
    /// The balance as last read, and when.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub balance: Option<StoredBalance>,
}

/// A balance and the time it was read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredBalance {
    #[serde(flatten)]
    pub balance: Balance,
    pub read_ms: u64,
}

/// One instance as last seen, and its history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredInstance {
    #[serde(flatten)]
    pub instance: Instance,
    pub first_seen_ms: u64,
    pub last_seen_ms: u64,
    /// When a sync first found it missing from the account.
    pub gone_ms: Option<u64>,
    /// The price in force from each time it changed, oldest first.
    pub prices: Vec<PricePoint>,
}

impl StoredInstance {
    /// The provider's start time, else the first time gpufleet saw it.
    pub fn started_or_first_seen_ms(&self) -> (u64, bool) {
        match self.instance.started_ms {
            Some(ms) => (ms, true),
            None => (self.first_seen_ms, false),
        }
    }
}

/// A price and the time it was first seen in force.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PricePoint {
    pub from_ms: u64,
    pub price_per_hour: f64,
    pub currency: Option<String>,
}

/// The record after a good sync: every listed instance updated or added, the ones missing
/// marked gone (and dropped [`GONE_KEPT_MS`] after), a price point where the price changed.
pub fn merge_success(
    previous: Option<&AccountRecord>,
    provider: &str,
    listed: Vec<Instance>,
    now_ms: u64,
) -> AccountRecord {
    let previous = previous.filter(|p| p.provider == provider);
    let mut old: BTreeMap<&str, &StoredInstance> = previous
        .map(|p| {
            p.instances
                .iter()
                .map(|i| (i.instance.id.as_str(), i))
                .collect()
        })
        .unwrap_or_default();
    let mut instances = Vec::with_capacity(listed.len());
    let mut seen = std::collections::HashSet::new();
    for instance in listed {
        if !seen.insert(instance.id.clone()) {
            continue;
        }
        let before = old.remove(instance.id.as_str());
        let mut prices = before.map(|b| b.prices.clone()).unwrap_or_default();
        if let Some(price) = instance.price_per_hour {
            let changed = prices.last().is_none_or(|last| {
                last.price_per_hour != price || last.currency != instance.currency
            });
            if changed {
                prices.push(PricePoint {
                    from_ms: now_ms,
                    price_per_hour: price,
                    currency: instance.currency.clone(),
                });
                let extra = prices.len().saturating_sub(MAX_PRICE_POINTS);
                prices.drain(..extra);
            }
        }
        instances.push(StoredInstance {
            first_seen_ms: before.map_or(now_ms, |b| b.first_seen_ms),
            last_seen_ms: now_ms,
            gone_ms: None,
            prices,
            instance,
        });
    }
    // What the account no longer lists, in the order it was kept.
    let mut missing: Vec<StoredInstance> = previous
        .map(|p| {
            p.instances
                .iter()
                .filter(|i| old.contains_key(i.instance.id.as_str()))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    for gone in &mut missing {
        gone.gone_ms.get_or_insert(now_ms);
    }
    missing.retain(|i| {
        i.gone_ms
            .is_some_and(|at| now_ms.saturating_sub(at) < GONE_KEPT_MS)
    });
    instances.extend(missing);
    AccountRecord {
        provider: provider.to_string(),
        synced_ms: Some(now_ms),
        attempted_ms: now_ms,
        error: None,
        instances,
        balance: previous.and_then(|p| p.balance.clone()),
    }
}

/// The record after a failed sync: the last good inventory kept as it was, the failure said.
pub fn merge_failure(
    previous: Option<&AccountRecord>,
    provider: &str,
    error: String,
    now_ms: u64,
) -> AccountRecord {
    match previous.filter(|p| p.provider == provider) {
        Some(previous) => AccountRecord {
            attempted_ms: now_ms,
            error: Some(error),
            ..previous.clone()
        },
        None => AccountRecord {
            provider: provider.to_string(),
            synced_ms: None,
            attempted_ms: now_ms,
            error: Some(error),
            instances: Vec::new(),
            balance: None,
        },
    }
}

/// Records one sync of `accounts` (their results in the same order) into `stored`.
pub fn record_results(
    stored: &mut Stored,
    accounts: &[crate::config::ProviderAccount],
    results: &[Result<super::Listing, super::SyncError>],
    now_ms: u64,
) {
    for (account, result) in accounts.iter().zip(results) {
        let name = account.display_name();
        let kind = account.kind.as_str();
        let previous = stored.accounts.get(name);
        let record = match result {
            Ok(listing) => {
                let mut record = merge_success(previous, kind, listing.instances.clone(), now_ms);
                if let Some(balance) = &listing.balance {
                    record.balance = Some(StoredBalance {
                        balance: balance.clone(),
                        read_ms: now_ms,
                    });
                }
                record
            }
            Err(e) => merge_failure(previous, kind, e.failure.to_string(), now_ms),
        };
        stored.accounts.insert(name.to_string(), record);
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{}", rust_i18n::t!("provider_store.no_state"))]
    NoStateDir,
    #[error(transparent)]
    File(#[from] StateFileError),
    #[error("{}", rust_i18n::t!("provider_store.damaged", path = .path.display(), why = .why))]
    Damaged { path: PathBuf, why: String },
    #[error("{}", rust_i18n::t!("provider_store.newer", path = .path.display(), version = .version))]
    Newer { path: PathBuf, version: u64 },
}

/// `inventory.json` in a state directory.
#[derive(Debug, Clone)]
pub struct InventoryStore {
    file: StateFile,
}

impl InventoryStore {
    pub fn in_dir(dir: &Path) -> Self {
        Self {
            file: StateFile::at(dir.join(FILE_NAME)),
        }
    }

    /// The store in gpufleet's state directory.
    pub fn open_default() -> Result<Self, StoreError> {
        crate::paths::state_dir()
            .map(|dir| Self::in_dir(&dir))
            .ok_or(StoreError::NoStateDir)
    }

    pub fn path(&self) -> &Path {
        self.file.path()
    }

    /// What is stored; nothing yet is an empty inventory.
    pub fn load(&self) -> Result<Stored, StoreError> {
        self.parse(self.file.read()?)
    }

    /// Under the file's lock: reads what is stored, lets `change` update it, writes it back
    /// atomically. A damaged or newer file is never written over.
    pub fn update(&self, change: impl FnOnce(&mut Stored)) -> Result<Stored, StoreError> {
        let locked = self.file.lock()?;
        let mut stored = self.parse(locked.read()?)?;
        change(&mut stored);
        let mut bytes = serde_json::to_vec_pretty(&stored).map_err(|e| StoreError::Damaged {
            path: self.path().to_owned(),
            why: e.to_string(),
        })?;
        bytes.push(b'\n');
        locked.replace(&bytes)?;
        Ok(stored)
    }

    fn parse(&self, bytes: Option<Vec<u8>>) -> Result<Stored, StoreError> {
        let Some(bytes) = bytes else {
            return Ok(Stored::default());
        };
        let damaged = |why: String| StoreError::Damaged {
            path: self.path().to_owned(),
            why,
        };
        let value: serde_json::Value =
            serde_json::from_slice(&bytes).map_err(|e| damaged(e.to_string()))?;
        match value.get("version").and_then(serde_json::Value::as_u64) {
            Some(STORE_VERSION) => {}
            Some(version) if version > STORE_VERSION => {
                return Err(StoreError::Newer {
                    path: self.path().to_owned(),
                    version,
                });
            }
            _ => {
                let why = rust_i18n::t!("provider_store.no_version").into_owned();
                return Err(damaged(why));
            }
        }
        serde_json::from_value(value).map_err(|e| damaged(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::model::InstanceState;

    fn priced(id: &str, price: f64) -> Instance {
        let mut i = Instance::new(id, InstanceState::Running, "running");
        i.price_per_hour = Some(price);
        i.currency = Some("USD".into());
        i
    }

    #[test]
    fn a_price_change_adds_a_point_and_a_missing_instance_is_marked_gone() {
        let first = merge_success(
            None,
            "vast",
            vec![priced("1", 0.5), priced("2", 1.0)],
            1_000,
        );
        let second = merge_success(Some(&first), "vast", vec![priced("1", 0.6)], 2_000);
        let one = &second.instances[0];
        assert_eq!(one.first_seen_ms, 1_000);
        let prices: Vec<(u64, f64)> = one
            .prices
            .iter()
            .map(|p| (p.from_ms, p.price_per_hour))
            .collect();
        assert_eq!(prices, vec![(1_000, 0.5), (2_000, 0.6)]);
        let two = &second.instances[1];
        assert_eq!((two.instance.id.as_str(), two.gone_ms), ("2", Some(2_000)));
        let third = merge_success(Some(&second), "vast", vec![priced("1", 0.6)], 3_000);
        assert_eq!(
            third.instances[1].gone_ms,
            Some(2_000),
            "gone keeps its first time"
        );
        assert_eq!(
            third.instances[0].prices.len(),
            2,
            "no point for an unchanged price"
        );
    }

    #[test]
    fn a_failure_keeps_the_last_good_inventory() {
        let good = merge_success(None, "vast", vec![priced("1", 0.5)], 1_000);
        let bad = merge_failure(Some(&good), "vast", "HTTP 500".into(), 2_000);
        assert_eq!(bad.instances, good.instances);
        assert_eq!((bad.synced_ms, bad.attempted_ms), (Some(1_000), 2_000));
    }
}
