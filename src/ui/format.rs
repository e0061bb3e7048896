//! Turning numbers and states into short text for cells; every string the UI shows from a
//! remote host passes through `clean` first.

/// Strips control characters and escape sequences from untrusted text before it reaches the
/// terminal; the one sanitizer the SSH link also uses, so nothing a host prints is judged twice
/// by different rules.
pub use crate::remote::sanitize as clean;

pub use crate::units::{fit, gib, opt_c, opt_pct, opt_w, whole};

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
}
