//! The runbook picker: every runbook with its title, the ones for the host's most severe finding
//! first and marked; the selected one's summary; then the parameters that may be typed.

use rust_i18n::t;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::app::model::Model;
use crate::app::runbook_run::{ParamForm, Picker};
use crate::runbook::Danger;
use crate::theme::Theme;
use crate::ui::format::{clean, fit};
use crate::ui::panel::{self, centred, key_hint};
use crate::ui::wrap;

pub fn draw(f: &mut Frame, area: Rect, model: &Model, picker: &Picker, theme: &Theme) {
    let width = area.width.min(100);
    let inner_width = width.saturating_sub(2) as usize;
    let mut lines = match &picker.form {
        Some(form) => form_lines(model, form, inner_width, theme),
        None => list_lines(picker, inner_width, theme),
    };
    if let Some(note) = &picker.note {
        for row in wrap::rows(&clean(note), inner_width.saturating_sub(1)) {
            lines.push(Line::styled(format!(" {row}"), theme.warning()));
        }
    }
    let hint = match picker.form {
        Some(_) => key_hint(
            &[
                ("Enter", t!("keyhint.run")),
                ("↑↓ Tab", t!("keyhint.parameter")),
                ("Esc", t!("keyhint.back")),
            ],
            theme,
        ),
        None => key_hint(
            &[
                ("↑↓", t!("keyhint.choose")),
                ("Enter", t!("keyhint.run_here")),
                ("Esc", t!("keyhint.close")),
            ],
            theme,
        ),
    };
    // The selected runbook's summary takes the rows left over.
    if picker.form.is_none()
        && let Some(book) = picker
            .selected()
            .and_then(|item| model.runbooks.catalog().get(&item.id))
    {
        let room = (area.height as usize).saturating_sub(lines.len() + 2 + 2 + 2);
        let changes = book
            .steps
            .iter()
            .filter(|s| s.danger != Danger::Read)
            .count();
        let counts = t!(
            "runbooks.counts",
            steps = book.steps.len(),
            changes = changes
        );
        // Whitespace first: `clean` drops the summary's line breaks.
        let summary: Vec<&str> = book.summary.split_whitespace().collect();
        let text = format!("{} {counts}", clean(&summary.join(" ")));
        let mut rows = wrap::rows(&text, inner_width.saturating_sub(1));
        if rows.len() > room {
            rows.truncate(room);
            if let Some(last) = rows.last_mut() {
                *last = fit(&format!("{last} …"), inner_width.saturating_sub(1));
            }
        }
        if !rows.is_empty() {
            lines.push(Line::from(""));
        }
        for row in rows {
            lines.push(Line::styled(format!(" {row}"), theme.dim()));
        }
    }
    lines.push(Line::from(""));
    lines.push(hint);
    let rect = centred(area, width, lines.len() as u16 + 2);
    let title = t!("runbooks.title", host = clean(&picker.host_name)).into_owned();
    let inner = panel::frame(f, rect, title, theme.border_focused(), theme);
    f.render_widget(Paragraph::new(lines), inner);
}

fn list_lines<'a>(picker: &Picker, width: usize, theme: &Theme) -> Vec<Line<'a>> {
    let id_width = picker
        .items
        .iter()
        .map(|i| crate::cells::width(&i.id))
        .max()
        .unwrap_or(8)
        .min(20);
    let mut lines = Vec::new();
    for (i, item) in picker.items.iter().enumerate() {
        let selected = i == picker.cursor;
        let marker = if selected { "▸" } else { " " };
        let tag = item
            .for_label
            .as_ref()
            .map(|label| t!("runbooks.for", label = label).into_owned())
            .unwrap_or_default();
        let room = width.saturating_sub(id_width + 5 + crate::cells::width(&tag));
        let text_style = if selected {
            theme.selected()
        } else {
            theme.dialog()
        };
        lines.push(Line::from(vec![
            Span::styled(
                format!(
                    " {marker} {}  ",
                    crate::cells::pad(&fit(&item.id, id_width), id_width)
                ),
                text_style,
            ),
            Span::styled(fit(&clean(&item.title), room), text_style),
            Span::styled(tag, theme.warning()),
        ]));
    }
    lines
}

fn form_lines<'a>(model: &Model, form: &ParamForm, width: usize, theme: &Theme) -> Vec<Line<'a>> {
    let title = model
        .runbooks
        .catalog()
        .get(&form.runbook)
        .map(|b| clean(&b.title))
        .unwrap_or_default();
    let mut lines = vec![
        Line::styled(format!(" {}: {title}", clean(&form.runbook)), theme.title()),
        Line::styled(t!("runbooks.type_value"), theme.dim()),
    ];
    let name_width = form
        .fields
        .iter()
        .map(|f| crate::cells::width(&f.name))
        .max()
        .unwrap_or(4);
    for (i, field) in form.fields.iter().enumerate() {
        let selected = i == form.cursor;
        let marker = if selected { "▸" } else { " " };
        let mut spans = vec![Span::styled(
            format!(" {marker} {}  ", crate::cells::pad(&field.name, name_width)),
            if selected {
                theme.selected()
            } else {
                theme.dialog()
            },
        )];
        spans.push(Span::styled(
            format!("[{}", crate::cells::pad(&field.value, 6)),
            theme.filter(),
        ));
        spans.push(Span::styled(
            if selected { "▏]" } else { " ]" },
            theme.filter(),
        ));
        let room = width.saturating_sub(name_width + 16 + crate::cells::width(&field.value).max(6));
        spans.push(Span::styled(
            format!("  {}", fit(&clean(&field.hint), room)),
            theme.dim(),
        ));
        lines.push(Line::from(spans));
    }
    if let Some(error) = &form.error {
        for row in wrap::rows(&clean(error), width.saturating_sub(1)) {
            lines.push(Line::styled(format!(" {row}"), theme.critical()));
        }
    }
    lines
}
