//! The alerts panel (`!`) and the alert events: each alert that fires is logged and, when it is
//! a warning or worse, shown as a notice; a sink that fails says so in the bottom bar. Pure.

use rust_i18n::t;

use crate::alerts::{Alert, AlertState, DeliveryEvent};
use crate::app::alert_log::AlertSender;
use crate::app::command::Command;
use crate::app::model::Model;
use crate::app::panel::Panel;
use crate::diagnose::Severity;

/// `!`: opens the panel at the newest alert.
pub fn open(model: &mut Model) -> Vec<Command> {
    model.panel = Some(Panel::Alerts { scroll: 0 });
    model.mark_dirty();
    Vec::new()
}

/// What fired or resolved this tick.
pub fn on_alerts(model: &mut Model, alerts: Vec<Alert>, sender: AlertSender) -> Vec<Command> {
    let firing: Vec<&Alert> = alerts
        .iter()
        .filter(|a| a.state == AlertState::Firing && a.severity >= Severity::Warning)
        .collect();
    if let Some(first) = firing.first() {
        let more = match firing.len() {
            1 => String::new(),
            n => t!("alerts.more", n = n - 1).into_owned(),
        };
        let text = t!(
            "alerts.notice",
            place = first.place(),
            summary = first.summary_after_place(),
            more = more
        )
        .into_owned();
        model.notify(text, true);
    }
    model.alerts.sender = sender;
    let added = alerts.len();
    for alert in alerts {
        model.alerts.record(alert);
    }
    if let Some(Panel::Alerts { scroll }) = &mut model.panel
        && *scroll > 0
    {
        // Keep the rows the user is reading in place as new ones arrive on top.
        *scroll = (*scroll + added).min(model.alerts.entries.len().saturating_sub(1));
    }
    model.mark_dirty();
    Vec::new()
}

/// A sink's report on one alert: problems show in the bottom bar.
pub fn on_delivery(model: &mut Model, event: DeliveryEvent) -> Vec<Command> {
    let now = model.now_ms();
    if let Some(problem) = model.alerts.delivery(now, event) {
        model.notify(problem, true);
    }
    model.mark_dirty();
    Vec::new()
}
