//! `/metrics` for Prometheus: the fleet in dcgm-exporter's names and labels (so dashboards made
//! for it work unchanged) plus gpufleet's own `gpufleet_*` series, in the text format 0.0.4.

mod accel;
mod accounts;
mod fleet;
mod jobs;
mod serve;
mod text;

pub use fleet::render;
pub use serve::{
    Access, Answer, Body, Endpoint, HEADER_TIMEOUT, IDLE_TIMEOUT, MAX_CONNECTIONS, MetricsBridge,
    MetricsServer, RENDER_WAIT, ServeError, bearer_matches, plain, unauthorized,
};
pub use text::{CONTENT_TYPE, Kind, Labels, Page};
