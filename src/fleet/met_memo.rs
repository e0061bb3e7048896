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

use crate::telemetry::TimestampMs;

/// What the condition depends on besides the point (thresholds read from the GPU's own latest
/// sample, say): a different key reads the whole history again.
pub type MetKey = [u64; 2];

/// See the module's notes. Bookkeeping, not part of the history's value: always equal.
#[derive(Debug, Clone, Default)]
pub struct MetMemo(Cell<Option<Scan>>);

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

/// What the memo needs of a history.
pub struct MetView<'a> {
    /// Points pushed so far.
    pub pushes: u64,
    /// Points kept at one-second resolution.
    pub fine_len: usize,
    /// The time of the newest point that meets the condition: among the newest `n` points at
    /// one-second resolution, or among all points for `None`.
    pub newest_met: &'a dyn Fn(Option<usize>) -> Option<TimestampMs>,
    /// Whether the window holds only points at one-second resolution and none newer than
    /// its end.
    pub follows: bool,
}

impl MetMemo {
    /// Whether a point from `since_ms` on may meet the condition (see the module's notes on
    /// "may"); `None` when the window reaches points the memo does not follow.
    pub fn any_since(&self, key: MetKey, view: MetView<'_>, since_ms: TimestampMs) -> Option<bool> {
        let fresh = self
            .0
            .get()
            .filter(|scan| scan.key == key)
            .and_then(|scan| {
                let n = view.pushes.wrapping_sub(scan.pushes);
                let n = usize::try_from(n).ok().filter(|n| *n <= view.fine_len)?;
                Some((scan, n))
            });
        let newest_met_ms = match fresh {
            Some((scan, n)) => scan.newest_met_ms.max((view.newest_met)(Some(n))),
            None => (view.newest_met)(None),
        };
        self.0.set(Some(Scan {
            key,
            pushes: view.pushes,
            newest_met_ms,
        }));
        view.follows
            .then(|| newest_met_ms.is_some_and(|at| at >= since_ms))
    }
}
