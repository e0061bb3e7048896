//! Makes remote text safe to show: control characters and terminal escape sequences are removed
//! before anything a host printed reaches an event (and from there the terminal).

use crate::telemetry::GpuSample;

/// Strips C0/C1 control characters and whole escape sequences (CSI, OSC, DCS, ...) from `text`;
/// tabs become spaces. A host that prints `ESC ] 0 ; title BEL` must not retitle the terminal.
pub fn sanitize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => skip_escape(&mut chars),
            // The 8-bit forms of CSI and OSC/DCS/SOS/PM/APC start sequences just as ESC does.
            '\u{9b}' => skip_csi(&mut chars),
            '\u{90}' | '\u{98}' | '\u{9d}' | '\u{9e}' | '\u{9f}' => skip_string(&mut chars),
            '\t' => out.push(' '),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
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

/// Sanitizes every text field of a sample parsed from a remote line.
pub(crate) fn sanitize_sample(sample: &mut GpuSample) {
    for field in [&mut sample.uuid, &mut sample.name, &mut sample.bus_id] {
        if needs_cleaning(field) {
            *field = sanitize(field);
        }
    }
    for field in [&mut sample.pstate, &mut sample.driver_version]
        .into_iter()
        .flatten()
    {
        if needs_cleaning(field) {
            *field = sanitize(field);
        }
    }
}

/// Fast path for the hot loop: almost every field is plain printable text.
fn needs_cleaning(text: &str) -> bool {
    text.chars().any(char::is_control)
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
        ];
        for (input, want) in cases {
            assert_eq!(sanitize(input), want, "{input:?}");
        }
    }

    #[test]
    fn sample_fields_are_cleaned() {
        let mut sample = GpuSample {
            name: "\u{1b}[2JNVIDIA H200".to_string(),
            pstate: Some("P0\u{7}".to_string()),
            ..GpuSample::default()
        };
        sanitize_sample(&mut sample);
        assert_eq!(sample.name, "NVIDIA H200");
        assert_eq!(sample.pstate.as_deref(), Some("P0"));
    }
}
