//! The loops of a [`QueryState`]: every form, sequential and parallel.
//!
//! Each loop walks the matched archetypes, fetching column pointers once per
//! archetype. Without change filters (`F::DENSE`) it visits every row: it
//! first stamps every row it will hand out as written, in one pass over the
//! stamps its plan gathered (one store per chunk, plus the row stamps of
//! components that keep them), then runs the closure down each archetype's
//! columns with nothing else between archetypes; a one-column query walks
//! its column as a slice ([`QueryData::for_each_row`]). Many small
//! archetypes cost little more than one long one of the same rows: the
//! frag_iter benchmark in BENCHMARKS.md compares the loop with a hand-written
//! one over the same columns. With change filters it asks the filter, chunk
//! by chunk, whether any row may pass, skipping the chunk otherwise without
//! touching its rows, and then finds the runs of consecutive passing rows in
//! the chunks it keeps ([`passing_runs`]); each run is stamped and handed
//! out like a small archetype. `for_each_chunk` hands out one slice per
//! chunk, or per run under a change filter, so its slices are exactly the
//! rows that pass.
//!
//! The parallel forms cut the work into pieces of at most one chunk and
//! spread them over the current rayon pool (the schedule's, inside a
//! system); inside a tiny segment or a one-thread schedule they run in place.

use super::data::{QueryData, ReadOnlyQueryData};
use super::filter::QueryFilter;
use super::iter::QueryIter;
use super::state::{Fetched, FetchedOf, QueryState};
use crate::entity::Entity;
use crate::error::EntityError;
use crate::storage::{Archetype, ArchetypeId};
use crate::tick::ChangeWindow;
use crate::world::WorldCore;
use rayon::prelude::*;

/// Fewest rows `par_for_each` hands one task.
const PAR_MIN_ROWS: usize = 16;

/// Calls `body(a, b)` for each maximal run `a..b` of rows within
/// `start..end` of an archetype with `chunk_rows` rows per chunk that pass
/// filter `F` in `window`, in row order. Chunks whose ticks fail are skipped
/// whole.
///
/// # Safety
/// `filter` must be `F`'s fetch for that archetype; the rows must be live;
/// the caller must hold the filter's read access.
#[inline]
pub(crate) unsafe fn passing_runs<F: QueryFilter>(
    chunk_rows: usize,
    filter: F::Fetch,
    window: ChangeWindow,
    start: usize,
    end: usize,
    mut body: impl FnMut(usize, usize),
) {
    if F::DENSE {
        if start < end {
            body(start, end);
        }
        return;
    }
    let rows = chunk_rows;
    let mut row = start;
    while row < end {
        let chunk = row / rows;
        let chunk_end = ((chunk + 1) * rows).min(end);
        // SAFETY: the chunk holds live rows; forwarded contract.
        if !unsafe { F::chunk_passes(filter, chunk, window) } {
            row = chunk_end;
            continue;
        }
        while row < chunk_end {
            // SAFETY: the rows are live and in one chunk; forwarded contract.
            let run = unsafe { F::first_passing(filter, row, chunk_end, window) };
            if run == chunk_end {
                break;
            }
            // SAFETY: as above.
            row = unsafe { F::first_failing(filter, run, chunk_end, window) };
            body(run, row);
        }
        row = chunk_end;
    }
}

impl<Q: QueryData, F: QueryFilter> QueryState<Q, F> {
    /// Iterates read-only over a shared world.
    pub fn iter<'w>(&'w mut self, world: &'w WorldCore) -> QueryIter<'w, Q, F>
    where
        Q: ReadOnlyQueryData,
    {
        self.update(world);
        let window = self.direct_window(world);
        // SAFETY: the query only reads, and `&WorldCore` keeps writers away.
        unsafe { QueryIter::new(world, &self.cache.matched, window) }
    }

    /// Iterates, handing out mutable access.
    pub fn iter_mut<'w>(&'w mut self, world: &'w mut WorldCore) -> QueryIter<'w, Q, F> {
        let window = self.write_window(world);
        // SAFETY: `&mut WorldCore` gives this query exclusive access.
        unsafe { QueryIter::new(world, &self.cache.matched, window) }
    }

    /// Calls `f` with every matching entity's item.
    #[inline]
    pub fn for_each(&mut self, world: &mut WorldCore, f: impl FnMut(Q::Item<'_>)) {
        let window = self.write_window(world);
        // SAFETY: `&mut WorldCore` gives this query exclusive access.
        unsafe { self.for_each_unchecked(world, window, f) }
    }

    /// Calls `f` with every matching chunk's slices, e.g. `(&mut [P], &[V])`.
    #[inline]
    pub fn for_each_chunk(&mut self, world: &mut WorldCore, f: impl FnMut(Q::Slice<'_>)) {
        let window = self.write_window(world);
        // SAFETY: `&mut WorldCore` gives this query exclusive access.
        unsafe { self.for_each_chunk_unchecked(world, window, f) }
    }

    /// [`QueryState::for_each`] on a shared world, for read-only queries.
    pub fn for_each_ref(&mut self, world: &WorldCore, f: impl FnMut(Q::Item<'_>))
    where
        Q: ReadOnlyQueryData,
    {
        self.update(world);
        let window = self.direct_window(world);
        // SAFETY: the query only reads, and `&WorldCore` prevents writers.
        unsafe { self.for_each_unchecked(world, window, f) }
    }

    /// `for_each` through a shared world, seeing changes in `window` and
    /// stamping writes with `window.this_run`: one loop over each matched
    /// archetype's rows (or passing runs), straight down its columns.
    ///
    /// # Safety
    /// No other access to the components this query writes (or reads, if it
    /// writes them elsewhere) may happen during the call: the caller must hold
    /// the query's [`Access`](super::Access), as the schedule does.
    #[inline]
    pub unsafe fn for_each_unchecked(
        &mut self,
        world: &WorldCore,
        window: ChangeWindow,
        mut f: impl FnMut(Q::Item<'_>),
    ) {
        // SAFETY: forwarded contract.
        let plan = unsafe { self.stamped_plan(world, window) };
        if F::DENSE {
            // Stamped: run down the columns with nothing else between
            // archetypes.
            for &Fetched {
                fetch: (fetch, _),
                len,
                ..
            } in plan
            {
                // SAFETY: the plan is current for `world`, so the fetches
                // address live rows `0..len`; each row is handed out once;
                // the caller holds the access.
                unsafe { Q::for_each_row(fetch, len, &mut f) };
            }
            return;
        }
        for &Fetched {
            fetch: (fetch, filter),
            len,
            chunk_rows,
        } in plan
        {
            // SAFETY: the plan is current for `world` (`stamped_plan`), so
            // the fetches address live rows `0..len`; each is handed out once;
            // the caller holds the access.
            unsafe {
                passing_runs::<F>(chunk_rows, filter, window, 0, len, |start, end| {
                    Q::mark_written(fetch, start, end - start, window.this_run);
                    for row in start..end {
                        f(Q::item(fetch, row));
                    }
                });
            }
        }
    }

    /// The plan for `world` (see [`QueryState::planned`]). Without a change
    /// filter every row of it is first stamped as written at
    /// `window.this_run`, in one pass; under one, nothing is (the loops stamp
    /// the runs that pass).
    ///
    /// # Safety
    /// As [`QueryState::for_each_unchecked`]: the caller hands out the rows.
    #[inline]
    unsafe fn stamped_plan(
        &mut self,
        world: &WorldCore,
        window: ChangeWindow,
    ) -> &[FetchedOf<Q, F>] {
        let (plan, stamps) = self.planned(world);
        if F::DENSE {
            // SAFETY: the plan is current for `world` (`planned`), so the
            // stamps address live rows; the caller holds the access.
            unsafe { stamps.stamp_changed(window.this_run) };
        }
        plan
    }

    /// `for_each_chunk` through a shared world: one call per chunk, or, under
    /// a change filter, per run of passing rows within a chunk.
    ///
    /// # Safety
    /// As [`QueryState::for_each_unchecked`].
    #[inline]
    pub unsafe fn for_each_chunk_unchecked(
        &mut self,
        world: &WorldCore,
        window: ChangeWindow,
        mut f: impl FnMut(Q::Slice<'_>),
    ) {
        // SAFETY: forwarded contract.
        let plan = unsafe { self.stamped_plan(world, window) };
        for &Fetched {
            fetch: (fetch, filter),
            len,
            chunk_rows,
        } in plan
        {
            // The plan is current for `world` (`stamped_plan`), so the
            // fetches address live rows `0..len`.
            if F::DENSE {
                // Stamped above: hand out one slice per chunk with nothing
                // else between them.
                let mut start = 0;
                while start < len {
                    let end = (start + chunk_rows).min(len);
                    // SAFETY: live rows, each slice handed out once; the
                    // caller holds the access.
                    f(unsafe { Q::slice(fetch, start, end - start) });
                    start = end;
                }
                continue;
            }
            let mut start = 0;
            while start < len {
                let end = (start + chunk_rows).min(len);
                // SAFETY: live rows, each run handed out once; the caller
                // holds the access.
                unsafe {
                    passing_runs::<F>(chunk_rows, filter, window, start, end, |a, b| {
                        Q::mark_written(fetch, a, b - a, window.this_run);
                        f(Q::slice(fetch, a, b - a));
                    });
                }
                start = end;
            }
        }
    }

    /// The item of one entity, read-only. A change filter checks the
    /// entity's stamps against the window since the query's last use,
    /// without counting as a use.
    pub fn get<'w>(
        &mut self,
        world: &'w WorldCore,
        entity: Entity,
    ) -> Result<Q::Item<'w>, EntityError>
    where
        Q: ReadOnlyQueryData,
    {
        let window = self.peek_window(world);
        // SAFETY: read-only query on a shared world.
        unsafe { self.get_unchecked(world, window, entity) }
    }

    /// The item of one entity, with mutable access (stamped as written).
    pub fn get_mut<'w>(
        &mut self,
        world: &'w mut WorldCore,
        entity: Entity,
    ) -> Result<Q::Item<'w>, EntityError> {
        self.update(world);
        world.write_tick();
        let window = self.peek_window(world);
        // SAFETY: `&mut WorldCore` gives exclusive access for `'w`.
        unsafe { self.get_unchecked(world, window, entity) }
    }

    /// The window since the last use, up to now, without moving the clock.
    fn peek_window(&mut self, world: &WorldCore) -> ChangeWindow {
        ChangeWindow {
            last_run: self.cache.last_run,
            this_run: world.change_tick(),
        }
    }

    /// The item of one entity through a shared world.
    ///
    /// # Safety
    /// As [`QueryState::for_each_unchecked`], for as long as the item lives.
    pub unsafe fn get_unchecked<'w>(
        &mut self,
        world: &'w WorldCore,
        window: ChangeWindow,
        entity: Entity,
    ) -> Result<Q::Item<'w>, EntityError> {
        self.update(world);
        let (archetype, row) = world
            .entities
            .locate(entity)
            .ok_or(EntityError::NoSuchEntity(entity))?;
        let Some(k) = self.slot_of(archetype) else {
            return Err(EntityError::MissingComponent {
                entity,
                component: std::any::type_name::<Q>(),
            });
        };
        let (id, (state, filter)) = self.cache.matched[k];
        let arch = world.archetypes().get(id);
        // SAFETY: the states match `arch`; the located row is live; the
        // caller holds the access.
        unsafe {
            if !F::DENSE && !F::row_passes(F::fetch(arch, filter), row, window) {
                return Err(EntityError::FilteredOut {
                    entity,
                    filter: std::any::type_name::<F>(),
                });
            }
            let fetch = Q::fetch(arch, state);
            Q::mark_written(fetch, row, 1, window.this_run);
            Ok(Q::item(fetch, row))
        }
    }

    /// Like [`QueryState::for_each`], split by chunk across the current rayon pool.
    /// Use `ThreadPool::install` to pick the thread count.
    pub fn par_for_each(&mut self, world: &mut WorldCore, f: impl Fn(Q::Item<'_>) + Send + Sync)
    where
        for<'w> Q::Item<'w>: Send,
    {
        let window = self.write_window(world);
        // SAFETY: `&mut WorldCore` gives exclusive access; rows go to one thread each.
        unsafe { self.par_for_each_unchecked(world, window, f) }
    }

    /// Like [`QueryState::for_each_chunk`], split by chunk across the current rayon pool.
    pub fn par_for_each_chunk(
        &mut self,
        world: &mut WorldCore,
        f: impl Fn(Q::Slice<'_>) + Send + Sync,
    ) where
        for<'w> Q::Slice<'w>: Send,
    {
        let window = self.write_window(world);
        // SAFETY: `&mut WorldCore` gives exclusive access; chunks go to one thread each.
        unsafe { self.par_for_each_chunk_unchecked(world, window, f) }
    }

    /// `par_for_each` through a shared world. Rows are cut into pieces of
    /// at most one chunk, small enough that every worker gets several, so a
    /// few heavy chunks do not leave threads idle.
    ///
    /// # Safety
    /// As [`QueryState::for_each_unchecked`].
    pub unsafe fn par_for_each_unchecked(
        &mut self,
        world: &WorldCore,
        window: ChangeWindow,
        f: impl Fn(Q::Item<'_>) + Send + Sync,
    ) where
        for<'w> Q::Item<'w>: Send,
    {
        if crate::schedule::sequential_here() {
            // SAFETY: forwarded contract; one thread visits every row once.
            return unsafe { self.for_each_unchecked(world, window, f) };
        }
        self.update(world);
        let matched = &self.cache.matched;
        crate::schedule::on_schedule_pool(|| {
            let archetypes = world.archetypes();
            let total: usize = matched
                .iter()
                .map(|&(id, _)| archetypes.get(id).len())
                .sum();
            // About eight pieces per worker, but never pieces so small that the
            // task overhead shows.
            let piece = total
                .div_ceil(rayon::current_num_threads() * 8)
                .max(PAR_MIN_ROWS);
            let mut work: Vec<(ArchetypeId, _, u32, u32)> = Vec::new();
            for &(id, states) in matched {
                let arch = archetypes.get(id);
                // Pieces never cross a chunk: each is at most one chunk long.
                let piece = piece.min(arch.chunk_rows());
                let len = arch.len();
                let mut start = 0;
                while start < len {
                    let end = (start + piece).min(len);
                    work.push((id, states, start as u32, end as u32));
                    start = end;
                }
            }
            work.into_par_iter()
                .for_each(|(id, (state, filter), start, end)| {
                    let arch = archetypes.get(id);
                    // SAFETY: the states were matched on `arch`; the pieces
                    // are disjoint, so each live row's item is created (and
                    // stamped) on exactly one thread; the caller holds the
                    // access.
                    unsafe {
                        let fetch = Q::fetch(arch, state);
                        let filter = F::fetch(arch, filter);
                        passing_runs::<F>(
                            arch.chunk_rows(),
                            filter,
                            window,
                            start as usize,
                            end as usize,
                            |a, b| {
                                Q::mark_written(fetch, a, b - a, window.this_run);
                                for row in a..b {
                                    f(Q::item(fetch, row));
                                }
                            },
                        );
                    }
                });
        })
    }

    /// `par_for_each_chunk` through a shared world.
    ///
    /// # Safety
    /// As [`QueryState::for_each_unchecked`].
    pub unsafe fn par_for_each_chunk_unchecked(
        &mut self,
        world: &WorldCore,
        window: ChangeWindow,
        f: impl Fn(Q::Slice<'_>) + Send + Sync,
    ) where
        for<'w> Q::Slice<'w>: Send,
    {
        self.update(world);
        let body = |arch: &Archetype, (state, filter): (Q::State, F::State), chunk: usize| {
            let (start, len) = arch.chunk_rows_of(chunk);
            // SAFETY: the states were matched on `arch`; each chunk goes to
            // one thread, and its runs are disjoint; the caller holds the
            // access.
            unsafe {
                let fetch = Q::fetch(arch, state);
                let filter = F::fetch(arch, filter);
                passing_runs::<F>(
                    arch.chunk_rows(),
                    filter,
                    window,
                    start,
                    start + len,
                    |a, b| {
                        Q::mark_written(fetch, a, b - a, window.this_run);
                        f(Q::slice(fetch, a, b - a));
                    },
                );
            }
        };
        let archetypes = world.archetypes();
        if crate::schedule::sequential_here() {
            for &(id, states) in &self.cache.matched {
                let arch = archetypes.get(id);
                for chunk in 0..arch.chunk_count() {
                    body(arch, states, chunk);
                }
            }
            return;
        }
        let work: Vec<(ArchetypeId, _, usize)> = self
            .cache
            .matched
            .iter()
            .flat_map(|&(id, states)| {
                (0..archetypes.get(id).chunk_count()).map(move |c| (id, states, c))
            })
            .collect();
        crate::schedule::on_schedule_pool(|| {
            work.into_par_iter()
                .for_each(|(id, states, chunk)| body(archetypes.get(id), states, chunk))
        });
    }
}
