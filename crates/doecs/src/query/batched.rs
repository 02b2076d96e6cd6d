//! Batched iteration: a query's rows in batches of at most `n`, for parallel
//! loops the caller drives (rayon's `par_bridge`, a job system, scoped
//! threads), as hecs's `iter_batched` offers.
//!
//! A batch is a run of rows of one archetype, so it never straddles two
//! archetypes' columns. Batches are disjoint: the rows one batch yields are
//! yielded by no other, so batches of a query with mutable parts may be
//! handed to different threads at once.

use super::data::QueryData;
use crate::storage::ArchetypeId;
use crate::world::WorldCore;
use std::marker::PhantomData;

/// The batches of a query. Created by [`Query::iter_batched`](super::Query::iter_batched).
pub struct BatchedIter<'w, Q: QueryData> {
    world: &'w WorldCore,
    matched: std::slice::Iter<'w, (ArchetypeId, Q::State)>,
    current: Option<(Q::Fetch, usize)>,
    next_row: usize,
    batch: usize,
}

// SAFETY: the iterator reads the world's archetype list (`WorldCore` is
// `Sync`) and hands out batches of disjoint rows, whose items are `Send`; a
// fetch it holds points at the columns of those items.
unsafe impl<'w, Q: QueryData> Send for BatchedIter<'w, Q> where Q::Item<'w>: Send {}

impl<'w, Q: QueryData> BatchedIter<'w, Q> {
    /// Batches of at most `batch` rows (at least 1).
    ///
    /// # Safety
    /// The caller must hold the access `Q` describes for `'w`, as for
    /// [`QueryIter`](super::QueryIter).
    pub(crate) unsafe fn new(
        world: &'w WorldCore,
        matched: &'w [(ArchetypeId, Q::State)],
        batch: usize,
    ) -> Self {
        BatchedIter {
            world,
            matched: matched.iter(),
            current: None,
            next_row: 0,
            batch: batch.max(1),
        }
    }
}

impl<'w, Q: QueryData> Iterator for BatchedIter<'w, Q> {
    type Item = Batch<'w, Q>;

    fn next(&mut self) -> Option<Batch<'w, Q>> {
        loop {
            if let Some((fetch, len)) = self.current {
                if self.next_row < len {
                    let start = self.next_row;
                    let end = (start + self.batch).min(len);
                    self.next_row = end;
                    return Some(Batch {
                        fetch,
                        row: start,
                        end,
                        _world: PhantomData,
                    });
                }
            }
            let &(id, state) = self.matched.next()?;
            let arch = self.world.archetypes().get(id);
            // SAFETY: `state` was matched on `arch`.
            self.current = Some((unsafe { Q::fetch(arch, state) }, arch.len()));
            self.next_row = 0;
        }
    }
}

/// One batch: rows `row..end` of one archetype. An iterator over their items.
pub struct Batch<'w, Q: QueryData> {
    fetch: Q::Fetch,
    row: usize,
    end: usize,
    _world: PhantomData<&'w WorldCore>,
}

// SAFETY: a batch hands out the items of its own rows only (disjoint from
// every other batch's), so moving it to another thread is moving those items,
// which are `Send`.
unsafe impl<'w, Q: QueryData> Send for Batch<'w, Q> where Q::Item<'w>: Send {}

impl<Q: QueryData> Batch<'_, Q> {
    /// Rows left in the batch.
    pub fn len(&self) -> usize {
        self.end - self.row
    }

    /// Whether the batch is used up.
    pub fn is_empty(&self) -> bool {
        self.row == self.end
    }
}

impl<'w, Q: QueryData> Iterator for Batch<'w, Q> {
    type Item = Q::Item<'w>;

    #[inline]
    fn next(&mut self) -> Option<Q::Item<'w>> {
        if self.row == self.end {
            return None;
        }
        let row = self.row;
        self.row += 1;
        // SAFETY: `row` is a live row of this batch, yielded once; the
        // iterator's creator held the access for `'w`.
        Some(unsafe { Q::item(self.fetch, row) })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.len(), Some(self.len()))
    }
}
