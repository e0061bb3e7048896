//! Which of up to 256 lower-case needles occur in a line, in one pass over the line.
//!
//! The pasted-text rules test about forty phrases on every line; forty `str::contains` calls
//! each set up a searcher and walk the line again, which made a 50 MB log take seconds. Here a
//! table says which needles start with each byte, and only those are compared where that byte
//! occurs.

/// The most needles one set holds (one bit each in a [`Bits`]).
pub const MAX_NEEDLES: usize = 256;

/// One bit per needle of a set: which needles a line holds, or which belong to a rule.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Bits([u128; 2]);

impl Bits {
    pub const EMPTY: Bits = Bits([0; 2]);

    /// The bit of needle `i` (none past [`MAX_NEEDLES`]).
    pub fn one(i: usize) -> Self {
        let mut b = Bits::EMPTY;
        if i < MAX_NEEDLES {
            b.0[i / 128] = 1u128 << (i % 128);
        }
        b
    }

    pub fn is_empty(self) -> bool {
        self.0 == [0; 2]
    }

    /// Whether any bit of `other` is set here too.
    pub fn meets(self, other: Bits) -> bool {
        self.0[0] & other.0[0] != 0 || self.0[1] & other.0[1] != 0
    }

    fn and(self, other: Bits) -> Bits {
        Bits([self.0[0] & other.0[0], self.0[1] & other.0[1]])
    }

    fn and_not(self, other: Bits) -> Bits {
        Bits([self.0[0] & !other.0[0], self.0[1] & !other.0[1]])
    }

    fn or_assign(&mut self, other: Bits) {
        self.0[0] |= other.0[0];
        self.0[1] |= other.0[1];
    }
}

/// A fixed set of needles, each known by its bit (`1 << index`).
pub struct NeedleSet {
    needles: Vec<&'static [u8]>,
    /// For each byte, the needles that start with it.
    by_first: [Bits; 256],
    /// For each byte, the needles whose second byte it is, plus every one-byte needle: a
    /// position is a candidate for a needle only where both of its first two bytes agree.
    by_second: [Bits; 256],
    /// The one-byte needles, the only candidates at a haystack's last byte.
    short: Bits,
}

impl NeedleSet {
    /// A set of `needles` in that order; empty needles and those past [`MAX_NEEDLES`] never
    /// match.
    pub fn new(needles: &[&'static str]) -> Self {
        let mut by_first = [Bits::EMPTY; 256];
        let mut by_second = [Bits::EMPTY; 256];
        let mut short = Bits::EMPTY;
        let needles: Vec<&'static [u8]> = needles
            .iter()
            .take(MAX_NEEDLES)
            .map(|n| n.as_bytes())
            .collect();
        for (i, needle) in needles.iter().enumerate() {
            let bit = Bits::one(i);
            match needle {
                [] => {}
                [first] => {
                    by_first[usize::from(*first)].or_assign(bit);
                    short.or_assign(bit);
                    for entry in &mut by_second {
                        entry.or_assign(bit);
                    }
                }
                [first, second, ..] => {
                    by_first[usize::from(*first)].or_assign(bit);
                    by_second[usize::from(*second)].or_assign(bit);
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
    pub fn find(&self, haystack: &[u8]) -> Bits {
        let mut found = Bits::EMPTY;
        for at in 0..haystack.len() {
            let first = self.by_first[usize::from(haystack[at])];
            if first.is_empty() {
                continue;
            }
            let second = match haystack.get(at + 1) {
                Some(&b) => self.by_second[usize::from(b)],
                None => self.short,
            };
            let candidates = first.and(second).and_not(found);
            for (word, mut bits) in candidates.0.into_iter().enumerate() {
                while bits != 0 {
                    let i = word * 128 + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    if haystack[at..].starts_with(self.needles[i]) {
                        found.or_assign(Bits::one(i));
                    }
                }
            }
        }
        found
    }

    /// The bits of the needles `from..from + count`, for naming a group of them.
    pub fn bits(from: usize, count: usize) -> Bits {
        let mut out = Bits::EMPTY;
        for i in from..from.saturating_add(count).min(MAX_NEEDLES) {
            out.or_assign(Bits::one(i));
        }
        out
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
            assert_eq!(set.find(text.as_bytes()), Bits([want, 0]), "{text}");
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
        assert_eq!(NeedleSet::bits(2, 3), Bits([0b11100, 0]));
        assert_eq!(NeedleSet::bits(0, 128), Bits([u128::MAX, 0]));
        assert_eq!(NeedleSet::bits(128, 1), Bits([0, 1]));
        assert_eq!(NeedleSet::bits(256, 1), Bits::EMPTY);
        assert_eq!(NeedleSet::bits(64, 1), Bits([1 << 64, 0]));
    }

    #[test]
    fn needles_past_the_first_128_are_found() {
        let mut needles: Vec<&'static str> = vec!["zz"; 130];
        needles.push("out of memory");
        let set = NeedleSet::new(&needles);
        let hits = set.find(b"cuda out of memory");
        assert_eq!(hits, Bits::one(130));
        assert!(hits.meets(NeedleSet::bits(129, 5)));
        assert!(!hits.meets(NeedleSet::bits(0, 130)));
    }
}
