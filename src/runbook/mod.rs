//! The runbook: runbooks as data (curated TOML embedded in the binary, plus the user's own)
//! and the runner that walks one on a host, showing every command before it runs, asking before
//! anything but a read, and logging each step that ran to the audit log.

pub mod advice;
pub mod catalog;
pub mod check;
pub mod confirm;
pub mod exec;
pub mod facts;
pub mod localize;
pub mod model;
pub mod params;
pub mod reboot;
pub mod remote_exec;
pub mod report;
pub mod restart;
pub mod runner;
pub mod sim_exec;
pub mod target;
pub mod undo;
pub mod validate;

use thiserror::Error;

pub use catalog::{Catalog, CatalogError, parse_runbook};
pub use confirm::{AssumeYes, ConfirmRequest, Confirmer, PromptConfirmer, cli_confirmer};
pub use exec::{ExecError, ExecResult, Executor, LocalExecutor};
pub use model::{Danger, Runbook, Step};
pub use reboot::RebootOptions;
pub use remote_exec::RemoteExecutor;
pub use report::{
    EXIT_CANCELLED, EXIT_FAILED, EXIT_OK, EXIT_REFUSED, EXIT_USAGE, NoteKind, Observer, RunEvent,
    RunOutcome, TextObserver,
};
pub use restart::Restart;
pub use runner::{RunOptions, RunReport, StepRecord, Tools, run};
pub use sim_exec::SimExecutor;
pub use target::Target;
pub use undo::{UndoRecord, UndoStore};

/// `no runbook "x" (known: a, b)`, in the interface's language.
fn unknown_words(id: &str, known: &str) -> String {
    rust_i18n::t!("catalog_error.unknown", id = id : {:?}, known = known).into_owned()
}

#[derive(Debug, Error)]
pub enum RunbookError {
    #[error("{}", unknown_words(.id, .known))]
    UnknownRunbook { id: String, known: String },
    #[error(transparent)]
    Catalog(#[from] CatalogError),
}
