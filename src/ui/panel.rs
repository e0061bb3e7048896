//! What the panels over the views share: where they sit, clearing the cells under them, their
//! frame, key hints, and text cut into rows so that long commands wrap instead of being cut
//! (prose wraps in `ui::wrap`).

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear};

use crate::theme::Theme;

/// A rectangle of at most `width` x `height`, centred in `area`.
pub fn centred(area: Rect, width: u16, height: u16) -> Rect {
    let width = width.min(area.width);
    let height = height.min(area.height);
    Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    }
}

/// Clears `rect` for something drawn over the view: every cell of it, and a wide character
/// (Chinese text) that starts just left of it. Such a character's second half lies under the
/// overlay's left edge, and a terminal draws the whole character, so the overlay's border
/// there would never show: ratatui's `Clear` alone only blanks the cells inside `rect`.
pub fn clear(frame: &mut Frame, rect: Rect) {
    frame.render_widget(Clear, rect);
    clear_left_of(frame.buffer_mut(), rect);
}

/// Blanks, on each row of `rect`, a wide character that starts left of `rect` and reaches into
/// it, keeping the cell's style.
fn clear_left_of(buf: &mut Buffer, rect: Rect) {
    let rect = rect.intersection(buf.area);
    if rect.is_empty() {
        return;
    }
    // A character is at most two cells wide: only the cell just left of the edge can reach
    // into it.
    let Some(x) = rect.left().checked_sub(1).filter(|&x| x >= buf.area.left()) else {
        return;
    };
    for y in rect.top()..rect.bottom() {
        let cell = &mut buf[(x, y)];
        if crate::cells::width(cell.symbol()) > 1 {
            cell.set_symbol(" ");
        }
    }
}

/// Clears `rect` (as [`clear`]), draws the panel's frame titled `title` and returns the inside.
pub fn frame(frame: &mut Frame, rect: Rect, title: String, border: Style, theme: &Theme) -> Rect {
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(border)
        .style(theme.dialog())
        .title(Span::styled(title, theme.title()));
    let inner = block.inner(rect);
    clear(frame, rect);
    frame.render_widget(block, rect);
    inner
}

/// ` Enter run · Esc close`.
pub fn key_hint<'a, K: AsRef<str>, W: AsRef<str>>(pairs: &[(K, W)], theme: &Theme) -> Line<'a> {
    let mut spans = vec![Span::raw(" ")];
    for (i, (key, what)) in pairs.iter().enumerate() {
        if i > 0 {
            spans.push(Span::styled(" · ", theme.dim()));
        }
        spans.push(Span::styled(key.as_ref().to_string(), theme.help_key()));
        spans.push(Span::styled(format!(" {}", what.as_ref()), theme.dialog()));
    }
    Line::from(spans)
}

/// `text` cut into rows of `width` cells (at least one row), never inside a character.
pub fn wrap_rows(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut rows = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let row = take_row(rest, width);
        rows.push(row.to_string());
        rest = &rest[row.len()..];
    }
    if rows.is_empty() {
        rows.push(String::new());
    }
    rows
}

/// The start of `text` that fits in `width` cells, at least one character (a wide character
/// in a one-cell row), so that cutting always moves on.
fn take_row(text: &str, width: usize) -> &str {
    let row = crate::cells::take(text, width);
    if row.is_empty() {
        text.char_indices()
            .nth(1)
            .map_or(text, |(at, _)| &text[..at])
    } else {
        row
    }
}

/// A bar of `width` cells filled to `ratio`.
pub fn bar<'a>(ratio: f64, width: usize, style: Style, theme: &Theme) -> Vec<Span<'a>> {
    let ratio = if ratio.is_finite() {
        ratio.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let filled = ((ratio * width as f64).round() as usize).min(width);
    vec![
        Span::styled("█".repeat(filled), style),
        Span::styled("░".repeat(width - filled), theme.dim()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wide_character_reaching_under_an_overlay_is_blanked() {
        use ratatui::layout::Rect;
        let mut buf = Buffer::empty(Rect::new(0, 0, 12, 3));
        // Row 0: 主 on cells 3-4, reaching into an overlay from cell 4. Row 1: 主 on 2-3,
        // wholly outside. Row 2: ASCII.
        buf.set_string(3, 0, "主机", Style::default());
        buf.set_string(2, 1, "主机", Style::default());
        buf.set_string(0, 2, "abcdefgh", Style::default());
        clear_left_of(&mut buf, Rect::new(4, 0, 6, 3));
        assert_eq!(buf[(3, 0)].symbol(), " ");
        assert_eq!(buf[(2, 1)].symbol(), "主");
        assert_eq!(buf[(3, 2)].symbol(), "d");
        // An overlay at the screen's left edge has nothing to its left.
        clear_left_of(&mut buf, Rect::new(0, 0, 3, 3));
        assert_eq!(buf[(0, 2)].symbol(), "a");
    }

    #[test]
    fn rows_keep_every_character() {
        assert_eq!(wrap_rows("abcdefg", 3), vec!["abc", "def", "g"]);
        assert_eq!(wrap_rows("", 3), vec![""]);
    }

    #[test]
    fn chinese_rows_are_cut_by_cells_between_characters() {
        assert_eq!(wrap_rows("掉卡残血卡", 4), vec!["掉卡", "残血", "卡"]);
        // An odd width leaves a cell free rather than splitting a character.
        assert_eq!(wrap_rows("掉卡残血卡", 5), vec!["掉卡", "残血", "卡"]);
        // A row narrower than one character still moves on.
        assert_eq!(wrap_rows("掉卡", 1), vec!["掉", "卡"]);
    }
}
