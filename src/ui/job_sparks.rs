//! The job's training loss and eval loss as sparklines, on the top border of the
//! host view's processes pane, right of its title, so they cost no row on an 80x24 screen:
//! `loss ▇▅▄▃▂▂▁ 4.3850 · eval ▆▃▂▁▁▂▃ 4.4013`. Each bar is the mean of an equal share of the
//! run's kept points (the engine keeps at most 512 of each, evenly over the run), scaled between
//! the lowest and the highest bar shown: lower is better, so a run that learns draws falling
//! bars, and an eval loss that turns up again (overfitting) draws them rising at the end. The
//! newest value is written after each.
//!
//! Where room is short the bars get shorter, then the eval loss's and then the training loss's
//! are left out (their values stay), then the values themselves (eval first); what is not shown
//! here stays on the job line at the pane's lower border ([`crate::ui::job_line`]).

use rust_i18n::t;

use ratatui::text::Span;

use crate::fleet::job::TrackedJob;
use crate::theme::Theme;
use crate::ui::format::width_of;
use crate::ui::trail::level_char;

/// Fewer bars than this say nothing: the sparkline is left out instead.
pub const MIN_BARS: usize = 4;
/// The most bars one sparkline takes, however wide the screen.
pub const MAX_BARS: usize = 40;
/// Between the two sparklines.
const SEPARATOR: &str = " · ";

/// `values` (oldest first) as at most `columns` bars, one block character each (`▁` to `█`):
/// the points are cut into `columns` equal shares (fewer points than columns: one bar each),
/// each bar is its share's mean, and the bars are scaled from the lowest (`▁`) to the highest
/// (`█`) of them. Values that are not finite are skipped; all bars equal are drawn `▁`.
pub fn bars(values: &[f64], columns: usize) -> String {
    let values: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    let n = values.len();
    let columns = columns.min(n);
    if columns == 0 {
        return String::new();
    }
    let means: Vec<f64> = (0..columns)
        .map(|c| {
            let share = &values[c * n / columns..(c + 1) * n / columns];
            share.iter().sum::<f64>() / share.len() as f64
        })
        .collect();
    let low = means.iter().copied().fold(f64::INFINITY, f64::min);
    let high = means.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let span = high - low;
    means
        .iter()
        .map(|v| {
            let pct = if span > 0.0 {
                (v - low) / span * 100.0
            } else {
                0.0
            };
            level_char(pct)
        })
        .collect()
}

/// The sparklines fitted to the room they were given, and which values they show.
#[derive(Debug, Default)]
pub struct Losses {
    /// The title's spans (empty: nothing fits, or the job has no loss).
    pub spans: Vec<Span<'static>>,
    /// The training loss's newest value is shown.
    pub loss: bool,
    /// The eval loss's newest value is shown.
    pub eval: bool,
}

/// One loss: which, its kept points and newest value.
struct Item {
    eval: bool,
    points: Vec<f64>,
    value: String,
    /// Bars wanted (0: none).
    want: usize,
}

impl Item {
    /// Its label and value, with `bars` between them when there are any.
    fn text(&self, bars: &str) -> String {
        let value = self.value.as_str();
        match (self.eval, bars.is_empty()) {
            (false, true) => t!("job_line.loss", value = value),
            (false, false) => t!("job_spark.loss", bars = bars, value = value),
            (true, true) => t!("job_line.eval", value = value),
            (true, false) => t!("job_spark.eval", bars = bars, value = value),
        }
        .into_owned()
    }

    /// Its cells, not counting the bars (with or without room for them).
    fn fixed_width(&self, with_bars: bool) -> usize {
        if with_bars {
            width_of(&self.text("▁")).saturating_sub(1)
        } else {
            width_of(&self.text(""))
        }
    }
}

/// The job's losses as the processes pane's right-hand title, in at most `room` cells
/// (padding included).
pub fn losses(job: &TrackedJob, room: usize, theme: &Theme) -> Losses {
    let Some(report) = job.report.as_ref() else {
        return Losses::default();
    };
    let item = |eval: bool, latest: Option<f64>, series: Vec<f64>| {
        latest.map(|v| {
            let want = series.len().min(MAX_BARS);
            Item {
                eval,
                value: format!("{v:.4}"),
                want: if want >= 2 { want } else { 0 },
                points: series,
            }
        })
    };
    let mut items: Vec<Item> = [
        item(
            false,
            report.loss.map(|p| p.value),
            report.loss_series.iter().map(|p| p.value).collect(),
        ),
        item(
            true,
            report.eval_loss.map(|p| p.value),
            report.eval_series.iter().map(|p| p.value).collect(),
        ),
    ]
    .into_iter()
    .flatten()
    .collect();
    loop {
        if items.is_empty() {
            return Losses::default();
        }
        if let Some(bars) = allot(&items, room) {
            return render(&items, &bars, theme);
        }
        // No room even without bars: the eval loss (the last item) goes back to the job line.
        items.pop();
    }
}

/// Bars per item that fit in `room` with every item's value, shrinking the bars and then
/// leaving out sparklines (the last item's first); `None` when the values alone do not fit.
fn allot(items: &[Item], room: usize) -> Option<Vec<usize>> {
    let mut want: Vec<usize> = items.iter().map(|i| i.want).collect();
    loop {
        let fixed: usize = items
            .iter()
            .zip(&want)
            .map(|(item, w)| item.fixed_width(*w > 0))
            .sum::<usize>()
            + width_of(SEPARATOR) * (items.len() - 1)
            + 2;
        let Some(spare) = room.checked_sub(fixed) else {
            // Not even the bars' labels fit: the last sparkline goes first.
            let last = want.iter().rposition(|w| *w > 0)?;
            want[last] = 0;
            continue;
        };
        let bars = share(&want, spare);
        match bars
            .iter()
            .zip(&want)
            .rposition(|(got, w)| *w > 0 && *got < MIN_BARS.min(*w))
        {
            None => return Some(bars),
            Some(short) => want[short] = 0,
        }
    }
}

/// `spare` cells shared out evenly between the wants, none given more than it wants.
fn share(want: &[usize], spare: usize) -> Vec<usize> {
    let mut got = vec![0; want.len()];
    let mut left = spare;
    loop {
        let open: Vec<usize> = (0..want.len()).filter(|&i| got[i] < want[i]).collect();
        if open.is_empty() || left < open.len() {
            // What is left goes one cell at a time to the first that still want.
            for i in open {
                if left == 0 {
                    break;
                }
                got[i] += 1;
                left -= 1;
            }
            return got;
        }
        let each = left / open.len();
        for i in open {
            let more = each.min(want[i] - got[i]);
            got[i] += more;
            left -= more;
        }
    }
}

fn render(items: &[Item], counts: &[usize], theme: &Theme) -> Losses {
    let mut spans = vec![Span::styled(" ", theme.title())];
    let mut losses = Losses::default();
    for (i, (item, n)) in items.iter().zip(counts).enumerate() {
        if i > 0 {
            spans.push(Span::styled(SEPARATOR, theme.dim()));
        }
        spans.push(Span::styled(
            item.text(&bars(&item.points, *n)),
            theme.title(),
        ));
        if item.eval {
            losses.eval = true;
        } else {
            losses.loss = true;
        }
    }
    spans.push(Span::styled(" ", theme.title()));
    losses.spans = spans;
    losses
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_falling_loss_draws_falling_bars_and_a_rising_one_rising_bars() {
        let falling: Vec<f64> = (0..512).map(|i| 6.0 - f64::from(i) * 0.01).collect();
        let drawn = bars(&falling, 8);
        assert_eq!(drawn, "█▇▆▅▄▃▂▁");
        let rising: Vec<f64> = falling.iter().rev().copied().collect();
        assert_eq!(bars(&rising, 8), "▁▂▃▄▅▆▇█");
    }

    #[test]
    fn bars_follow_the_values_and_scale_to_the_points_shown() {
        // An eval loss that falls to its best, then rises again: the lowest bar is the best.
        let evals = [4.84, 4.60, 4.45, 4.40, 4.50, 4.62];
        let drawn: Vec<char> = bars(&evals, 40).chars().collect();
        assert_eq!(drawn.len(), 6, "one bar per point when there are few");
        assert_eq!(drawn[0], '█', "the highest value");
        assert_eq!(drawn[3], '▁', "the best (lowest) value");
        assert!(
            drawn[1] > drawn[2] && drawn[2] > drawn[3],
            "falling to the best"
        );
        assert!(
            drawn[3] < drawn[4] && drawn[4] < drawn[5],
            "rising after it"
        );
        // Scaled to the points shown, not to zero: a small fall still spans the whole height.
        let small = bars(&[1.002, 1.001, 1.000], 3);
        assert!(small.starts_with('█') && small.ends_with('▁'), "{small}");
    }

    #[test]
    fn flat_empty_and_unreadable_series_draw_safely() {
        assert_eq!(bars(&[2.0; 10], 5), "▁▁▁▁▁");
        assert_eq!(bars(&[], 5), "");
        assert_eq!(bars(&[1.0, 2.0], 0), "");
        assert_eq!(bars(&[f64::NAN, 3.0, f64::INFINITY, 1.0], 4), "█▁");
    }

    #[test]
    fn room_is_shared_evenly_and_never_over_what_is_wanted() {
        assert_eq!(share(&[40, 40], 20), vec![10, 10]);
        assert_eq!(share(&[40, 6], 30), vec![24, 6]);
        assert_eq!(share(&[40, 40], 21), vec![11, 10]);
        assert_eq!(share(&[3, 0], 50), vec![3, 0]);
    }
}
