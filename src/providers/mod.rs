//! The fleet as the provider accounts see it: each `[[providers]]` account's instances (id,
//! label, state, GPUs, SSH endpoint, price, start, disk), listed through the provider's API
//! (vast.ai, RunPod, Lambda, AutoDL) or a program of the user's that prints gpufleet's
//! inventory JSON (docs/INVENTORY.md), and kept in the state directory with the price history
//! and the instances that disappeared.
//!
//! Syncing blocks (reqwest's blocking client, paced to each provider's documented rate limit):
//! call it from a worker thread, never from the UI thread or inside a tokio runtime.

mod account;
pub mod autodl;
pub mod background;
pub mod balance;
pub mod command;
pub mod deadline;
pub mod endpoints;
pub mod fetch;
mod fields;
pub mod fleet_hosts;
pub mod lambda;
pub mod model;
pub mod runpod;
pub mod store;
pub mod unwatched;
pub mod vast;

pub use account::{SyncError, SyncFailure, base_url, pace, sync_account, sync_all};
pub use background::{BackgroundSync, SyncNote, SyncSoon};
pub use endpoints::InventoryEndpoints;
pub use model::{Balance, Instance, InstanceState, SshEndpoint, SshRoute};
pub use store::{AccountRecord, InventoryStore, PricePoint, StoreError, Stored, StoredInstance};

/// What one account listed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Listing {
    pub instances: Vec<Instance>,
    /// Entries without an id, which cannot be tracked.
    pub skipped: usize,
    /// Things worth saying that did not stop the sync (a token file open to others, one
    /// instance's details missing).
    pub notes: Vec<String>,
    /// HTTP requests sent, 429 retries included.
    pub requests: u32,
    /// The account's balance, read when the account has a balance red line and its provider
    /// offers one.
    pub balance: Option<Balance>,
}
