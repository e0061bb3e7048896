//! The help overlay, generated from the keymap so it always lists every key.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use crate::app::keymap::BINDINGS;
use crate::theme::Theme;

pub fn draw(frame: &mut Frame, area: Rect, theme: &Theme) {
    let width = area.width.min(64);
    let height = (BINDINGS.len() as u16 + 4).min(area.height);
    let rect = crate::ui::panel::centred(area, width, height);
    let mut lines: Vec<Line> = BINDINGS
        .iter()
        .map(|(keys, what)| {
            Line::from(vec![
                Span::styled(format!(" {keys:<17}"), theme.help_key()),
                Span::styled(*what, theme.dialog()),
            ])
        })
        .collect();
    lines.push(Line::from(""));
    lines.push(Line::styled(" any key closes this help", theme.dim()));
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(lines).style(theme.dialog()).block(
            Block::default()
                .borders(Borders::ALL)
                .border_style(theme.border_focused())
                .title(Span::styled(" Keys ", theme.title())),
        ),
        rect,
    );
}
