//! The panel that can be open over the views (runbook picker, runbook pane, check, audit log),
//! where the console's hosts are, and the runbooks it knows. Data only; `ops` and the panes'
//! handlers change it.

use std::sync::{Arc, OnceLock};

use crate::app::check_run::CheckRun;
use crate::app::cursor::step;
use crate::app::keymap::InputMode;
use crate::app::runbook_run::{Picker, RunbookRun};
use crate::audit::AuditEntry;
use crate::runbook::Catalog;

/// Where the console's hosts are, which decides what `p` and `c` can run there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HostSource {
    /// The simulated fleet: nothing real to run.
    #[default]
    Demo,
    /// This machine (`--local`).
    Local,
    /// SSH hosts.
    Ssh,
    /// The demo fleet (`--demo`) whose simulator answers runbooks, checks and releases:
    /// they run as on real hosts, marked simulated, and nothing runs anywhere.
    Simulated,
}

/// The runbooks the picker lists, shared; two are equal when they list the same runbooks.
#[derive(Debug, Clone)]
pub struct Runbooks(pub Arc<Catalog>);

impl Runbooks {
    pub fn new(catalog: Catalog) -> Self {
        Self(Arc::new(catalog))
    }

    pub fn catalog(&self) -> &Catalog {
        &self.0
    }
}

impl PartialEq for Runbooks {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0.entries() == other.0.entries()
    }
}

impl Default for Runbooks {
    /// The curated runbooks embedded in the binary (parsed once per process).
    fn default() -> Self {
        static CURATED: OnceLock<Arc<Catalog>> = OnceLock::new();
        Self(Arc::clone(CURATED.get_or_init(|| {
            Arc::new(Catalog::curated().unwrap_or_default())
        })))
    }
}

/// The panel open over the views; keys go to it until it closes.
#[derive(Debug, Clone, PartialEq)]
pub enum Panel {
    Picker(Picker),
    Runbook(RunbookRun),
    Check(CheckRun),
    Audit(AuditView),
    /// The alerts panel (`!`); the alerts themselves are in the model's log.
    Alerts {
        scroll: usize,
    },
}

impl Panel {
    /// What keys mean while this panel is open.
    pub fn input_mode(&self) -> InputMode {
        match self {
            Panel::Picker(picker) => picker.input_mode(),
            Panel::Runbook(run) => run.input_mode(),
            Panel::Check(check) => check.input_mode(),
            Panel::Audit(_) => InputMode::Audit,
            Panel::Alerts { .. } => InputMode::Alerts,
        }
    }
}

/// How many entries the view keeps (the newest).
pub const AUDIT_ENTRIES_SHOWN: usize = 500;

/// The audit log as the view holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditView {
    /// Until the bridge has read the log.
    pub loading: bool,
    /// Newest first.
    pub entries: Vec<AuditEntry>,
    /// Why the log could not be read.
    pub error: Option<String>,
    /// Rows scrolled down from the newest.
    pub scroll: usize,
}

impl AuditView {
    pub fn scroll_by(&mut self, delta: i64) {
        self.scroll = step(self.scroll, delta, self.entries.len());
    }
}
