//! Recordings of host events: `--record FILE` (NDJSON, a versioned header line first), the
//! black box (a bounded rolling recording per host in the state directory), and replay (a
//! recording played back as a telemetry source). The recorder hooks into the sink that
//! sources send into, so the console and the watcher record the same events the same way.

pub mod blackbox;
pub mod demo_runs;
pub mod read;
pub mod replay;
pub mod wire;
pub mod wire_job;
pub mod wire_notice;
pub mod writer;

pub use blackbox::{BlackBox, BlackBoxOptions};
pub use read::{RecordingError, RecordingReader};
pub use replay::Replay;
pub use wire::{FORMAT_NAME, FORMAT_VERSION, Header, Line};
pub use writer::{RecordError, RecordOptions, Recorder};

#[cfg(test)]
mod tests;
