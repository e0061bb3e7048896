//! The release dialog as the model holds it, and its transitions: plan shown, backup run with its
//! output streamed in, the host name typed (anything else is Cancel), the request sent, the answer
//! shown. Pure: each step that does something is a `Command` the runtime's release bridge runs,
//! and its outcome comes back as a `ReleaseEvent`.

use rust_i18n::t;

use std::collections::VecDeque;

use crate::app::command::Command;
use crate::app::model::Model;
use crate::app::release_state::{
    BACKUP_LINES_KEPT, BackupResult, Confirmation, ReleaseDialog, ReleaseEvent, ReleaseStage,
};
use crate::fleet::HostId;
use crate::release::ReleaseAction;

/// Opens the release dialog for `host` (`R`, or an auto-release whose countdown ran out).
pub fn open(model: &mut Model, host: HostId, unattended: bool) -> Vec<Command> {
    if model.through_watcher {
        return open_through_watcher(model, host, unattended, ReleaseAction::Stop);
    }
    open_for(model, host, unattended, ReleaseAction::Stop)
}

/// Opens the dialog for a provider action that releases nothing (`r` restart, `S` start):
/// the same plan, request shown, typed confirmation and audit line, no backup, and the host's
/// ledger stays open. An attached console asks the watcher, which plans and sends it.
pub fn open_action(model: &mut Model, host: HostId, action: ReleaseAction) -> Vec<Command> {
    if model.through_watcher {
        return open_through_watcher(model, host, false, action);
    }
    open_for(model, host, false, action)
}

fn open_for(
    model: &mut Model,
    host: HostId,
    unattended: bool,
    action: ReleaseAction,
) -> Vec<Command> {
    if model.fleet.options.read_only {
        let refusal = if action.releases() {
            t!("release.read_only")
        } else {
            t!("restart.read_only")
        };
        model.notify(refusal.into_owned(), true);
        return Vec::new();
    }
    let Some(money) = model.fleet.money.hosts.get(host) else {
        return Vec::new();
    };
    if model.dialog.is_some() {
        if unattended && !model.pending_auto.contains(&host) {
            model.pending_auto.push_back(host);
        }
        return Vec::new();
    }
    let host_name = money.config.name.clone();
    let refusal = if !money.configured {
        Some(t!("release.not_in_config", host = host_name.as_str()).into_owned())
    } else if money.config.release.is_none() {
        Some(t!("release.no_table", host = host_name.as_str()).into_owned())
    } else if action.releases() && money.ledger.is_released() {
        Some(t!("release.already", host = host_name.as_str()).into_owned())
    } else {
        None
    };
    let id = model.fleet.money.next_release_id();
    let stage = match &refusal {
        Some(reason) => ReleaseStage::Refused {
            reason: reason.clone(),
        },
        None => ReleaseStage::Planning,
    };
    model.dialog = Some(ReleaseDialog {
        id,
        host,
        host_name: host_name.clone(),
        action,
        unattended,
        stage,
        plan: None,
        backup_output: VecDeque::new(),
        backup_ran: false,
        backup_overridden: false,
        typed: String::new(),
    });
    model.mark_dirty();
    if refusal.is_some() {
        return Vec::new();
    }
    vec![Command::PlanRelease {
        id,
        host: host_name,
        action,
        // The user sees the action and types the name; an unattended release only stops, and
        // a restart or start is never planned as another action.
        fallback: !unattended && action.releases(),
        cost: model.fleet.money.cost(host).cloned(),
    }]
}

/// An attached console's dialog: the watcher plans and sends the release (or restart, or
/// start), so the dialog goes straight to the typed name (Cancel by default) and the request
/// goes to the watcher. The watcher releases on its own countdowns: an unattended release is
/// never asked from here.
fn open_through_watcher(
    model: &mut Model,
    host: HostId,
    unattended: bool,
    action: ReleaseAction,
) -> Vec<Command> {
    if unattended || model.dialog.is_some() {
        return Vec::new();
    }
    let Some(host_name) = model.fleet.hosts.get(host).map(|h| h.name.clone()) else {
        return Vec::new();
    };
    let id = model.fleet.money.next_release_id();
    model.dialog = Some(ReleaseDialog {
        id,
        host,
        host_name,
        action,
        unattended: false,
        stage: ReleaseStage::Typing,
        plan: None,
        backup_output: VecDeque::new(),
        backup_ran: false,
        backup_overridden: false,
        typed: String::new(),
    });
    model.mark_dirty();
    Vec::new()
}

/// A report from the release bridge.
pub fn on_event(model: &mut Model, event: ReleaseEvent) -> Vec<Command> {
    let now_ms = model.fleet.now_ms;
    if model.dialog.as_ref().is_none_or(|d| d.id != event.id()) {
        // A release cancelled meanwhile: whatever it reports changes nothing.
        return Vec::new();
    }
    model.mark_dirty();
    let Some(dialog) = model.dialog.as_mut() else {
        return Vec::new();
    };
    let id = dialog.id;
    match event {
        ReleaseEvent::Planned { plan, .. } => {
            if dialog.stage != ReleaseStage::Planning {
                return Vec::new();
            }
            dialog.action = plan.action;
            let token_problem = plan.token_problem.clone();
            let backup = plan.backup.is_some() && !dialog.backup_ran;
            dialog.plan = Some(plan);
            if let Some(problem) = token_problem {
                dialog.stage = ReleaseStage::Refused {
                    reason: t!("release.no_token", problem = problem).into_owned(),
                };
                return vec![Command::CancelRelease { id }];
            }
            if dialog.unattended {
                if backup {
                    dialog.stage = ReleaseStage::BackingUp;
                    vec![Command::RunBackup { id }]
                } else {
                    dialog.stage = ReleaseStage::Sending;
                    vec![send_command(dialog, Confirmation::Unattended)]
                }
            } else {
                dialog.stage = if backup {
                    ReleaseStage::Review
                } else {
                    ReleaseStage::Typing
                };
                Vec::new()
            }
        }
        ReleaseEvent::PlanFailed { reason, .. } => {
            dialog.stage = ReleaseStage::Refused { reason };
            Vec::new()
        }
        ReleaseEvent::BackupLine { line, .. } => {
            if dialog.backup_output.len() == BACKUP_LINES_KEPT {
                dialog.backup_output.pop_front();
            }
            dialog.backup_output.push_back(line);
            Vec::new()
        }
        ReleaseEvent::BackupDone { result, .. } => {
            if dialog.stage != ReleaseStage::BackingUp {
                return Vec::new();
            }
            dialog.backup_ran = true;
            match result {
                BackupResult::Failed(reason) => {
                    dialog.stage = ReleaseStage::BackupFailed { reason };
                    Vec::new()
                }
                BackupResult::Succeeded | BackupResult::NotConfigured if dialog.unattended => {
                    dialog.stage = ReleaseStage::Sending;
                    vec![send_command(dialog, Confirmation::Unattended)]
                }
                BackupResult::Succeeded | BackupResult::NotConfigured => {
                    dialog.stage = ReleaseStage::Typing;
                    Vec::new()
                }
            }
        }
        ReleaseEvent::Sent {
            answers, problems, ..
        } => {
            dialog.stage = ReleaseStage::Sent { answers, problems };
            let (host, action) = (dialog.host, dialog.action);
            let provider = dialog
                .plan
                .as_ref()
                .map(|p| p.provider.clone())
                .unwrap_or_default();
            let name = dialog.host_name.clone();
            // A restart or start bills on: the ledger stays open.
            if action.releases() {
                if let Some(money) = model.fleet.money.hosts.get_mut(host) {
                    money.ledger.close(now_ms, action.as_str(), &provider);
                }
                let limits = model.fleet.options.money.fleet_limits;
                model.fleet.money.recompute(now_ms, &limits);
            }
            model.notify(
                t!(
                    "release.sent_notice",
                    host = name.as_str(),
                    action = action.words().localized()
                )
                .into_owned(),
                false,
            );
            Vec::new()
        }
        ReleaseEvent::SendFailed {
            reason, answers, ..
        } => {
            dialog.stage = ReleaseStage::Failed { reason, answers };
            Vec::new()
        }
    }
}

fn send_command(dialog: &ReleaseDialog, confirmation: Confirmation) -> Command {
    Command::SendRelease {
        id: dialog.id,
        confirmation,
        override_backup: dialog.backup_overridden,
    }
}

/// Enter: runs the backup from the plan, or checks the typed name.
pub fn proceed(model: &mut Model) -> Vec<Command> {
    let Some(dialog) = model.dialog.as_mut() else {
        return Vec::new();
    };
    match dialog.stage {
        ReleaseStage::Review => {
            dialog.stage = ReleaseStage::BackingUp;
            vec![Command::RunBackup { id: dialog.id }]
        }
        ReleaseStage::Typing => {
            let typed = dialog.typed.trim().to_string();
            if typed == dialog.host_name && model.through_watcher {
                dialog.stage = ReleaseStage::Sending;
                vec![Command::AskWatcher {
                    id: dialog.id,
                    host: dialog.host,
                    ask: crate::remote_watcher::Ask::Release {
                        action: dialog.action,
                        typed,
                    },
                }]
            } else if typed == dialog.host_name {
                dialog.stage = ReleaseStage::Sending;
                vec![send_command(dialog, Confirmation::Typed(typed))]
            } else {
                let why = if typed.is_empty() {
                    t!("release.cancelled").into_owned()
                } else {
                    let typed = format!("{:?}", crate::ui::format::clean(&typed));
                    t!("release.wrong_name", typed = typed).into_owned()
                };
                cancel_with(model, &why)
            }
        }
        ReleaseStage::BackupFailed { .. } => cancel_with(model, &t!("release.cancelled")),
        _ => Vec::new(),
    }
}

/// Esc: cancels at any step before the request goes out; closes a finished dialog.
pub fn cancel(model: &mut Model) -> Vec<Command> {
    match model.dialog.as_ref().map(|d| &d.stage) {
        None | Some(ReleaseStage::Sending) => Vec::new(),
        Some(
            ReleaseStage::Sent { .. } | ReleaseStage::Failed { .. } | ReleaseStage::Refused { .. },
        ) => close(model),
        Some(_) => cancel_with(model, &t!("release.cancelled")),
    }
}

fn cancel_with(model: &mut Model, why: &str) -> Vec<Command> {
    let Some(dialog) = model.dialog.take() else {
        return Vec::new();
    };
    let notice = if dialog.action.releases() {
        t!(
            "release.cancel_notice",
            host = dialog.host_name.as_str(),
            why = why
        )
    } else {
        t!(
            "instance_action.cancel_notice",
            host = dialog.host_name.as_str(),
            action = dialog.action.words().localized(),
            why = why
        )
    };
    model.notify(notice.into_owned(), true);
    let mut commands = vec![Command::CancelRelease { id: dialog.id }];
    commands.extend(next_pending(model));
    commands
}

/// Any key on a finished dialog closes it.
pub fn close(model: &mut Model) -> Vec<Command> {
    let Some(dialog) = model.dialog.take() else {
        return Vec::new();
    };
    let mut commands = vec![Command::CancelRelease { id: dialog.id }];
    commands.extend(next_pending(model));
    commands
}

/// Starts the next auto-release that waited for the dialog.
fn next_pending(model: &mut Model) -> Vec<Command> {
    match model.pending_auto.pop_front() {
        Some(host) => open(model, host, true),
        None => Vec::new(),
    }
}

/// Tab, `s`, `t`: another action, planned afresh (only before the backup ran).
pub fn switch_action(model: &mut Model, wanted: Option<ReleaseAction>) -> Vec<Command> {
    let cost = model
        .dialog
        .as_ref()
        .and_then(|d| model.fleet.money.cost(d.host).cloned());
    let through_watcher = model.through_watcher;
    let Some(dialog) = model.dialog.as_mut() else {
        return Vec::new();
    };
    if through_watcher {
        // The watcher plans it: the dialog only names the action it is to run.
        // Restart and start are not switched to: the dialog opens on them by their own key.
        let other = match dialog.action {
            ReleaseAction::Stop => ReleaseAction::Terminate,
            ReleaseAction::Terminate => ReleaseAction::Stop,
            ReleaseAction::Restart | ReleaseAction::Start => return Vec::new(),
        };
        if dialog.stage == ReleaseStage::Typing && wanted.is_none_or(|w| w == other) {
            dialog.action = other;
            dialog.typed.clear();
        }
        return Vec::new();
    }
    let Some(other) = dialog.plan.as_ref().and_then(|p| p.other_action) else {
        return Vec::new();
    };
    if !dialog.can_switch() || wanted.is_some_and(|w| w != other) {
        return Vec::new();
    }
    dialog.action = other;
    dialog.stage = ReleaseStage::Planning;
    dialog.typed.clear();
    vec![Command::PlanRelease {
        id: dialog.id,
        host: dialog.host_name.clone(),
        action: other,
        fallback: false,
        cost,
    }]
}

/// `o` after a failed backup: go on to the typed confirmation anyway.
pub fn override_backup(model: &mut Model) -> Vec<Command> {
    if let Some(dialog) = model.dialog.as_mut()
        && matches!(dialog.stage, ReleaseStage::BackupFailed { .. })
    {
        dialog.backup_overridden = true;
        dialog.stage = ReleaseStage::Typing;
    }
    Vec::new()
}
