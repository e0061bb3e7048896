//! Diagnosis: parsers and rules on real captured output, rendering, streams, live hosts.
//!
//! One test binary for this area: each module is one former test file.

#[path = "../support/tmux.rs"]
mod tmux;

mod diagnose_amd;
mod diagnose_ascend;
mod diagnose_container;
mod diagnose_device;
mod diagnose_live;
mod diagnose_live_hour;
mod diagnose_live_jobs;
mod diagnose_mthreads;
mod diagnose_render;
mod diagnose_smi;
mod diagnose_stream;
mod diagnose_text;
mod diagnose_triage;
mod parser_golden;
