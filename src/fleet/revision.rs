//! A count of a host's changes, for the drivers that keep what they drew of it between frames:
//! the same revision means nothing they read from the host changed. It is bookkeeping, not part
//! of the host's value, so two hosts equal in everything else are equal whatever their counts.

/// How many changes a host has had; see the module's notes.
#[derive(Debug, Clone, Copy, Default)]
pub struct Revision(u64);

impl Revision {
    /// Counts one change.
    pub fn bump(&mut self) {
        self.0 = self.0.wrapping_add(1);
    }

    /// The count, to compare with one kept earlier.
    pub fn get(self) -> u64 {
        self.0
    }
}

impl PartialEq for Revision {
    /// Always equal: the count says when a host changed, not what it is.
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bump_changes_the_count_but_not_the_value() {
        let before = Revision::default();
        let mut after = before;
        after.bump();
        assert_ne!(before.get(), after.get());
        assert_eq!(before, after);
    }
}
