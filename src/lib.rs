//! gpufleet: a terminal console for rented GPUs.

pub mod app;
pub mod audit;
pub mod cli;
pub mod config;
pub mod launch;
pub mod paths;
pub mod remote;
pub mod snapshot;
pub mod telemetry;
pub mod theme;
pub mod ui;
