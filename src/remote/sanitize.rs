//! Makes remote text safe to show: control characters, terminal escape sequences and invisible
//! format characters (bidirectional overrides, zero-width spaces) are removed before anything a
//! host printed reaches an event (and from there the terminal) or a diagnose report.

/// Strips C0/C1 control characters, whole escape sequences (CSI, OSC, DCS, ...) and the
/// invisible format characters of [`is_hidden_format`] from `text`; tabs become spaces. A host
/// that prints `ESC ] 0 ; title BEL` must not retitle the terminal, nor `U+202E` turn the
/// rest of a line around.
pub fn sanitize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            // Printable ASCII, nearly all of any text, takes one comparison.
            ' '..='~' => out.push(c),
            '\u{1b}' => skip_escape(&mut chars),
            // The 8-bit forms of CSI and OSC/DCS/SOS/PM/APC start sequences just as ESC does.
            '\u{9b}' => skip_csi(&mut chars),
            '\u{90}' | '\u{98}' | '\u{9d}' | '\u{9e}' | '\u{9f}' => skip_string(&mut chars),
            '\t' => out.push(' '),
            c if c.is_control() || is_hidden_format(c) => {}
            c => out.push(c),
        }
    }
    out
}

/// Characters that print nothing yet change what the rest of the line looks like or hide text:
/// the bidirectional embeddings, overrides, isolates and marks (`U+202A..=U+202E`,
/// `U+2066..=U+2069`, `U+200E`, `U+200F`, `U+061C`), the line and paragraph separators
/// (`U+2028`, `U+2029`, line breaks like `\n`, which is removed too), zero-width space, word
/// joiner and the invisible operators (`U+200B`, `U+2060..=U+2064`), the deprecated format
/// controls (`U+206A..=U+206F`), the byte-order mark (`U+FEFF`) and the interlinear annotation
/// marks (`U+FFF9..=U+FFFB`). Zero-width (non-)joiners `U+200C`/`U+200D` stay: scripts and
/// emoji need them to render, and they move nothing.
pub fn is_hidden_format(c: char) -> bool {
    matches!(
        c,
        '\u{061C}'
            | '\u{200B}'
            | '\u{200E}'
            | '\u{200F}'
            | '\u{2028}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{206F}'
            | '\u{FEFF}'
            | '\u{FFF9}'..='\u{FFFB}'
    )
}

type Chars<'a> = std::iter::Peekable<std::str::Chars<'a>>;

fn skip_escape(chars: &mut Chars<'_>) {
    match chars.next() {
        Some('[') => skip_csi(chars),
        Some(']' | 'P' | 'X' | '^' | '_') => skip_string(chars),
        // nF sequences (`ESC ( B`): intermediates, then one final byte.
        Some(' '..='/') => {
            while chars.next_if(|c| (' '..='/').contains(c)).is_some() {}
            chars.next();
        }
        _ => {}
    }
}

fn skip_csi(chars: &mut Chars<'_>) {
    for c in chars.by_ref() {
        if ('@'..='~').contains(&c) {
            break;
        }
    }
}

/// Skips up to the string terminator (BEL, `ESC \` or 8-bit ST).
fn skip_string(chars: &mut Chars<'_>) {
    while let Some(c) = chars.next() {
        match c {
            '\u{7}' | '\u{9c}' => break,
            '\u{1b}' => {
                chars.next_if_eq(&'\\');
                break;
            }
            _ => {}
        }
    }
}

/// Fast path for the hot loop: almost every field is plain printable ASCII.
pub(crate) fn needs_cleaning(text: &str) -> bool {
    if text.is_ascii() {
        text.bytes().any(|b| b.is_ascii_control())
    } else {
        text.chars().any(|c| c.is_control() || is_hidden_format(c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_sequences_and_controls() {
        let cases = [
            ("NVIDIA H200", "NVIDIA H200"),
            ("\u{1b}]0;pwned\u{7}NVIDIA\u{1b}[2J H200", "NVIDIA H200"),
            (
                "a\u{1b}]8;;http://x\u{1b}\\link\u{1b}]8;;\u{1b}\\b",
                "alinkb",
            ),
            ("\u{1b}[31mred\u{1b}[0m", "red"),
            ("bell\u{7}\r\nnext", "bellnext"),
            ("tab\there", "tab here"),
            ("\u{9b}31mc1\u{9d}title\u{9c}!", "c1!"),
            ("\u{1b}(Bcharset", "charset"),
            ("dangling\u{1b}", "dangling"),
            ("\u{1b}Pdcs never ends", ""),
            ("ünïcode ok", "ünïcode ok"),
            // "GPU 0 ok" shown as "GPU 0 ko" by a right-to-left override, and friends.
            ("GPU 0 \u{202E}ko\u{202C}", "GPU 0 ko"),
            ("a\u{2066}b\u{2069}c\u{200F}d\u{061C}e\u{2028}f", "abcdef"),
            ("zero\u{200B}width\u{FEFF}", "zerowidth"),
            ("emoji 👩\u{200D}💻 stays", "emoji 👩\u{200D}💻 stays"),
        ];
        for (input, want) in cases {
            assert_eq!(sanitize(input), want, "{input:?}");
        }
    }
}
