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
