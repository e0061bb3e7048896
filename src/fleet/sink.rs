//! Where sources send what they learn about hosts. A source knows nothing of who listens (the
//! console's loop, the watcher, a one-shot read): each gives its sources a sink that wraps
//! the event into its own channel. A source that reads a burst at once (one line per GPU)
//! hands it over whole; a listener that takes bursts gets it in one message, any other one
//! event at a time, in order.

use std::sync::Arc;
use std::sync::mpsc::Sender;

use super::event::{HostEvent, HostId};

type One = dyn Fn(HostId, HostEvent) -> bool + Send + Sync;
type Many = dyn Fn(HostId, Vec<HostEvent>) -> bool + Send + Sync;

/// A cloneable destination for host events; `send` is false once nobody listens.
#[derive(Clone)]
pub struct HostSink {
    one: Arc<One>,
    many: Option<Arc<Many>>,
}

impl HostSink {
    pub fn new(send: impl Fn(HostId, HostEvent) -> bool + Send + Sync + 'static) -> Self {
        Self {
            one: Arc::new(send),
            many: None,
        }
    }

    /// A sink into `sender`'s channel, each event wrapped by `wrap`.
    pub fn from_sender<T: Send + 'static>(
        sender: Sender<T>,
        wrap: fn(HostId, HostEvent) -> T,
    ) -> Self {
        Self::new(move |host, event| sender.send(wrap(host, event)).is_ok())
    }

    /// This sink, taking a burst of events in one call of `send_all` instead of one each.
    pub fn with_bursts(
        mut self,
        send_all: impl Fn(HostId, Vec<HostEvent>) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.many = Some(Arc::new(send_all));
        self
    }

    /// Sends one event; false when the listener is gone (the source should stop).
    pub fn send(&self, host: HostId, event: HostEvent) -> bool {
        (self.one)(host, event)
    }

    /// Sends a burst of events, in order: whole where the listener takes bursts, else one at
    /// a time. False when the listener is gone.
    pub fn send_all(&self, host: HostId, events: Vec<HostEvent>) -> bool {
        match &self.many {
            Some(many) => many(host, events),
            None => events.into_iter().all(|event| self.send(host, event)),
        }
    }

    /// Whether the listener takes bursts whole.
    pub fn takes_bursts(&self) -> bool {
        self.many.is_some()
    }
}

impl std::fmt::Debug for HostSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HostSink")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    fn events() -> Vec<HostEvent> {
        (1..=3)
            .map(|attempt| HostEvent::Connecting {
                attempt,
                at_ms: Some(u64::from(attempt)),
            })
            .collect()
    }

    #[test]
    fn a_burst_reaches_a_listener_of_single_events_one_at_a_time_in_order() {
        let (tx, rx) = mpsc::channel();
        let sink = HostSink::from_sender(tx, |host, event| (host, event));
        assert!(sink.send_all(7, events()));
        let got: Vec<(HostId, HostEvent)> = rx.try_iter().collect();
        assert_eq!(
            got,
            events().into_iter().map(|e| (7, e)).collect::<Vec<_>>()
        );
        drop(rx);
        assert!(!sink.send_all(7, events()), "nobody listens any more");
    }

    #[test]
    fn a_listener_of_bursts_gets_the_burst_in_one_message() {
        let (tx, rx) = mpsc::channel();
        let single = tx.clone();
        let sink = HostSink::new(move |host, event| single.send((host, vec![event])).is_ok())
            .with_bursts(move |host, events| tx.send((host, events)).is_ok());
        assert!(sink.takes_bursts());
        assert!(sink.send_all(2, events()));
        let got: Vec<(HostId, Vec<HostEvent>)> = rx.try_iter().collect();
        assert_eq!(got, vec![(2, events())]);
    }
}
