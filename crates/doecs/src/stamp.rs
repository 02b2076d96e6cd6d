//! Stamps: which container, and how many times it changed in a way its
//! readers care about.
//!
//! Design. A reader that remembers a fact about a container (a batch's
//! `ChildOf` rows are where it put them; its entities are all still here)
//! keeps the container's stamp from when the fact held. While the stamp is
//! unchanged the fact still holds, and checking that costs one compare
//! instead of a pass over the batch. A stamp names its container's
//! *lineage*, drawn from one process-wide counter, so a stamp never
//! matches a container it was not taken from: a new container, a copy, or
//! one overwritten by a restore or load starts a lineage of its own, and
//! its count of edits starting again at zero cannot repeat an old stamp.

use std::sync::atomic::{AtomicU64, Ordering};

/// Which container, and how many changes it has seen (see the module
/// docs). Equal stamps of one container bracket a stretch with no change.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub(crate) struct Stamp {
    lineage: u64,
    edits: u64,
}

impl Stamp {
    /// A lineage no container has had, with no edits.
    pub(crate) fn fresh() -> Stamp {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        Stamp {
            lineage: NEXT.fetch_add(1, Ordering::Relaxed),
            edits: 0,
        }
    }

    /// A number no call returned before: names one content of a container,
    /// taken at each change and carried by exact copies (so equal numbers
    /// mean equal contents).
    pub(crate) fn content() -> u64 {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        NEXT.fetch_add(1, Ordering::Relaxed)
    }

    /// Counts one change.
    #[inline]
    pub(crate) fn bump(&mut self) {
        self.edits += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::Stamp;

    #[test]
    fn stamps_of_different_lineages_never_match() {
        let (mut a, mut b) = (Stamp::fresh(), Stamp::fresh());
        assert_ne!(a, b);
        let before = a;
        a.bump();
        assert_ne!(a, before);
        b.bump();
        assert_ne!(a, b, "the same number of edits in another lineage");
    }
}
