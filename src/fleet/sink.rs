//! Where sources send what they learn about hosts. A source knows nothing of who listens (the
//! console's loop, the watcher, a one-shot read): each gives its sources a sink that wraps
//! the event into its own channel.

use std::sync::Arc;
use std::sync::mpsc::Sender;

use super::event::{HostEvent, HostId};

/// A cloneable destination for host events; `send` is false once nobody listens.
#[derive(Clone)]
pub struct HostSink(Arc<dyn Fn(HostId, HostEvent) -> bool + Send + Sync>);

impl HostSink {
    pub fn new(send: impl Fn(HostId, HostEvent) -> bool + Send + Sync + 'static) -> Self {
        Self(Arc::new(send))
    }

    /// A sink into `sender`'s channel, each event wrapped by `wrap`.
    pub fn from_sender<T: Send + 'static>(
        sender: Sender<T>,
        wrap: fn(HostId, HostEvent) -> T,
    ) -> Self {
        Self::new(move |host, event| sender.send(wrap(host, event)).is_ok())
    }

    /// Sends one event; false when the listener is gone (the source should stop).
    pub fn send(&self, host: HostId, event: HostEvent) -> bool {
        (self.0)(host, event)
    }
}

impl std::fmt::Debug for HostSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HostSink")
    }
}
