//! What the panes share: the host they act on, the refusal on the demo fleet, a notice in the
//! bottom bar, and closing the panel.

use rust_i18n::t;

use crate::app::command::Command;
use crate::app::model::{Model, View};
use crate::app::panel::{HostSource, Panel};

/// The host `p` and `c` act on: the open one, else the one under the fleet cursor.
pub fn target_host(model: &Model) -> Option<usize> {
    match model.view {
        View::Host(host) => Some(host),
        View::Fleet => model.selected_host(),
    }
}

/// Why nothing can run on the console's hosts, if so.
pub fn refusal(model: &Model) -> Option<String> {
    (model.source == HostSource::Demo).then(|| t!("ops.demo_nothing_real").into_owned())
}

/// Closes the panel; a run still going is told to stop.
pub fn close(model: &mut Model) -> Vec<Command> {
    let commands = match model.panel.take() {
        Some(Panel::Runbook(run)) if !run.is_finished() => {
            vec![Command::StopRunbook { id: run.id }]
        }
        Some(Panel::Check(check)) if !check.is_finished() => {
            vec![Command::StopCheck { id: check.id }]
        }
        _ => Vec::new(),
    };
    model.mark_dirty();
    commands
}
