//! Where a scrolled pane is, said the same way in every pane's title: `Findings 3-7 of 12`.

use rust_i18n::t;

/// ` {label} 3-7 of 12 ` while some of `total` items are out of view (`first` counts from 0,
/// `shown` items are visible), else ` {label} (12) `.
pub fn title(label: &str, first: usize, shown: usize, total: usize) -> String {
    if first == 0 && shown >= total {
        return format!(" {label} ({total}) ");
    }
    let from = (first + 1).min(total);
    let to = (first + shown).clamp(from, total);
    t!(
        "scroll.range",
        label = label,
        from = from,
        to = to,
        total = total
    )
    .into_owned()
}

/// The first item of a window of `rows` that keeps `cursor` on screen, scrolled only as far as
/// it must (the cursor on the last row), as a fresh table state scrolls.
pub fn window_start(cursor: usize, rows: usize) -> usize {
    (cursor + 1).saturating_sub(rows.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_in_titles() {
        assert_eq!(title("Findings", 0, 5, 3), " Findings (3) ");
        assert_eq!(title("Findings", 0, 3, 3), " Findings (3) ");
        assert_eq!(title("Findings", 2, 5, 12), " Findings 3-7 of 12 ");
        assert_eq!(title("Processes", 0, 3, 8), " Processes 1-3 of 8 ");
        assert_eq!(title("Keys", 18, 5, 20), " Keys 19-20 of 20 ");
        assert_eq!(window_start(0, 3), 0);
        assert_eq!(window_start(2, 3), 0);
        assert_eq!(window_start(5, 3), 3);
        assert_eq!(window_start(5, 0), 5);
    }
}
