//! Reconnect delays: exponential with jitter, capped, so a fleet that lost its network does not
//! reconnect in lockstep. A host that was live within [`RECENT`] is tried at least every
//! [`RECENT_CAP`], so it is back soon after its outage ends.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How long after it was last live a host counts as recently live.
pub(crate) const RECENT: Duration = Duration::from_secs(600);
/// The longest wait between tries for a host that was live within [`RECENT`].
pub(crate) const RECENT_CAP: Duration = Duration::from_secs(15);

#[derive(Debug, Clone)]
pub(crate) struct Backoff {
    base_ms: u64,
    cap_ms: u64,
    failures: u32,
    rng: u64,
    /// When the host was last live (a session served).
    live_at: Option<Instant>,
}

impl Backoff {
    pub(crate) fn new(base_ms: u64, cap_ms: u64, seed: u64) -> Self {
        let clock = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        Self {
            base_ms: base_ms.max(1),
            cap_ms: cap_ms.max(base_ms.max(1)),
            failures: 0,
            // xorshift must not start at zero.
            rng: (clock ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15)) | 1,
            live_at: None,
        }
    }

    /// The next delay: uniform in [half, full] of `base * 2^failures`, never above the cap
    /// (nor above [`RECENT_CAP`] while the host was live within [`RECENT`]).
    pub(crate) fn next_delay(&mut self) -> Duration {
        self.next_delay_at(Instant::now())
    }

    fn next_delay_at(&mut self, now: Instant) -> Duration {
        let recent = self
            .live_at
            .is_some_and(|at| now.saturating_duration_since(at) < RECENT);
        let cap = if recent {
            self.cap_ms.min(RECENT_CAP.as_millis() as u64)
        } else {
            self.cap_ms
        };
        let exp = self
            .base_ms
            .saturating_mul(1u64 << self.failures.min(20))
            .min(cap);
        self.failures = self.failures.saturating_add(1);
        let half = exp / 2;
        Duration::from_millis(half + self.random() % (exp - half + 1))
    }

    /// The host is live: delays start again from the base, and stay short for a while.
    pub(crate) fn reset(&mut self) {
        self.failures = 0;
        self.live_at = Some(Instant::now());
    }

    /// Delays start again from the base; when the host was last live is kept.
    pub(crate) fn restart(&mut self) {
        self.failures = 0;
    }

    fn random(&mut self) -> u64 {
        let mut x = self.rng;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng = x;
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_jitters_and_caps() {
        let mut b = Backoff::new(1_000, 30_000, 7);
        let delays: Vec<u64> = (0..10).map(|_| b.next_delay().as_millis() as u64).collect();
        for (i, d) in delays.iter().enumerate() {
            let full = (1_000u64 << i).min(30_000);
            assert!((full / 2..=full).contains(d), "attempt {i}: {d} ms");
        }
        assert!(delays[9] >= 15_000);
        b.reset();
        assert!(b.next_delay() <= Duration::from_millis(1_000));
    }

    #[test]
    fn a_host_live_lately_is_tried_at_least_every_15_s_and_later_as_any_other() {
        let mut b = Backoff::new(1_000, 30_000, 3);
        b.reset();
        let now = Instant::now();
        let delays: Vec<Duration> = (0..10).map(|_| b.next_delay_at(now)).collect();
        assert!(delays.iter().all(|d| *d <= RECENT_CAP), "{delays:?}");
        assert!(delays[9] >= RECENT_CAP / 2, "{delays:?}");
        // Long after it was last live, the usual cap again.
        let later = now + RECENT + Duration::from_secs(1);
        assert!(b.next_delay_at(later) >= Duration::from_secs(15));
    }

    #[test]
    fn hosts_do_not_move_in_lockstep() {
        let firsts: Vec<Duration> = (0..8)
            .map(|seed| Backoff::new(10_000, 30_000, seed).next_delay())
            .collect();
        assert!(firsts.iter().any(|d| *d != firsts[0]), "{firsts:?}");
    }
}
