//! The question asked when the console quits while hosts have a dead-man switch armed: leave
//! them armed (`y` or Enter: each host stops itself once nobody watches it), disarm them (`d`),
//! or stay (Esc).

use rust_i18n::t;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};

use crate::theme::Theme;
use crate::ui::format::clean;

pub fn draw(frame: &mut Frame, area: Rect, hosts: &[String], theme: &Theme) {
    let names: Vec<String> = hosts.iter().map(|h| clean(h)).collect();
    let lines = vec![
        Line::from(t!("dead_man.quit_armed", hosts = names.join(", ")).into_owned()),
        Line::from(""),
        Line::from(vec![
            Span::styled("y", theme.help_key()),
            Span::raw(t!("dead_man.quit_keep").into_owned()),
        ]),
        Line::from(vec![
            Span::styled("d", theme.help_key()),
            Span::raw(t!("dead_man.quit_disarm").into_owned()),
        ]),
        Line::from(vec![
            Span::styled("Esc", theme.help_key()),
            Span::raw(t!("dead_man.quit_stay").into_owned()),
        ]),
    ];
    let width = area.width.min(72);
    let height = (lines.len() as u16 + 5).min(area.height);
    let rect = crate::ui::panel::centred(area, width, height);
    crate::ui::panel::clear(frame, rect);
    frame.render_widget(
        Paragraph::new(lines)
            .style(theme.dialog())
            .wrap(Wrap { trim: false })
            .block(
                Block::default()
                    .borders(Borders::ALL)
                    .border_style(theme.warning())
                    .title(Span::styled(t!("dead_man.quit_title"), theme.title())),
            ),
        rect,
    );
}
