//! Prose broken into rows of a given width in terminal cells, where the Unicode line-breaking
//! rules (UAX #14, through `textwrap`) allow a break: at spaces, between Chinese characters,
//! never before closing punctuation (`）`, `。`) nor after opening punctuation (`（`), and never
//! inside an English word unless the word alone is wider than a row. Every row is filled as far
//! as it goes (first fit), so a Chinese line does not end half empty. The console wraps all of
//! its prose here: findings, runbook summaries and notes, the runbook's explanations.
//!
//! Commands and raw output are not prose: they are cut by cells, whole characters kept, with
//! [`crate::ui::panel::wrap_rows`], so a row break never eats one of their spaces.

use std::ops::Range;

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use textwrap::WordSeparator;
use textwrap::core::{Word, break_words};
use textwrap::wrap_algorithms::wrap_first_fit;

/// The rows of `text`, as byte ranges of it (without the spaces where a row was broken), the
/// first row `first` cells wide and the others `rest`. A line break in `text` starts a new row.
/// No break falls strictly inside one of `keep` (byte ranges of text to be kept on one row
/// while it fits one).
pub fn ranges(
    text: &str,
    (first, rest): (usize, usize),
    keep: &[Range<usize>],
) -> Vec<Range<usize>> {
    let (first, rest) = (first.max(1), rest.max(1));
    let mut rows = Vec::new();
    let mut at = 0;
    for line in text.split('\n') {
        let width = if rows.is_empty() { first } else { rest };
        rows.extend(
            line_ranges(line, (width, rest), at, keep)
                .into_iter()
                .map(|r| r.start + at..r.end + at),
        );
        at += line.len() + 1;
    }
    rows
}

/// The rows of one line (no line break in it) that starts at byte `at` of the whole text.
fn line_ranges(
    line: &str,
    (first, rest): (usize, usize),
    at: usize,
    keep: &[Range<usize>],
) -> Vec<Range<usize>> {
    // Where a row may break: the start of each word the Unicode rules find (the words and their
    // trailing spaces cover the line end to end), less those inside a range to keep.
    let mut starts = Vec::new();
    let mut offset = 0;
    for word in WordSeparator::UnicodeBreakProperties.find_words(line) {
        let inside = keep
            .iter()
            .any(|k| k.start < at + offset && at + offset < k.end);
        if offset == 0 || !inside {
            starts.push(offset);
        }
        offset += word.word.len() + word.whitespace.len();
    }
    let words: Vec<Word> = starts
        .iter()
        .zip(starts.iter().skip(1).copied().chain([line.len()]))
        .map(|(&from, to)| Word::from(&line[from..to]))
        .collect();
    // A word wider than a row is cut between characters: the one place a word is broken.
    let words = break_words(words, first.min(rest));
    let mut rows = Vec::new();
    let mut start = 0;
    for row in wrap_first_fit(&words, &[first as f64, rest as f64]) {
        let len: usize = row.iter().map(|w| w.word.len() + w.whitespace.len()).sum();
        let trailing = row.last().map_or(0, |w| w.whitespace.len());
        rows.push(start..start + len - trailing);
        start += len;
    }
    rows
}

/// `text` in rows of at most `width` cells (at least one row).
pub fn rows(text: &str, width: usize) -> Vec<String> {
    ranges(text, (width, width), &[])
        .into_iter()
        .map(|r| text[r].to_string())
        .collect()
}

/// A piece of styled text for [`lines`]; a `whole` piece is kept on one row while it fits one.
pub struct Piece {
    pub text: String,
    pub style: Style,
    pub whole: bool,
}

impl Piece {
    pub fn new(text: String, style: Style) -> Self {
        Self {
            text,
            style,
            whole: false,
        }
    }

    /// A piece no row break may fall inside.
    pub fn whole(text: String, style: Style) -> Self {
        Self {
            text,
            style,
            whole: true,
        }
    }
}

/// `prefix` and a space, then `pieces` (joined by spaces) wrapped into rows of at most `width`
/// cells; later rows start under the text, at most half the width in.
pub fn lines(prefix: Span<'static>, pieces: &[Piece], width: usize) -> Vec<Line<'static>> {
    let width = width.max(1);
    let lead = prefix.width() + 1;
    let indent = lead.min(width / 2);
    let mut text = String::new();
    let mut placed: Vec<(Range<usize>, Style)> = Vec::new();
    let mut keep = Vec::new();
    for piece in pieces {
        let piece_text = piece.text.trim();
        if piece_text.is_empty() {
            continue;
        }
        if !text.is_empty() {
            text.push(' ');
        }
        let range = text.len()..text.len() + piece_text.len();
        text.push_str(piece_text);
        if piece.whole {
            keep.push(range.clone());
        }
        placed.push((range, piece.style));
    }
    let widths = (
        width.saturating_sub(lead).max(1),
        width.saturating_sub(indent).max(1),
    );
    let mut out = Vec::new();
    for (i, row) in ranges(&text, widths, &keep).into_iter().enumerate() {
        let mut spans = if i == 0 {
            vec![prefix.clone(), Span::raw(" ")]
        } else {
            vec![Span::raw(" ".repeat(indent))]
        };
        // The row's text, styled piece by piece; the spaces joining pieces are unstyled.
        let mut at = row.start;
        for (range, style) in &placed {
            let from = range.start.max(at);
            let to = range.end.min(row.end);
            if from >= to {
                continue;
            }
            if from > at {
                spans.push(Span::raw(text[at..from].to_string()));
            }
            spans.push(Span::styled(text[from..to].to_string(), *style));
            at = to;
        }
        if at < row.end {
            spans.push(Span::raw(text[at..row.end].to_string()));
        }
        out.push(Line::from(spans));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(lines: &[Line]) -> Vec<String> {
        lines
            .iter()
            .map(|line| line.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn english_breaks_at_spaces_and_never_inside_a_word() {
        // The runbook's explanation of a reset, at the width the old cutter split `re│set` at.
        let text =
            "A GPU reset runs only when nvidia-smi still reaches the GPU and no process uses it";
        let rows = rows(text, 13);
        assert_eq!(
            rows,
            vec![
                "A GPU reset",
                "runs only",
                "when",
                "nvidia-smi",
                "still reaches",
                "the GPU and",
                "no process",
                "uses it"
            ]
        );
        for row in &rows {
            assert!(crate::cells::width(row) <= 13, "{row:?}");
        }
        // A word wider than the row is the one thing cut, between characters.
        assert_eq!(
            super::rows("abcdefghij xy", 4),
            vec!["abcd", "efgh", "ij", "xy"]
        );
    }

    #[test]
    fn chinese_breaks_between_characters_and_fills_each_row() {
        // A finding's action: the old wrapper broke only at the ASCII space before `重置`,
        // leaving `→ 重启实例（GPU` alone and the rest on rows of its own. `GPU）。` stays
        // together: no row starts with closing punctuation.
        let action =
            "重启实例（GPU 重置救不回已经掉卡的 GPU）。如果这台主机再次掉卡，就释放它、另租一台。";
        let rows = rows(action, 20);
        assert_eq!(
            rows,
            vec![
                "重启实例（GPU 重置救",
                "不回已经掉卡的",
                "GPU）。如果这台主机",
                "再次掉卡，就释放它、",
                "另租一台。",
            ]
        );
        for row in &rows {
            assert!(crate::cells::width(row) <= 20, "{row:?}");
        }
    }

    #[test]
    fn styled_pieces_keep_their_styles_and_a_whole_piece_stays_together() {
        let bold = Style::default().add_modifier(ratatui::style::Modifier::BOLD);
        let pieces = [
            Piece::new("Reboot the instance.".into(), Style::default()),
            Piece::whole("[p: gpu-lost]".into(), bold),
        ];
        let lines = lines(Span::raw("  →"), &pieces, 32);
        assert_eq!(
            texts(&lines),
            vec!["  → Reboot the instance.", "    [p: gpu-lost]"]
        );
        let last = lines.last().and_then(|l| l.spans.last()).map(|s| s.style);
        assert_eq!(last, Some(bold));
        // With room, the whole piece follows on the same row.
        let lines = super::lines(Span::raw("  →"), &pieces, 40);
        assert_eq!(
            texts(&lines),
            vec!["  → Reboot the instance. [p: gpu-lost]"]
        );
        // Nothing at all leaves the prefix alone on its row.
        assert_eq!(texts(&super::lines(Span::raw(">"), &[], 10)), vec!["> "]);
    }
}
