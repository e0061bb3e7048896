//! Which of up to 128 lower-case needles occur in a line, in one pass over the line.
//!
//! The pasted-text rules test about forty phrases on every line; forty `str::contains` calls
//! each set up a searcher and walk the line again, which made a 50 MB log take seconds. Here a
//! table says which needles start with each byte, and only those are compared where that byte
//! occurs.

/// The most needles one set holds (one bit each in a `u128`).
pub const MAX_NEEDLES: usize = 128;

/// A fixed set of needles, each known by its bit (`1 << index`).
pub struct NeedleSet {
    needles: Vec<&'static [u8]>,
    /// For each byte, the needles that start with it.
    by_first: [u128; 256],
    /// For each byte, the needles whose second byte it is, plus every one-byte needle: a
    /// position is a candidate for a needle only where both of its first two bytes agree.
    by_second: [u128; 256],
    /// The one-byte needles, the only candidates at a haystack's last byte.
    short: u128,
}

impl NeedleSet {
    /// A set of `needles` in that order; empty needles and those past [`MAX_NEEDLES`] never
    /// match.
    pub fn new(needles: &[&'static str]) -> Self {
        let mut by_first = [0u128; 256];
        let mut by_second = [0u128; 256];
        let mut short = 0u128;
        let needles: Vec<&'static [u8]> = needles
            .iter()
            .take(MAX_NEEDLES)
            .map(|n| n.as_bytes())
            .collect();
        for (i, needle) in needles.iter().enumerate() {
            let bit = 1u128 << i;
            match needle {
                [] => {}
                [first] => {
                    by_first[usize::from(*first)] |= bit;
                    short |= bit;
                    for entry in &mut by_second {
                        *entry |= bit;
                    }
                }
                [first, second, ..] => {
                    by_first[usize::from(*first)] |= bit;
                    by_second[usize::from(*second)] |= bit;
                }
            }
        }
        Self {
            needles,
            by_first,
            by_second,
            short,
        }
    }

    /// The bits of the needles that occur in `haystack` (compared byte for byte, so lower-case
    /// the haystack first for a case-blind match).
    pub fn find(&self, haystack: &[u8]) -> u128 {
        let mut found = 0u128;
        for at in 0..haystack.len() {
            let first = self.by_first[usize::from(haystack[at])];
            if first == 0 {
                continue;
            }
            let second = match haystack.get(at + 1) {
                Some(&b) => self.by_second[usize::from(b)],
                None => self.short,
            };
            let mut candidates = first & second & !found;
            while candidates != 0 {
                let i = candidates.trailing_zeros() as usize;
                candidates &= candidates - 1;
                if haystack[at..].starts_with(self.needles[i]) {
                    found |= 1 << i;
                }
            }
        }
        found
    }

    /// The bits of the needles `from..from + count`, for naming a group of them.
    pub fn bits(from: usize, count: usize) -> u128 {
        let ones = if count >= MAX_NEEDLES {
            u128::MAX
        } else {
            (1u128 << count) - 1
        };
        if from >= MAX_NEEDLES { 0 } else { ones << from }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_exactly_the_needles_that_occur() {
        let needles = ["out of memory", "nccl", "nccl warn", "gpu", ",", "", "gg"];
        let set = NeedleSet::new(&needles);
        let cases: [(&str, u128); 7] = [
            ("cuda out of memory; nccl warn x", 0b0000111),
            ("nccl error", 0b0000010),
            ("out of memor", 0),
            ("gpu", 0b0001000),
            ("a,b", 0b0010000),
            ("g", 0),
            ("", 0),
        ];
        for (text, want) in cases {
            assert_eq!(set.find(text.as_bytes()), want, "{text}");
            // The same answer as one `contains` per (non-empty) needle.
            let naive = needles
                .iter()
                .enumerate()
                .filter(|(_, n)| !n.is_empty() && text.contains(*n))
                .fold(0, |bits, (i, _)| bits | 1 << i);
            assert_eq!(want, naive, "{text}");
        }
    }

    #[test]
    fn bits_name_a_group() {
        assert_eq!(NeedleSet::bits(2, 3), 0b11100);
        assert_eq!(NeedleSet::bits(0, 128), u128::MAX);
        assert_eq!(NeedleSet::bits(128, 1), 0);
        assert_eq!(NeedleSet::bits(64, 1), 1 << 64);
    }
}
