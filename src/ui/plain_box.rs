//! A bordered box with a title, drawn as ratatui's `Block::bordered().title(..)` with the
//! default (empty) style draws it, cell for cell, but without the `Block`'s pass over every cell
//! of its area to lay its style: an empty style changes no cell, and for the fleet's pane, which
//! covers the screen and is redrawn about ten times a second, that pass was a tenth of the
//! console's work with fifty hosts.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::symbols::line;
use ratatui::text::Line;
use ratatui::widgets::Widget;

/// Draws the box's four sides in `border` style and `title` at the top left, inside the
/// corners; returns the inside (as `Block::inner` does).
pub fn draw(buf: &mut Buffer, area: Rect, title: &Line<'_>, border: Style) -> Rect {
    let inside = Rect {
        x: area.x.saturating_add(1).min(area.right()),
        y: area.y.saturating_add(1).min(area.bottom()),
        width: area.width.saturating_sub(2),
        height: area.height.saturating_sub(2),
    };
    let area = area.intersection(buf.area);
    if area.is_empty() {
        return inside;
    }
    let (left, top) = (area.left(), area.top());
    let right = area.right().saturating_sub(1);
    let bottom = area.bottom().saturating_sub(1);
    let mut put = |x: u16, y: u16, symbol: &str| {
        buf[(x, y)].set_symbol(symbol).set_style(border);
    };
    // The sides whole, then the corners over them, as the `Block` draws them.
    for y in top..=bottom {
        put(left, y, line::VERTICAL);
    }
    for x in left..=right {
        put(x, top, line::HORIZONTAL);
    }
    for y in top..=bottom {
        put(right, y, line::VERTICAL);
    }
    for x in left..=right {
        put(x, bottom, line::HORIZONTAL);
    }
    put(right, bottom, line::BOTTOM_RIGHT);
    put(right, top, line::TOP_RIGHT);
    put(left, bottom, line::BOTTOM_LEFT);
    put(left, top, line::TOP_LEFT);
    let room = Rect {
        x: left.saturating_add(1),
        y: top,
        width: area.width.saturating_sub(2),
        height: 1,
    };
    if !room.is_empty() {
        let width = u16::try_from(title.width()).unwrap_or(u16::MAX);
        title.render(
            Rect {
                width: width.min(room.width),
                ..room
            },
            buf,
        );
    }
    inside
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::style::Color;
    use ratatui::text::Span;
    use ratatui::widgets::{Block, Borders};

    #[test]
    fn the_box_is_the_blocks_cell_for_cell() {
        let titles = [
            Line::default(),
            Line::from(Span::styled(
                " 50 hosts · sort: name ",
                Style::new().fg(Color::Cyan),
            )),
            Line::from(Span::styled(" 主机 50 台 ", Style::new().fg(Color::Cyan))),
        ];
        for (width, height) in [(0, 0), (1, 1), (2, 2), (3, 1), (5, 3), (12, 4), (40, 10)] {
            for title in &titles {
                let full = Rect::new(0, 0, 44, 12);
                let mut ours = Buffer::empty(full);
                ours.set_string(0, 0, "x".repeat(44 * 12), Style::new().fg(Color::Red));
                let mut theirs = ours.clone();
                let area = Rect::new(2, 1, width, height);
                let border = Style::new().fg(Color::Yellow);
                let block = Block::default()
                    .borders(Borders::ALL)
                    .border_style(border)
                    .title(title.clone());
                let inner = draw(&mut ours, area, title, border);
                assert_eq!(inner, block.inner(area), "{width}x{height}");
                block.render(area, &mut theirs);
                assert_eq!(ours, theirs, "{width}x{height} {title:?}");
            }
        }
    }
}
