//! The help overlay, generated from the keymap so it always lists every key. It says on its
//! frame which keys close it (the keymap's `Help` mode takes exactly those) and scrolls when
//! the screen is too short for the list.

use rust_i18n::t;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

use std::borrow::Cow;

use crate::app::keymap::BINDINGS;
use crate::app::screen::ScrollArea;
use crate::theme::Theme;
use crate::ui::format::fit;
use crate::ui::scroll;

/// Where the overlay sits in `area`, and how far its list can scroll there.
pub fn placement(area: Rect) -> ScrollArea {
    let width = area.width.min(64);
    let height = (BINDINGS.len() as u16 + 2).min(area.height);
    let rect = crate::ui::panel::centred(area, width, height);
    let rows = usize::from(rect.height.saturating_sub(2));
    ScrollArea {
        area: rect,
        max_scroll: BINDINGS.len().saturating_sub(rows),
    }
}

pub fn draw(frame: &mut Frame, area: Rect, scroll: usize, theme: &Theme) {
    let ScrollArea {
        area: rect,
        max_scroll,
    } = placement(area);
    let first = scroll.min(max_scroll);
    let rows = usize::from(rect.height.saturating_sub(2));
    let lines: Vec<Line> = BINDINGS
        .iter()
        .skip(first)
        .take(rows)
        .map(|(keys, what)| {
            let room = usize::from(rect.width.saturating_sub(2 + 18));
            Line::from(vec![
                Span::styled(
                    format!(" {}", crate::cells::pad(&key_name(keys), 17)),
                    theme.help_key(),
                ),
                Span::styled(fit(&t!(*what), room), theme.dialog()),
            ])
        })
        .collect();
    let title = scroll::title(&t!("pane.keys"), first, rows, BINDINGS.len());
    crate::ui::panel::clear(frame, rect);
    frame.render_widget(
        Paragraph::new(lines).style(theme.dialog()).block(
            Block::default()
                .borders(Borders::ALL)
                .border_style(theme.border_focused())
                .title(Span::styled(title, theme.title()))
                .title_bottom(Span::styled(
                    format!(" {} ", t!("help.close_hint")),
                    theme.title(),
                )),
        ),
        rect,
    );
}

/// The keys as the help shows them: the few that are words in the interface's language.
fn key_name(keys: &str) -> Cow<'_, str> {
    match keys {
        "any key" => t!("keyname.any_key"),
        "wheel" => t!("keyname.wheel"),
        "click" => t!("keyname.click"),
        keys => Cow::Borrowed(keys),
    }
}
