//! The findings pane of the host view: what is wrong, how sure, and what to do about it. The
//! text is wrapped here (at spaces, continuation rows indented) so the pane knows how many rows
//! each finding takes: it scrolls a finding at a time and says which ones are in view.

use rust_i18n::t;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

use crate::diagnose::Severity;
use crate::diagnose::live_earlier::end_words;
use crate::fleet::fault_end::EarlierFinding;
use crate::fleet::host::HostState;
use crate::theme::Theme;
use crate::ui::format::{clean, clock};
use crate::ui::scroll;

/// A piece of a finding's text: its style, and whether it may break at its spaces.
struct Piece {
    text: String,
    style: Style,
    whole: bool,
}

fn piece(text: String, style: Style) -> Piece {
    Piece {
        text,
        style,
        whole: false,
    }
}

/// Each finding's rows at `width` columns, in order: the live ones, then the earlier ones
/// (their fault ended), newest first.
fn finding_rows(host: &HostState, width: usize, theme: &Theme) -> Vec<Vec<Line<'static>>> {
    let earlier = host
        .faults
        .earlier()
        .rev()
        .map(|e| earlier_rows(e, width, theme));
    host.findings
        .iter()
        .map(|f| {
            let (tag, tag_style) = match f.severity {
                Severity::Critical => (t!("finding.crit"), theme.badge_critical()),
                Severity::Warning => (t!("finding.warn"), theme.badge_warning()),
                Severity::Info => (t!("finding.info"), theme.dim()),
            };
            let gpu = f.gpu.map(|g| format!(" GPU {g}")).unwrap_or_default();
            let head = [
                piece(format!("{}{gpu}:", clean(&f.label)), theme.title()),
                piece(clean(&f.summary), theme.base()),
            ];
            let mut rows = wrap(Span::styled(format!(" {tag} "), tag_style), &head, width);
            let mut action = vec![piece(clean(&f.action), theme.base())];
            if let Some(runbook) = &f.runbook {
                action.push(Piece {
                    text: format!(" [p: {}]", clean(runbook)),
                    style: theme.help_key(),
                    whole: true,
                });
            }
            rows.extend(wrap(Span::styled("   →", theme.dim()), &action, width));
            rows
        })
        .chain(earlier)
        .collect()
}

/// A finding whose fault ended, dimmed: when it showed, what it was, when and why it ended.
fn earlier_rows(e: &EarlierFinding, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let f = &e.finding;
    let gpu = f.gpu.map(|g| format!(" GPU {g}")).unwrap_or_default();
    let ended = t!(
        "finding.earlier_ended",
        time = clock(e.ended_ms),
        why = end_words(e.cause)
    );
    let pieces = [
        piece(clock(e.at_ms), theme.dim()),
        piece(format!("{}{gpu}:", clean(&f.label)), theme.dim()),
        piece(clean(&f.summary), theme.dim()),
        piece(ended.into_owned(), theme.dim()),
    ];
    let tag = t!("finding.earlier");
    wrap(
        Span::styled(format!(" {tag} "), theme.dim()),
        &pieces,
        width,
    )
}

/// `prefix`, then `pieces` broken at spaces into rows of at most `width` cells; later rows
/// start under the first word (at most half the width in). A word longer than a row is cut.
fn wrap(prefix: Span<'static>, pieces: &[Piece], width: usize) -> Vec<Line<'static>> {
    let width = width.max(1);
    let indent = (prefix.width() + 1).min(width / 2);
    let mut rows = Vec::new();
    let mut col = prefix.width();
    let mut row = vec![prefix];
    let mut fresh = false;
    for p in pieces {
        let words: Vec<String> = if p.whole {
            vec![p.text.trim().to_string()]
        } else {
            p.text.split_whitespace().map(str::to_string).collect()
        };
        for mut word in words {
            loop {
                let w = Span::raw(word.as_str()).width();
                let gap = usize::from(!fresh);
                if col + gap + w <= width {
                    if gap == 1 {
                        row.push(Span::raw(" "));
                    }
                    col += gap + w;
                    row.push(Span::styled(word, p.style));
                    fresh = false;
                    break;
                }
                if !fresh {
                    rows.push(Line::from(std::mem::take(&mut row)));
                    row.push(Span::raw(" ".repeat(indent)));
                    col = indent;
                    fresh = true;
                    continue;
                }
                // Cut by display cells, never inside a character; a row too narrow for even
                // one wide character still takes one, so the loop always moves on.
                let room = width.saturating_sub(col).max(1);
                let mut head = crate::cells::take(&word, room);
                if head.is_empty() {
                    head = word
                        .char_indices()
                        .nth(1)
                        .map_or(word.as_str(), |(at, _)| &word[..at]);
                }
                let rest = word[head.len()..].to_string();
                let head = head.to_string();
                row.push(Span::styled(head, p.style));
                rows.push(Line::from(std::mem::take(&mut row)));
                row.push(Span::raw(" ".repeat(indent)));
                col = indent;
                word = rest;
                if word.is_empty() {
                    break;
                }
            }
        }
    }
    rows.push(Line::from(row));
    rows
}

/// The inside of the pane's frame.
fn inner(area: Rect) -> Rect {
    Block::default().borders(Borders::ALL).inner(area)
}

/// The rows the pane takes to show every finding at `width` columns, its frame included.
pub fn height_wanted(host: &HostState, width: u16, theme: &Theme) -> u16 {
    let inside = usize::from(width.saturating_sub(2));
    let rows: usize = finding_rows(host, inside, theme).iter().map(Vec::len).sum();
    u16::try_from(rows + 2).unwrap_or(u16::MAX)
}

/// The furthest the pane needs to scroll: the first finding from which the rest all fit.
pub fn max_scroll(area: Rect, host: &HostState, theme: &Theme) -> usize {
    let inside = inner(area);
    let heights: Vec<usize> = finding_rows(host, usize::from(inside.width), theme)
        .iter()
        .map(Vec::len)
        .collect();
    let room = usize::from(inside.height);
    let mut below = 0;
    for (i, height) in heights.iter().enumerate().rev() {
        below += height;
        if below > room {
            return (i + 1).min(heights.len().saturating_sub(1));
        }
    }
    0
}

/// Draws the findings from the `scroll`th on; `focused` when keys scroll it.
pub fn draw(
    frame: &mut Frame,
    area: Rect,
    host: &HostState,
    (scroll, focused): (usize, bool),
    theme: &Theme,
) {
    let inside = inner(area);
    let first = scroll.min(max_scroll(area, host, theme));
    let room = usize::from(inside.height);
    let mut lines = Vec::new();
    let mut last = first;
    let all = finding_rows(host, usize::from(inside.width), theme);
    let total = all.len();
    for (i, rows) in all.into_iter().enumerate().skip(first) {
        if lines.len() >= room {
            break;
        }
        last = i;
        lines.extend(rows);
    }
    lines.truncate(room);
    let shown = if total == 0 { 0 } else { last + 1 - first };
    let title = scroll::title(&t!("pane.findings"), first, shown, total);
    let border = if focused {
        theme.border_focused()
    } else {
        theme.border()
    };
    frame.render_widget(
        Paragraph::new(lines).block(
            Block::default()
                .borders(Borders::ALL)
                .border_style(border)
                .title(Span::styled(title, theme.title())),
        ),
        area,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(line: &Line) -> String {
        line.spans.iter().map(|s| s.content.as_ref()).collect()
    }

    #[test]
    fn words_wrap_at_spaces_with_the_prefix_kept_whole() {
        let pieces = [
            piece("XID 79:".into(), Style::default()),
            piece("the GPU fell off the bus".into(), Style::default()),
        ];
        let rows: Vec<String> = wrap(Span::raw(" CRIT "), &pieces, 20)
            .iter()
            .map(text)
            .collect();
        assert_eq!(
            rows,
            vec![
                " CRIT  XID 79: the",
                "       GPU fell off",
                "       the bus"
            ]
        );
        for row in &rows {
            assert!(row.chars().count() <= 20, "{row:?}");
        }
        let long = [piece("abcdefghijklmnopqrstuvwxyz".into(), Style::default())];
        let rows: Vec<String> = wrap(Span::raw("> "), &long, 10).iter().map(text).collect();
        assert_eq!(
            rows,
            vec!["> ", "   abcdefg", "   hijklmn", "   opqrstu", "   vwxyz"]
        );
    }
}
