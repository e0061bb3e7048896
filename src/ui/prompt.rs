//! The dialog for a link's question: trust an unknown host key (default No), or type a
//! passphrase / password (shown only as dots).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use crate::app::model::Model;
use crate::app::prompt::PromptKind;
use crate::theme::Theme;
use crate::ui::format::clean;

pub fn draw(frame: &mut Frame, area: Rect, model: &Model, theme: &Theme) {
    let Some(prompt) = model.prompts.front() else {
        return;
    };
    let host = model
        .fleet
        .hosts
        .get(prompt.host)
        .map_or_else(String::new, |h| clean(&h.name));
    let target = clean(&prompt.target);
    let (title, mut lines) = match &prompt.kind {
        PromptKind::HostKey {
            known_as,
            key_type,
            fingerprint,
            other_types_known,
        } => {
            let mut lines = vec![
                Line::from(format!(
                    "{host}: the authenticity of host '{}' can't be established.",
                    clean(known_as)
                )),
                Line::from(vec![
                    Span::raw(format!("{} key fingerprint is ", clean(key_type))),
                    Span::styled(clean(fingerprint), theme.title()),
                ]),
            ];
            if !other_types_known.is_empty() {
                lines.push(Line::styled(
                    format!(
                        "known_hosts already holds {} for this host: a new key type is worth a look.",
                        other_types_known.join(", ")
                    ),
                    theme.warning(),
                ));
            }
            lines.push(Line::from(""));
            lines.push(Line::from(vec![
                Span::raw("Trust it and add it to known_hosts? "),
                Span::styled("y", theme.help_key()),
                Span::raw(" yes · "),
                Span::styled("any other key", theme.help_key()),
                Span::raw(" no (default)"),
            ]));
            (" Unknown host key ", lines)
        }
        PromptKind::Passphrase { key_file } => (
            " Key passphrase ",
            vec![Line::from(format!(
                "{host} ({target}): passphrase for {}",
                clean(key_file)
            ))],
        ),
        PromptKind::Password => (
            " Password ",
            vec![Line::from(format!("{host}: password for {target}"))],
        ),
    };
    if prompt.wants_secret() {
        lines.push(Line::from(""));
        lines.push(Line::from(vec![
            Span::raw("> "),
            Span::styled(
                "•".repeat(model.secret_input.chars().count()),
                theme.filter(),
            ),
            Span::styled("▏", theme.filter()),
        ]));
        lines.push(Line::styled(
            "Enter submits · Esc cancels · kept in memory only",
            theme.dim(),
        ));
    }
    let width = area.width.min(84);
    // Room for the long lines (fingerprints, paths) to wrap once each.
    let height = (lines.len() as u16 * 2 + 2).min(area.height);
    let rect = crate::ui::panel::centred(area, width, height);
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(lines)
            .style(theme.dialog())
            .wrap(Wrap { trim: false })
            .block(
                Block::default()
                    .borders(Borders::ALL)
                    .border_style(theme.danger())
                    .title(Span::styled(title, theme.title())),
            ),
        rect,
    );
}
