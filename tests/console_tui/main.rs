//! The console: frames, snapshots, keys, mouse, themes, the log and metrics panes, the demo.
//!
//! One test binary for this area: each module is one former test file.

#[path = "../support/cli.rs"]
mod cli;
#[path = "../support/demo_traces.rs"]
mod demo_traces;
#[path = "../support/tmux.rs"]
mod tmux;

mod console_log;
mod console_metrics;
mod demo_cli;
mod demo_tmux;
mod findings_tmux;
mod fleet_view_tmux;
mod offscreen_frames;
mod themes;
mod ui_snapshots;
mod update_keys;
mod update_mouse;
