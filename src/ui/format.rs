//! Turning numbers and states into short text for cells; every string the UI shows from a
//! remote host passes through `clean` first.

/// Strips control characters and escape sequences from untrusted text before it reaches the
/// terminal; the one sanitizer the SSH link also uses, so nothing a host prints is judged twice
/// by different rules.
pub use crate::remote::sanitize as clean;

/// MiB as GiB with one decimal under 100 GiB, whole GiB above.
pub fn gib(mib: u64) -> String {
    let g = mib as f64 / 1024.0;
    if g < 100.0 {
        format!("{g:.1}")
    } else {
        format!("{g:.0}")
    }
}

pub fn opt_pct(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v:.0}%"))
}

pub fn opt_c(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v:.0}°C"))
}

pub fn opt_w(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v:.0}W"))
}

/// Cuts `text` to `width` characters, marking the cut with an ellipsis.
pub fn fit(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    if width == 0 {
        return String::new();
    }
    let mut out: String = text.chars().take(width - 1).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_removes_csi_osc_and_controls() {
        let hostile = "ok\u{1b}[2J\u{1b}]0;pwned\u{7}\u{1b}[31mred\u{1b}[0m\r\nend\u{8}";
        assert_eq!(clean(hostile), "okredend");
    }

    #[test]
    fn clean_keeps_unicode_text() {
        assert_eq!(clean("GPU 0 — 60°C"), "GPU 0 — 60°C");
    }

    #[test]
    fn fit_marks_the_cut() {
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(fit("abc", 4), "abc");
    }
}
