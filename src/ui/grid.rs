//! A table drawn straight into the buffer: the fleet view is redrawn about ten times a second
//! with fifty hosts streaming, and ratatui's `Table` restyles every cell of its area three or
//! four times a frame (table, row, cell, text), which was a fifth of the frame. Column widths
//! come from the same layout the `Table` uses (`Flex::Start`, one space between columns), so
//! the screen is the same.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::Widget;

/// Draws a header line and then one line per row into `area`, each cell clipped to its column;
/// `selected` is a row index (0 = the first row drawn) and the style laid over that whole line.
pub fn draw<'a>(
    buf: &mut Buffer,
    area: Rect,
    widths: &[Constraint],
    (header, header_style): (Vec<Line<'a>>, Style),
    rows: impl Iterator<Item = Vec<Line<'a>>>,
    selected: Option<(usize, Style)>,
) {
    if area.is_empty() {
        return;
    }
    let columns = Layout::horizontal(widths.iter().copied())
        .flex(Flex::Start)
        .spacing(1)
        .split(Rect::new(0, 0, area.width, 1));
    let line_area = |y: u16| Rect {
        y,
        height: 1,
        ..area
    };
    let header_area = line_area(area.y);
    buf.set_style(header_area, header_style);
    draw_cells(buf, header_area, &columns, header);
    let bottom = area.bottom();
    for (index, cells) in rows.enumerate() {
        let Some(y) = u16::try_from(index)
            .ok()
            .and_then(|i| area.y.checked_add(1 + i))
            .filter(|y| *y < bottom)
        else {
            break;
        };
        let row_area = line_area(y);
        draw_cells(buf, row_area, &columns, cells);
        if let Some((row, style)) = selected
            && row == index
        {
            buf.set_style(row_area, style);
        }
    }
}

fn draw_cells(buf: &mut Buffer, row_area: Rect, columns: &[Rect], cells: Vec<Line<'_>>) {
    for (column, cell) in columns.iter().zip(cells) {
        let cell_area = Rect {
            x: row_area.x + column.x,
            width: column.width,
            ..row_area
        }
        .intersection(row_area);
        cell.render(cell_area, buf);
    }
}
