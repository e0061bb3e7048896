//! The newest point of a GPU's history that met a condition, kept between the live findings'
//! passes. Every second the findings ask of every GPU whether any point of the last two minutes
//! meets a duration rule (most meet none), which read ~120 points a GPU a second; with the
//! memo a pass reads only the points pushed since the last one (usually one).
//!
//! It may answer yes where a full pass would say no (a point that met the condition was since
//! replaced in its second, or dropped), which costs the caller only the full pass it would
//! have made anyway; it never answers no where a full pass would say yes: every point in the
//! window was read under the same key after its last change, because a history changes its
//! one-second points only by pushing (a push that replaces the newest point counts as one), and
//! a window that reaches the folded points, or a point newer than `now`, is not answered.

use std::cell::Cell;

use super::{History, HistoryPoint};
use crate::telemetry::TimestampMs;

/// What the condition depends on besides the point (thresholds read from the GPU's own latest
/// sample, say): a different key reads the whole history again.
pub type MetKey = [u64; 2];

/// See the module's notes. Bookkeeping, not part of the history's value: always equal.
#[derive(Debug, Clone, Default)]
pub(super) struct MetMemo(Cell<Option<Scan>>);

#[derive(Debug, Clone, Copy)]
struct Scan {
    key: MetKey,
    /// The history's push count when it was read.
    pushes: u64,
    newest_met_ms: Option<TimestampMs>,
}

impl PartialEq for MetMemo {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl History {
    /// Whether a point from `since_ms` to `now_ms` may meet `cond`, reading only the points
    /// pushed since the last call with the same `key` (see the module's notes: it may say yes
    /// where none does, never no where one does); `None` when the window reaches points the
    /// memo does not follow.
    pub fn any_met_since(
        &self,
        key: MetKey,
        since_ms: TimestampMs,
        now_ms: TimestampMs,
        cond: &dyn Fn(&HistoryPoint) -> bool,
    ) -> Option<bool> {
        let pushes = self.pushes.get();
        let fresh = self
            .met
            .0
            .get()
            .filter(|scan| scan.key == key)
            .and_then(|scan| {
                let n = usize::try_from(pushes.wrapping_sub(scan.pushes)).ok()?;
                (n <= self.points.len()).then_some((scan, n))
            });
        let newest_met_ms = match fresh {
            Some((scan, n)) => {
                let met = self
                    .points
                    .iter()
                    .rev()
                    .take(n)
                    .map(|p| self.decode(p))
                    .filter(|p| cond(p))
                    .map(|p| p.at_ms)
                    .max();
                scan.newest_met_ms.max(met)
            }
            None => self.points().filter(|p| cond(p)).map(|p| p.at_ms).max(),
        };
        self.met.0.set(Some(Scan {
            key,
            pushes,
            newest_met_ms,
        }));
        let at_ms =
            |p: Option<&super::Stored>| p.map(|p| self.base_ms + u64::from(p.after_base_ms));
        let follows = at_ms(self.points.back().or(self.coarse.back()))
            .is_none_or(|at| at <= now_ms)
            && at_ms(self.coarse.back()).is_none_or(|at| at < since_ms);
        follows.then(|| newest_met_ms.is_some_and(|at| at >= since_ms))
    }
}
