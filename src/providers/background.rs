//! The accounts synced in the background, each every `sync_interval_s`, on a thread of their
//! own so that no loop (the watcher's tick, the console's frames) ever waits on a provider.
//! Each round's results go into the stored inventory (the state-file writer) and are handed
//! to a callback, for a log line. An account is first due one interval after its last attempt
//! in the stored inventory (at once when it has none), so restarting does not hammer an API.

use std::thread::{self, JoinHandle};
use std::time::Duration;

use crate::config::ProviderAccount;
use crate::release::SendOptions;
use crate::telemetry::source::StopFlag;

use super::store::{InventoryStore, record_results};
use super::{Listing, SyncError, sync_all};

/// How one account's background sync went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncNote {
    pub provider: &'static str,
    pub account: String,
    /// Instances listed, or why the sync failed (the provider and account already named).
    pub outcome: Result<usize, String>,
}

/// Environment lookups for the tokens, shared with the sync thread.
pub type Env = dyn Fn(&str) -> Option<String> + Send + Sync;

/// The running background sync; dropping it stops it (a sync in flight ends on its own
/// timeouts, its result still stored).
pub struct BackgroundSync {
    stop: StopFlag,
    handle: Option<JoinHandle<()>>,
}

impl BackgroundSync {
    /// Starts syncing `accounts`; `now_ms` is the wall clock, `report` hears each account's
    /// outcome and each failure to store.
    pub fn start(
        accounts: Vec<ProviderAccount>,
        store: InventoryStore,
        env: Box<Env>,
        options: SendOptions,
        now_ms: fn() -> u64,
        report: Box<dyn Fn(Result<SyncNote, String>) + Send>,
    ) -> std::io::Result<Self> {
        let stop = StopFlag::default();
        let flag = stop.clone();
        let handle = thread::Builder::new()
            .name("provider-sync".into())
            .spawn(move || {
                let last = store.load().ok();
                let mut due_ms: Vec<u64> = accounts
                    .iter()
                    .map(|a| {
                        last.as_ref()
                            .and_then(|s| s.accounts.get(a.display_name()))
                            .map_or(0, |r| r.attempted_ms + interval_ms(a))
                    })
                    .collect();
                while !flag.is_set() {
                    let now = now_ms();
                    let due: Vec<ProviderAccount> = accounts
                        .iter()
                        .zip(&due_ms)
                        .filter(|(_, at)| **at <= now)
                        .map(|(a, _)| a.clone())
                        .collect();
                    if !due.is_empty() {
                        let results = sync_all(&due, &*env, &options);
                        let at = now_ms();
                        if let Err(e) = store.update(|s| record_results(s, &due, &results, at)) {
                            report(Err(
                                rust_i18n::t!("provider_sync.not_stored", error = e).into_owned()
                            ));
                        }
                        for note in notes(&due, &results) {
                            report(Ok(note));
                        }
                        for (account, next) in accounts.iter().zip(due_ms.iter_mut()) {
                            if due
                                .iter()
                                .any(|d| d.display_name() == account.display_name())
                            {
                                *next = at + interval_ms(account);
                            }
                        }
                    }
                    let next = due_ms.iter().copied().min().unwrap_or(u64::MAX);
                    let wait_ms = next.saturating_sub(now_ms()).clamp(10, 3_600_000);
                    flag.sleep(Duration::from_millis(wait_ms));
                }
            })?;
        Ok(Self {
            stop,
            handle: Some(handle),
        })
    }

    /// Stops the thread and waits for it at most `wait`; a sync still in flight is left to end
    /// on its timeouts.
    pub fn stop(mut self, wait: Duration) {
        self.stop.set();
        if let Some(handle) = self.handle.take() {
            let started = std::time::Instant::now();
            while !handle.is_finished() && started.elapsed() < wait {
                thread::sleep(Duration::from_millis(10));
            }
            if handle.is_finished() {
                let _ = handle.join();
            }
        }
    }
}

impl Drop for BackgroundSync {
    fn drop(&mut self) {
        self.stop.set();
    }
}

fn interval_ms(account: &ProviderAccount) -> u64 {
    account.sync_interval_s.saturating_mul(1000)
}

fn notes(accounts: &[ProviderAccount], results: &[Result<Listing, SyncError>]) -> Vec<SyncNote> {
    accounts
        .iter()
        .zip(results)
        .map(|(account, result)| SyncNote {
            provider: account.kind.as_str(),
            account: account.display_name().to_string(),
            outcome: match result {
                Ok(listing) => Ok(listing.instances.len()),
                Err(e) => Err(e.to_string()),
            },
        })
        .collect()
}
