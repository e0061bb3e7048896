//! `gpufleet attach URL...` and `gpufleet snapshot --from URL`: the token found (`--token-file`,
//! else `GPUFLEET_TOKEN`) and every watcher's stream opened and checked before the console
//! starts (a refusal, an unreachable watcher or a stream of another format is said, exit 2);
//! the one-shot read prints the watchers' fleets as `snapshot` prints its own.

use std::path::Path;
use std::process::ExitCode;

use crate::fleet::FleetOptions;
use crate::remote_watcher::{self, Attach, AttachError, AttachToken};
use crate::snapshot::{Snapshot, render_table};

/// The watchers at `urls`, opened with the token found.
pub fn open(urls: &[String], token_file: Option<&Path>) -> Result<Attach, AttachError> {
    let token = AttachToken::find(token_file)?;
    Attach::open(urls, token)
}

/// `snapshot --from URL...`: exit 0 when every host was read, 1 when one could not be, 2 when
/// a watcher could not be read.
pub fn snapshot(
    urls: &[String],
    token_file: Option<&Path>,
    options: FleetOptions,
    json: bool,
) -> ExitCode {
    let fleet = match open(urls, token_file)
        .and_then(|attach| remote_watcher::read_once(attach, options))
    {
        Ok(fleet) => fleet,
        Err(e) => {
            eprintln!("gpufleet snapshot: {e}");
            return ExitCode::from(2);
        }
    };
    let snapshot = Snapshot::from_fleet(&fleet);
    if json {
        match serde_json::to_string_pretty(&snapshot) {
            Ok(text) => crate::outln!("{text}"),
            Err(e) => {
                eprintln!("gpufleet snapshot: {e}");
                return ExitCode::from(2);
            }
        }
    } else {
        crate::out!("{}", render_table(&snapshot));
    }
    if snapshot.all_read() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
