//! Frames and runs drawn in-process in a chosen language. The interface language is
//! process-wide: every test here holds `language()` while it runs.
//!
//! One test binary for this area: each module is one former test file.

use std::sync::{Mutex, MutexGuard, PoisonError};

use gpufleet::config::lang::Lang;

mod overlay_frames;
mod quit_dead_man;
mod ui_findings_snapshots;
mod ui_job_snapshots;
mod zh_playbook_run;

/// The interface language (`Lang::apply`) is the process's: a test that draws holds this
/// from its first line to its last, so no other test switches the language under it.
static LANGUAGE: Mutex<()> = Mutex::new(());

/// Holds the process's interface language for one test, English at first as when the process
/// starts: the test's own `Lang::apply` calls then choose what it draws in.
fn language() -> MutexGuard<'static, ()> {
    let held = LANGUAGE.lock().unwrap_or_else(PoisonError::into_inner);
    Lang::En.apply();
    held
}
