//! The balance red line of an account: how many hours its balance lasts at its current burn,
//! against its `min_balance_hours`. The burn is the provider's own spend per hour where it
//! gives one (RunPod), else the inventory's: the prices of its running instances plus the
//! storage of its stopped ones, in the balance's currency. Pure: the caller loads the inventory.

use serde::Serialize;

use crate::config::{Config, ProviderKind};

use super::model::InstanceState;
use super::store::{AccountRecord, Stored};

/// Where an account's burn per hour comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BurnSource {
    /// The provider's own count (RunPod's `currentSpendPerHr`).
    Provider,
    /// The synced instances' prices (running) and storage prices (stopped).
    Inventory,
}

/// One account's balance and how long it lasts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AccountBalance {
    pub provider: String,
    pub account: String,
    pub amount: f64,
    pub currency: String,
    /// When the balance was read.
    pub read_ms: u64,
    /// What the account spends an hour now; 0 when nothing bills.
    pub burn_per_hour: f64,
    pub burn_source: BurnSource,
    /// How long the balance lasts at that burn; `None` while nothing bills.
    pub hours_left: Option<f64>,
    /// The account's `min_balance_hours`.
    pub min_hours: Option<f64>,
    /// Whether the balance lasts fewer hours than the red line.
    pub below: bool,
}

/// Whether gpufleet can read the balance of this kind of account.
pub fn offered(kind: ProviderKind) -> bool {
    matches!(
        kind,
        ProviderKind::Vast | ProviderKind::RunPod | ProviderKind::AutoDl
    )
}

/// The balances of the config's accounts that have one stored, in config order, and the
/// accounts with a balance red line whose provider offers no balance (`(provider, account)`).
pub fn find(config: &Config, stored: &Stored) -> (Vec<AccountBalance>, Vec<(String, String)>) {
    let mut balances = Vec::new();
    let mut not_offered = Vec::new();
    for account in &config.providers {
        if account.min_balance_hours.is_some() && !offered(account.kind) {
            not_offered.push((
                account.kind.as_str().to_string(),
                account.display_name().to_string(),
            ));
            continue;
        }
        let Some(record) = stored.accounts.get(account.display_name()) else {
            continue;
        };
        if let Some(found) = of_account(record, account.display_name(), account.min_balance_hours) {
            balances.push(found);
        }
    }
    (balances, not_offered)
}

/// One account's balance against `min_hours`; `None` when no balance is stored.
pub fn of_account(
    record: &AccountRecord,
    account: &str,
    min_hours: Option<f64>,
) -> Option<AccountBalance> {
    let stored = record.balance.as_ref()?;
    let balance = &stored.balance;
    let (burn_per_hour, burn_source) = match balance.spend_per_hour {
        Some(spend) => (spend, BurnSource::Provider),
        None => (
            inventory_burn(record, &balance.currency),
            BurnSource::Inventory,
        ),
    };
    let hours_left = if balance.amount <= 0.0 {
        Some(0.0)
    } else if burn_per_hour > 0.0 {
        Some(balance.amount / burn_per_hour)
    } else {
        None
    };
    let below = match (hours_left, min_hours) {
        (Some(left), Some(min)) => left < min,
        _ => false,
    };
    Some(AccountBalance {
        provider: record.provider.clone(),
        account: account.to_string(),
        amount: balance.amount,
        currency: balance.currency.clone(),
        read_ms: stored.read_ms,
        burn_per_hour,
        burn_source,
        hours_left,
        min_hours,
        below,
    })
}

/// What the account's instances bill an hour in `currency`: running ones their price, stopped
/// ones their storage (gone ones nothing).
fn inventory_burn(record: &AccountRecord, currency: &str) -> f64 {
    record
        .instances
        .iter()
        .filter(|i| i.gone_ms.is_none())
        .map(|i| &i.instance)
        .filter(|i| i.currency.as_deref().is_none_or(|c| c == currency))
        .map(|i| match i.state {
            InstanceState::Running => i.price_per_hour.unwrap_or(0.0),
            InstanceState::Stopped => i.stopped_storage_per_hour.unwrap_or(0.0),
            InstanceState::Other => 0.0,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::model::{Balance, Instance};
    use crate::providers::store::{StoredBalance, merge_success};

    fn record(amount: f64, spend: Option<f64>) -> AccountRecord {
        let mut running = Instance::new("1", InstanceState::Running, "running");
        running.price_per_hour = Some(2.0);
        running.currency = Some("USD".into());
        let mut stopped = Instance::new("2", InstanceState::Stopped, "stopped");
        stopped.stopped_storage_per_hour = Some(0.5);
        stopped.currency = Some("USD".into());
        let mut record = merge_success(None, "vast", vec![running, stopped], 1_000);
        record.balance = Some(StoredBalance {
            balance: Balance {
                amount,
                currency: "USD".into(),
                spend_per_hour: spend,
            },
            read_ms: 1_000,
        });
        record
    }

    #[test]
    fn hours_left_come_from_the_inventory_burn_or_the_providers_own() {
        let from_inventory = of_account(&record(10.0, None), "a", Some(5.0)).unwrap();
        assert_eq!(from_inventory.burn_per_hour, 2.5);
        assert_eq!(from_inventory.burn_source, BurnSource::Inventory);
        assert_eq!(from_inventory.hours_left, Some(4.0));
        assert!(from_inventory.below);
        let from_provider = of_account(&record(10.0, Some(1.0)), "a", Some(5.0)).unwrap();
        assert_eq!(from_provider.burn_source, BurnSource::Provider);
        assert_eq!(from_provider.hours_left, Some(10.0));
        assert!(!from_provider.below);
        let idle = of_account(&record(10.0, Some(0.0)), "a", Some(5.0)).unwrap();
        assert_eq!((idle.hours_left, idle.below), (None, false));
        let owed = of_account(&record(-1.0, Some(0.0)), "a", Some(5.0)).unwrap();
        assert_eq!((owed.hours_left, owed.below), (Some(0.0), true));
    }
}
