//! Alerts: what gpufleet tells a person who is not looking at the console (a GPU lost at
//! night, a host unreachable, a red line crossed, an auto-release), sent to webhooks and chat
//! services (`[[alerts]]` in the config) without ever holding up monitoring.

mod answer;
mod book;
mod deliver;
mod message;
mod sink;
mod try_sinks;

pub use answer::{Verdict, judge};
pub use book::{AUTO_RELEASE, AlertBook, UNREACHABLE};
pub use deliver::{
    Clock, DOWN_AFTER, DeliveryEvent, DeliveryOptions, Dispatcher, Reporter, SinkStatus,
};
pub use message::{Alert, AlertState, Money, truncate_bytes};
pub use sink::{HttpRequest, Sink, SinkError};
pub use try_sinks::{EXIT_BAD_SETUP, EXIT_DELIVERED, EXIT_UNDELIVERED, test_sinks};
