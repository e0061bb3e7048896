//! When a stopped instance's data goes: providers that delete an instance, its disk with it,
//! once it has stayed shut down for a while. AutoDL releases an instance shut down for 15 days
//! in a row, its data cleared for good (its console's instance list: "实例连续关机15天会释放实例，
//! 实例释放会导致数据清空且不可恢复"). The date counts from the provider's own shutdown time.
//! Pure: the caller loads the inventory and reads the clock.

use serde::Serialize;

use crate::config::{Config, ProviderKind};

use super::model::{InstanceState, Named};
use super::store::Stored;

const DAY_MS: u64 = 24 * 3600 * 1000;
/// How long AutoDL keeps an instance shut down before it releases it: 15 days.
pub const AUTODL_KEPT_STOPPED_MS: u64 = 15 * DAY_MS;
/// How long before the deletion it is alerted: 3 days, time to start it or copy the data off.
pub const ALERT_BEFORE_MS: u64 = 3 * DAY_MS;

/// How long a provider keeps an instance shut down before deleting it and its data.
pub fn kept_stopped_ms(kind: ProviderKind) -> Option<u64> {
    match kind {
        ProviderKind::AutoDl => Some(AUTODL_KEPT_STOPPED_MS),
        _ => None,
    }
}

/// A stopped instance and when its data goes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DataDeletion {
    #[serde(flatten)]
    pub instance: Named,
    pub stopped_ms: u64,
    pub deletes_ms: u64,
    /// Whether the deletion is at most [`ALERT_BEFORE_MS`] away (or past).
    pub soon: bool,
}

/// The stopped instances of the config's accounts whose provider deletes them, with the date.
pub fn find(config: &Config, stored: &Stored, now_ms: u64) -> Vec<DataDeletion> {
    let mut found = Vec::new();
    for account in &config.providers {
        let Some(kept_ms) = kept_stopped_ms(account.kind) else {
            continue;
        };
        let Some(record) = stored.accounts.get(account.display_name()) else {
            continue;
        };
        for entry in record.instances.iter().filter(|i| i.gone_ms.is_none()) {
            let i = &entry.instance;
            let (InstanceState::Stopped, Some(stopped_ms)) = (i.state, i.stopped_ms) else {
                continue;
            };
            let deletes_ms = stopped_ms.saturating_add(kept_ms);
            found.push(DataDeletion {
                instance: Named {
                    provider: record.provider.clone(),
                    account: account.display_name().to_string(),
                    instance_id: i.id.clone(),
                    label: i.label.clone(),
                    currency: i.currency.clone(),
                },
                stopped_ms,
                deletes_ms,
                soon: deletes_ms.saturating_sub(now_ms) <= ALERT_BEFORE_MS,
            });
        }
    }
    found
}

/// Whole days (rounded up) from `now_ms` to `deletes_ms`; 0 once it is past.
pub fn days_left(deletes_ms: u64, now_ms: u64) -> u64 {
    deletes_ms.saturating_sub(now_ms).div_ceil(DAY_MS)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The days are counted up to the deletion, rounded up, and none after it; only AutoDL
    /// has a deadline.
    #[test]
    fn days_left_round_up_and_only_autodl_deletes() {
        let stopped = 1_795_939_200_000;
        let deletes = stopped + AUTODL_KEPT_STOPPED_MS;
        assert_eq!(days_left(deletes, stopped), 15);
        assert_eq!(days_left(deletes, deletes - DAY_MS - 1), 2);
        assert_eq!(days_left(deletes, deletes + 1), 0);
        assert_eq!(kept_stopped_ms(ProviderKind::Vast), None);
    }
}
