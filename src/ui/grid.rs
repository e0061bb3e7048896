//! A table drawn straight into the buffer: the fleet view is redrawn about ten times a second
//! with fifty hosts streaming, and ratatui's `Table` restyles every cell of its area three or
//! four times a frame (table, row, cell, text), which was a fifth of the frame. Column widths
//! come from the same layout the `Table` uses (`Flex::Start`, one space between columns), so
//! the screen is the same.

use std::cell::RefCell;

use ratatui::buffer::{self, Buffer};
use ratatui::layout::{Alignment, Constraint, Flex, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::Widget;

/// One cell of a row: its text and how many columns it spans (1 for an ordinary cell; a wider
/// one covers the gaps between its columns too).
#[derive(Debug, Clone, PartialEq)]
pub struct Cell<'a> {
    pub line: Line<'a>,
    pub span: usize,
}

impl<'a> Cell<'a> {
    /// A cell spanning `span` columns.
    pub fn spanning(line: impl Into<Line<'a>>, span: usize) -> Self {
        Self {
            line: line.into(),
            span: span.max(1),
        }
    }
}

impl<'a, T: Into<Line<'a>>> From<T> for Cell<'a> {
    fn from(line: T) -> Self {
        Self::spanning(line, 1)
    }
}

/// One line of the table: cells to lay out, or a row its owner keeps between frames.
pub enum Row<'a, K: 'a> {
    Cells(Vec<Cell<'a>>),
    /// Drawn as `line` holds it when it was drawn for the same `key` (what the owner lays the
    /// row out by: the columns, say) and width; else drawn from `cells` and kept in `line`.
    Kept {
        line: &'a RefCell<KeptLine<K>>,
        key: &'a K,
        cells: Box<dyn FnOnce() -> Vec<Cell<'a>> + 'a>,
    },
}

/// A row as it was drawn into the buffer, cell for cell, and what it was drawn for. Laying
/// out and styling a row's cells was a fifth of a frame of the fleet's view, though most rows
/// change once a second and a frame comes every ~70 ms. A row's owner keeps it and throws it
/// away when what the row shows changes; the buffer under a row is the theme's base, the
/// same every frame while the theme is (the owner's rows are built again when it changes).
#[derive(Debug)]
pub struct KeptLine<K> {
    key: Option<K>,
    cells: Vec<buffer::Cell>,
}

impl<K> Default for KeptLine<K> {
    fn default() -> Self {
        Self {
            key: None,
            cells: Vec::new(),
        }
    }
}

/// Draws a header line and then one line per row into `area`, each cell clipped to its column
/// (or columns, for a spanning cell); `selected` is a row index (0 = the first row drawn) and
/// the style laid over that whole line.
pub fn draw<'a, K: PartialEq + Clone + 'a>(
    buf: &mut Buffer,
    area: Rect,
    widths: &[Constraint],
    (header, header_style): (Vec<Line<'a>>, Style),
    rows: impl Iterator<Item = Row<'a, K>>,
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
    draw_cells(
        buf,
        header_area,
        &columns,
        header.into_iter().map(Cell::from).collect(),
    );
    let bottom = area.bottom();
    for (index, row) in rows.enumerate() {
        let Some(y) = u16::try_from(index)
            .ok()
            .and_then(|i| area.y.checked_add(1 + i))
            .filter(|y| *y < bottom)
        else {
            break;
        };
        let row_area = line_area(y).intersection(buf.area);
        if row_area.is_empty() {
            continue;
        }
        match row {
            Row::Cells(cells) => draw_cells(buf, row_area, &columns, cells),
            Row::Kept { line, key, cells } => {
                let mut line = line.borrow_mut();
                let start = buf.index_of(row_area.x, row_area.y);
                let width = usize::from(row_area.width);
                let target = &mut buf.content[start..start + width];
                if line.key.as_ref() == Some(key) && line.cells.len() == width {
                    target.clone_from_slice(&line.cells);
                } else {
                    draw_cells(buf, row_area, &columns, cells());
                    let drawn = &buf.content[start..start + width];
                    line.cells.clear();
                    line.cells.extend_from_slice(drawn);
                    line.key = Some(key.clone());
                }
            }
        }
        if let Some((row, style)) = selected
            && row == index
        {
            buf.set_style(row_area, style);
        }
    }
}

fn draw_cells(buf: &mut Buffer, row_area: Rect, columns: &[Rect], cells: Vec<Cell<'_>>) {
    let mut next = 0;
    for cell in cells {
        let Some(first) = columns.get(next) else {
            break;
        };
        let last = columns
            .get(next + cell.span - 1)
            .or(columns.last())
            .unwrap_or(first);
        next += cell.span;
        let cell_area = Rect {
            x: row_area.x + first.x,
            width: last.right().saturating_sub(first.x),
            ..row_area
        }
        .intersection(row_area);
        render_line(&cell.line, cell_area, buf);
    }
}

/// `line` rendered into `area` as ratatui renders it, cell for cell; a line of printable ASCII
/// (nearly every cell of the fleet's rows: names, figures, states) is written a byte to a cell,
/// without ratatui's grapheme segmentation and width lookups, which were a fifth of a frame of
/// fifty hosts. Anything else (the GPU bars' blocks, Chinese) goes to ratatui.
fn render_line(line: &Line<'_>, area: Rect, buf: &mut Buffer) {
    let printable = |s: &str| s.bytes().all(|b| (0x20..0x7f).contains(&b));
    if !line.spans.iter().all(|span| printable(&span.content)) {
        line.render(area, buf);
        return;
    }
    let area = area.intersection(buf.area);
    let width: usize = line.spans.iter().map(|span| span.content.len()).sum();
    if area.is_empty() || width == 0 {
        return;
    }
    let area = Rect { height: 1, ..area };
    buf.set_style(area, line.style);
    let room = usize::from(area.width);
    // As ratatui: a line that fits is indented by its alignment; one that does not loses its
    // start (centred or right-aligned) or its end.
    let (indent, skip) = match line.alignment {
        Some(Alignment::Center) if width <= room => ((room - width) / 2, 0),
        Some(Alignment::Right) if width <= room => (room - width, 0),
        Some(Alignment::Center) => (0, (width - room) / 2),
        Some(Alignment::Right) => (0, width - room),
        _ => (0, 0),
    };
    let chars = line
        .spans
        .iter()
        .flat_map(|span| span.content.bytes().map(move |b| (b, span.style)))
        .skip(skip)
        .take(room - indent.min(room));
    let start = area.x + u16::try_from(indent).unwrap_or(area.width);
    for (x, (byte, style)) in (start..).zip(chars) {
        buf[(x, area.y)].set_char(char::from(byte)).set_style(style);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(buf: &Buffer, y: u16) -> String {
        (0..buf.area.width)
            .map(|x| buf[(x, y)].symbol())
            .collect::<String>()
    }

    /// The byte-a-cell path draws exactly what ratatui draws: every alignment, lines that fit
    /// and lines cut short, several styled spans, over a buffer already written to.
    #[test]
    fn a_printable_line_is_drawn_as_ratatui_draws_it() {
        use ratatui::style::{Color, Modifier};
        use ratatui::text::Span;
        let lines = [
            Line::raw(""),
            Line::raw("h07"),
            Line::from(vec![
                Span::styled("UP ", Style::new().fg(Color::Green)),
                Span::raw(" 71%"),
                Span::styled(" $2.40/h", Style::new().add_modifier(Modifier::BOLD)),
            ]),
            Line::styled("idle 3h 12m", Style::new().bg(Color::Blue)),
            Line::raw("a line much longer than any column it could be drawn in"),
            Line::raw("ab"),
        ];
        for width in [0u16, 1, 2, 5, 9, 12, 30] {
            for alignment in [
                None,
                Some(Alignment::Left),
                Some(Alignment::Center),
                Some(Alignment::Right),
            ] {
                for line in &lines {
                    let line = match alignment {
                        Some(a) => line.clone().alignment(a),
                        None => line.clone(),
                    };
                    let full = Rect::new(0, 0, 40, 2);
                    let mut ours = Buffer::empty(full);
                    ours.set_string(0, 0, "x".repeat(40), Style::new().fg(Color::Red));
                    let mut theirs = ours.clone();
                    let area = Rect::new(3, 0, width, 1);
                    render_line(&line, area, &mut ours);
                    (&line).render(area, &mut theirs);
                    assert_eq!(ours, theirs, "{line:?} in {width} columns");
                }
            }
        }
    }

    #[test]
    fn a_spanning_cell_covers_its_columns_and_the_gaps_between() {
        let area = Rect::new(0, 0, 20, 3);
        let mut buf = Buffer::empty(area);
        let widths = [
            Constraint::Length(4),
            Constraint::Length(4),
            Constraint::Length(4),
        ];
        let header = vec![Line::raw("A"), Line::raw("B"), Line::raw("C")];
        let rows = vec![
            vec![Cell::from("1"), Cell::from("2"), Cell::from("3")],
            vec![Cell::from("x"), Cell::spanning("a long reason", 2)],
        ];
        draw(
            &mut buf,
            area,
            &widths,
            (header, Style::default()),
            rows.into_iter().map(Row::<()>::Cells),
            None,
        );
        assert_eq!(text(&buf, 1), "1    2    3         ");
        // Columns 2 and 3 with the gap between: nine cells.
        assert_eq!(text(&buf, 2), "x    a long re      ");
    }
}
