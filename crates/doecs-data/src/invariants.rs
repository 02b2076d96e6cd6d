//! The debug check of every storage invariant (called by tests).

use crate::record::RecordRef;
use crate::store::DataStore;

impl DataStore {
    /// Panics with a description if any storage invariant is broken: blocks
    /// inside the arena and disjoint, the dead-byte count exact, the record
    /// count exact, every block a valid record (full `from_bytes`
    /// validation), and no stamp above the clock.
    pub fn check_invariants(&self) {
        let arena = &self.arena;
        let mut blocks: Vec<(usize, usize, usize)> = Vec::new();
        for (idx, slot) in arena.slots.iter().enumerate() {
            let Some(cap) = slot.cap else { continue };
            let (s, c) = (slot.start as usize, cap.get() as usize);
            assert!(
                s + c <= arena.bytes.len(),
                "slot {idx}: block {s}+{c} outside the arena"
            );
            let rec = RecordRef::from_bytes(&arena.bytes[s..s + c])
                .unwrap_or_else(|e| panic!("slot {idx}: invalid record: {e}"));
            assert!(
                rec.max_stamp() <= self.clock,
                "slot {idx}: stamp {} above the clock {}",
                rec.max_stamp(),
                self.clock
            );
            blocks.push((s, c, idx));
        }
        assert_eq!(blocks.len(), arena.records, "record count");
        blocks.sort_unstable();
        for w in blocks.windows(2) {
            assert!(
                w[0].0 + w[0].1 <= w[1].0,
                "slots {} and {} overlap",
                w[0].2,
                w[1].2
            );
        }
        let live: usize = blocks.iter().map(|b| b.1).sum();
        assert_eq!(live + arena.dead, arena.bytes.len(), "dead-byte accounting");
    }
}
