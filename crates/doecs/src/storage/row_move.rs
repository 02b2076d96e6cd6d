//! Which columns a row move copies, decided once per archetype edge.
//!
//! Design. Moving an entity's row from one archetype to another copies the
//! value of every component the two share. Found per row, that costs a
//! column-map look for each source column (and a skip for each one the
//! target lacks), with the looks' bookkeeping live across the copy loop.
//! Found once, when the graph's edge between the two archetypes is made, it
//! is a short list of column pairs that the move walks with nothing to
//! decide. The lists live in an arena the archetype registry owns, and
//! each edge keeps the index of its list, so a move reads its list while
//! it holds both archetypes mutably.
//!
//! Aliasing rule: none to state. Plain data, built once per edge and never
//! changed.

use super::archetype::{Archetype, ColumnIndex};

/// One component both archetypes of a move have: its column in each.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct ColumnPair {
    /// The column in the source archetype.
    pub(crate) from: ColumnIndex,
    /// The column in the target archetype.
    pub(crate) to: ColumnIndex,
}

/// Index of a move's column pairs in [`MovePlans`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct MoveIndex(u32);

impl MoveIndex {
    /// The plan that copies nothing: for edges along which no row moves.
    pub(crate) const NONE: MoveIndex = MoveIndex(0);
}

/// Every edge's column pairs. See the module docs.
///
/// # Invariants
/// Plan 0 is empty ([`MoveIndex::NONE`]). Every other plan was made by
/// [`MovePlans::add`] for one source and one target archetype, in source
/// column order, and the edge holding its index joins those two.
#[derive(Debug)]
pub(crate) struct MovePlans {
    plans: Vec<Box<[ColumnPair]>>,
}

impl Default for MovePlans {
    fn default() -> Self {
        MovePlans {
            plans: vec![Box::new([])],
        }
    }
}

impl MovePlans {
    /// Records the plan of moving a row from `source` to `target`.
    pub(crate) fn add(&mut self, source: &Archetype, target: &Archetype) -> MoveIndex {
        let index = MoveIndex(
            u32::try_from(self.plans.len()).expect("doecs: more than 2^32 archetype edges"),
        );
        self.plans.push(shared_columns(source, target));
        index
    }

    /// The column pairs of plan `index`.
    #[inline(always)]
    pub(crate) fn get(&self, index: MoveIndex) -> &[ColumnPair] {
        &self.plans[index.0 as usize]
    }

    /// Panics unless plan `index` is the plan of moving a row from `source`
    /// to `target`.
    pub(crate) fn check(&self, index: MoveIndex, source: &Archetype, target: &Archetype) {
        assert_eq!(
            *self.get(index),
            *shared_columns(source, target),
            "the move plan of {:?} -> {:?}",
            source.id(),
            target.id()
        );
    }
}

/// Each component `source` and `target` share, as its column in each, in
/// source order.
fn shared_columns(source: &Archetype, target: &Archetype) -> Box<[ColumnPair]> {
    source
        .components()
        .iter()
        .enumerate()
        .filter_map(|(s, &c)| {
            Some(ColumnPair {
                from: ColumnIndex(s as u32),
                to: target.column_of(c)?,
            })
        })
        .collect()
}
