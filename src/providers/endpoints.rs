//! A synced host's newest SSH endpoint, read from the stored inventory each time a link asks:
//! after a restart AutoDL may give the instance a new port and vast.ai a new address, and the
//! next sync stores it. Only hosts that came from the inventory are answered; a `[[hosts]]`
//! entry's own `ssh` is the user's word and is never moved.

use crate::config::Config;
use crate::remote::{Endpoint, EndpointLookup};

use super::fleet_hosts::join;
use super::store::InventoryStore;

/// Looks hosts up in the inventory stored at `store`, joined to the user's own `config`.
pub struct InventoryEndpoints {
    config: Config,
    store: InventoryStore,
}

impl InventoryEndpoints {
    pub fn new(config: Config, store: InventoryStore) -> Self {
        Self { config, store }
    }
}

impl EndpointLookup for InventoryEndpoints {
    fn endpoint(&self, host: &str) -> Option<Endpoint> {
        // No inventory, or one that cannot be read: the link keeps the endpoint it has.
        let stored = self.store.load().ok()?;
        let joined = join(&self.config, &stored);
        if !joined.added.iter().any(|name| name == host)
            || joined.gone.iter().any(|g| g.name == host)
        {
            return None;
        }
        let ssh = &joined.config.host(host)?.ssh;
        Some(Endpoint {
            user: ssh.user.clone()?,
            host: ssh.host.clone(),
            port: ssh.port.unwrap_or(22),
        })
    }
}
