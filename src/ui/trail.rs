//! Utilization at a glance: one block character per value (`▁` to `█`), and the mean of a
//! history over time slices, for the GPU cards' trails and the fleet view's per-GPU bars and
//! per-host trails.

use crate::fleet::history::{History, Metric};
use crate::telemetry::TimestampMs;

const LEVELS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// The block for a percentage: `▁` for 0 %, `█` for 100 % (out-of-range values are clamped).
pub fn level_char(pct: f64) -> char {
    let pct = if pct.is_finite() {
        pct.clamp(0.0, 100.0)
    } else {
        0.0
    };
    LEVELS[(pct / 100.0 * 7.0).round() as usize]
}

/// The mean utilization of `histories` (one per GPU) in `columns` equal slices of the
/// `window_ms` ending at `now_ms`; `None` for a slice without any point.
pub fn utilization_slices<'a>(
    histories: impl Iterator<Item = &'a History>,
    now_ms: TimestampMs,
    window_ms: u64,
    columns: usize,
) -> Vec<Option<f64>> {
    if columns == 0 {
        return Vec::new();
    }
    let slice_ms = (window_ms / columns as u64).max(1);
    let start = now_ms.saturating_sub(window_ms);
    let mut sums = vec![(0.0f64, 0u32); columns];
    for history in histories {
        // Newest first, stopping at the window's start.
        for point in history.points().rev().take_while(|p| p.at_ms >= start) {
            if let Some(v) = Metric::Utilization.read(&point) {
                let col = (((point.at_ms - start) / slice_ms) as usize).min(columns - 1);
                sums[col].0 += f64::from(v);
                sums[col].1 += 1;
            }
        }
    }
    sums.into_iter()
        .map(|(sum, n)| (n > 0).then(|| sum / f64::from(n)))
        .collect()
}

/// Slices as a line of blocks, a space where nothing was read.
pub fn blocks(slices: &[Option<f64>]) -> String {
    slices.iter().map(|v| v.map_or(' ', level_char)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::history::HistoryPoint;
    use crate::telemetry::GpuSample;

    #[test]
    fn levels_span_idle_to_full() {
        assert_eq!(level_char(0.0), '▁');
        assert_eq!(level_char(50.0), '▅');
        assert_eq!(level_char(100.0), '█');
        assert_eq!(level_char(250.0), '█');
        assert_eq!(level_char(f64::NAN), '▁');
    }

    #[test]
    fn slices_average_every_gpu_and_leave_gaps_empty() {
        let shape = crate::fleet::FleetOptions::default().history_shape();
        let mut a = History::new(shape);
        let mut b = History::new(shape);
        for (t, util) in [(1_000u64, 100.0), (2_000, 100.0), (9_000, 0.0)] {
            let sample = |u: f64| GpuSample {
                utilization_gpu_pct: Some(u),
                ..GpuSample::default()
            };
            a.push(HistoryPoint::from_sample(t, &sample(util)));
            b.push(HistoryPoint::from_sample(t, &sample(0.0)));
        }
        let slices = utilization_slices([&a, &b].into_iter(), 10_000, 10_000, 5);
        assert_eq!(slices.len(), 5);
        assert_eq!(slices[0], Some(50.0), "two GPUs, one busy");
        assert_eq!(slices[2], None);
        assert_eq!(slices[4], Some(0.0));
        assert_eq!(blocks(&slices), "▅▅  ▁");
    }
}
