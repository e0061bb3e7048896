//! Recordings and the state files.
//!
//! One test binary for this area: each module is one former test file.

#[path = "../support/tmux.rs"]
mod tmux;

mod hostile_files;
mod recording;
mod state_files;
