//! Alerts from the console: the same book as the watcher's (one alert per host and label while
//! it lasts, a resolve when it clears), sent to the `[[alerts]]` sinks when this console holds
//! the alerts duty (see [`crate::duty`]), and always shown. Delivery runs on the dispatcher's
//! worker threads; their reports come back to the loop as [`Event::AlertDelivery`].

use std::sync::Arc;
use std::time::Duration;

use crate::alerts::{AlertBook, DeliveryOptions, Dispatcher, Reporter, Sink};
use crate::app::alert_log::AlertSender;
use crate::app::event::{Event, EventSink};
use crate::fleet::Fleet;
use crate::telemetry::source::now_ms;

/// How long queued alerts get to go out when the console quits.
const FINISH_WAIT: Duration = Duration::from_millis(500);

pub struct AlertBridge {
    book: AlertBook,
    sinks: Vec<String>,
    dispatcher: Option<Dispatcher>,
}

impl AlertBridge {
    /// Starts a worker per sink (none when `sinks` is empty: alerts are only shown).
    pub fn new(sinks: Vec<Sink>, unreachable_after_ms: u64, events: EventSink) -> Self {
        let names = sinks.iter().map(|s| s.name.clone()).collect();
        let dispatcher = (!sinks.is_empty()).then(|| {
            let reporter: Reporter = Arc::new(move |event| {
                let _ = events.send(Event::AlertDelivery(event));
            });
            Dispatcher::start(sinks, DeliveryOptions::default(), now_ms, reporter)
        });
        Self {
            book: AlertBook::new(unreachable_after_ms),
            sinks: names,
            dispatcher,
        }
    }

    /// After the fleet's tick: what fired or resolved, sent unless `sent_by` names another
    /// gpufleet that holds the alerts duty. `None` when nothing changed.
    pub fn tick(&mut self, fleet: &Fleet, sent_by: Option<&str>) -> Option<Event> {
        let alerts = self.book.update(fleet);
        if alerts.is_empty() {
            return None;
        }
        let sender = match (sent_by, &self.dispatcher) {
            (Some(holder), _) => AlertSender::Elsewhere(holder.to_string()),
            (None, Some(dispatcher)) => {
                for alert in &alerts {
                    dispatcher.send(alert);
                }
                AlertSender::Here(self.sinks.clone())
            }
            (None, None) => AlertSender::Nobody,
        };
        Some(Event::Alerts { alerts, sender })
    }

    /// Lets queued alerts go out (briefly) as the console quits.
    pub fn finish(self) {
        if let Some(dispatcher) = self.dispatcher {
            let _ = dispatcher.finish(FINISH_WAIT);
        }
    }
}
