//! The dialog for a link's question: trust an unknown host key (`y`, or `n` / Esc; other keys
//! are ignored), or type a passphrase / password (shown only as dots).

use rust_i18n::t;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};

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
                Line::from(
                    t!(
                        "prompt.authenticity",
                        host = host.as_str(),
                        known_as = clean(known_as)
                    )
                    .into_owned(),
                ),
                Line::from(vec![
                    Span::raw(t!("prompt.fingerprint", key_type = clean(key_type)).into_owned()),
                    Span::styled(clean(fingerprint), theme.title()),
                ]),
            ];
            if !other_types_known.is_empty() {
                lines.push(Line::styled(
                    t!("prompt.other_types", types = other_types_known.join(", ")).into_owned(),
                    theme.warning(),
                ));
            }
            lines.push(Line::from(""));
            lines.push(Line::from(vec![
                Span::raw(t!("prompt.trust").into_owned()),
                Span::styled("y", theme.help_key()),
                Span::raw(t!("prompt.yes").into_owned()),
                Span::styled(t!("prompt.no_keys").into_owned(), theme.help_key()),
                Span::raw(t!("prompt.no").into_owned()),
            ]));
            (t!("prompt.unknown_key"), lines)
        }
        PromptKind::Passphrase { key_file } => (
            t!("prompt.passphrase_title"),
            vec![Line::from(
                t!(
                    "prompt.passphrase",
                    host = host.as_str(),
                    target = target.as_str(),
                    key_file = clean(key_file)
                )
                .into_owned(),
            )],
        ),
        PromptKind::Password => (
            t!("prompt.password_title"),
            vec![Line::from(
                t!(
                    "prompt.password",
                    host = host.as_str(),
                    target = target.as_str()
                )
                .into_owned(),
            )],
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
        lines.push(Line::styled(t!("prompt.secret_keys"), theme.dim()));
    }
    let width = area.width.min(84);
    // Room for the long lines (fingerprints, paths) to wrap once each.
    let height = (lines.len() as u16 * 2 + 2).min(area.height);
    let rect = crate::ui::panel::centred(area, width, height);
    crate::ui::panel::clear(frame, rect);
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
