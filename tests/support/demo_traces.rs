//! What the demo may leave in a state directory: its own black box (`blackbox/demo/`, which
//! `gpufleet --demo report` reads) and the console's log, never a ledger, audit line or check
//! report of a simulated host.

use std::path::Path;

/// Fails unless `state` holds nothing but the demo's black box and the console's log.
pub fn assert_only_demo_traces(state: &Path) {
    let entries: Vec<String> = std::fs::read_dir(state)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    for name in &entries {
        match name.as_str() {
            "gpufleet.log" => {}
            "blackbox" => {
                let inside: Vec<String> = std::fs::read_dir(state.join("blackbox"))
                    .map(|d| {
                        d.flatten()
                            .map(|e| e.file_name().to_string_lossy().into_owned())
                            .collect()
                    })
                    .unwrap_or_default();
                assert!(
                    inside.iter().all(|n| n == "demo"),
                    "{}: the demo's black box holds more than demo/: {inside:?}",
                    state.display()
                );
            }
            _ => panic!("{} holds {entries:?}", state.display()),
        }
    }
}
