//! A bounded per-GPU history of the four charted series, one point per second at most.

use std::collections::VecDeque;

use crate::telemetry::{GpuSample, TimestampMs};

use super::idle_trail::{IdleTrail, IdleTrailShape};
use super::revision::Revision;

mod fold;
mod met;
use fold::Fold;
pub use met::MetKey;
use met::MetMemo;

/// One charted point as readers see it. Stored packed in 12 bytes (see [`Stored`]): each
/// reading in the steps the findings and charts read it in, its largest value meaning "the
/// sample did not carry it".
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HistoryPoint {
    pub at_ms: TimestampMs,
    values: Values,
}

/// The readings of one point in their steps, unpacked.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Values {
    /// Half percents: the tools report whole percents; a folded mean keeps half of one.
    utilization_gpu: Fixed<8, 2>,
    /// Hundredths of a percent of the card's memory.
    memory_used: Fixed<14, 100>,
    /// Whole degrees, as every vendor tool reports them.
    temperature: Fixed<8, 1>,
    /// Tenths of a watt (6,553.4 W at most).
    power_draw: Fixed<16, 10>,
    /// The enforced limit at that moment (a playbook may change it mid-history).
    power_limit: Fixed<16, 10>,
    /// The NVML clock-event mask, so findings can ask "how long has it been throttling".
    clock_events: u16,
}

/// A value in `1 / PER_UNIT` steps that fits in `BITS` bits, all of them set when unknown;
/// out-of-range values clamp.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Fixed<const BITS: u32, const PER_UNIT: u32>(u16);

impl<const BITS: u32, const PER_UNIT: u32> Fixed<BITS, PER_UNIT> {
    const UNKNOWN: u16 = (((1u32 << BITS) - 1) & 0xffff) as u16;

    fn new(value: Option<f64>) -> Self {
        match value.filter(|v| v.is_finite()) {
            Some(v) => {
                let steps = (v * f64::from(PER_UNIT)).round();
                Self(steps.clamp(0.0, f64::from(Self::UNKNOWN - 1)) as u16)
            }
            None => Self(Self::UNKNOWN),
        }
    }

    /// The value in steps, `None` when unknown.
    fn steps(self) -> Option<u16> {
        (self.0 != Self::UNKNOWN).then_some(self.0)
    }

    /// From steps (a folded mean, a packed field), clamped; `None` is unknown.
    fn from_steps(steps: Option<u16>) -> Self {
        Self(steps.map_or(Self::UNKNOWN, |s| s.min(Self::UNKNOWN - 1)))
    }

    fn get(self) -> Option<f32> {
        self.steps().map(|s| f32::from(s) / PER_UNIT as f32)
    }
}

/// The clock-event mask keeps the nine reasons NVML defines (`0x1` to `0x100`, as
/// `CLOCK_EVENT_BITS` in the telemetry model lists them) and this flag for "known".
const MASK_KNOWN: u16 = 0x200;
const MASK_REASONS: u16 = MASK_KNOWN - 1;

/// The readings of one point, unpacked: what [`HistoryPoint::new`] takes.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Readings {
    pub utilization_gpu_pct: Option<f64>,
    pub memory_used_pct: Option<f64>,
    pub temperature_c: Option<f64>,
    pub power_draw_w: Option<f64>,
    pub power_limit_w: Option<f64>,
    pub clock_event_reasons: Option<u64>,
}

impl HistoryPoint {
    pub fn new(at_ms: TimestampMs, r: &Readings) -> Self {
        Self {
            at_ms,
            values: Values {
                utilization_gpu: Fixed::new(r.utilization_gpu_pct),
                memory_used: Fixed::new(r.memory_used_pct),
                temperature: Fixed::new(r.temperature_c),
                power_draw: Fixed::new(r.power_draw_w),
                power_limit: Fixed::new(r.power_limit_w),
                clock_events: r
                    .clock_event_reasons
                    .map_or(0, |m| MASK_KNOWN | (m & u64::from(MASK_REASONS)) as u16),
            },
        }
    }
    pub fn from_sample(at_ms: TimestampMs, gpu: &GpuSample) -> Self {
        let memory_used_pct = match (gpu.memory_used_mib, gpu.memory_total_mib) {
            (Some(used), Some(total)) if total > 0 => Some(used as f64 * 100.0 / total as f64),
            _ => None,
        };
        Self::new(
            at_ms,
            &Readings {
                utilization_gpu_pct: gpu.utilization_gpu_pct,
                memory_used_pct,
                temperature_c: gpu.temperature_c,
                power_draw_w: gpu.power_draw_w,
                power_limit_w: gpu.power_limit_w,
                clock_event_reasons: gpu.clock_event_reasons.map(|r| r.0),
            },
        )
    }

    pub fn utilization_gpu_pct(&self) -> Option<f32> {
        self.values.utilization_gpu.get()
    }

    pub fn memory_used_pct(&self) -> Option<f32> {
        self.values.memory_used.get()
    }

    pub fn temperature_c(&self) -> Option<f32> {
        self.values.temperature.get()
    }

    pub fn power_draw_w(&self) -> Option<f32> {
        self.values.power_draw.get()
    }

    pub fn power_limit_w(&self) -> Option<f32> {
        self.values.power_limit.get()
    }

    /// The clock-event mask (the nine reasons NVML defines).
    pub fn clock_event_reasons(&self) -> Option<u64> {
        let mask = self.values.clock_events;
        (mask & MASK_KNOWN != 0).then(|| u64::from(mask & MASK_REASONS))
    }
}

/// Which series of a point to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    Utilization,
    Memory,
    Temperature,
    Power,
}

impl Metric {
    pub const ALL: [Metric; 4] = [
        Metric::Utilization,
        Metric::Memory,
        Metric::Temperature,
        Metric::Power,
    ];

    pub fn read(self, point: &HistoryPoint) -> Option<f32> {
        match self {
            Metric::Utilization => point.utilization_gpu_pct(),
            Metric::Memory => point.memory_used_pct(),
            Metric::Temperature => point.temperature_c(),
            Metric::Power => point.power_draw_w(),
        }
    }
}

/// Points at one-second resolution for the newest `fine_points` seconds (all that the live
/// findings look back over), and older ones folded into one point per [`COARSE_BUCKET_MS`] (the
/// mean of each reading, the clock-event reasons of any of them, the newest's power limit),
/// which is all a chart of several minutes can show: 15 minutes of 8 GPUs take 36 KB instead
/// of 86 KB. A sample inside the same second as the last point replaces it, so a fast stream
/// (or a sped-up simulator) cannot push older history out early. Stored in 12 bytes a point
/// (see [`Stored`]): the time as milliseconds after the history's `base_ms` in a `u32` (49 days;
/// the base moves forward long before that), the readings packed, and the power limit (which
/// changes only when someone sets it) as an index into the history's few limits.
#[derive(Debug, Clone, PartialEq)]
pub struct History {
    /// The folded points, oldest first; all older than the first of `points`.
    coarse: VecDeque<Stored>,
    /// The points at one-second resolution, oldest first.
    points: VecDeque<Stored>,
    base_ms: TimestampMs,
    /// The power limits the points refer to (their steps), each once.
    limits: Vec<u16>,
    /// Points at one-second resolution kept at most.
    fine_capacity: usize,
    /// Folded points kept at most (0: nothing is folded, the oldest is dropped).
    coarse_capacity: usize,
    /// The sums behind the newest folded point, while its bucket may still take points.
    folding: Option<Fold>,
    /// What the idle rule reads, reaching back further than the points may.
    idle: IdleTrail,
    /// Points pushed so far (a push that replaces the newest point counts too).
    pushes: Revision,
    /// The newest point that met the live rules, for [`History::any_met_since`].
    met: MetMemo,
}

/// How long a history is: seconds kept in all, of them the newest `fine_points` one a second
/// (the rest folded), and the idle trail.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HistoryShape {
    pub points: usize,
    pub fine_points: usize,
    pub idle: IdleTrailShape,
}

/// One point as a history keeps it, 12 bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Stored {
    after_base_ms: u32,
    /// Memory used (bits 0-13), the clock-event mask (bits 14-23), utilization (bits 24-31).
    packed: u32,
    power_draw: u16,
    temperature: u8,
    /// The power limit's index in the history's `limits`, [`NO_LIMIT`] when unknown.
    power_limit: u8,
}

/// The index of an unknown power limit; a history keeps at most this many limits.
const NO_LIMIT: u8 = u8::MAX;
const MEMORY_SHIFT: u32 = 0;
const CLOCK_SHIFT: u32 = 14;
const UTILIZATION_SHIFT: u32 = 24;

impl Stored {
    fn new(after_base_ms: u32, values: &Values, power_limit: u8) -> Self {
        let packed = (u32::from(values.memory_used.0) & 0x3fff) << MEMORY_SHIFT
            | (u32::from(values.clock_events) & 0x3ff) << CLOCK_SHIFT
            | (u32::from(values.utilization_gpu.0) & 0xff) << UTILIZATION_SHIFT;
        Self {
            after_base_ms,
            packed,
            power_draw: values.power_draw.0,
            temperature: (values.temperature.0 & 0xff) as u8,
            power_limit,
        }
    }

    /// The readings, with the power limit looked up in `limits`.
    fn values(&self, limits: &[u16]) -> Values {
        let field = |shift: u32, mask: u32| ((self.packed >> shift) & mask) as u16;
        let limit = limits.get(usize::from(self.power_limit)).copied();
        Values {
            utilization_gpu: Fixed(field(UTILIZATION_SHIFT, 0xff)),
            memory_used: Fixed(field(MEMORY_SHIFT, 0x3fff)),
            temperature: Fixed(u16::from(self.temperature)),
            power_draw: Fixed(self.power_draw),
            power_limit: Fixed::from_steps(limit),
            clock_events: field(CLOCK_SHIFT, 0x3ff),
        }
    }
}

/// Makes room for one more point in `points`, doubling its capacity but never past `most`
/// (what the points grow to when full is exact, not the next power of two).
fn room_for_one(points: &mut VecDeque<Stored>, most: usize) {
    let len = points.len();
    if len == points.capacity() {
        let want = (2 * len).max(16).min(most.max(len + 1));
        points.reserve_exact(want - len);
    }
}

const BUCKET_MS: TimestampMs = 1000;
/// What one folded point covers.
pub const COARSE_BUCKET_MS: TimestampMs = 5000;
/// The base moves to the oldest point once a point is this far past it.
const REBASE_AFTER_MS: u64 = u32::MAX as u64 / 2;

impl History {
    pub fn new(shape: HistoryShape) -> Self {
        // Two points at least: the idle trail accounts the one before the newest.
        let total = shape.points.max(2);
        let fine_capacity = shape.fine_points.clamp(2, total);
        let folded_ms = (total - fine_capacity) as u64 * BUCKET_MS;
        let coarse_capacity = usize::try_from(folded_ms.div_ceil(COARSE_BUCKET_MS)).unwrap_or(0);
        Self {
            // Grown as points come (see `room_for_one`): memory is what the points take, so a
            // thousand hosts watched for a minute do not hold fifteen minutes' worth each.
            coarse: VecDeque::new(),
            points: VecDeque::new(),
            base_ms: 0,
            limits: Vec::new(),
            fine_capacity,
            coarse_capacity,
            folding: None,
            idle: IdleTrail::new(shape.idle),
            pushes: Revision::default(),
            met: MetMemo::default(),
        }
    }

    /// A history of `points`, all at one-second resolution, with the default idle trail
    /// (tests, tools).
    pub fn with_capacity(points: usize) -> Self {
        Self::new(HistoryShape {
            points,
            fine_points: points,
            idle: IdleTrailShape::default(),
        })
    }

    pub fn push(&mut self, point: HistoryPoint) {
        self.pushes.bump();
        if let Some(last) = self.points.back()
            && (self.base_ms + u64::from(last.after_base_ms)) / BUCKET_MS == point.at_ms / BUCKET_MS
        {
            self.points.pop_back();
        } else {
            // The newest point is final now: the idle trail takes it.
            self.account_newest();
        }
        if self.points.len() == self.fine_capacity {
            self.fold_oldest_fine();
        }
        if self.points.is_empty() && self.coarse.is_empty() {
            self.base_ms = point.at_ms;
        } else if point.at_ms < self.base_ms || point.at_ms - self.base_ms > REBASE_AFTER_MS {
            self.rebase(point.at_ms);
        }
        let limit = self.limit_index(point.values.power_limit);
        room_for_one(&mut self.points, self.fine_capacity);
        self.points.push_back(Stored::new(
            (point.at_ms - self.base_ms) as u32,
            &point.values,
            limit,
        ));
    }

    /// The index of the power limit `limit` in `limits`, added when new. A history that holds
    /// as many different limits as an index can name first forgets those no point refers to
    /// any more, and failing that takes the nearest it has.
    fn limit_index(&mut self, limit: Fixed<16, 10>) -> u8 {
        let Some(steps) = limit.steps() else {
            return NO_LIMIT;
        };
        if let Some(i) = self.limits.iter().position(|&l| l == steps) {
            return u8::try_from(i).unwrap_or(NO_LIMIT);
        }
        if self.limits.len() == usize::from(NO_LIMIT) {
            self.forget_unused_limits();
        }
        if self.limits.len() < usize::from(NO_LIMIT) {
            self.limits.push(steps);
            return u8::try_from(self.limits.len() - 1).unwrap_or(NO_LIMIT);
        }
        self.limits
            .iter()
            .enumerate()
            .min_by_key(|(_, l)| l.abs_diff(steps))
            .map_or(NO_LIMIT, |(i, _)| u8::try_from(i).unwrap_or(NO_LIMIT))
    }

    /// Drops the limits no point refers to, renumbering the points' indices.
    fn forget_unused_limits(&mut self) {
        let mut used = [false; NO_LIMIT as usize];
        for p in self.coarse.iter().chain(&self.points) {
            if let Some(slot) = used.get_mut(usize::from(p.power_limit)) {
                *slot = true;
            }
        }
        let mut renumbered = [NO_LIMIT; NO_LIMIT as usize];
        let mut kept = Vec::with_capacity(self.limits.len());
        for (i, &limit) in self.limits.iter().enumerate() {
            if used[i] {
                renumbered[i] = u8::try_from(kept.len()).unwrap_or(NO_LIMIT);
                kept.push(limit);
            }
        }
        for p in self.coarse.iter_mut().chain(self.points.iter_mut()) {
            if let Some(&new) = renumbered.get(usize::from(p.power_limit)) {
                p.power_limit = new;
            }
        }
        self.limits = kept;
    }

    /// A stored point as readers see it.
    fn decode(&self, p: &Stored) -> HistoryPoint {
        HistoryPoint {
            at_ms: self.base_ms + u64::from(p.after_base_ms),
            values: p.values(&self.limits),
        }
    }

    /// Moves the oldest one-second point into the folded ones (or drops it when nothing is
    /// folded): into the newest folded point when it shares its bucket, else as a new one.
    fn fold_oldest_fine(&mut self) {
        let Some(oldest) = self.points.pop_front() else {
            return;
        };
        if self.coarse_capacity == 0 {
            return;
        }
        let at_ms = self.base_ms + u64::from(oldest.after_base_ms);
        let bucket = at_ms / COARSE_BUCKET_MS;
        let values = oldest.values(&self.limits);
        match (&mut self.folding, self.coarse.back_mut()) {
            (Some(fold), Some(newest)) if fold.bucket == bucket => {
                fold.add(&values);
                *newest = Stored::new(newest.after_base_ms, &fold.values(), oldest.power_limit);
            }
            _ => {
                let mut fold = Fold::new(bucket);
                fold.add(&values);
                if self.coarse.len() == self.coarse_capacity {
                    self.coarse.pop_front();
                }
                room_for_one(&mut self.coarse, self.coarse_capacity);
                self.coarse.push_back(Stored::new(
                    oldest.after_base_ms,
                    &fold.values(),
                    oldest.power_limit,
                ));
                self.folding = Some(fold);
            }
        }
    }

    /// Moves the base to the oldest point that `at_ms` can share it with: a clock that jumped
    /// back, or a history older than the offsets reach, keeps what it can and drops the rest.
    fn rebase(&mut self, at_ms: TimestampMs) {
        let base = self.base_ms;
        let oldest = self
            .coarse
            .iter()
            .chain(&self.points)
            .map(|p| base + u64::from(p.after_base_ms))
            .find(|&t| t <= at_ms && at_ms - t <= REBASE_AFTER_MS)
            .unwrap_or(at_ms);
        let keep = |p: &Stored| {
            let t = base + u64::from(p.after_base_ms);
            t >= oldest && t <= oldest + REBASE_AFTER_MS
        };
        let coarse_before = self.coarse.len();
        self.coarse.retain(|p| keep(p));
        if self.coarse.len() < coarse_before {
            self.folding = None;
        }
        self.points.retain(|p| keep(p));
        for p in self.coarse.iter_mut().chain(self.points.iter_mut()) {
            p.after_base_ms = (base + u64::from(p.after_base_ms) - oldest) as u32;
        }
        self.base_ms = oldest;
    }

    fn account_newest(&mut self) {
        if self.points.is_empty() {
            return;
        }
        let (last, previous) = {
            let mut newest = self.points().rev();
            let Some(last) = newest.next() else {
                return;
            };
            (last, newest.next().map(|p| p.at_ms))
        };
        let weight = self.idle.weight_ms(last.at_ms, previous);
        self.idle
            .account(last.at_ms, weight, last.utilization_gpu_pct());
    }

    /// The idle trail, and the newest point with its weight (not in the trail until the next
    /// second's point arrives).
    pub fn idle(&self) -> (&IdleTrail, Option<(HistoryPoint, u64)>) {
        let mut newest = self.points().rev();
        let last = newest.next().map(|last| {
            let previous = newest.next().map(|p| p.at_ms);
            (last, self.idle.weight_ms(last.at_ms, previous))
        });
        (&self.idle, last)
    }

    /// Points kept, folded ones included.
    pub fn len(&self) -> usize {
        self.coarse.len() + self.points.len()
    }

    pub fn is_empty(&self) -> bool {
        self.points.is_empty() && self.coarse.is_empty()
    }

    /// The points, oldest first, decoded: the folded ones, then those a second apart.
    pub fn points(&self) -> impl DoubleEndedIterator<Item = HistoryPoint> + '_ {
        self.coarse
            .iter()
            .chain(&self.points)
            .map(move |p| self.decode(p))
    }

    /// `(seconds before now, value)` pairs of one series inside the last `window_ms`, oldest
    /// first, ready for a chart whose x axis runs from `-window` to 0.
    pub fn series(&self, metric: Metric, now_ms: TimestampMs, window_ms: u64) -> Vec<(f64, f64)> {
        let start = now_ms.saturating_sub(window_ms);
        self.points()
            .filter(|p| p.at_ms >= start)
            .filter_map(|p| {
                let value = metric.read(&p)?;
                let age_s = now_ms.saturating_sub(p.at_ms) as f64 / 1000.0;
                Some((-age_s, f64::from(value)))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    //! Tests of [`super`]: packing, one point a second, folding, rebasing, the power limits.

    use super::*;
    use std::cell::Cell;

    fn point(at_ms: TimestampMs, util: f32) -> HistoryPoint {
        HistoryPoint::new(
            at_ms,
            &Readings {
                utilization_gpu_pct: Some(f64::from(util)),
                ..Readings::default()
            },
        )
    }

    /// `p` as a history gives it back.
    fn stored(p: HistoryPoint) -> HistoryPoint {
        let mut h = History::with_capacity(2);
        h.push(p);
        h.points().next().expect("the point")
    }

    #[test]
    fn samples_in_one_second_share_a_point() {
        let mut h = History::with_capacity(10);
        h.push(point(10_000, 1.0));
        h.push(point(10_500, 2.0));
        h.push(point(11_000, 3.0));
        let utils: Vec<_> = h.points().map(|p| p.utilization_gpu_pct()).collect();
        assert_eq!(utils, vec![Some(2.0), Some(3.0)]);
    }

    #[test]
    fn capacity_drops_the_oldest() {
        let mut h = History::with_capacity(3);
        for s in 0..5 {
            h.push(point(s * 1000, s as f32));
        }
        assert_eq!(h.len(), 3);
        assert_eq!(h.points().next().map(|p| p.at_ms), Some(2000));
    }

    fn tiered(points: usize, fine_points: usize) -> History {
        History::new(HistoryShape {
            points,
            fine_points,
            idle: IdleTrailShape::default(),
        })
    }

    #[test]
    fn older_points_fold_into_means_of_five_seconds_and_the_newest_stay_a_second_apart() {
        // 15 minutes, the newest 3 a second apart: a ramp of utilization over 20 minutes.
        let mut h = tiered(900, 180);
        let t0 = 1_000_000;
        for s in 0..1200u64 {
            h.push(point(t0 + s * 1000, (s % 100) as f32));
        }
        let points: Vec<_> = h.points().collect();
        assert_eq!(h.len(), 180 + 144, "720 s folded into 5 s points");
        assert_eq!(points.len(), h.len());
        let newest = t0 + 1199 * 1000;
        // The newest 180 points are the last 180 seconds, one a second, as pushed.
        let fine = &points[144..];
        assert_eq!(fine[0].at_ms, newest - 179 * 1000);
        assert!(fine.windows(2).all(|w| w[1].at_ms - w[0].at_ms == 1000));
        assert_eq!(fine[179].utilization_gpu_pct(), Some(99.0));
        // The folded ones: 5 s apart, oldest about 15 minutes back, in time order before them.
        let coarse = &points[..144];
        assert!(coarse.windows(2).all(|w| w[1].at_ms - w[0].at_ms == 5000));
        assert!(coarse[143].at_ms < fine[0].at_ms);
        assert!(
            newest - coarse[0].at_ms >= 899 * 1000,
            "{}",
            newest - coarse[0].at_ms
        );
        // Each is the mean of its five seconds: second s carries s % 100.
        for p in coarse {
            let first_s = (p.at_ms - t0) / 1000;
            let mean = (0..5).map(|i| ((first_s + i) % 100) as f32).sum::<f32>() / 5.0;
            let got = p.utilization_gpu_pct().unwrap();
            // Kept in half percents.
            assert!(
                (got - mean).abs() <= 0.25,
                "at {first_s} s: {got} vs {mean}"
            );
        }
    }

    #[test]
    fn a_folded_point_keeps_any_clock_reason_and_unknown_readings_stay_unknown() {
        let mut h = tiered(20, 5);
        for s in 0..10u64 {
            let reasons = if s == 2 { Some(0x40) } else { Some(0) };
            h.push(HistoryPoint::new(
                s * 1000,
                &Readings {
                    temperature_c: (s != 1).then_some(50.0 + s as f64),
                    clock_event_reasons: reasons,
                    ..Readings::default()
                },
            ));
        }
        let first = h.points().next().expect("a folded point");
        // Seconds 0-4 folded: the thermal slowdown of second 2 survives the fold, the
        // temperature is the mean of the seconds that reported one, utilization unknown.
        assert_eq!(first.clock_event_reasons(), Some(0x40));
        // 52.25, kept in whole degrees.
        assert_eq!(first.temperature_c(), Some(52.0));
        assert_eq!(first.utilization_gpu_pct(), None);
    }

    #[test]
    fn the_default_console_history_is_a_few_kilobytes_a_gpu() {
        let shape = crate::fleet::FleetOptions::default().history_shape();
        let mut h = History::new(shape);
        for s in 0..3600u64 {
            h.push(point(s * 1000, 50.0));
        }
        // 15 minutes: 240 points a second apart (the job rules' two-minute window, the hold
        // and a minute of slack) and 132 folded, 12 bytes each (4.5 KB, not the 14.4 KB of 900
        // points of 16 bytes a second apart).
        assert_eq!(h.len(), 372);
        assert!(h.points.capacity() + h.coarse.capacity() <= 390);
        let span = h.points().last().unwrap().at_ms - h.points().next().unwrap().at_ms;
        assert!(span >= 895_000, "still 15 minutes of chart: {span}");
    }

    #[test]
    fn series_is_relative_to_now_and_windowed() {
        let mut h = History::with_capacity(100);
        for s in 0..10 {
            h.push(point(s * 1000, s as f32));
        }
        let series = h.series(Metric::Utilization, 9000, 3000);
        assert_eq!(
            series,
            vec![(-3.0, 6.0), (-2.0, 7.0), (-1.0, 8.0), (-0.0, 9.0)]
        );
    }

    #[test]
    fn a_point_is_12_bytes_and_keeps_what_the_findings_read() {
        assert_eq!(std::mem::size_of::<Stored>(), 12);
        let mut h = History::with_capacity(4);
        h.push(HistoryPoint::new(
            5,
            &Readings {
                utilization_gpu_pct: Some(97.0),
                memory_used_pct: Some(33.333),
                temperature_c: Some(83.0),
                power_draw_w: Some(699.96),
                power_limit_w: Some(700.0),
                clock_event_reasons: Some(0x100 | 0x20 | 0x4),
            },
        ));
        let p = h.points().next().expect("the point");
        assert_eq!(p.at_ms, 5);
        assert_eq!(p.utilization_gpu_pct(), Some(97.0));
        assert!((p.memory_used_pct().unwrap() - 33.33).abs() < 0.001);
        assert_eq!(p.temperature_c(), Some(83.0));
        assert_eq!(p.power_draw_w(), Some(700.0));
        assert_eq!(p.power_limit_w(), Some(700.0));
        assert_eq!(p.clock_event_reasons(), Some(0x124));
        let unknown = stored(HistoryPoint::new(5, &Readings::default()));
        assert_eq!(unknown.utilization_gpu_pct(), None);
        assert_eq!(unknown.clock_event_reasons(), None);
        let zero = stored(HistoryPoint::new(
            5,
            &Readings {
                clock_event_reasons: Some(0),
                power_draw_w: Some(0.0),
                ..Readings::default()
            },
        ));
        assert_eq!(
            zero.clock_event_reasons(),
            Some(0),
            "no reason is not unknown"
        );
        assert_eq!(zero.power_draw_w(), Some(0.0));
    }

    #[test]
    fn values_out_of_range_clamp_instead_of_wrapping() {
        let p = stored(HistoryPoint::new(
            0,
            &Readings {
                power_draw_w: Some(1.0e6),
                temperature_c: Some(-5.0),
                utilization_gpu_pct: Some(f64::NAN),
                memory_used_pct: Some(400.0),
                ..Readings::default()
            },
        ));
        assert_eq!(p.power_draw_w(), Some(6553.4));
        assert_eq!(p.memory_used_pct(), Some(163.82));
        assert_eq!(p.temperature_c(), Some(0.0));
        assert_eq!(p.utilization_gpu_pct(), None);
    }

    #[test]
    fn times_survive_a_rebase_and_a_clock_that_jumps_back() {
        let mut h = History::with_capacity(10);
        let t0 = 1_800_000_000_000;
        h.push(point(t0, 1.0));
        // Past what a u32 of milliseconds after the first point holds.
        let late = t0 + 3 * REBASE_AFTER_MS;
        h.push(point(late - 1000, 2.0));
        h.push(point(late, 3.0));
        let times: Vec<_> = h.points().map(|p| p.at_ms).collect();
        assert_eq!(
            times,
            vec![late - 1000, late],
            "the unreachable old point is dropped"
        );
        h.push(point(late - 5000, 4.0));
        let times: Vec<_> = h.points().map(|p| p.at_ms).collect();
        assert_eq!(
            times,
            vec![late - 1000, late, late - 5000],
            "kept in arrival order"
        );
    }

    #[test]
    fn a_young_history_holds_what_it_has_not_what_it_may_grow_to() {
        let shape = crate::fleet::FleetOptions::default().history_shape();
        let mut h = History::new(shape);
        assert_eq!(h.points.capacity() + h.coarse.capacity(), 0);
        // A minute of readings: room for about a minute, not for fifteen.
        for s in 0..60u64 {
            h.push(point(s * 1000, 50.0));
        }
        assert_eq!(h.len(), 60);
        assert!(h.points.capacity() <= 128, "{}", h.points.capacity());
        assert_eq!(h.coarse.capacity(), 0);
        // Grown full, it stops at exactly what it keeps.
        for s in 60..3600u64 {
            h.push(point(s * 1000, 50.0));
        }
        assert_eq!(h.points.capacity(), h.points.len());
        assert_eq!(h.coarse.capacity(), h.coarse.len());
    }

    fn limited(at_ms: TimestampMs, limit_w: Option<f64>) -> HistoryPoint {
        HistoryPoint::new(
            at_ms,
            &Readings {
                power_limit_w: limit_w,
                ..Readings::default()
            },
        )
    }

    #[test]
    fn each_point_keeps_the_power_limit_of_its_moment() {
        let mut h = tiered(40, 10);
        // 700 W, lowered to 450 W by a playbook at 22 s, unknown for a second at 35 s.
        let limit_at = |s: u64| match s {
            35 => None,
            22.. => Some(450.0),
            _ => Some(700.0),
        };
        for s in 0..40u64 {
            h.push(limited(s * 1000, limit_at(s)));
        }
        let points: Vec<_> = h.points().collect();
        assert_eq!(points.len(), 6 + 10);
        for p in &points[6..] {
            let s = p.at_ms / 1000;
            assert_eq!(p.power_limit_w(), limit_at(s).map(|w| w as f32), "at {s} s");
        }
        // Folded, each keeps the newest of its five seconds: 20-24 s is 450 W, not a mean.
        let folded: Vec<_> = points[..6].iter().map(|p| p.power_limit_w()).collect();
        let (old, new) = (Some(700.0), Some(450.0));
        assert_eq!(folded, vec![old, old, old, old, new, new]);
        assert_eq!(h.limits.len(), 2, "each limit once");
    }

    #[test]
    fn a_history_of_many_limits_forgets_those_no_point_holds() {
        let mut h = History::with_capacity(10);
        // A limit changed every second, 300 different ones: more than an index names.
        for s in 0..300u64 {
            h.push(limited(s * 1000, Some(100.0 + s as f64)));
        }
        let limits: Vec<_> = h.points().map(|p| p.power_limit_w()).collect();
        let want: Vec<_> = (290..300).map(|s| Some(100.0 + s as f32)).collect();
        assert_eq!(limits, want);
        assert!(h.limits.len() <= usize::from(NO_LIMIT));
    }

    #[test]
    fn with_every_index_in_use_a_new_limit_takes_the_nearest() {
        let mut h = History::with_capacity(400);
        for s in 0..256u64 {
            h.push(limited(s * 1000, Some(100.0 + s as f64)));
        }
        // The first 255 limits are held by points; the 256th (355 W) takes the nearest, 354 W.
        let newest = h.points().last().and_then(|p| p.power_limit_w());
        assert_eq!(newest, Some(354.0));
        let first = h.points().next().and_then(|p| p.power_limit_w());
        assert_eq!(first, Some(100.0));
    }

    // The memo behind `History::any_met_since`.
    fn hot_point(at_ms: TimestampMs, temperature_c: f64) -> HistoryPoint {
        HistoryPoint::new(
            at_ms,
            &Readings {
                temperature_c: Some(temperature_c),
                ..Readings::default()
            },
        )
    }

    fn hot_above(limit: f64) -> impl Fn(&HistoryPoint) -> bool {
        move |p| p.temperature_c().is_some_and(|t| f64::from(t) >= limit)
    }

    /// What the memo stands in for: every point of the window read.
    fn full_pass(
        h: &History,
        since_ms: u64,
        now_ms: u64,
        cond: &dyn Fn(&HistoryPoint) -> bool,
    ) -> bool {
        h.points()
            .filter(|p| (since_ms..=now_ms).contains(&p.at_ms))
            .any(|p| cond(&p))
    }

    /// Pushes in a second already kept (replacing its point), clocks that jump back, folding
    /// and a key that changes midway, checked every step against a full pass: the memo never
    /// says no where a point of the window meets the condition, and where nothing reaches the
    /// window's edges it answers at all.
    #[test]
    fn the_memo_never_misses_a_point_that_meets_the_condition() {
        let mut h = History::new(HistoryShape {
            points: 60,
            fine_points: 20,
            idle: IdleTrailShape::default(),
        });
        let mut seed = 0x2545_f491_u64;
        let mut next = move |n: u64| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (seed >> 33) % n
        };
        let mut now_ms = 1_000_000u64;
        let (mut answered, mut checked) = (0, 0);
        for step in 0..5_000 {
            now_ms = match next(50) {
                0 => now_ms.saturating_sub(5_000),
                1..=9 => now_ms + next(1000),
                _ => now_ms + 1000,
            };
            h.push(hot_point(now_ms, 60.0 + next(25) as f64));
            let limit: f64 = if step < 2_500 { 83.0 } else { 80.0 };
            let key = [limit.to_bits(), 0];
            let cond = hot_above(limit);
            for back_s in [3, 10, 15, 40] {
                let since_ms = now_ms.saturating_sub(back_s * 1000);
                let truth = full_pass(&h, since_ms, now_ms, &cond);
                checked += 1;
                if let Some(said) = h.any_met_since(key, since_ms, now_ms, &cond) {
                    answered += 1;
                    assert!(
                        said || !truth,
                        "step {step}: missed a point since {since_ms}"
                    );
                }
            }
        }
        assert_eq!(checked, 20_000);
        assert!(
            answered > 10_000,
            "the memo answered only {answered} of {checked}"
        );
    }

    /// Once read, a history is read again only from its newest points: one a second.
    #[test]
    fn a_pass_reads_only_the_points_pushed_since_the_last() {
        let mut h = History::with_capacity(300);
        for s in 0..200u64 {
            h.push(hot_point(s * 1000, 60.0));
        }
        let reads = Cell::new(0u32);
        let cond = |p: &HistoryPoint| {
            reads.set(reads.get() + 1);
            hot_above(80.0)(p)
        };
        let now = 199_000;
        assert_eq!(
            h.any_met_since([1, 0], now - 120_000, now, &cond),
            Some(false)
        );
        assert_eq!(reads.replace(0), 200, "the first pass reads everything");
        h.push(hot_point(200_000, 85.0));
        assert_eq!(h.any_met_since([1, 0], 80_000, 200_000, &cond), Some(true));
        assert_eq!(reads.replace(0), 1);
        // The hot point falls out of the window as time passes.
        assert_eq!(
            h.any_met_since([1, 0], 200_001, 200_500, &cond),
            Some(false)
        );
        assert_eq!(reads.replace(0), 0);
        // A new key reads everything again.
        assert_eq!(h.any_met_since([2, 0], 0, 200_000, &cond), Some(true));
        assert_eq!(reads.replace(0), 201);
    }

    /// A window that reaches the folded points, or a point newer than `now`, is left to the
    /// caller.
    #[test]
    fn what_the_memo_does_not_follow_it_does_not_answer() {
        let mut h = History::new(HistoryShape {
            points: 60,
            fine_points: 10,
            idle: IdleTrailShape::default(),
        });
        for s in 0..30u64 {
            h.push(hot_point(s * 1000, 90.0));
        }
        let cond = hot_above(80.0);
        assert_eq!(h.any_met_since([0, 0], 25_000, 29_000, &cond), Some(true));
        assert_eq!(h.any_met_since([0, 0], 5_000, 29_000, &cond), None);
        assert_eq!(h.any_met_since([0, 0], 25_000, 28_000, &cond), None);
    }
}
