//! The recorder of a console or watcher session: `--record FILE` and the black box, set up the
//! same way for both.

use std::path::PathBuf;

use crate::recording::blackbox::{BlackBoxOptions, dir_to_write};
use crate::recording::{RecordError, RecordOptions, Recorder};

/// Starts the recorder for a session watching `hosts`: into `file` when given, and into the
/// black box unless `blackbox` is false (a replay) or there is no state directory. `None`
/// when there is nothing to record into.
pub fn start(
    file: Option<PathBuf>,
    blackbox: bool,
    demo: bool,
    who: &str,
    hosts: Vec<String>,
) -> Result<Option<Recorder>, RecordError> {
    let blackbox = blackbox
        .then(|| dir_to_write(demo, crate::telemetry::source::now_ms()))
        .flatten()
        .map(|dir| BlackBoxOptions::new(dir, who));
    if file.is_none() && blackbox.is_none() {
        return Ok(None);
    }
    Recorder::start(RecordOptions { file, blackbox }, hosts).map(Some)
}
