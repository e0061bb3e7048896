//! The accounts synced in the background, each every `sync_interval_s`, on a thread of their
//! own so that no loop (the watcher's tick, the console's frames) ever waits on a provider.
//! Each round's results go into the stored inventory (the state-file writer) and are handed
//! to a callback, for a log line. An account is first due one interval after its last attempt
//! in the stored inventory (at once when it has none), so restarting does not hammer an API.
//! After an instance was released, restarted or started, [`SyncSoon`] asks every account again
//! [`SOON`] later (never sooner than [`MIN_GAP`] after its last attempt), so the inventory
//! shows what the provider did within a minute rather than at the next interval.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
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

/// How long after an instance changed its accounts are asked again: the providers take some
/// seconds to show a stop or a start.
pub const SOON: Duration = Duration::from_secs(20);
/// The least time between two attempts of one account (the providers' rate limits).
pub const MIN_GAP: Duration = Duration::from_secs(60);
/// The longest the sync thread sleeps before it looks for a [`SyncSoon`] request.
const LOOK_EVERY: Duration = Duration::from_secs(5);

/// Asks the background sync to list every account again soon, after something changed an
/// instance (a release, a restart, a start); clones share one request. Made before the sync
/// starts, so whatever changes instances can hold it from the start.
#[derive(Debug, Clone, Default)]
pub struct SyncSoon(Arc<AtomicBool>);

impl SyncSoon {
    /// Every account is listed again [`SOON`] from now (an account attempted less than
    /// [`MIN_GAP`] before that waits for the gap).
    pub fn ask(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    fn take(&self) -> bool {
        self.0.swap(false, Ordering::Relaxed)
    }
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
    /// outcome and each failure to store, `soon` asks for a round ahead of time.
    pub fn start(
        accounts: Vec<ProviderAccount>,
        store: InventoryStore,
        env: Box<Env>,
        options: SendOptions,
        now_ms: fn() -> u64,
        report: Box<dyn Fn(Result<SyncNote, String>) + Send>,
        soon: SyncSoon,
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
                // When each account was last attempted (0: not yet).
                let mut attempted: Vec<u64> = accounts
                    .iter()
                    .zip(&due_ms)
                    .map(|(a, due)| due.saturating_sub(interval_ms(a)))
                    .collect();
                while !flag.is_set() {
                    let now = now_ms();
                    if soon.take() {
                        let at = now.saturating_add(millis(SOON));
                        for (due, last) in due_ms.iter_mut().zip(&attempted) {
                            let earliest = at.max(last.saturating_add(millis(MIN_GAP)));
                            *due = (*due).min(earliest);
                        }
                    }
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
                        for ((account, next), last) in accounts
                            .iter()
                            .zip(due_ms.iter_mut())
                            .zip(attempted.iter_mut())
                        {
                            if due
                                .iter()
                                .any(|d| d.display_name() == account.display_name())
                            {
                                *next = at + interval_ms(account);
                                *last = at;
                            }
                        }
                    }
                    let next = due_ms.iter().copied().min().unwrap_or(u64::MAX);
                    let wait_ms = next.saturating_sub(now_ms()).clamp(10, millis(LOOK_EVERY));
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

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
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
