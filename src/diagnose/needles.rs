//! Which of up to 64 lower-case needles occur in a line, in one pass over the line.
//!
//! The pasted-text rules test about forty phrases on every line; forty `str::contains` calls
//! each set up a searcher and walk the line again, which made a 50 MB log take seconds. Here a
//! table says which needles start with each byte, and only those are compared where that byte
//! occurs.

/// The most needles one set holds (one bit each in a `u64`).
pub const MAX_NEEDLES: usize = 64;

/// A fixed set of needles, each known by its bit (`1 << index`).
pub struct NeedleSet {
    needles: Vec<&'static [u8]>,
    /// For each byte, the needles that start with it.
    by_first: [u64; 256],
}

impl NeedleSet {
    /// A set of `needles` in that order; empty needles and those past [`MAX_NEEDLES`] never
    /// match.
    pub fn new(needles: &[&'static str]) -> Self {
        let mut by_first = [0u64; 256];
        let needles: Vec<&'static [u8]> = needles
            .iter()
            .take(MAX_NEEDLES)
            .map(|n| n.as_bytes())
            .collect();
        for (i, needle) in needles.iter().enumerate() {
            if let Some(&first) = needle.first() {
                by_first[usize::from(first)] |= 1 << i;
            }
        }
        Self { needles, by_first }
    }

    /// The bits of the needles that occur in `haystack` (compared byte for byte, so lower-case
    /// the haystack first for a case-blind match).
    pub fn find(&self, haystack: &[u8]) -> u64 {
        let mut found = 0u64;
        for (at, &byte) in haystack.iter().enumerate() {
            let mut candidates = self.by_first[usize::from(byte)] & !found;
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
    pub fn bits(from: usize, count: usize) -> u64 {
        let ones = if count >= MAX_NEEDLES {
            u64::MAX
        } else {
            (1u64 << count) - 1
        };
        if from >= MAX_NEEDLES {
            0
        } else {
            ones << from
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_exactly_the_needles_that_occur() {
        let set = NeedleSet::new(&["out of memory", "nccl", "nccl warn", "gpu", ""]);
        let cases: [(&str, u64); 5] = [
            ("cuda out of memory; nccl warn x", 0b0111),
            ("nccl error", 0b0010),
            ("out of memor", 0),
            ("gpu", 0b1000),
            ("", 0),
        ];
        for (text, want) in cases {
            assert_eq!(set.find(text.as_bytes()), want, "{text}");
            // The same answer as one `contains` per needle.
            let naive = ["out of memory", "nccl", "nccl warn", "gpu"]
                .iter()
                .enumerate()
                .filter(|(_, n)| text.contains(*n))
                .fold(0, |bits, (i, _)| bits | 1 << i);
            assert_eq!(want, naive, "{text}");
        }
    }

    #[test]
    fn bits_name_a_group() {
        assert_eq!(NeedleSet::bits(2, 3), 0b11100);
        assert_eq!(NeedleSet::bits(0, 64), u64::MAX);
        assert_eq!(NeedleSet::bits(64, 1), 0);
    }
}
