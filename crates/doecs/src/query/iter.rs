//! The lazy iterator over a query's items.
//!
//! [`QueryIter`] yields one item per passing row, archetype by archetype.
//! Under a change filter it checks each chunk's ticks when it enters the
//! chunk, jumping over chunks that fail, and each row's stamps in the
//! chunks it keeps. It stamps every row whose mutable item it yields as
//! written (one row at a time, since the caller may stop early). Rows a
//! relation term finds nothing for are passed over, unstamped.
//!
//! Its items may all be alive at once (collected into a `Vec`), so a query
//! whose relation term reads what it writes may not iterate: [`QueryIter`]'s
//! constructor refuses it (see
//! [`QueryState::iterable`](super::QueryState::iterable)).

use super::data::{EveryRowData, QueryData};
use super::filter::{ArchetypeFilter, QueryFilter};
use super::state::{Matched, QueryState};
use crate::tick::ChangeWindow;
use crate::world::WorldCore;

/// Iterator over a query's items. Created by [`QueryState::iter`](super::QueryState::iter)
/// and friends.
pub struct QueryIter<'w, Q: QueryData, F: QueryFilter = ()> {
    world: &'w WorldCore,
    matched: std::slice::Iter<'w, Matched<Q, F>>,
    env: Q::Env<'w>,
    /// The current archetype's fetches and log2 of its rows per chunk.
    current: Option<(Q::Fetch, F::Fetch, u32)>,
    row: usize,
    len: usize,
    window: ChangeWindow,
}

impl<'w, Q: QueryData, F: QueryFilter> QueryIter<'w, Q, F> {
    /// An iterator over `matched`, seeing changes in `window`.
    ///
    /// # Safety
    /// The caller must hold the query's access for `'w`; `matched` must be
    /// a cache of `world`.
    ///
    /// # Panics
    /// If a relation term of `Q` reads what `Q` writes
    /// ([`QueryState::iterable`]).
    pub(crate) unsafe fn new(
        world: &'w WorldCore,
        matched: &'w [Matched<Q, F>],
        window: ChangeWindow,
    ) -> Self {
        QueryState::<Q, F>::assert_iterable();
        QueryIter {
            world,
            matched: matched.iter(),
            env: Q::env(world, window),
            current: None,
            row: 0,
            len: 0,
            window,
        }
    }
}

impl<'w, Q: QueryData, F: QueryFilter> Iterator for QueryIter<'w, Q, F> {
    type Item = Q::Item<'w>;

    /// Exact where no filter skips rows and every row has an item (see
    /// [`ExactSizeIterator`] below); else an upper bound.
    fn size_hint(&self) -> (usize, Option<usize>) {
        let archetypes = self.world.archetypes();
        let rest: usize = self
            .matched
            .clone()
            .map(|(id, _)| archetypes.get(*id).len())
            .sum();
        let upper = self.len - self.row.min(self.len) + rest;
        if F::DENSE && Q::EVERY_ROW {
            (upper, Some(upper))
        } else {
            (0, Some(upper))
        }
    }

    #[inline]
    fn next(&mut self) -> Option<Q::Item<'w>> {
        loop {
            if self.row < self.len {
                let (fetch, filter, shift) = self.current.expect("set with len");
                let row = self.row;
                if !F::DENSE {
                    let chunk = row >> shift;
                    let chunk_start = row == chunk << shift;
                    // SAFETY: the row is live, so its chunk is; the
                    // iterator's creator held the filter's read access.
                    if chunk_start && !unsafe { F::chunk_passes(filter, chunk, self.window) } {
                        self.row = (chunk + 1) << shift;
                        continue;
                    }
                    // SAFETY: as above.
                    if !unsafe { F::row_passes(filter, row, self.window) } {
                        self.row += 1;
                        continue;
                    }
                }
                self.row += 1;
                // SAFETY: `row < len` is live and `env` is of its world;
                // each row is yielded once; the iterator's constructor held
                // the access for `'w`, and checked that no relation term
                // reads what the query writes, so no two items alias.
                unsafe {
                    let Some(item) = Q::try_item(&mut self.env, fetch, row) else {
                        continue;
                    };
                    Q::mark_written(fetch, row, 1, self.window.this_run);
                    return Some(item);
                }
            }
            let &(id, (state, filter)) = self.matched.next()?;
            let arch = self.world.archetypes().get(id);
            // SAFETY: the states were matched on `arch`.
            self.current = Some(unsafe {
                (
                    Q::fetch(arch, state),
                    F::fetch(arch, filter),
                    arch.shape().shift(),
                )
            });
            self.row = 0;
            self.len = arch.len();
        }
    }
}

/// A query whose filter decides by archetype and whose data has an item
/// for every row yields exactly its matched rows.
impl<Q: EveryRowData, F: ArchetypeFilter> ExactSizeIterator for QueryIter<'_, Q, F> {}
