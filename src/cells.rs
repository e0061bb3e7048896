//! Text measured in terminal cells, the way the terminal draws it: a CJK character (主机, 掉卡)
//! takes two cells, a combining mark none, everything else one. Widths come from ratatui's own
//! measure (unicode-width, through `Span::width`), so what this module counts is what the
//! buffer draws.

use ratatui::text::Span;

/// The cells `text` takes on a terminal.
pub fn width(text: &str) -> usize {
    Span::raw(text).width()
}

/// The cells one character takes: 0, 1 or 2.
pub fn char_width(c: char) -> usize {
    let mut buf = [0u8; 4];
    Span::raw(&*c.encode_utf8(&mut buf)).width()
}

/// The longest start of `text` that fits in `cells` cells, never cutting a character: a wide
/// character that would straddle the edge is left out whole.
pub fn take(text: &str, cells: usize) -> &str {
    let mut used = 0;
    for (at, c) in text.char_indices() {
        let w = char_width(c);
        if used + w > cells {
            return &text[..at];
        }
        used += w;
    }
    text
}

/// `text` cut to `cells` cells, the cut marked by an ellipsis (one cell); text that fits comes
/// back as it is. A wide character that does not fit before the ellipsis is left out
/// whole, so the result may be a cell narrower than asked, never wider. Every text the console
/// cuts to a width goes through here (or [`fit_words`]).
pub fn fit(text: &str, cells: usize) -> String {
    if width(text) <= cells {
        return text.to_string();
    }
    if cells == 0 {
        return String::new();
    }
    let mut out = take(text, cells - 1).to_string();
    out.push('…');
    out
}

/// As [`fit`], but a sentence is cut between words: the cut moves back to the last space (or
/// next to a wide character, which Chinese text is cut between) when that keeps at least half
/// the room, and a space or a comma left at the end goes before the ellipsis.
pub fn fit_words(text: &str, cells: usize) -> String {
    if width(text) <= cells {
        return text.to_string();
    }
    if cells == 0 {
        return String::new();
    }
    let head = take(text, cells - 1);
    let next = text[head.len()..].chars().next();
    let between = |before: Option<char>, after: Option<char>| {
        let breaks = |c: Option<char>| c.is_some_and(|c| c.is_whitespace() || char_width(c) > 1);
        breaks(before) || breaks(after)
    };
    let mut cut = head.len();
    if !between(head.chars().next_back(), next) {
        // The last place inside `head` where a word ends.
        let mut chars = head.char_indices().peekable();
        let mut last = None;
        while let Some((at, c)) = chars.next() {
            let after = chars.peek().map(|&(_, c)| c);
            if between(Some(c), after) {
                last = Some(at + c.len_utf8());
            }
        }
        if let Some(at) = last.filter(|&at| width(&head[..at]) * 2 >= cells) {
            cut = at;
        }
    }
    let kept = head[..cut].trim_end_matches(|c: char| {
        c.is_whitespace() || matches!(c, ',' | ';' | ':' | '，' | '；' | '：' | '、')
    });
    let mut out = kept.to_string();
    out.push('…');
    out
}

/// `text` padded with spaces on the right to `cells` cells (as `{:<N}` pads by characters).
pub fn pad(text: &str, cells: usize) -> String {
    let mut out = text.to_string();
    out.extend(std::iter::repeat_n(' ', cells.saturating_sub(width(text))));
    out
}

/// `text` padded with spaces on the left to `cells` cells (as `{:>N}` pads by characters).
pub fn pad_left(text: &str, cells: usize) -> String {
    let mut out: String = std::iter::repeat_n(' ', cells.saturating_sub(width(text))).collect();
    out.push_str(text);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chinese_characters_take_two_cells_and_ascii_one() {
        assert_eq!(width("GPU"), 3);
        assert_eq!(width("掉卡"), 4);
        assert_eq!(width("显存 GiB"), 8);
        assert_eq!(width("60°C"), 4);
        assert_eq!(width("…"), 1);
        assert_eq!(char_width('卡'), 2);
        assert_eq!(char_width('\u{301}'), 0);
    }

    #[test]
    fn a_cut_never_splits_a_wide_character_and_never_overflows() {
        // 5 cells: 主机 is 4, 状 would straddle the edge.
        assert_eq!(take("主机状态", 5), "主机");
        assert_eq!(take("主机状态", 6), "主机状");
        assert_eq!(fit("主机状态", 8), "主机状态");
        // 6 cells: 5 for text (two characters, one cell left over) and the ellipsis.
        assert_eq!(fit("主机状态", 6), "主机…");
        assert_eq!(width(&fit("主机状态", 6)), 5);
        assert_eq!(fit("主机状态", 7), "主机状…");
        for cells in 0..10 {
            let cut = fit("a掉卡b残血卡", cells);
            assert!(width(&cut) <= cells, "{cells}: {cut}");
        }
    }

    #[test]
    fn padding_counts_cells() {
        assert_eq!(pad("Esc", 5), "Esc  ");
        assert_eq!(pad("任意键", 8), "任意键  ");
        assert_eq!(pad("toolong", 3), "toolong");
        assert_eq!(pad_left("温度", 6), "  温度");
        assert_eq!(pad_left("TEMP", 6), format!("{:>6}", "TEMP"));
    }

    #[test]
    fn a_sentence_is_cut_between_words() {
        let text = "alert: train-h100x8 GPU 3 has fallen off the bus";
        assert_eq!(fit_words(text, 30), "alert: train-h100x8 GPU 3 has…");
        assert_eq!(fit_words(text, 24), "alert: train-h100x8 GPU…");
        // A word longer than half the room is cut inside rather than leaving the row empty.
        assert_eq!(
            fit_words("see https://example.com/a/long/path", 16),
            "see https://exa…"
        );
        // A comma before the cut goes with the words after it.
        assert_eq!(
            fit_words("idle for 2h, over the red line", 14),
            "idle for 2h…"
        );
        // Chinese is cut between any two characters, never inside one.
        assert_eq!(fit_words("告警：主机掉卡了", 9), "告警：主…");
        assert_eq!(fit_words("fits", 4), "fits");
        assert_eq!(fit_words("abc def", 0), "");
        for cells in 0..30 {
            let cut = fit_words("a 掉卡 b残血卡 longword, more words", cells);
            assert!(width(&cut) <= cells, "{cells}: {cut}");
        }
    }

    #[test]
    fn ascii_cuts_as_before() {
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(fit("abc", 4), "abc");
        assert_eq!(fit("abc", 0), "");
        assert_eq!(fit("abcdef", 1), "…");
    }
}
