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
//! The parallel forms spread the work over the current rayon pool (the
//! schedule's, inside a system): `par_for_each` as row ranges that rayon
//! halves as threads go idle, `par_for_each_chunk` chunk by chunk. Inside
//! an inline segment or a one-thread schedule they run in place.
//!
//! Relation terms: each loop makes the data's `Env` once (each piece of a
//! parallel loop its own), and hands out only the rows that have an item
//! (see [`QueryData::EVERY_ROW`]). The loops that stamp whole runs before
//! handing them out (`for_each`, the chunk and parallel forms) stamp the
//! rows a relation term skips too; the iterators and `get` stamp only the
//! rows they hand out. A query whose relation term reads what it writes
//! runs only in the callback loops, `for_each` and `get`: its chunk and
//! parallel forms (and its iterators, in `iter`) refuse it with
//! [`AliasError::RelatedWrite`](super::AliasError::RelatedWrite), since
//! their items (a chunk's slices, another thread's rows) may hold a row
//! mutably that another item reads as a relative.

use super::data::{items_of_rows, QueryData, ReadOnlyQueryData};
use super::filter::QueryFilter;
use super::iter::QueryIter;
use super::state::{Fetched, FetchedOf, QueryState};
use crate::entity::Entity;
use crate::error::EntityError;
use crate::storage::{Archetype, ArchetypeId};
use crate::tick::ChangeWindow;
use crate::world::WorldCore;
use rayon::prelude::*;
use std::ptr::NonNull;

/// Calls `body(fetch, a, b)` for each run `a..b` of rows within
/// `start..end` of `arch` that pass filter `F`, each stamped as written
/// first: the work of one piece of a parallel loop, row by row or slice by
/// slice.
///
/// # Safety
/// `states` were matched on `arch`; rows `start..end` are live and no
/// other piece hands out any of them (chunk stamps are atomic, row stamps
/// are per row, so disjoint pieces may run on different threads); the
/// caller holds the query's access.
#[inline(always)]
unsafe fn written_runs<Q: QueryData, F: QueryFilter>(
    arch: &Archetype,
    (state, filter): (Q::State, F::State),
    window: ChangeWindow,
    start: usize,
    end: usize,
    mut body: impl FnMut(Q::Fetch, usize, usize),
) {
    // SAFETY: the caller's contract: matched states, live rows handed out
    // by this piece alone, and the access held.
    unsafe {
        let fetch = Q::fetch(arch, state);
        let filter = F::fetch(arch, filter);
        passing_runs::<F>(arch.chunk_rows(), filter, window, start, end, |a, b| {
            Q::mark_written(fetch, a, b - a, window.this_run);
            body(fetch, a, b);
        });
    }
}

/// Rows `start..end` of one matched archetype, with its query states.
#[derive(Clone, Copy)]
struct RowRange<S> {
    archetype: ArchetypeId,
    states: S,
    /// The archetype's rows per chunk.
    chunk_rows: u32,
    start: u32,
    end: u32,
}

/// A share of a parallel loop's rows: whole archetypes' ranges, or part
/// of one range once a share is down to one.
#[derive(Clone, Copy)]
enum Share<'a, S> {
    Ranges(&'a [RowRange<S>]),
    Rows(RowRange<S>),
}

impl<S: Copy> Share<'_, S> {
    /// Halves the share, for `rayon::iter::split`: a list of ranges in
    /// two lists; one range at the chunk boundary nearest its middle, so
    /// the chunk stays the unit of parallel work, or, inside one chunk, in
    /// two halves of rows; a single row stays whole.
    fn halve(self) -> (Self, Option<Self>) {
        match self {
            Share::Ranges(ranges) if ranges.len() > 1 => {
                let (left, right) = ranges.split_at(ranges.len() / 2);
                (Share::Ranges(left), Some(Share::Ranges(right)))
            }
            Share::Ranges(&[range]) => Share::Rows(range).halve(),
            Share::Rows(range) if range.end - range.start > 1 => {
                let (first, last) = (
                    range.start / range.chunk_rows,
                    (range.end - 1) / range.chunk_rows,
                );
                let mid = if first == last {
                    range.start + (range.end - range.start) / 2
                } else {
                    // A boundary strictly inside the range: chunk
                    // `first + 1 ..= last` starts after `start`, before `end`.
                    (first + last).div_ceil(2) * range.chunk_rows
                };
                (
                    Share::Rows(RowRange { end: mid, ..range }),
                    Some(Share::Rows(RowRange {
                        start: mid,
                        ..range
                    })),
                )
            }
            unsplittable => (unsplittable, None),
        }
    }
}

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
    ///
    /// # Panics
    /// If a relation term reads what the query writes (see
    /// [`QueryState::iterable`]); [`QueryState::try_iter_mut`] returns the
    /// error instead.
    pub fn iter_mut<'w>(&'w mut self, world: &'w mut WorldCore) -> QueryIter<'w, Q, F> {
        let window = self.write_window(world);
        // SAFETY: `&mut WorldCore` gives this query exclusive access.
        unsafe { QueryIter::new(world, &self.cache.matched, window) }
    }

    /// [`QueryState::iter_mut`], or the reason the query may not iterate.
    ///
    /// # Errors
    /// [`AliasError::RelatedWrite`](super::AliasError::RelatedWrite) if a
    /// relation term reads what the query writes.
    pub fn try_iter_mut<'w>(
        &'w mut self,
        world: &'w mut WorldCore,
    ) -> Result<QueryIter<'w, Q, F>, super::AliasError> {
        Self::iterable()?;
        Ok(self.iter_mut(world))
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
    pub(crate) unsafe fn for_each_unchecked(
        &mut self,
        world: &WorldCore,
        window: ChangeWindow,
        mut f: impl FnMut(Q::Item<'_>),
    ) {
        let mut env = Q::env(world, window);
        if F::DENSE {
            if let Some(entities) = Q::sparse_driver(&env) {
                if let Some(fetch) = Q::fetch_entities(NonNull::from(entities).cast()) {
                    // SAFETY: forwarded contract; `fetch` and `entities`
                    // are of `env`'s world.
                    unsafe { self.for_each_driven(world, &mut env, fetch, entities, &mut f) };
                    return;
                }
            }
        }
        // SAFETY: forwarded contract.
        let plan = unsafe { self.stamped_plan(world, window) };
        // The items cannot outlive their call of `f` (it takes them for
        // any lifetime), so at most one is alive at a time: a relation
        // term's read of another row never meets that row's own item, even
        // where the query writes what the term reads (its `access` keeps
        // the term off the visited row itself).
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
                // address live rows `0..len`, and `env` is of `world`; each
                // row is handed out once; the caller holds the access.
                unsafe { Q::for_each_row(&mut env, fetch, len, &mut f) };
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
                    items_of_rows::<Q>(&mut env, fetch, start..end, &mut f);
                });
            }
        }
    }

    /// `for_each` of data made only of sparse terms (and [`Entity`](crate::Entity)),
    /// walking the smallest filtering term's set instead of the
    /// archetypes: its entities are the rows of `fetch` (see
    /// [`QueryData::sparse_driver`]). An entity whose archetype the query
    /// does not match (a hidden tag, a filter) is skipped; where every
    /// archetype matches, nothing is looked up.
    ///
    /// # Safety
    /// As [`QueryState::for_each_unchecked`]; `entities` is the driver of
    /// `env` (a set of `world`'s) and `fetch` comes from
    /// [`QueryData::fetch_entities`] at its start.
    unsafe fn for_each_driven<'w>(
        &mut self,
        world: &'w WorldCore,
        env: &mut Q::Env<'w>,
        fetch: Q::Fetch,
        entities: &'w [crate::entity::Entity],
        f: &mut impl FnMut(Q::Item<'w>),
    ) {
        self.update(world);
        if self.matched_archetypes() == world.archetypes().len() {
            // SAFETY: forwarded contract: the rows are the driver's.
            unsafe { Q::for_each_driven_row(env, fetch, entities.len(), f) };
            return;
        }
        for (row, &entity) in entities.iter().enumerate() {
            // Every entity in a set has a row (world invariant).
            let Some(at) = world.entities.location(entity) else {
                continue;
            };
            if self.slot_of(at.archetype.index()).is_none() {
                continue;
            }
            // SAFETY: `row` indexes the live entities `fetch` walks; each
            // is handed out once, and the caller holds the access.
            if let Some(item) = unsafe { Q::try_item(env, fetch, row) } {
                f(item);
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
    ///
    /// # Panics
    /// If a relation term reads what the query writes (see
    /// [`QueryState::iterable`]).
    #[inline]
    pub(crate) unsafe fn for_each_chunk_unchecked(
        &mut self,
        world: &WorldCore,
        window: ChangeWindow,
        mut f: impl FnMut(Q::Slice<'_>),
    ) {
        // A chunk's slice of a written column may cover a row a relation
        // term of the same chunk reads.
        Self::assert_iterable();
        // SAFETY: forwarded contract.
        let plan = unsafe { self.stamped_plan(world, window) };
        let mut env = Q::env(world, window);
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
                    f(unsafe { Q::slice(&mut env, fetch, start, end - start) });
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
                        f(Q::slice(&mut env, fetch, a, b - a));
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

    /// The item of one entity through a shared world. An entity whose
    /// relation term finds nothing (no parent, say) is
    /// [`EntityError::MissingComponent`], as one whose archetype does not
    /// match.
    ///
    /// # Safety
    /// For as long as the item lives, no other access to the components
    /// this query writes (or reads, if it writes them elsewhere) may
    /// happen: the caller must hold the query's [`Access`](super::Access),
    /// as the schedule does; and where a relation term reads what the
    /// query writes (see [`QueryState::iterable`]), no other item of this
    /// query may be alive meanwhile.
    pub unsafe fn get_unchecked<'w>(
        &mut self,
        world: &'w WorldCore,
        window: ChangeWindow,
        entity: Entity,
    ) -> Result<Q::Item<'w>, EntityError> {
        self.update(world);
        // SAFETY: forwarded contract; just updated.
        unsafe { self.get_matched::<Q>(world, window, entity) }
    }

    /// The item of `entity` as data `D` (the query's own, or its read-only
    /// form, which match with the same state), from the archetypes matched
    /// so far (no update).
    ///
    /// # Safety
    /// As [`QueryState::get_unchecked`], for `D`'s access; and the state
    /// must be up to date with `world`.
    pub(crate) unsafe fn get_matched<'w, D: QueryData<State = Q::State>>(
        &self,
        world: &'w WorldCore,
        window: ChangeWindow,
        entity: Entity,
    ) -> Result<D::Item<'w>, EntityError> {
        let (archetype, row) = world
            .entities
            .locate(entity)
            .ok_or(EntityError::NoSuchEntity(entity))?;
        let missing = EntityError::MissingComponent {
            entity,
            component: std::any::type_name::<Q>(),
        };
        let Some(k) = self.slot_of(archetype) else {
            return Err(missing);
        };
        let (id, (state, filter)) = self.cache.matched[k];
        let arch = world.archetypes().get(id);
        // SAFETY: the states match `arch`; the located row is live and
        // `env` is of its world; the caller holds the access.
        unsafe {
            if !F::DENSE && !F::row_passes(F::fetch(arch, filter), row, window) {
                return Err(EntityError::FilteredOut {
                    entity,
                    filter: std::any::type_name::<F>(),
                });
            }
            let fetch = D::fetch(arch, state);
            let item = D::try_item(&mut D::env(world, window), fetch, row).ok_or(missing)?;
            D::mark_written(fetch, row, 1, window.this_run);
            Ok(item)
        }
    }

    /// Like [`QueryState::for_each`], split across the current rayon pool
    /// (at chunk boundaries, and within a chunk once a thread's share is one
    /// chunk).
    /// Use `ThreadPool::install` to pick the thread count.
    ///
    /// # Panics
    /// If a relation term reads what the query writes (see
    /// [`QueryState::iterable`]): one thread would read a relative's row
    /// while another writes it.
    pub fn par_for_each(&mut self, world: &mut WorldCore, f: impl Fn(Q::Item<'_>) + Send + Sync)
    where
        for<'w> Q::Item<'w>: Send,
    {
        let window = self.write_window(world);
        // SAFETY: `&mut WorldCore` gives exclusive access; rows go to one thread each.
        unsafe { self.par_for_each_unchecked(world, window, f) }
    }

    /// Like [`QueryState::for_each_chunk`], split by chunk across the current rayon pool.
    ///
    /// # Panics
    /// As [`QueryState::par_for_each`].
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

    /// `par_for_each` through a shared world. The matched archetypes' rows
    /// are one share, which rayon halves as it hands work to idle
    /// threads (its adaptive splitting, as in its own parallel iterators):
    /// at chunk boundaries while a share spans several chunks, then down to
    /// single rows. Heavy rows spread evenly over every thread, while a
    /// light loop is split about once per thread.
    ///
    /// # Safety
    /// As [`QueryState::for_each_unchecked`].
    ///
    /// # Panics
    /// As [`QueryState::par_for_each`].
    pub(crate) unsafe fn par_for_each_unchecked(
        &mut self,
        world: &WorldCore,
        window: ChangeWindow,
        f: impl Fn(Q::Item<'_>) + Send + Sync,
    ) where
        for<'w> Q::Item<'w>: Send,
    {
        // Refused even where it would run in place, so that whether a
        // loop runs depends on the query, not on the thread it runs on.
        Self::assert_iterable();
        if crate::parallel::sequential_here() {
            // SAFETY: forwarded contract; one thread visits every row once.
            return unsafe { self.for_each_unchecked(world, window, f) };
        }
        self.update(world);
        let archetypes = world.archetypes();
        let work: Vec<RowRange<_>> = self
            .cache
            .matched
            .iter()
            .filter_map(|&(id, states)| {
                let arch = archetypes.get(id);
                let len = arch.len() as u32;
                (len > 0).then_some(RowRange {
                    archetype: id,
                    states,
                    chunk_rows: arch.chunk_rows() as u32,
                    start: 0,
                    end: len,
                })
            })
            .collect();
        let run = |range: RowRange<(Q::State, F::State)>| {
            // Each piece its own `Env` (a relation term's memo of the
            // archetype it last reached), made on its own thread.
            let mut env = Q::env(world, window);
            // SAFETY: the states were matched on the range's archetype; the
            // shares are disjoint ranges of live rows, so each row's item
            // is created (and stamped) by one piece; a relation term reads
            // only what no piece writes (`assert_iterable`); the caller
            // holds the access.
            unsafe {
                written_runs::<Q, F>(
                    archetypes.get(range.archetype),
                    range.states,
                    window,
                    range.start as usize,
                    range.end as usize,
                    |fetch, a, b| items_of_rows::<Q>(&mut env, fetch, a..b, &mut &f),
                );
            }
        };
        crate::parallel::on_schedule_pool(|| {
            rayon::iter::split(Share::Ranges(&work), Share::halve).for_each(|share| match share {
                Share::Ranges(ranges) => ranges.iter().copied().for_each(run),
                Share::Rows(range) => run(range),
            });
        })
    }

    /// `par_for_each_chunk` through a shared world.
    ///
    /// # Safety
    /// As [`QueryState::for_each_unchecked`].
    ///
    /// # Panics
    /// As [`QueryState::par_for_each`].
    pub(crate) unsafe fn par_for_each_chunk_unchecked(
        &mut self,
        world: &WorldCore,
        window: ChangeWindow,
        f: impl Fn(Q::Slice<'_>) + Send + Sync,
    ) where
        for<'w> Q::Slice<'w>: Send,
    {
        Self::assert_iterable();
        self.update(world);
        let body = |arch: &Archetype, states: (Q::State, F::State), chunk: usize| {
            let (start, len) = arch.chunk_rows_of(chunk);
            let mut env = Q::env(world, window);
            // SAFETY: the states were matched on `arch`; each chunk goes to
            // one piece; a relation term reads only what no piece writes
            // (`assert_iterable`); the caller holds the access.
            unsafe {
                written_runs::<Q, F>(arch, states, window, start, start + len, |fetch, a, b| {
                    f(Q::slice(&mut env, fetch, a, b - a));
                });
            }
        };
        let archetypes = world.archetypes();
        if crate::parallel::sequential_here() {
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
        crate::parallel::on_schedule_pool(|| {
            work.into_par_iter()
                .for_each(|(id, states, chunk)| body(archetypes.get(id), states, chunk))
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(archetype: usize, start: u32, end: u32) -> RowRange<()> {
        RowRange {
            archetype: ArchetypeId::from_index(archetype),
            states: (),
            chunk_rows: 8,
            start,
            end,
        }
    }

    /// Splits `share` as far as it goes, collecting the leaves' rows, and
    /// checks that every split of a range spanning several chunks falls on
    /// a chunk boundary.
    fn leaves(share: Share<'_, ()>, out: &mut Vec<(usize, u32, u32)>) {
        let (left, right) = share.halve();
        match right {
            None => match left {
                Share::Ranges(ranges) => {
                    assert!(ranges.len() <= 1, "a list of several ranges splits");
                    out.extend(ranges.iter().map(|r| (r.archetype.index(), r.start, r.end)));
                }
                Share::Rows(r) => {
                    assert_eq!(r.end - r.start, 1, "only single rows stay whole");
                    out.push((r.archetype.index(), r.start, r.end));
                }
            },
            Some(right) => {
                if let (Share::Rows(l), Share::Rows(r)) = (left, right) {
                    assert_eq!(l.end, r.start, "halves meet");
                    let one_chunk = l.start / 8 == (r.end - 1) / 8;
                    assert!(
                        one_chunk || l.end % 8 == 0,
                        "split at {} inside a chunk",
                        l.end
                    );
                }
                leaves(left, out);
                leaves(right, out);
            }
        }
    }

    /// Halving a parallel loop's work, all the way down, covers every row
    /// of every archetype exactly once, splits between chunks while a
    /// share spans several, and leaves single rows.
    #[test]
    fn shares_halve_at_chunk_boundaries_down_to_single_rows() {
        let work = [
            range(0, 0, 21),
            range(1, 0, 1),
            range(2, 0, 64),
            range(3, 0, 9),
        ];
        let mut out = Vec::new();
        leaves(Share::Ranges(&work), &mut out);
        let mut expected = Vec::new();
        for r in &work {
            expected.extend((r.start..r.end).map(|row| (r.archetype.index(), row, row + 1)));
        }
        assert_eq!(out, expected);
        // A share spanning three chunks splits at a boundary first (8 and
        // 16 are as near its middle, 12).
        let (left, right) = Share::Rows(range(0, 3, 21)).halve();
        match (left, right) {
            (Share::Rows(l), Some(Share::Rows(r))) => assert_eq!((l.end, r.start), (8, 8)),
            _ => panic!("a range of rows halves into two"),
        }
        // An empty list stays whole.
        assert!(Share::<()>::Ranges(&[]).halve().1.is_none());
    }
}
