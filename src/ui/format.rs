//! Turning numbers and states into short text for cells; every string the UI shows from a
//! remote host passes through `clean` first.

use crate::words::Words;

/// Strips control characters and escape sequences from untrusted text before it reaches the
/// terminal; the one sanitizer the SSH link also uses, so nothing a host prints is judged twice
/// by different rules.
pub use crate::remote::sanitize as clean;

pub use crate::units::{fit, gib, opt_c, opt_pct, opt_w, whole};

use ratatui::style::Style;
use ratatui::text::Span;

/// What [`count`] counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Noun {
    Host,
    Gpu,
}

/// `1 host`, `2 hosts`, `0 GPUs` (`3 台主机`, `8 张卡`).
pub fn count(n: usize, noun: Noun) -> String {
    noun.counted(n).localized()
}

impl Noun {
    /// `n` of these as a plural table of the catalogue, its form chosen by the language.
    pub fn counted(self, n: usize) -> Words {
        let key = match self {
            Noun::Host => "count.host",
            Noun::Gpu => "count.gpu",
        };
        Words::counted(key, n as u64)
    }
}

/// `14:03:07`: the time of day in UTC of a Unix time in ms (the console's times are UTC, as the
/// audit view's are).
pub fn clock(unix_ms: u64) -> String {
    let (_, _, _, hour, minute, second, _) = crate::utc::utc_parts(unix_ms);
    format!("{hour:02}:{minute:02}:{second:02}")
}

/// The width of `text` in terminal columns: display cells, two for a CJK character.
pub fn width_of(text: &str) -> usize {
    crate::cells::width(text)
}

/// One piece of a line fitted by [`fit_pieces`]: whole or not at all, except a piece allowed
/// to be cut (text, never a number), which may lose its end to an ellipsis.
#[derive(Debug, Clone, PartialEq)]
pub struct Piece {
    pub text: String,
    pub style: Style,
    /// Lower goes first when room is short.
    pub keep: u8,
    /// Text that may be cut with an ellipsis rather than dropped.
    pub cuttable: bool,
}

impl Piece {
    pub fn new(text: impl Into<String>, style: Style, keep: u8) -> Self {
        Self {
            text: text.into(),
            style,
            keep,
            cuttable: false,
        }
    }

    /// A piece of text that may be cut with an ellipsis.
    pub fn text(text: impl Into<String>, style: Style, keep: u8) -> Self {
        Self {
            cuttable: true,
            ..Self::new(text, style, keep)
        }
    }
}

/// The pieces that fit in `width` columns, in their order, joined by `separator` (drawn in
/// `separator_style`): the pieces with the lowest `keep` are dropped first; a number is never
/// cut, only dropped; then a cuttable piece loses its end to an ellipsis.
pub fn fit_pieces(
    mut pieces: Vec<Piece>,
    separator: &str,
    separator_style: Style,
    width: usize,
) -> Vec<Span<'static>> {
    let total = |pieces: &[Piece]| {
        let text: usize = pieces.iter().map(|p| width_of(&p.text)).sum();
        text + width_of(separator) * pieces.len().saturating_sub(1)
    };
    // Drop the least needed until it fits, but keep a cuttable piece to cut instead of
    // dropping it when it is the last thing that could show.
    while total(&pieces) > width && !pieces.is_empty() {
        let only_cuttable_left = pieces.len() == 1 && pieces[0].cuttable;
        if only_cuttable_left {
            break;
        }
        let Some(pos) = pieces
            .iter()
            .enumerate()
            .min_by_key(|(i, p)| (p.keep, std::cmp::Reverse(*i)))
            .map(|(i, _)| i)
        else {
            break;
        };
        // A cuttable piece that is needed more than the rest is cut, not dropped, once it is
        // the one in the way: try cutting it before dropping it.
        if pieces[pos].cuttable {
            let others = total(&pieces) - width_of(&pieces[pos].text);
            if let Some(room) = width.checked_sub(others).filter(|room| *room >= 2) {
                pieces[pos].text = fit(&pieces[pos].text, room);
                break;
            }
        }
        pieces.remove(pos);
    }
    if let [only] = pieces.as_mut_slice()
        && width_of(&only.text) > width
    {
        only.text = fit(&only.text, width);
    }
    let mut spans = Vec::with_capacity(pieces.len() * 2);
    for (i, piece) in pieces.into_iter().enumerate() {
        if i > 0 {
            spans.push(Span::styled(separator.to_string(), separator_style));
        }
        spans.push(Span::styled(piece.text, piece.style));
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_removes_csi_osc_and_controls() {
        let hostile = "ok\u{1b}[2J\u{1b}]0;pwned\u{7}\u{1b}[31mred\u{1b}[0m\r\nend\u{8}";
        assert_eq!(clean(hostile), "okredend");
    }

    fn text_of(spans: &[Span]) -> String {
        spans.iter().map(|s| s.content.as_ref()).collect()
    }

    #[test]
    fn counts_are_singular_for_one() {
        assert_eq!(count(1, Noun::Host), "1 host");
        assert_eq!(count(0, Noun::Gpu), "0 GPUs");
        assert_eq!(count(12, Noun::Gpu), "12 GPUs");
    }

    #[test]
    fn clock_is_the_utc_time_of_day() {
        assert_eq!(clock(1_800_000_000_000), "08:00:00");
        assert_eq!(clock(1_800_000_000_000 + 3_723_999), "09:02:03");
    }

    #[test]
    fn pieces_are_dropped_whole_least_needed_first_and_text_is_cut_with_an_ellipsis() {
        let s = Style::default();
        let pieces = vec![
            Piece::new("48/70", s, 3),
            Piece::new("61°C", s, 1),
            Piece::text("connection refused", s, 2),
        ];
        assert_eq!(
            text_of(&fit_pieces(pieces.clone(), " · ", s, 80)),
            "48/70 · 61°C · connection refused"
        );
        // The temperature goes first, whole; the numbers left are never cut.
        assert_eq!(
            text_of(&fit_pieces(pieces.clone(), " · ", s, 28)),
            "48/70 · connection refused"
        );
        // Then the text is cut, marked by an ellipsis, before the number goes.
        assert_eq!(
            text_of(&fit_pieces(pieces.clone(), " · ", s, 16)),
            "48/70 · connect…"
        );
        // A number alone that does not fit is dropped, not cut into another number.
        let numbers = vec![Piece::new("48/70", s, 1), Piece::new("5600", s, 2)];
        assert_eq!(text_of(&fit_pieces(numbers.clone(), " ", s, 4)), "5600");
        assert_eq!(text_of(&fit_pieces(numbers, " ", s, 3)), "");
    }

    #[test]
    fn clean_keeps_unicode_text() {
        assert_eq!(clean("GPU 0 — 60°C"), "GPU 0 — 60°C");
    }
}
