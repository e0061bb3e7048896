//! The release dialog: provider, instance, what the action does, money spent and idle time, the
//! exact request (token `<redacted>`), the backup's output as it streams in, then the typed
//! confirmation or the provider's answer.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use crate::app::model::Model;
use crate::app::release_state::{ReleaseDialog, ReleaseStage};
use crate::cost::{format_duration_ms, format_money};
use crate::theme::Theme;
use crate::ui::format::{clean, fit};
use crate::ui::panel::key_hint;

/// Width of the labels on the left.
const LABEL: usize = 10;

fn labelled<'a>(label: &str, value: String, theme: &Theme, style: Style) -> Line<'a> {
    Line::from(vec![
        Span::styled(format!(" {label:<LABEL$}"), theme.header()),
        Span::styled(value, style),
    ])
}

/// Rows a line takes once wrapped to `width`.
fn rows_of(line: &Line, width: usize) -> usize {
    line.width().max(1).div_ceil(width.max(1))
}

pub fn draw(frame: &mut Frame, area: Rect, model: &Model, theme: &Theme) {
    let Some(dialog) = &model.dialog else {
        return;
    };
    let width = area.width.min(100);
    let inner_width = width.saturating_sub(2) as usize;
    let (head, tail) = sections(dialog, model, theme);
    let fixed: usize = head
        .iter()
        .chain(&tail)
        .map(|l| rows_of(l, inner_width))
        .sum();
    // The backup's output fills what is left, newest lines last.
    let room = (area.height as usize)
        .saturating_sub(2 + fixed)
        .min(dialog.backup_output.len());
    let mut lines = head;
    if room > 0 {
        let skip = dialog.backup_output.len() - room;
        for line in dialog.backup_output.iter().skip(skip) {
            lines.push(Line::styled(
                fit(&format!(" | {}", clean(line)), inner_width),
                theme.dim(),
            ));
        }
    }
    lines.extend(tail);
    let used: usize = lines.iter().map(|l| rows_of(l, inner_width)).sum();
    let height = (used as u16 + 2).min(area.height);
    // On a short screen the end stays in view: what to type or press now, and the action it
    // names; the plan's first lines give way.
    let hidden = u16::try_from(used.saturating_sub(usize::from(height.saturating_sub(2))))
        .unwrap_or(u16::MAX);
    let rect = crate::ui::panel::centred(area, width, height);
    let title = if dialog.unattended {
        format!(" Auto-release {} ", clean(&dialog.host_name))
    } else {
        format!(" Release {} ", clean(&dialog.host_name))
    };
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(lines)
            .style(theme.dialog())
            .wrap(Wrap { trim: false })
            .scroll((hidden, 0))
            .block(
                Block::default()
                    .borders(Borders::ALL)
                    .border_style(theme.danger())
                    .title(Span::styled(title, theme.title())),
            ),
        rect,
    );
}

/// The lines above the backup output and those below it.
fn sections<'a>(
    dialog: &ReleaseDialog,
    model: &Model,
    theme: &Theme,
) -> (Vec<Line<'a>>, Vec<Line<'a>>) {
    let mut head = Vec::new();
    let name = clean(&dialog.host_name);
    let action = dialog.action.as_str();
    if let Some(plan) = &dialog.plan {
        let instance = plan
            .instance_id
            .as_deref()
            .map(|id| format!(" · instance {id}"))
            .unwrap_or_default();
        head.push(labelled(
            "provider",
            format!("{}{instance}", plan.provider),
            theme,
            theme.dialog(),
        ));
        let mut spans = vec![
            Span::styled(format!(" {:<LABEL$}", "action"), theme.header()),
            Span::styled(action.to_uppercase(), theme.danger()),
            Span::styled(format!(": this {}", plan.effect), theme.dialog()),
        ];
        if dialog.can_switch()
            && let Some(other) = plan.other_action
        {
            spans.push(Span::styled(
                format!("  (Tab: {})", other.as_str()),
                theme.help_key(),
            ));
        }
        head.push(Line::from(spans));
    } else {
        head.push(labelled(
            "action",
            action.to_string(),
            theme,
            theme.dialog(),
        ));
    }
    if let Some(cost) = model.fleet.money.cost(dialog.host) {
        let spent = match (cost.spent(), cost.currency()) {
            (Some(spent), Some(currency)) => format_money(spent, currency),
            _ => "unknown (no price in the config)".to_string(),
        };
        head.push(labelled(
            "spent",
            format!(
                "{spent} over {} billed · idle now {}",
                format_duration_ms(cost.totals.billed_ms),
                format_duration_ms(cost.totals.current_idle_ms)
            ),
            theme,
            theme.dialog(),
        ));
    }
    if let Some(plan) = &dialog.plan {
        match &plan.backup {
            Some(backup) => head.push(labelled(
                "backup",
                format!("{backup}  (runs first, on {name})"),
                theme,
                theme.dialog(),
            )),
            None => head.push(labelled(
                "backup",
                "none configured".to_string(),
                theme,
                theme.dim(),
            )),
        }
        for (i, line) in plan.request.iter().enumerate() {
            head.push(labelled(
                if i == 0 { "request" } else { "" },
                line.clone(),
                theme,
                theme.title(),
            ));
        }
        for warning in &plan.warnings {
            head.push(Line::styled(
                format!(" warning: {warning}"),
                theme.warning(),
            ));
        }
    }
    let mut tail = vec![Line::from("")];
    match &dialog.stage {
        ReleaseStage::Planning => {
            tail.push(Line::styled(" planning…", theme.dim()));
            tail.push(key_hint(&[("Esc", "cancel")], theme));
        }
        ReleaseStage::Review => {
            let mut keys = vec![("Enter", "run the backup, then confirm")];
            if dialog.can_switch() {
                keys.push(("Tab / s t", "stop or terminate"));
            }
            keys.push(("Esc", "cancel"));
            tail.push(key_hint(&keys, theme));
        }
        ReleaseStage::BackingUp => {
            tail.push(Line::styled(
                format!(" backing up on {name}…"),
                theme.warning(),
            ));
            tail.push(key_hint(&[("Esc", "cancel the release")], theme));
        }
        ReleaseStage::BackupFailed { reason } => {
            tail.push(Line::styled(
                format!(
                    " the backup failed ({}): the release is blocked",
                    clean(reason)
                ),
                theme.critical(),
            ));
            tail.push(key_hint(
                &[("o", "release anyway"), ("Esc / Enter", "cancel")],
                theme,
            ));
        }
        ReleaseStage::Typing => {
            if dialog.backup_ran && !dialog.backup_overridden {
                tail.push(Line::styled(" backup done", theme.ok()));
            } else if dialog.backup_overridden {
                tail.push(Line::styled(
                    " the backup FAILED and is overridden",
                    theme.critical(),
                ));
            }
            tail.push(Line::from(vec![
                Span::raw(format!(" type {name} to {action} it: ")),
                Span::styled(clean(&dialog.typed), theme.filter()),
                Span::styled("▏", theme.filter()),
            ]));
            let mut keys = vec![("Enter", "confirm (anything else cancels)")];
            if dialog.can_switch() {
                keys.push(("Tab", "stop / terminate"));
            }
            keys.push(("Esc", "cancel"));
            tail.push(key_hint(&keys, theme));
        }
        ReleaseStage::Sending => {
            tail.push(Line::styled(
                format!(" sending the {action} request…"),
                theme.warning(),
            ));
        }
        ReleaseStage::Sent { answers, problems } => {
            tail.push(Line::styled(
                format!(" {name}: {action} sent and accepted; the host is marked released"),
                theme.ok(),
            ));
            for answer in answers {
                tail.push(Line::styled(format!("   {answer}"), theme.dialog()));
            }
            for problem in problems {
                tail.push(Line::styled(
                    format!(" warning: {problem}"),
                    theme.warning(),
                ));
            }
            tail.push(key_hint(&[("any key", "close")], theme));
        }
        ReleaseStage::Failed { reason, answers } => {
            for answer in answers {
                tail.push(Line::styled(format!("   {answer}"), theme.dialog()));
            }
            tail.push(Line::styled(
                format!(" not released: {reason}"),
                theme.critical(),
            ));
            tail.push(key_hint(&[("any key", "close")], theme));
        }
        ReleaseStage::Refused { reason } => {
            tail.push(Line::styled(
                format!(" not released: {reason}"),
                theme.critical(),
            ));
            tail.push(key_hint(&[("any key", "close")], theme));
        }
    }
    (head, tail)
}
