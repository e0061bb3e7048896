//! A training log's bytes cut into what a terminal would show as separate updates: tqdm rewrites
//! its bar with `\r`, nested bars move the cursor up (`ESC[A`), and `\n` ends a line. Each piece
//! between two `\r` or `\n` is a segment; escape sequences are dropped, and a segment after which
//! the cursor moved up is marked as nested (a bar below the main one, as tqdm draws an
//! evaluation bar under the training bar). Bytes are fed in any chunks; memory is one segment,
//! at most [`MAX_SEGMENT_BYTES`].

use std::borrow::Cow;

/// Bytes kept of one segment; the rest, up to its `\r` or `\n`, is dropped and counted.
pub const MAX_SEGMENT_BYTES: usize = 4096;

/// One piece of the log between two line breaks or carriage returns.
#[derive(Debug, Clone, PartialEq)]
pub struct Segment<'a> {
    /// The text, escape sequences and control characters removed; bytes that are not UTF-8 are
    /// U+FFFD.
    pub text: Cow<'a, str>,
    /// The cursor moved up after text was written on it: a nested (second-row) bar.
    pub nested: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Escape {
    None,
    /// ESC seen.
    Start,
    /// Inside `ESC [ ...`, waiting for the final byte.
    Csi,
    /// Inside `ESC ] ...`, waiting for BEL or `ESC \`.
    Osc,
    /// ESC inside an OSC: a `\` ends it.
    OscEsc,
}

/// Cuts bytes into [`Segment`]s.
#[derive(Debug)]
pub struct Splitter {
    buf: Vec<u8>,
    escape: Escape,
    nested: bool,
    /// Whether the current segment has text other than spaces.
    has_text: bool,
    /// Segments longer than [`MAX_SEGMENT_BYTES`] (only their start was kept).
    pub cut_segments: u64,
    cut: bool,
}

impl Default for Splitter {
    fn default() -> Self {
        Self {
            buf: Vec::with_capacity(256),
            escape: Escape::None,
            nested: false,
            has_text: false,
            cut_segments: 0,
            cut: false,
        }
    }
}

impl Splitter {
    /// Reads `bytes`, calling `emit` for each segment they complete.
    pub fn feed(&mut self, bytes: &[u8], emit: &mut impl FnMut(Segment<'_>)) {
        let mut i = 0;
        while i < bytes.len() {
            if self.escape == Escape::None {
                // The common case: a run of ordinary bytes, copied at once.
                let run = bytes[i..]
                    .iter()
                    .position(|&b| b < 0x20 || b == 0x7f)
                    .unwrap_or(bytes.len() - i);
                if run > 0 {
                    self.push(&bytes[i..i + run]);
                    i += run;
                    continue;
                }
            }
            let b = bytes[i];
            i += 1;
            match self.escape {
                Escape::None => match b {
                    b'\n' | b'\r' => self.end(emit),
                    0x1b => self.escape = Escape::Start,
                    b'\t' => self.push(b" "),
                    _ => {}
                },
                Escape::Start => {
                    self.escape = match b {
                        b'[' => Escape::Csi,
                        b']' => Escape::Osc,
                        _ => Escape::None,
                    }
                }
                Escape::Csi => {
                    if (0x40..=0x7e).contains(&b) {
                        self.escape = Escape::None;
                        if b == b'A' && self.has_text {
                            self.nested = true;
                        }
                    } else if b == b'\n' || b == b'\r' {
                        self.escape = Escape::None;
                        self.end(emit);
                    }
                }
                Escape::Osc => match b {
                    0x07 => self.escape = Escape::None,
                    0x1b => self.escape = Escape::OscEsc,
                    b'\n' => {
                        self.escape = Escape::None;
                        self.end(emit);
                    }
                    _ => {}
                },
                Escape::OscEsc => self.escape = Escape::None,
            }
        }
    }

    /// Whether nothing is held: no partial segment and no escape sequence under way.
    pub fn is_idle(&self) -> bool {
        self.buf.is_empty() && !self.has_text && self.escape == Escape::None
    }

    /// Emits what is left of the last segment (a log that does not end in a line break).
    pub fn finish(&mut self, emit: &mut impl FnMut(Segment<'_>)) {
        self.escape = Escape::None;
        self.end(emit);
    }

    fn push(&mut self, bytes: &[u8]) {
        let room = MAX_SEGMENT_BYTES.saturating_sub(self.buf.len());
        if bytes.len() > room {
            self.cut = true;
        }
        let kept = &bytes[..bytes.len().min(room)];
        if !self.has_text {
            self.has_text = kept.iter().any(|&b| b != b' ');
        }
        self.buf.extend_from_slice(kept);
    }

    fn end(&mut self, emit: &mut impl FnMut(Segment<'_>)) {
        if self.cut {
            self.cut_segments += 1;
            self.cut = false;
        }
        if self.has_text {
            // Valid UTF-8 (a bar's blocks included) is checked a word at a time; only a
            // segment with bad bytes takes the slower lossy pass.
            let text = match std::str::from_utf8(&self.buf) {
                Ok(text) => Cow::Borrowed(text),
                Err(_) => String::from_utf8_lossy(&self.buf),
            };
            emit(Segment {
                text,
                nested: self.nested,
            });
        }
        self.buf.clear();
        self.nested = false;
        self.has_text = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(chunks: &[&[u8]]) -> Vec<(String, bool)> {
        let mut out = Vec::new();
        let mut s = Splitter::default();
        let mut emit = |seg: Segment<'_>| out.push((seg.text.into_owned(), seg.nested));
        for chunk in chunks {
            s.feed(chunk, &mut emit);
        }
        s.finish(&mut emit);
        out
    }

    #[test]
    fn carriage_returns_and_cursor_moves_cut_segments() {
        // As in hf_full.log: the main bar, then a nested evaluation bar that moves the cursor up.
        let got = split(&[b"\r 33%| 200/600 [00:03<00:03]\n\r  0%| 0/64 [00:00<?]\x1b[A\n"]);
        assert_eq!(
            got,
            vec![
                (" 33%| 200/600 [00:03<00:03]".to_string(), false),
                ("  0%| 0/64 [00:00<?]".to_string(), true),
            ]
        );
    }

    #[test]
    fn a_cursor_move_before_any_text_does_not_nest() {
        let got = split(&[b"\r    \r\x1b[A{'eval_loss': '0.1'}\n"]);
        assert_eq!(got, vec![("{'eval_loss': '0.1'}".to_string(), false)]);
    }

    #[test]
    fn chunks_may_split_escapes_and_characters() {
        let bar = "epoch 0: 80%|\u{2588}\u{2589}| 51/64".as_bytes();
        let (a, b) = bar.split_at(15);
        let got = split(&[a, b, b"\x1b", b"[3", b"2mok\x1b]0;title\x07\n"]);
        assert_eq!(
            got[0].0,
            "epoch 0: 80%|\u{2588}\u{2589}| 51/64ok".to_string()
        );
    }

    #[test]
    fn long_segments_are_cut_and_counted() {
        let long = vec![b'x'; MAX_SEGMENT_BYTES + 10];
        let mut s = Splitter::default();
        let mut lens = Vec::new();
        s.feed(&long, &mut |seg| lens.push(seg.text.len()));
        s.feed(b"\nok\n", &mut |seg| lens.push(seg.text.len()));
        assert_eq!(lens, vec![MAX_SEGMENT_BYTES, 2]);
        assert_eq!(s.cut_segments, 1);
    }
}
