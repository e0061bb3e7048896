//! A small seeded PRNG (SplitMix64) so the demo needs no dependency and replays exactly.

/// SplitMix64: tiny, fast, and good enough for telemetry noise; not for anything secret.
#[derive(Debug, Clone)]
pub(super) struct Rng {
    state: u64,
}

const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// The SplitMix64 output function; also used to derive independent seeds from a few numbers.
pub(super) fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    pub(super) fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// A generator for one part of the scenario (a host, a GPU), so that adding a host or drawing
    /// one more number for one GPU never shifts the noise of another.
    pub(super) fn derive(seed: u64, parts: &[u64]) -> Self {
        let state = parts.iter().fold(mix(seed ^ GOLDEN_GAMMA), |acc, part| {
            mix(acc
                ^ part
                    .wrapping_mul(GOLDEN_GAMMA)
                    .wrapping_add(0x632B_E59B_D9B4_E019))
        });
        Self::new(state)
    }

    pub(super) fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN_GAMMA);
        mix(self.state)
    }

    /// Uniform in [0, 1).
    pub(super) fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in [lo, hi).
    pub(super) fn range_f64(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }

    /// Uniform integer in [0, n); 0 when n is 0. The multiply-shift keeps the bias below 2^-64 * n.
    pub(super) fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Roughly standard normal (Irwin-Hall of four uniforms, rescaled): bell-shaped and bounded
    /// to about +/-3.5, which keeps every simulated reading inside its physical range.
    pub(super) fn gauss(&mut self) -> f64 {
        let sum: f64 = (0..4).map(|_| self.unit()).sum();
        (sum - 2.0) * 3f64.sqrt()
    }

    /// `n` lowercase hex digits.
    pub(super) fn hex(&mut self, n: usize) -> String {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        (0..n)
            .map(|_| char::from(DIGITS[self.below(16) as usize]))
            .collect()
    }
}

/// A slowly wandering offset (an AR(1) process): real temperatures and loads drift, they do not
/// jump independently every second.
#[derive(Debug, Clone, Default)]
pub(super) struct Drift {
    value: f64,
}

impl Drift {
    /// Moves the offset one step: `keep` is how much of the old value survives a tick,
    /// `step` the size of the fresh noise.
    pub(super) fn step(&mut self, rng: &mut Rng, keep: f64, step: f64) -> f64 {
        self.value = self.value * keep + step * rng.gauss();
        self.value
    }
}
