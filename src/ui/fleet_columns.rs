//! Which columns the fleet table shows at a width, and how wide each is. A column of numbers is
//! as wide as its widest value, so no number is ever cut; when the row is too narrow for every
//! column, the least needed columns are left out whole. Text columns (host, GPU model, badges)
//! share what is left, down to a minimum, and cut their text with an ellipsis.

use rust_i18n::t;

/// The fleet table's columns, in the order they are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Column {
    Host,
    Status,
    Gpus,
    Util,
    /// One small bar per GPU.
    Bars,
    Vram,
    Hot,
    Power,
    Price,
    Spent,
    Idle,
    Eff,
    /// Badges, and why a host is not streaming; takes the rest of the row.
    Badges,
}

impl Column {
    /// Header texts, longest first; the first that fits the column is drawn. The catalogue
    /// holds them as one text, the choices parted by `|`.
    pub fn headers(self) -> Vec<String> {
        let all = match self {
            Column::Host => t!("column.host"),
            Column::Status => t!("column.status"),
            Column::Gpus => t!("column.gpus"),
            Column::Util => t!("column.util"),
            Column::Bars => t!("column.bars"),
            Column::Vram => t!("column.vram"),
            Column::Hot => t!("column.hot"),
            Column::Power => t!("column.power"),
            Column::Price => t!("column.price"),
            Column::Spent => t!("column.spent"),
            Column::Idle => t!("column.idle"),
            Column::Eff => t!("column.eff"),
            Column::Badges => t!("column.badges"),
        };
        all.split('|').map(str::to_string).collect()
    }

    /// The header drawn in a column `width` wide.
    pub fn header(self, width: u16) -> String {
        let mut headers = self.headers();
        let fits = headers
            .iter()
            .position(|h| crate::cells::width(h) <= usize::from(width));
        match fits {
            Some(i) => headers.swap_remove(i),
            None => headers.pop().unwrap_or_default(),
        }
    }
}

/// What one column asks for: at least `min` columns of the terminal, at most `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Want {
    pub column: Column,
    pub min: u16,
    pub max: u16,
}

impl Want {
    /// A column of numbers: exactly as wide as its widest value (or its shortest header).
    pub fn numbers(column: Column, widest_value: usize) -> Self {
        let header = column
            .headers()
            .iter()
            .map(|h| crate::cells::width(h))
            .min()
            .unwrap_or(0);
        let width = u16::try_from(widest_value.max(header)).unwrap_or(u16::MAX);
        Self {
            column,
            min: width,
            max: width,
        }
    }

    /// A column of text: from `min` up to `max`, cut with an ellipsis in between.
    pub fn text(column: Column, min: u16, max: u16) -> Self {
        Self {
            column,
            min: min.min(max),
            max,
        }
    }
}

/// Space between two columns.
const GAP: u16 = 1;

/// The columns shown in `width` terminal columns with their widths, in drawing order. `wants`
/// is in order of need: each is taken if its minimum still fits, the rest are left out whole.
/// What is left widens the text columns up to their maximum, in order of need, and the last
/// column drawn (the badges) takes the rest.
pub fn plan(width: u16, wants: &[Want]) -> Vec<(Column, u16)> {
    let mut chosen: Vec<(Want, u16)> = Vec::new();
    let mut used: u16 = 0;
    for want in wants {
        let gap = if chosen.is_empty() { 0 } else { GAP };
        let cost = want.min.saturating_add(gap);
        if used.saturating_add(cost) <= width {
            used += cost;
            chosen.push((*want, want.min));
        } else if chosen.is_empty() {
            // The first column is always shown, cut to the width.
            used = width;
            chosen.push((*want, width));
        }
    }
    let mut left = width.saturating_sub(used);
    for (want, given) in chosen.iter_mut() {
        if want.column == Column::Badges {
            continue;
        }
        let more = want.max.saturating_sub(*given).min(left);
        *given += more;
        left -= more;
    }
    if let Some((_, given)) = chosen.iter_mut().find(|(w, _)| w.column == Column::Badges) {
        *given = given.saturating_add(left);
    }
    let mut columns: Vec<(Column, u16)> = chosen.into_iter().map(|(w, g)| (w.column, g)).collect();
    columns.sort_by_key(|(column, _)| *column);
    columns
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wants() -> Vec<Want> {
        vec![
            Want::text(Column::Host, 15, 15),
            Want::numbers(Column::Status, 11),
            Want::numbers(Column::Util, 4),
            Want::text(Column::Badges, 8, u16::MAX),
            Want::numbers(Column::Vram, 9),
            Want::text(Column::Gpus, 9, 18),
            Want::numbers(Column::Power, 9),
            Want::numbers(Column::Hot, 4),
        ]
    }

    fn total(plan: &[(Column, u16)]) -> u16 {
        plan.iter().map(|(_, w)| w).sum::<u16>() + plan.len().saturating_sub(1) as u16
    }

    #[test]
    fn everything_fits_wide_and_text_columns_grow() {
        let plan = plan(120, &wants());
        let columns: Vec<Column> = plan.iter().map(|(c, _)| *c).collect();
        assert_eq!(
            columns,
            vec![
                Column::Host,
                Column::Status,
                Column::Gpus,
                Column::Util,
                Column::Vram,
                Column::Hot,
                Column::Power,
                Column::Badges
            ]
        );
        assert!(plan.contains(&(Column::Gpus, 18)));
        assert_eq!(total(&plan), 120, "the badges take the rest");
    }

    #[test]
    fn narrow_rows_leave_out_whole_columns_never_narrow_a_number() {
        for width in [30u16, 45, 58, 60, 78, 80, 100] {
            let plan = plan(width, &wants());
            assert!(total(&plan) <= width, "{width}: {plan:?}");
            for want in wants().iter().filter(|w| w.min == w.max) {
                if let Some((_, given)) = plan.iter().find(|(c, _)| *c == want.column) {
                    assert_eq!(
                        *given, want.min,
                        "{width}: {:?} keeps its width",
                        want.column
                    );
                }
            }
        }
        // At 58 (a 60-column terminal's pane) power is left out before the host name is cut.
        let plan = plan(58, &wants());
        assert!(plan.contains(&(Column::Host, 15)), "{plan:?}");
        assert!(!plan.iter().any(|(c, _)| *c == Column::Power), "{plan:?}");
    }

    #[test]
    fn a_row_narrower_than_the_first_column_cuts_only_that_text() {
        assert_eq!(plan(6, &wants()), vec![(Column::Host, 6)]);
    }

    #[test]
    fn headers_shrink_to_their_column() {
        assert_eq!(Column::Vram.header(9), "VRAM GiB");
        assert_eq!(Column::Vram.header(7), "VRAM");
        assert_eq!(Column::Power.header(6), "PWR W");
        assert_eq!(
            Want::numbers(Column::Power, 3).min,
            3,
            "`W` is the shortest header"
        );
    }
}
