//! `check`, accelerator probes, disks and fit estimates.
//!
//! One test binary for this area: each module is one former test file.

#[path = "../support/cli.rs"]
mod cli;
#[path = "../common/mod.rs"]
mod common;
#[path = "../release_support/server.rs"]
mod release_server;
#[path = "../support/tmux.rs"]
mod tmux;

mod accel_amd_ssh;
mod accel_local;
mod accel_mthreads_ssh;
mod accel_pasted;
mod accel_ssh;
mod accel_ssh_samples;
mod check_expect;
mod check_local;
mod check_ssh;
mod check_tui;
mod disk_ssh;
mod fit_estimates;
