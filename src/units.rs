//! Numbers as the short text every front end shows (the console's cells, `snapshot`'s table,
//! alerts): whole numbers, GiB, percentages, degrees, watts, and text cut to a width.

/// `v` rounded to a whole number (ties to even, as `{:.0}` rounds), as text. Every frame
/// formats hundreds of these, and integer formatting costs a fraction of `{:.0}` on a float.
pub fn whole(v: f64) -> String {
    if v.is_finite() && v.abs() < 1e15 {
        (v.round_ties_even() as i64).to_string()
    } else {
        format!("{v:.0}")
    }
}

/// MiB as GiB with one decimal under 100 GiB, whole GiB above.
pub fn gib(mib: u64) -> String {
    let g = mib as f64 / 1024.0;
    if g < 100.0 {
        format!("{g:.1}")
    } else {
        whole(g)
    }
}

pub fn opt_pct(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{}%", whole(v)))
}

pub fn opt_c(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{}°C", whole(v)))
}

pub fn opt_w(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{}W", whole(v)))
}

/// Cuts `text` to `width` terminal cells (a CJK character takes two), marking the cut with an
/// ellipsis; a character is never cut in half.
pub use crate::cells::fit;

/// A compact age: `12s`, `4m`, `3h`, `2d`.
pub fn format_age(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m", s / 60),
        3600..=86_399 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_rounds_like_the_float_format() {
        for v in [0.0, 0.5, 1.5, 2.5, 62.4, 62.5, 699.5, 700.0, 1e16] {
            assert_eq!(whole(v), format!("{v:.0}"), "{v}");
        }
        assert_eq!(whole(f64::NAN), "NaN");
    }

    #[test]
    fn fit_marks_the_cut() {
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(fit("abc", 4), "abc");
    }
}
