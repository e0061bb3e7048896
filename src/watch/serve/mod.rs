//! `gpufleet watch --serve ADDR`: the watcher serves its fleet to attached consoles
//! (`gpufleet attach URL`), so a team watches one fleet through one set of SSH sessions while
//! the watcher alone holds the duties (automatic releases, alerts). The hub keeps each host's
//! state and fans events out (`hub.rs`), the tokens say who may read (`tokens.rs`), and the
//! stream is served over HTTP on the connection handling of `/metrics` (`server.rs`), with
//! what a console asks the watcher to do (`actions.rs`) and the incident bundles it makes for
//! `report --from` (`report.rs`).

pub mod actions;
pub mod hub;
pub mod report;
pub mod server;
pub mod tokens;

pub use actions::{CheckAsk, Hands, Ran, ReleaseAsk, Released, StepAsk, Stepped, StopJobAsk};
pub use hub::{CONSOLE_QUEUE_LINES, Hub, Subscription};
pub use report::Reports;
pub use server::{CONTENT_TYPE, HEARTBEAT, STATE_LINES_HEADER, ServeEndpoint, start};
pub use tokens::{DEFAULT_TOKEN_ENV, Grant, ServeTokens, SetupError, Tokens, read_token_file};
