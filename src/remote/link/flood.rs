//! Telling a host that floods from one that streams as asked: the budget each remote command
//! gets (how many lines and bytes per window), and whether the host counts as flooding, with
//! hysteresis so that it does not flicker.
//!
//! `nvidia-smi -lms` prints one line per GPU per interval. The stream may send
//! `FLOOD_FACTOR` times that (counting at least `MIN_GPUS` GPUs, so a host whose GPU count is
//! not known yet, or whose ticks bunch up, is never taken for a flood); a one-shot
//! query the same for one reading. Counting costs one increment per line and one clock read
//! per read from the channel. A command over its budget has its channel closed (`channel_run.rs`); the
//! stream is started again one window later, so what the host sends afterwards (the newest
//! reading) is shown, at most one budget's worth per window.

use std::time::{Duration, Instant};

use crate::remote::link::channel_run::{Budget, Flood};
use crate::words::Words;

/// How many times the expected lines a command may send before it floods.
pub(crate) const FLOOD_FACTOR: u32 = 4;
/// The fewest GPUs a budget counts on: a host's first stream starts before its GPUs are
/// counted, and the largest hosts have 16.
const MIN_GPUS: u32 = 16;
/// Bytes allowed per budgeted line; real lines are 150–600 bytes.
const BYTES_PER_LINE: u64 = 1_024;
/// The shortest window lines are counted over.
const MIN_WINDOW: Duration = Duration::from_secs(1);
/// Windows in a row without a flood before a host no longer counts as flooding: longer than
/// the process query's period (5 s), so a host whose every query floods does not flicker.
const CALM_WINDOWS: u32 = 10;
/// Commands whose output has no per-GPU shape (process list, versions, kernel log) get this.
pub(crate) const OTHER_BUDGET: Budget = Budget {
    window: MIN_WINDOW,
    lines: 4_096,
    bytes: 4_096 * BYTES_PER_LINE,
};

fn lines_budget(gpus: usize, readings: u32) -> Budget {
    let gpus = u32::try_from(gpus).unwrap_or(u32::MAX).max(MIN_GPUS);
    let lines = FLOOD_FACTOR
        .saturating_mul(gpus)
        .saturating_mul(readings.max(1));
    Budget {
        window: MIN_WINDOW,
        lines,
        bytes: u64::from(lines) * BYTES_PER_LINE,
    }
}

/// The window the stream is counted over: one interval, or a second when the interval is
/// shorter.
pub(crate) fn stream_window(interval_ms: u32) -> Duration {
    Duration::from_millis(u64::from(interval_ms.max(1))).max(MIN_WINDOW)
}

/// The budget of a stream of `gpus` GPUs at `interval_ms`.
pub(crate) fn stream_budget(interval_ms: u32, gpus: usize) -> Budget {
    let window = stream_window(interval_ms);
    let readings = (window.as_millis() / u128::from(interval_ms.max(1))).max(1);
    Budget {
        window,
        ..lines_budget(gpus, u32::try_from(readings).unwrap_or(u32::MAX))
    }
}

/// The budget of one full reading of `gpus` GPUs.
pub(crate) fn query_budget(gpus: usize) -> Budget {
    lines_budget(gpus, 1)
}

/// What a flood was, in catalogue words for the user; `what` names the command that sent it.
pub(crate) fn describe(what: Words, flood: &Flood, budget_lines: u32) -> Words {
    let window_ms = flood.window.as_millis();
    let within = if window_ms.is_multiple_of(1000) {
        format!("{} s", window_ms / 1000)
    } else {
        format!("{window_ms} ms")
    };
    Words::new("flood_words.over_budget")
        .put("lines", flood.lines.to_string())
        .put("kib", (flood.bytes / 1024).to_string())
        .put("within", within)
        .put_words("what", what)
        .put("budget_lines", budget_lines.to_string())
        .put(
            "budget_kib",
            (u64::from(budget_lines) * BYTES_PER_LINE / 1024).to_string(),
        )
}

/// Whether the host floods: set by the first flood, cleared once `CALM_WINDOWS` windows pass
/// without one.
#[derive(Debug, Default)]
pub(crate) struct FloodState {
    last: Option<Instant>,
}

impl FloodState {
    /// Notes a flood at `now`; true when the host was not flooding before (time to say so).
    pub(crate) fn flooded(&mut self, now: Instant) -> bool {
        self.last.replace(now).is_none()
    }

    /// When the host counts as calm again if nothing floods meanwhile.
    pub(crate) fn calm_at(&self, window: Duration) -> Option<Instant> {
        self.last.map(|t| t + window * CALM_WINDOWS)
    }

    /// True once, when the host has been calm long enough at `now` (time to say so).
    pub(crate) fn calmed(&mut self, now: Instant, window: Duration) -> bool {
        if self.calm_at(window).is_some_and(|t| now >= t) {
            self.last = None;
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_scale_with_gpus_and_readings_per_window() {
        let b = stream_budget(1_000, 16);
        assert_eq!((b.window, b.lines, b.bytes), (MIN_WINDOW, 64, 64 * 1024));
        // A host of unknown or few GPUs still gets room for sixteen.
        assert_eq!(stream_budget(1_000, 0).lines, 64);
        assert_eq!(stream_budget(1_000, 8).lines, 64);
        assert_eq!(stream_budget(1_000, 32).lines, 128);
        // Five readings fit the one-second window at 200 ms.
        assert_eq!(stream_budget(200, 8).lines, 320);
        // A slow interval counts over the interval itself.
        let slow = stream_budget(5_000, 8);
        assert_eq!((slow.window, slow.lines), (Duration::from_secs(5), 64));
        assert_eq!(query_budget(4).lines, 64);
    }

    #[test]
    fn flooding_starts_at_once_and_ends_after_calm_windows() {
        let window = Duration::from_secs(1);
        let mut state = FloodState::default();
        let t0 = Instant::now();
        assert!(state.flooded(t0));
        assert!(!state.flooded(t0 + window), "already flooding: said once");
        assert!(state.calm_at(window).is_some());
        let last = t0 + window;
        assert!(!state.calmed(last + window * (CALM_WINDOWS - 1), window));
        assert!(state.calmed(last + window * CALM_WINDOWS, window));
        assert!(state.calm_at(window).is_none());
        assert!(!state.calmed(last + window * 10, window), "said once");
    }

    #[test]
    fn a_flood_is_described_with_its_figures() {
        let flood = Flood {
            lines: 33,
            bytes: 10_240,
            window: Duration::from_secs(1),
        };
        let text = describe(Words::new("flood_words.stream"), &flood, 32);
        assert_eq!(
            text.english(),
            "over budget: 33 lines, 10 KiB in 1 s from the nvidia-smi stream (budget 32 lines, \
             32 KiB); output past that is dropped"
        );
        let zh = text.render("zh-CN");
        assert!(
            zh.contains("33") && zh.contains("10 KiB") && zh.contains("1 s"),
            "{zh}"
        );
        assert!(zh.contains("预算") && zh.contains("32 KiB"), "{zh}");
        assert!(
            !zh.contains("over budget") && !zh.contains("stream"),
            "{zh}"
        );
        // Half a second is said in milliseconds, in either language.
        let half = Flood {
            window: Duration::from_millis(500),
            ..flood
        };
        let text = describe(Words::new("flood_words.kernel"), &half, 32);
        assert!(text.english().contains("in 500 ms from the kernel log"));
        assert!(text.render("zh-CN").contains("500 ms"));
    }
}
