//! The auto-release countdown under a simulated clock: it fires when nobody cancels, any key
//! cancels it, and it never fires while a user process runs unless that was allowed.

use gpufleet::cost::{AutoDecision, AutoInput, AutoRelease, AutoState, DEFAULT_COUNTDOWN_MS};

const SEC: u64 = 1_000;

fn at(now_ms: u64, triggered: bool, user_processes: bool) -> AutoInput {
    AutoInput {
        now_ms,
        triggered,
        user_processes,
        job_running: false,
    }
}

/// Ticks once a second from `from` to `to` (inclusive) and returns the decisions.
fn run(auto: &mut AutoRelease, from: u64, to: u64, processes: bool) -> Vec<AutoDecision> {
    (from..=to)
        .step_by(SEC as usize)
        .map(|now| auto.tick(at(now, true, processes)))
        .collect()
}

#[test]
fn fires_once_when_nobody_cancels() {
    let mut auto = AutoRelease::default();
    assert_eq!(auto.tick(at(0, false, false)), AutoDecision::Nothing);
    assert_eq!(
        auto.tick(at(1_000, true, false)),
        AutoDecision::CountingDown {
            remaining_ms: DEFAULT_COUNTDOWN_MS
        }
    );
    assert_eq!(
        auto.tick(at(61_000, true, false)),
        AutoDecision::CountingDown {
            remaining_ms: DEFAULT_COUNTDOWN_MS - 60_000
        }
    );
    let decisions = run(
        &mut auto,
        62_000,
        1_000 + DEFAULT_COUNTDOWN_MS + 5_000,
        false,
    );
    let fired = decisions
        .iter()
        .filter(|d| **d == AutoDecision::Fire)
        .count();
    assert_eq!(fired, 1);
    let fire_at = decisions
        .iter()
        .position(|d| *d == AutoDecision::Fire)
        .unwrap() as u64;
    assert_eq!(62_000 + fire_at * SEC, 1_000 + DEFAULT_COUNTDOWN_MS);
    assert_eq!(auto.state(), AutoState::Fired);
}

#[test]
fn any_key_cancels_and_it_stays_cancelled_while_the_reason_lasts() {
    let mut auto = AutoRelease::new(60 * SEC, false);
    auto.tick(at(0, true, false));
    assert!(auto.key_pressed());
    assert_eq!(auto.state(), AutoState::Cancelled);
    let later = run(&mut auto, SEC, 10 * 60 * SEC, false);
    assert!(later.iter().all(|d| *d == AutoDecision::Nothing));
    assert!(
        !auto.key_pressed(),
        "a key with no countdown is not swallowed"
    );

    // The reason went away (the GPUs worked again) and came back: a new countdown.
    auto.tick(at(601 * SEC, false, false));
    assert_eq!(
        auto.tick(at(700 * SEC, true, false)),
        AutoDecision::CountingDown {
            remaining_ms: 60 * SEC
        }
    );
    assert_eq!(auto.tick(at(760 * SEC, true, false)), AutoDecision::Fire);
}

#[test]
fn the_countdown_stops_when_the_reason_goes_away() {
    let mut auto = AutoRelease::new(60 * SEC, false);
    auto.tick(at(0, true, false));
    auto.tick(at(50 * SEC, false, false));
    assert_eq!(auto.state(), AutoState::Watching);
    assert_eq!(
        auto.tick(at(70 * SEC, true, false)),
        AutoDecision::CountingDown {
            remaining_ms: 60 * SEC
        }
    );
}

#[test]
fn never_fires_while_a_user_process_runs() {
    let mut auto = AutoRelease::new(60 * SEC, false);
    auto.tick(at(0, true, false));
    let held = run(&mut auto, 30 * SEC, 3_600 * SEC, true);
    assert!(held.iter().all(|d| *d == AutoDecision::Held), "{held:?}");
    assert_eq!(auto.state(), AutoState::Held);
    // The process ended: the countdown starts over from the full length.
    assert_eq!(
        auto.tick(at(3_601 * SEC, true, false)),
        AutoDecision::CountingDown {
            remaining_ms: 60 * SEC
        }
    );
    assert_eq!(auto.tick(at(3_661 * SEC, true, false)), AutoDecision::Fire);
}

#[test]
fn fires_with_a_user_process_only_when_allowed() {
    let mut auto = AutoRelease::new(60 * SEC, true);
    auto.tick(at(0, true, true));
    assert_eq!(auto.tick(at(60 * SEC, true, true)), AutoDecision::Fire);
}

#[test]
fn never_fires_while_a_job_runs_and_learns_even_where_user_processes_are_allowed() {
    // Releasing with user processes allowed, and none on the GPUs yet (a job still importing):
    // the job's process lives and its log says it still learns, so the host is working.
    let mut auto = AutoRelease::new(60 * SEC, true);
    let job = |now_ms| AutoInput {
        job_running: true,
        ..at(now_ms, true, false)
    };
    for s in 0..=3_600 {
        assert_eq!(auto.tick(job(s * SEC)), AutoDecision::Held);
    }
    // The job ended (or stopped learning): the countdown runs its full length, then fires.
    assert_eq!(
        auto.tick(at(3_601 * SEC, true, false)),
        AutoDecision::CountingDown {
            remaining_ms: 60 * SEC
        }
    );
    assert_eq!(auto.tick(at(3_661 * SEC, true, false)), AutoDecision::Fire);
}
