//! The audit-log view (`a`): the newest entries of the audit log (what ran on which host, when,
//! and how it ended). Pure: the ops bridge reads the log on a worker thread when the view opens.

use crate::app::command::Command;
use crate::app::model::Model;
use crate::app::panel::{AUDIT_ENTRIES_SHOWN, AuditView, Panel};
use crate::audit::AuditEntry;

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
