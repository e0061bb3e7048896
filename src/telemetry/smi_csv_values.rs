//! The values of nvidia-smi's CSV lines: the fields of a line, and each value read as a number,
//! a flag, a mask or a word, with or without its unit; `[N/A]` and its kin read as unknown.

use std::sync::LazyLock;

use crate::telemetry::model::SharedText;

/// The comma-separated values of a line. `str::split` searches with memchr, whose set-up cost
/// dominates on values a few bytes long; a plain byte loop is about twice as fast here.
pub(crate) struct Fields<'a> {
    pub(crate) rest: Option<&'a str>,
}

impl<'a> Iterator for Fields<'a> {
    type Item = &'a str;

    #[inline]
    fn next(&mut self) -> Option<&'a str> {
        let rest = self.rest?;
        match rest.bytes().position(|b| b == b',') {
            Some(i) => {
                self.rest = rest.get(i + 1..);
                rest.get(..i)
            }
            None => {
                self.rest = None;
                Some(rest)
            }
        }
    }
}

/// Exact comparison against a short word as fixed-size arrays, which compiles to a couple of
/// integer compares instead of a `memcmp` call.
#[inline]
fn is_word<const N: usize>(value: &str, word: &[u8; N]) -> bool {
    <&[u8; N]>::try_from(value.as_bytes()).is_ok_and(|v| v == word)
}

#[inline]
pub(crate) fn contains_ignore_ascii_case(haystack: &str, needle: &str) -> bool {
    let (h, n) = (haystack.as_bytes(), needle.as_bytes());
    h.len() >= n.len() && h.windows(n.len()).any(|w| w.eq_ignore_ascii_case(n))
}

/// The value as text, or `None` for the markers nvidia-smi prints instead of a value.
#[inline]
pub(crate) fn text(value: &str) -> Option<&str> {
    match value.as_bytes().first() {
        None | Some(b'[') => None,
        Some(b'N') if is_word(value, b"N/A") => None,
        Some(b'E') if is_word(value, b"ERR!") => None,
        Some(_) => Some(value),
    }
}

/// The number part of `700.00 W` / `0 %` / `345`: a value may carry one unit word after a space.
fn strip_unit(value: &str) -> &str {
    let bytes = value.as_bytes();
    match bytes.iter().position(|&b| b == b' ') {
        None => value,
        Some(i) => {
            let unit = &bytes[i + 1..];
            if unit.is_empty() || unit.contains(&b' ') {
                ""
            } else {
                value.get(..i).unwrap_or("")
            }
        }
    }
}

#[inline]
pub(crate) fn parse_u64(value: &str) -> Option<u64> {
    let digits = strip_unit(value).as_bytes();
    if digits.is_empty() || digits.len() > 19 {
        return None;
    }
    let mut n: u64 = 0;
    for &b in digits {
        if !b.is_ascii_digit() {
            return None;
        }
        n = n * 10 + u64::from(b - b'0');
    }
    Some(n)
}

#[inline]
pub(crate) fn parse_u32(value: &str) -> Option<u32> {
    parse_u64(value).and_then(|v| u32::try_from(v).ok())
}

/// Exact powers of ten: dividing an exact integer mantissa by one is correctly rounded.
const POW10: [f64; 16] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
];

#[inline]
pub(crate) fn parse_f64(value: &str) -> Option<f64> {
    let number = strip_unit(value);
    fast_decimal(number).or_else(|| number.parse::<f64>().ok().filter(|v| v.is_finite()))
}

/// `-?d+(.d+)?` with at most 15 digits, which covers every reading nvidia-smi prints; the
/// mantissa and the power of ten are both exact in f64, so one division gives the same
/// correctly rounded result as `str::parse`, at a fraction of the cost.
fn fast_decimal(number: &str) -> Option<f64> {
    let bytes = number.as_bytes();
    let (negative, digits) = match bytes.first()? {
        b'-' => (true, &bytes[1..]),
        _ => (false, bytes),
    };
    let mut mantissa: u64 = 0;
    let mut digit_count = 0usize;
    let mut fraction_digits = 0usize;
    let mut seen_dot = false;
    for &b in digits {
        match b {
            b'0'..=b'9' => {
                if digit_count == 15 {
                    return None;
                }
                mantissa = mantissa * 10 + u64::from(b - b'0');
                digit_count += 1;
                fraction_digits += usize::from(seen_dot);
            }
            b'.' if !seen_dot => seen_dot = true,
            _ => return None,
        }
    }
    if digit_count == 0 {
        return None;
    }
    let magnitude = mantissa as f64 / POW10[fraction_digits];
    Some(if negative { -magnitude } else { magnitude })
}

#[inline]
pub(crate) fn parse_hex_mask(value: &str) -> Option<u64> {
    let hex = match value.as_bytes() {
        [b'0', b'x' | b'X', ..] => value.get(2..)?,
        _ => return None,
    };
    if hex.is_empty() || hex.len() > 16 {
        return None;
    }
    u64::from_str_radix(hex, 16).ok()
}

#[inline]
pub(crate) fn parse_active(value: &str) -> Option<bool> {
    word_flag(value, b"Active", b"Not Active")
}

#[inline]
pub(crate) fn parse_yes_no(value: &str) -> Option<bool> {
    word_flag(value, b"Yes", b"No")
}

#[inline]
pub(crate) fn parse_enabled(value: &str) -> Option<bool> {
    word_flag(value, b"Enabled", b"Disabled")
}

#[inline]
fn word_flag<const T: usize, const F: usize>(
    value: &str,
    yes: &[u8; T],
    no: &[u8; F],
) -> Option<bool> {
    if is_word(value, yes) {
        Some(true)
    } else if is_word(value, no) {
        Some(false)
    } else {
        None
    }
}

/// `P0` .. `P15`; anything else (a marker, `Unknown`) is not a performance state.
#[inline]
pub(crate) fn parse_pstate(value: &str) -> Option<&str> {
    let digits = value.strip_prefix('P')?;
    (!digits.is_empty() && digits.len() <= 2 && digits.bytes().all(|b| b.is_ascii_digit()))
        .then_some(value)
}

/// NVML's performance states, `P0` to `P15`, made once: every streamed line of every GPU
/// carries one, and each made afresh was an allocation on the links' thread and a free on the
/// loop's.
static PSTATES: LazyLock<[SharedText; 16]> =
    LazyLock::new(|| std::array::from_fn(|n| pstate_name(n).into()));

/// `P` and the state's number, as nvidia-smi writes it (NVML's names, not the console's words).
fn pstate_name(n: usize) -> String {
    std::iter::once('P').chain(n.to_string().chars()).collect()
}

/// [`parse_pstate`] as shared text: one of [`PSTATES`] where it is one, else a copy.
pub(crate) fn pstate_text(value: &str) -> Option<SharedText> {
    let state = parse_pstate(value)?;
    let known = PSTATES.iter().find(|known| ***known == *state);
    Some(known.map_or_else(|| SharedText::from(state), SharedText::clone))
}
