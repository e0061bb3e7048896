//! The check pane (`c`): `gpufleet check` on a host with a progress bar, the phase and the live
//! readings (temperature, power, SM clock, TFLOP/s) while it runs, then the report with the
//! previous one side by side. Pure: the ops bridge runs the check, keeps the report and reports
//! back.

use rust_i18n::t;

use crate::app::check_run::{CheckEvent, CheckRun, CheckStage};
use crate::app::command::Command;
use crate::app::model::Model;
use crate::app::pane_common::{close, refusal, target_host};
use crate::app::panel::Panel;
use crate::ui::format::clean;

/// `c`: checks the open or selected host; the demo fleet refuses. An attached console's
/// check runs on the watcher.
pub fn start(model: &mut Model) -> Vec<Command> {
    let Some(host) = target_host(model) else {
        return Vec::new();
    };
    if let Some(reason) = refusal(model).filter(|_| !model.through_watcher) {
        model.notify(t!("notice.check", reason = reason).into_owned(), true);
        return Vec::new();
    }
    let Some(host_name) = model.fleet.hosts.get(host).map(|h| h.name.clone()) else {
        return Vec::new();
    };
    let id = model.next_ops_id();
    model.panel = Some(Panel::Check(CheckRun {
        id,
        host,
        host_name,
        stage: CheckStage::Running,
        phase: t!("check.starting").into_owned(),
        fraction: 0.0,
        message: String::new(),
        readings: Vec::new(),
        scroll: 0,
    }));
    model.mark_dirty();
    vec![Command::StartCheck { id, host }]
}

/// A report from the ops bridge about check `id`.
pub fn on_event(model: &mut Model, event: CheckEvent) -> Vec<Command> {
    let Some(Panel::Check(check)) = &mut model.panel else {
        return Vec::new();
    };
    if check.id != event.id() {
        return Vec::new();
    }
    match event {
        CheckEvent::Progress {
            phase,
            fraction,
            message,
            reading,
            ..
        } => {
            if check.is_finished() {
                return Vec::new();
            }
            check.phase = clean(&phase);
            check.fraction = fraction.clamp(0.0, 1.0).max(check.fraction);
            check.message = clean(&message);
            if let Some(reading) = reading {
                match check.readings.binary_search_by_key(&reading.gpu, |r| r.gpu) {
                    Ok(pos) => check.readings[pos] = reading,
                    Err(pos) => check.readings.insert(pos, reading),
                }
            }
        }
        CheckEvent::Done {
            status,
            report,
            previous,
            note,
            ..
        } => {
            let lines = |text: &str| text.lines().map(clean).collect::<Vec<_>>();
            check.fraction = 1.0;
            check.scroll = 0;
            check.stage = CheckStage::Done {
                status,
                report: lines(&report),
                previous: previous.as_deref().map(lines),
                note: note.as_deref().map(clean),
            };
        }
        CheckEvent::Failed { reason, .. } => {
            check.stage = CheckStage::Failed {
                reason: clean(&reason),
            };
        }
    }
    model.mark_dirty();
    Vec::new()
}

/// Esc / `x` while the check runs: stop it; a second press closes the pane and leaves it.
pub fn stop(model: &mut Model) -> Vec<Command> {
    let Some(Panel::Check(check)) = &mut model.panel else {
        return Vec::new();
    };
    match check.stage {
        CheckStage::Running => {
            check.stage = CheckStage::Stopping;
            check.message = t!("check.stopping").into_owned();
            vec![Command::StopCheck { id: check.id }]
        }
        CheckStage::Stopping => close(model),
        _ => Vec::new(),
    }
}
