//! Batched iteration: a query's rows in batches of at most `n`, for parallel
//! loops the caller drives (rayon's `par_bridge`, a job system, scoped
//! threads), as hecs's `iter_batched` offers.
//!
//! A batch is a run of rows of one archetype, so it never straddles two
//! archetypes' columns. Batches are disjoint: the rows one batch yields are
//! yielded by no other, so batches of a query with mutable parts may be
//! handed to different threads at once. Under a change filter a batch
//! yields only its rows that pass (so it may yield fewer than its length),
//! and with a relation term only its rows the term finds something for.
//! Like every iterator form, batching refuses a query whose relation term
//! reads what it writes (see
//! [`QueryState::iterable`](super::QueryState::iterable)).

use super::data::QueryData;
use super::filter::QueryFilter;
use super::state::{Matched, QueryState};
use crate::tick::ChangeWindow;
use crate::world::WorldCore;
use std::marker::PhantomData;

/// The batches of a query. Created by [`Query::iter_batched`](super::Query::iter_batched).
pub struct BatchedIter<'w, Q: QueryData, F: QueryFilter = ()> {
    world: &'w WorldCore,
    matched: std::slice::Iter<'w, Matched<Q, F>>,
    env: Q::Env<'w>,
    current: Option<(Q::Fetch, F::Fetch, usize)>,
    next_row: usize,
    batch: usize,
    window: ChangeWindow,
}

// SAFETY: the iterator reads the world's archetype list (`WorldCore` is
// `Sync`) and hands out batches of disjoint rows, whose items are `Send`; the
// fetches it holds point at the columns (and ticks) of those rows, and its
// `Env` only at the world (read through `&WorldCore`) and at related rows
// no item writes (the constructor checked).
unsafe impl<'w, Q: QueryData, F: QueryFilter> Send for BatchedIter<'w, Q, F> where Q::Item<'w>: Send {}

impl<'w, Q: QueryData, F: QueryFilter> BatchedIter<'w, Q, F> {
    /// Batches of at most `batch` rows (at least 1), seeing changes in `window`.
    ///
    /// # Safety
    /// The caller must hold the access `Q` and `F` describe for `'w`, as
    /// for [`QueryIter`](super::QueryIter).
    ///
    /// # Panics
    /// If a relation term of `Q` reads what `Q` writes
    /// ([`QueryState::iterable`]).
    pub(crate) unsafe fn new(
        world: &'w WorldCore,
        matched: &'w [Matched<Q, F>],
        batch: usize,
        window: ChangeWindow,
    ) -> Self {
        QueryState::<Q, F>::assert_iterable();
        BatchedIter {
            world,
            matched: matched.iter(),
            env: Q::env(world, window),
            current: None,
            next_row: 0,
            batch: batch.max(1),
            window,
        }
    }
}

impl<'w, Q: QueryData, F: QueryFilter> Iterator for BatchedIter<'w, Q, F> {
    type Item = Batch<'w, Q, F>;

    fn next(&mut self) -> Option<Batch<'w, Q, F>> {
        loop {
            if let Some((fetch, filter, len)) = self.current {
                if self.next_row < len {
                    let start = self.next_row;
                    let end = (start + self.batch).min(len);
                    self.next_row = end;
                    return Some(Batch {
                        env: self.env,
                        fetch,
                        filter,
                        row: start,
                        end,
                        window: self.window,
                        _world: PhantomData,
                    });
                }
            }
            let &(id, (state, filter)) = self.matched.next()?;
            let arch = self.world.archetypes().get(id);
            // SAFETY: the states were matched on `arch`.
            self.current =
                Some(unsafe { (Q::fetch(arch, state), F::fetch(arch, filter), arch.len()) });
            self.next_row = 0;
        }
    }
}

/// One batch: rows `row..end` of one archetype. An iterator over the items
/// of those that pass the query's filter.
pub struct Batch<'w, Q: QueryData, F: QueryFilter = ()> {
    env: Q::Env<'w>,
    fetch: Q::Fetch,
    filter: F::Fetch,
    row: usize,
    end: usize,
    window: ChangeWindow,
    _world: PhantomData<&'w WorldCore>,
}

// SAFETY: a batch hands out the items of its own rows only (disjoint from
// every other batch's), so moving it to another thread is moving those items,
// which are `Send`; its filter fetch only reads ticks the query may read; its
// `Env` (a copy of its iterator's) points at the world, which is `Sync`, and
// reads related rows that no batch writes.
unsafe impl<'w, Q: QueryData, F: QueryFilter> Send for Batch<'w, Q, F> where Q::Item<'w>: Send {}

impl<Q: QueryData, F: QueryFilter> Batch<'_, Q, F> {
    /// Rows left in the batch (under a change filter or with a relation
    /// term, an upper bound of the items left).
    pub fn len(&self) -> usize {
        self.end - self.row
    }

    /// Whether the batch has no rows left.
    pub fn is_empty(&self) -> bool {
        self.row == self.end
    }
}

impl<'w, Q: QueryData, F: QueryFilter> Iterator for Batch<'w, Q, F> {
    type Item = Q::Item<'w>;

    #[inline]
    fn next(&mut self) -> Option<Q::Item<'w>> {
        while self.row < self.end {
            let row = self.row;
            self.row += 1;
            // SAFETY: `row` is a live row of this batch; the creator held
            // the filter's read access.
            if !F::DENSE && !unsafe { F::row_passes(self.filter, row, self.window) } {
                continue;
            }
            // SAFETY: `row` is a live row of this batch, yielded once, and
            // `env` is of its world; the iterator's creator held the access
            // for `'w` and checked that no relation term reads what the
            // query writes.
            unsafe {
                let Some(item) = Q::try_item(&mut self.env, self.fetch, row) else {
                    continue;
                };
                Q::mark_written(self.fetch, row, 1, self.window.this_run);
                return Some(item);
            }
        }
        None
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let upper = self.len();
        let exact = F::DENSE && Q::EVERY_ROW;
        (if exact { upper } else { 0 }, Some(upper))
    }
}
