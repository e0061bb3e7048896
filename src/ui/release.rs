//! The release dialog: provider, instance, what the action does, money spent and idle time, the
//! exact request (token `<redacted>`), the backup's output as it streams in, then the typed
//! confirmation or the provider's answer.

use rust_i18n::t;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

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
        Span::styled(
            format!(" {}", crate::cells::pad(label, LABEL)),
            theme.header(),
        ),
        Span::styled(value, style),
    ])
}

/// `line` cut into rows of `width` cells, each row after the first starting `indent` cells in,
/// so that what goes on continues inside the border under its own start rather than against
/// the border. A row breaks after a space in its second half, else between two characters
/// (never inside one).
fn hang<'a>(line: &Line<'a>, width: usize, indent: usize) -> Vec<Line<'a>> {
    let width = width.max(1);
    if line.width() <= width {
        return vec![line.clone()];
    }
    let indent = indent.min(width / 2);
    let chars: Vec<(char, Style)> = line
        .spans
        .iter()
        .flat_map(|span| {
            let style = line.style.patch(span.style);
            span.content.chars().map(move |c| (c, style))
        })
        .collect();
    let mut rows = Vec::new();
    let (mut start, mut at, mut used) = (0, 0, 0);
    let mut room = width;
    while at < chars.len() {
        let w = crate::cells::char_width(chars[at].0);
        if used + w <= room || at == start {
            used += w;
            at += 1;
            continue;
        }
        // Full: break after the row's last space when that keeps half the row.
        let mut end = at;
        if let Some(space) = chars[start..at].iter().rposition(|(c, _)| *c == ' ') {
            let kept: usize = chars[start..=start + space]
                .iter()
                .map(|(c, _)| crate::cells::char_width(*c))
                .sum();
            if kept * 2 >= room {
                end = start + space + 1;
            }
        }
        rows.push(row_line(
            &chars[start..end],
            if rows.is_empty() { 0 } else { indent },
        ));
        start = end;
        at = end;
        used = 0;
        room = width - indent;
    }
    if start < chars.len() || rows.is_empty() {
        let lead = if rows.is_empty() { 0 } else { indent };
        rows.push(row_line(&chars[start..], lead));
    }
    rows
}

/// One row of [`hang`]: `indent` spaces, then the characters, a span per run of one style.
fn row_line<'a>(chars: &[(char, Style)], indent: usize) -> Line<'a> {
    let mut spans: Vec<Span<'a>> = Vec::new();
    if indent > 0 {
        spans.push(Span::raw(" ".repeat(indent)));
    }
    let mut text = String::new();
    let mut current: Option<Style> = None;
    for &(c, style) in chars {
        if current.is_some_and(|s| s != style) {
            spans.push(Span::styled(
                std::mem::take(&mut text),
                current.unwrap_or_default(),
            ));
        }
        current = Some(style);
        text.push(c);
    }
    if let Some(style) = current {
        spans.push(Span::styled(text, style));
    }
    Line::from(spans)
}

/// How far the rows after a line's first start: under the value for a labelled line (its label
/// is its first span, in the header style), else two cells past the line's own indentation.
fn indent_of(line: &Line, theme: &Theme) -> usize {
    match line.spans.first() {
        Some(label) if label.style == theme.header() && line.spans.len() > 1 => label.width(),
        _ => {
            let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
            text.chars().take_while(|c| *c == ' ').count() + 2
        }
    }
}

pub fn draw(frame: &mut Frame, area: Rect, model: &Model, theme: &Theme) {
    let Some(dialog) = &model.dialog else {
        return;
    };
    let width = area.width.min(100);
    let inner_width = width.saturating_sub(2) as usize;
    let rows_of = |lines: Vec<Line<'static>>| -> Vec<Line<'static>> {
        lines
            .iter()
            .flat_map(|line| hang(line, inner_width, indent_of(line, theme)))
            .collect()
    };
    let (head, tail) = sections(dialog, model, theme);
    let (head, tail) = (rows_of(head), rows_of(tail));
    let fixed = head.len() + tail.len();
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
    let used = lines.len();
    let height = (used as u16 + 2).min(area.height);
    // On a short screen the end stays in view: what to type or press now, and the action it
    // names; the plan's first lines give way.
    let hidden = u16::try_from(used.saturating_sub(usize::from(height.saturating_sub(2))))
        .unwrap_or(u16::MAX);
    let rect = crate::ui::panel::centred(area, width, height);
    let title = if dialog.unattended {
        t!("release.title_auto", host = clean(&dialog.host_name))
    } else if dialog.action.releases() {
        t!("release.title", host = clean(&dialog.host_name))
    } else {
        t!(
            "instance_action.title",
            host = clean(&dialog.host_name),
            action = dialog.action.words().localized()
        )
    };
    crate::ui::panel::clear(frame, rect);
    frame.render_widget(
        Paragraph::new(lines)
            .style(theme.dialog())
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
    let action = dialog.action.words().localized();
    if let Some(plan) = &dialog.plan {
        let instance = plan
            .instance_id
            .as_deref()
            .map(|id| t!("release.instance", id = id).into_owned())
            .unwrap_or_default();
        head.push(labelled(
            &t!("release.label_provider"),
            format!("{}{instance}", plan.provider),
            theme,
            theme.dialog(),
        ));
        let mut spans = vec![
            Span::styled(
                format!(" {}", crate::cells::pad(&t!("release.label_action"), LABEL)),
                theme.header(),
            ),
            Span::styled(action.to_uppercase(), theme.danger()),
            Span::styled(
                t!("release.this", effect = plan.effect.as_str()),
                theme.dialog(),
            ),
        ];
        if dialog.can_switch()
            && let Some(other) = plan.other_action
        {
            spans.push(Span::styled(
                format!("  (Tab: {})", other.words().localized()),
                theme.help_key(),
            ));
        }
        head.push(Line::from(spans));
    } else if model.through_watcher {
        // Tab switches between stop and terminate; a restart or start is only itself.
        let shown = if dialog.action.releases() {
            format!(
                "{}  (Tab: {})",
                action.to_uppercase(),
                t!("keyhint.stop_terminate")
            )
        } else {
            action.to_uppercase()
        };
        head.push(labelled(
            &t!("release.label_action"),
            shown,
            theme,
            theme.danger(),
        ));
        head.push(Line::styled(
            format!(" {}", t!("attach_action.by_watcher")),
            theme.dim(),
        ));
    } else {
        head.push(labelled(
            &t!("release.label_action"),
            action.clone(),
            theme,
            theme.dialog(),
        ));
    }
    if let Some(cost) = model.fleet.money.cost(dialog.host) {
        let spent = match (cost.spent(), cost.currency()) {
            (Some(spent), Some(currency)) => format_money(spent, currency),
            _ => t!("release.spent_unknown").into_owned(),
        };
        head.push(labelled(
            &t!("release.label_spent"),
            t!(
                "release.spent_value",
                spent = spent,
                billed = format_duration_ms(cost.totals.billed_ms),
                idle = format_duration_ms(cost.totals.current_idle_ms)
            )
            .into_owned(),
            theme,
            theme.dialog(),
        ));
    }
    if let Some(plan) = &dialog.plan {
        match &plan.backup {
            // A restart or start keeps the instance: there is nothing to back up.
            _ if !dialog.action.releases() => {}
            Some(backup) => head.push(labelled(
                &t!("release.label_backup"),
                t!("release.backup_runs", backup = backup, host = name).into_owned(),
                theme,
                theme.dialog(),
            )),
            None => head.push(labelled(
                &t!("release.label_backup"),
                t!("release.backup_none").into_owned(),
                theme,
                theme.dim(),
            )),
        }
        let request_label = t!("release.label_request");
        for (i, line) in plan.request.iter().enumerate() {
            head.push(labelled(
                if i == 0 { &request_label } else { "" },
                line.clone(),
                theme,
                theme.title(),
            ));
        }
        for warning in &plan.warnings {
            head.push(Line::styled(
                t!("release.warning", text = warning).into_owned(),
                theme.warning(),
            ));
        }
    }
    let mut tail = vec![Line::from("")];
    match &dialog.stage {
        ReleaseStage::Planning => {
            tail.push(Line::styled(t!("release.planning"), theme.dim()));
            tail.push(key_hint(&[("Esc", &t!("keyhint.cancel"))], theme));
        }
        ReleaseStage::Review => {
            let cancel = t!("keyhint.cancel");
            let mut keys = vec![("Enter", t!("keyhint.backup_then_confirm"))];
            if dialog.can_switch() {
                keys.push(("Tab / s t", t!("keyhint.stop_or_terminate")));
            }
            keys.push(("Esc", cancel));
            tail.push(key_hint(&keys, theme));
        }
        ReleaseStage::BackingUp => {
            tail.push(Line::styled(
                t!("release.backing_up", host = name).into_owned(),
                theme.warning(),
            ));
            tail.push(key_hint(&[("Esc", &t!("keyhint.cancel_release"))], theme));
        }
        ReleaseStage::BackupFailed { reason } => {
            tail.push(Line::styled(
                t!("release.backup_failed", reason = clean(reason)).into_owned(),
                theme.critical(),
            ));
            tail.push(key_hint(
                &[
                    ("o", &t!("keyhint.release_anyway")),
                    ("Esc / Enter", &t!("keyhint.cancel")),
                ],
                theme,
            ));
        }
        ReleaseStage::Typing => {
            if dialog.backup_ran && !dialog.backup_overridden {
                tail.push(Line::styled(t!("release.backup_done"), theme.ok()));
            } else if dialog.backup_overridden {
                tail.push(Line::styled(
                    t!("release.backup_overridden"),
                    theme.critical(),
                ));
            }
            tail.push(Line::from(vec![
                Span::raw(
                    t!(
                        "release.type_name",
                        host = name.as_str(),
                        action = action.as_str()
                    )
                    .into_owned(),
                ),
                Span::styled(clean(&dialog.typed), theme.filter()),
                Span::styled("▏", theme.filter()),
            ]));
            let cancel = t!("keyhint.cancel");
            let mut keys = vec![("Enter", t!("keyhint.confirm"))];
            if dialog.can_switch() {
                keys.push(("Tab", t!("keyhint.stop_terminate")));
            }
            keys.push(("Esc", cancel));
            tail.push(key_hint(&keys, theme));
        }
        ReleaseStage::Sending => {
            tail.push(Line::styled(
                t!("release.sending", action = action.as_str()).into_owned(),
                theme.warning(),
            ));
        }
        ReleaseStage::Sent { answers, problems } => {
            let sent = if dialog.action.releases() {
                t!(
                    "release.sent",
                    host = name.as_str(),
                    action = action.as_str()
                )
            } else {
                t!(
                    "instance_action.sent",
                    host = name.as_str(),
                    action = action.as_str()
                )
            };
            tail.push(Line::styled(sent.into_owned(), theme.ok()));
            for answer in answers {
                tail.push(Line::styled(format!("   {answer}"), theme.dialog()));
            }
            for problem in problems {
                tail.push(Line::styled(
                    t!("release.warning", text = problem).into_owned(),
                    theme.warning(),
                ));
            }
            tail.push(key_hint(
                &[(&t!("keyname.any_key"), &t!("keyhint.close"))],
                theme,
            ));
        }
        ReleaseStage::Failed { reason, answers } => {
            for answer in answers {
                tail.push(Line::styled(format!("   {answer}"), theme.dialog()));
            }
            tail.push(Line::styled(not_done(dialog, reason), theme.critical()));
            tail.push(key_hint(
                &[(&t!("keyname.any_key"), &t!("keyhint.close"))],
                theme,
            ));
        }
        ReleaseStage::Refused { reason } => {
            tail.push(Line::styled(not_done(dialog, reason), theme.critical()));
            tail.push(key_hint(
                &[(&t!("keyname.any_key"), &t!("keyhint.close"))],
                theme,
            ));
        }
    }
    (head, tail)
}

/// Why the action did not happen: "not released" for a release, the action named otherwise.
fn not_done(dialog: &ReleaseDialog, reason: &str) -> String {
    if dialog.action.releases() {
        t!("release.not_released", reason = reason).into_owned()
    } else {
        t!(
            "instance_action.not_done",
            action = dialog.action.words().localized(),
            reason = reason
        )
        .into_owned()
    }
}
