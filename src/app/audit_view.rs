//! The audit-log view (`a`): the newest entries of the audit log (what ran on which host, when,
//! and how it ended). Pure: the ops bridge reads the log on a worker thread when the view opens.

use crate::app::command::Command;
use crate::app::model::Model;
use crate::app::ops::{Panel, step};
use crate::audit::AuditEntry;

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

/// `a`: opens the view and asks for the log to be read.
pub fn open(model: &mut Model) -> Vec<Command> {
    model.panel = Some(Panel::Audit(AuditView {
        loading: true,
        entries: Vec::new(),
        error: None,
        scroll: 0,
    }));
    model.mark_dirty();
    vec![Command::LoadAudit]
}

/// The log as read (oldest first, as the file holds it), or why it could not be.
pub fn on_loaded(model: &mut Model, read: Result<Vec<AuditEntry>, String>) -> Vec<Command> {
    let Some(Panel::Audit(view)) = &mut model.panel else {
        return Vec::new();
    };
    view.loading = false;
    match read {
        Ok(entries) => {
            view.entries = entries
                .into_iter()
                .rev()
                .take(AUDIT_ENTRIES_SHOWN)
                .collect();
            view.error = None;
        }
        Err(why) => view.error = Some(why),
    }
    view.scroll = 0;
    model.mark_dirty();
    Vec::new()
}
