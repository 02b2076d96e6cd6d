//! Query state: the cached list of matching archetypes, and the loops over it.
//!
//! A [`QueryState`] remembers which archetypes match and the columns it uses
//! in each. Archetypes are only ever added to a world, so the cache updates
//! incrementally: each use checks just the archetypes created since the last
//! one. A per-archetype slot table makes `get(entity)` O(1). The cache
//! belongs to one world; used with another, it starts over for that world.
//!
//! Every loop walks matched archetypes, fetching column pointers once per
//! archetype. `for_each` runs one loop down each archetype's columns;
//! `for_each_chunk` hands each chunk's slices to the closure, which is what
//! lets per-component loops vectorize. `par_for_each*` splits the work list
//! of chunks (or pieces of chunks) across the current rayon pool.

use super::access::{Access, AliasError, FilteredAccess};
use super::data::{QueryData, ReadOnlyQueryData};
use super::filter::QueryFilter;
use crate::entity::Entity;
use crate::error::EntityError;
use crate::storage::{Archetype, ArchetypeId};
use crate::type_index::TypeIndex;
use crate::world::{WorldCore, WorldId};
use rayon::prelude::*;
use std::any::{Any, TypeId};
use std::marker::PhantomData;

/// The `'static` part of a query's state: matched archetypes and their columns.
///
/// # Invariants
/// - `matched[k].1` is what `match_archetype` returned for `matched[k].0`, in
///   the world `world`, and the filter passed it.
/// - `slot_of[a] == Some(k)` iff `matched[k].0 == a`; `slot_of.len() == seen`.
pub(crate) struct QueryCache<S> {
    world: WorldId,
    seen: usize,
    pub(crate) matched: Vec<(ArchetypeId, S)>,
    slot_of: Vec<Option<u32>>,
}

impl<S> QueryCache<S> {
    pub(crate) fn new(world: WorldId) -> Self {
        QueryCache {
            world,
            seen: 0,
            matched: Vec::new(),
            slot_of: Vec::new(),
        }
    }
}

/// Caches of matched archetypes, one per query shape, each in its own boxed
/// slot. A [`Query`](super::Query) built per call (`World::query_mut`, a
/// system's `ctx.query`) borrows the cache of its shape in place: one cached
/// type lookup, no allocation.
#[derive(Default)]
pub struct QueryCaches {
    /// Query shape to its slot.
    index: TypeIndex<u32>,
    slots: Vec<Box<dyn Any + Send + Sync>>,
}

impl std::fmt::Debug for QueryCaches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueryCaches")
            .field("shapes", &self.slots.len())
            .finish()
    }
}

impl QueryCaches {
    /// Whether shape `(Q, F)` has been used here before.
    pub(crate) fn contains<Q: QueryData, F: QueryFilter + 'static>(&self) -> bool {
        self.index.get(TypeId::of::<(Q::Key, F)>()).is_some()
    }

    /// The state of shape `(Q, F)`, made on first use.
    ///
    /// # Panics
    /// As [`QueryState::new`], on first use.
    #[inline]
    pub(crate) fn state<Q: QueryData, F: QueryFilter + 'static>(
        &mut self,
        world: WorldId,
    ) -> &mut QueryState<Q, F> {
        let key = TypeId::of::<(Q::Key, F)>();
        let slot = match self.index.get(key) {
            Some(slot) => slot,
            None => {
                let slot = self.slots.len() as u32;
                self.slots
                    .push(Box::new(QueryState::<Q, F>::new_cache(world)));
                self.index.insert(key, slot);
                slot
            }
        };
        let cache = self.slots[slot as usize]
            .downcast_mut::<QueryCache<Q::State>>()
            .expect("keyed by query shape");
        QueryState::from_cache_mut(cache)
    }
}

/// Fewest rows `par_for_each` hands one task.
const PAR_MIN_ROWS: usize = 16;

/// Marker of a query's shape; `fn() -> ..` keeps `QueryState` `Send + Sync`.
type QueryShape<Q, F> = fn() -> (<Q as QueryData>::Key, F);

/// A typed query with cached matching, held across uses. `Q` is what it
/// fetches, `F` a filter.
///
/// ```
/// use doecs::{QueryState, With, World};
/// struct Pos(f32);
/// struct Vel(f32);
/// struct Frozen;
///
/// let mut world = World::new();
/// world.spawn((Pos(0.0), Vel(1.0)));
/// world.spawn((Pos(0.0), Vel(1.0), Frozen));
/// let mut moving = QueryState::<(&mut Pos, &Vel), doecs::Without<Frozen>>::new(&world);
/// moving.for_each(&mut world, |(p, v)| p.0 += v.0);
/// let mut frozen = QueryState::<&Pos, With<Frozen>>::new(&world);
/// assert_eq!(frozen.iter(&world).map(|p| p.0).sum::<f32>(), 0.0);
/// ```
///
/// `repr(transparent)` over its cache: a cache kept elsewhere (in a world's or
/// a system's [`QueryCaches`]) is used as a `QueryState` in place.
#[repr(transparent)]
pub struct QueryState<Q: QueryData, F: QueryFilter = ()> {
    pub(crate) cache: QueryCache<Q::State>,
    _marker: PhantomData<QueryShape<Q, F>>,
}

impl<Q: QueryData, F: QueryFilter> QueryState<Q, F> {
    /// A query over `world`.
    ///
    /// # Panics
    /// If `Q` names a component mutably twice, or mutably and immutably.
    pub fn new(world: &WorldCore) -> Self {
        Self::access();
        let mut q = QueryState {
            cache: QueryCache::new(world.id()),
            _marker: PhantomData,
        };
        q.update(world);
        q
    }

    /// A cache used in place as the state of this shape.
    #[inline]
    pub(crate) fn from_cache_mut(cache: &mut QueryCache<Q::State>) -> &mut Self {
        // SAFETY: `QueryState` is `repr(transparent)` over its cache (the
        // marker is a zero-sized, 1-aligned `PhantomData`), so the two have
        // the same layout; the borrow is carried over unchanged.
        unsafe { &mut *std::ptr::from_mut(cache).cast::<Self>() }
    }

    pub(crate) fn new_cache(world: WorldId) -> QueryCache<Q::State> {
        Self::access();
        QueryCache::new(world)
    }

    /// What the query reads and writes.
    ///
    /// # Panics
    /// As [`QueryState::new`].
    pub fn access() -> Access {
        match Self::try_access() {
            Ok(access) => access,
            Err(e) => panic!("doecs: {e}"),
        }
    }

    /// What the query reads and writes, or why it would alias.
    pub fn try_access() -> Result<Access, AliasError> {
        let mut access = Access::default();
        Q::access(&mut access)?;
        Ok(access)
    }

    /// What the query reads and writes, with the component types its
    /// entities must have and must lack.
    pub fn filtered_access() -> Result<FilteredAccess, AliasError> {
        let mut filtered = FilteredAccess {
            access: Self::try_access()?,
            ..FilteredAccess::default()
        };
        Q::required(&mut filtered.with);
        F::filter_access(&mut filtered);
        Ok(filtered)
    }

    /// Learns about archetypes created since the last update. Used with
    /// another world than before, it forgets the old world's archetypes and
    /// matches the new world's from scratch.
    pub fn update(&mut self, world: &WorldCore) {
        let cache = &mut self.cache;
        if cache.world != world.id() {
            *cache = QueryCache::new(world.id());
        }
        let archetypes = world.archetypes();
        if cache.seen == archetypes.len() {
            return;
        }
        for arch in archetypes.since(cache.seen) {
            let slot = if F::matches(arch, world.components()) {
                Q::match_archetype(arch, world.components()).map(|state| {
                    cache.matched.push((arch.id(), state));
                    (cache.matched.len() - 1) as u32
                })
            } else {
                None
            };
            cache.slot_of.push(slot);
        }
        cache.seen = archetypes.len();
    }

    /// Number of archetypes that match.
    pub fn matched_archetypes(&self) -> usize {
        self.cache.matched.len()
    }

    /// Number of entities that match.
    pub fn count(&mut self, world: &WorldCore) -> usize {
        self.update(world);
        self.cache
            .matched
            .iter()
            .map(|(a, _)| world.archetypes().get(*a).len())
            .sum()
    }

    /// Iterates read-only over a shared world.
    pub fn iter<'w>(&'w mut self, world: &'w WorldCore) -> QueryIter<'w, Q>
    where
        Q: ReadOnlyQueryData,
    {
        self.update(world);
        QueryIter::new(world, &self.cache.matched)
    }

    /// Iterates, handing out mutable access.
    pub fn iter_mut<'w>(&'w mut self, world: &'w mut WorldCore) -> QueryIter<'w, Q> {
        self.update(world);
        QueryIter::new(world, &self.cache.matched)
    }

    /// Calls `f` with every matching entity's item.
    #[inline]
    pub fn for_each(&mut self, world: &mut WorldCore, f: impl FnMut(Q::Item<'_>)) {
        // SAFETY: `&mut WorldCore` gives this query exclusive access.
        unsafe { self.for_each_unchecked(world, f) }
    }

    /// Calls `f` with every matching chunk's slices, e.g. `(&mut [P], &[V])`.
    #[inline]
    pub fn for_each_chunk(&mut self, world: &mut WorldCore, f: impl FnMut(Q::Slice<'_>)) {
        // SAFETY: `&mut WorldCore` gives this query exclusive access.
        unsafe { self.for_each_chunk_unchecked(world, f) }
    }

    /// [`QueryState::for_each`] on a shared world, for read-only queries.
    pub fn for_each_ref(&mut self, world: &WorldCore, f: impl FnMut(Q::Item<'_>))
    where
        Q: ReadOnlyQueryData,
    {
        // SAFETY: the query only reads, and `&WorldCore` prevents writers.
        unsafe { self.for_each_unchecked(world, f) }
    }

    /// `for_each` through a shared world: one loop over each matched
    /// archetype's rows, straight down its columns.
    ///
    /// # Safety
    /// No other access to the components this query writes (or reads, if it
    /// writes them elsewhere) may happen during the call: the caller must hold
    /// the query's [`Access`], as the schedule does.
    #[inline]
    pub unsafe fn for_each_unchecked(&mut self, world: &WorldCore, mut f: impl FnMut(Q::Item<'_>)) {
        self.update(world);
        let archetypes = world.archetypes();
        for &(id, state) in &self.cache.matched {
            let arch = archetypes.get(id);
            let len = arch.len();
            if len == 0 {
                continue;
            }
            // SAFETY: `state` was matched on `arch`; rows `0..len` are live and
            // each is handed out once; the caller holds the access.
            unsafe {
                let fetch = Q::fetch(arch, state);
                for row in 0..len {
                    f(Q::item(fetch, row));
                }
            }
        }
    }

    /// `for_each_chunk` through a shared world.
    ///
    /// # Safety
    /// As [`QueryState::for_each_unchecked`].
    #[inline]
    pub unsafe fn for_each_chunk_unchecked(
        &mut self,
        world: &WorldCore,
        mut f: impl FnMut(Q::Slice<'_>),
    ) {
        self.update(world);
        let archetypes = world.archetypes();
        for &(id, state) in &self.cache.matched {
            let arch = archetypes.get(id);
            if arch.is_empty() {
                continue;
            }
            // SAFETY: `state` was matched on `arch`; each chunk's rows are
            // live and handed out once; the caller holds the access.
            unsafe {
                let fetch = Q::fetch(arch, state);
                for chunk in 0..arch.chunk_count() {
                    let (start, len) = arch.chunk_rows_of(chunk);
                    f(Q::slice(fetch, start, len));
                }
            }
        }
    }

    /// The item of one entity, read-only.
    pub fn get<'w>(
        &mut self,
        world: &'w WorldCore,
        entity: Entity,
    ) -> Result<Q::Item<'w>, EntityError>
    where
        Q: ReadOnlyQueryData,
    {
        // SAFETY: read-only query on a shared world.
        unsafe { self.get_unchecked(world, entity) }
    }

    /// The item of one entity, with mutable access.
    pub fn get_mut<'w>(
        &mut self,
        world: &'w mut WorldCore,
        entity: Entity,
    ) -> Result<Q::Item<'w>, EntityError> {
        // SAFETY: `&mut WorldCore` gives exclusive access for `'w`.
        unsafe { self.get_unchecked(world, entity) }
    }

    /// The item of one entity through a shared world.
    ///
    /// # Safety
    /// As [`QueryState::for_each_unchecked`], for as long as the item lives.
    pub unsafe fn get_unchecked<'w>(
        &mut self,
        world: &'w WorldCore,
        entity: Entity,
    ) -> Result<Q::Item<'w>, EntityError> {
        self.update(world);
        let (archetype, row) = world
            .entities
            .locate(entity)
            .ok_or(EntityError::NoSuchEntity(entity))?;
        let Some(&Some(k)) = self.cache.slot_of.get(archetype) else {
            return Err(EntityError::MissingComponent {
                entity,
                component: std::any::type_name::<Q>(),
            });
        };
        let (id, state) = self.cache.matched[k as usize];
        let arch = world.archetypes().get(id);
        // SAFETY: `state` matches `arch`; the located row is live.
        Ok(unsafe { Q::item(Q::fetch(arch, state), row) })
    }

    /// Like [`QueryState::for_each`], split by chunk across the current rayon pool.
    /// Use `ThreadPool::install` to pick the thread count.
    pub fn par_for_each(&mut self, world: &mut WorldCore, f: impl Fn(Q::Item<'_>) + Send + Sync)
    where
        for<'w> Q::Item<'w>: Send,
    {
        // SAFETY: `&mut WorldCore` gives exclusive access; rows go to one thread each.
        unsafe { self.par_for_each_unchecked(world, f) }
    }

    /// Like [`QueryState::for_each_chunk`], split by chunk across the current rayon pool.
    pub fn par_for_each_chunk(
        &mut self,
        world: &mut WorldCore,
        f: impl Fn(Q::Slice<'_>) + Send + Sync,
    ) where
        for<'w> Q::Slice<'w>: Send,
    {
        // SAFETY: `&mut WorldCore` gives exclusive access; chunks go to one thread each.
        unsafe { self.par_for_each_chunk_unchecked(world, f) }
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
        f: impl Fn(Q::Item<'_>) + Send + Sync,
    ) where
        for<'w> Q::Item<'w>: Send,
    {
        if crate::schedule::sequential_here() {
            // SAFETY: forwarded contract; one thread visits every row once.
            return unsafe { self.for_each_unchecked(world, f) };
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
            let mut work: Vec<(ArchetypeId, Q::State, u32, u32)> = Vec::new();
            for &(id, state) in matched {
                let arch = archetypes.get(id);
                // Pieces never cross a chunk: each is at most one chunk long.
                let piece = piece.min(arch.chunk_rows());
                let len = arch.len();
                let mut start = 0;
                while start < len {
                    let end = (start + piece).min(len);
                    work.push((id, state, start as u32, end as u32));
                    start = end;
                }
            }
            work.into_par_iter().for_each(|(id, state, start, end)| {
                let arch = archetypes.get(id);
                // SAFETY: `state` was matched on `arch`; the pieces are
                // disjoint, so each live row's item is created on exactly one
                // thread; the caller holds the access.
                unsafe {
                    let fetch = Q::fetch(arch, state);
                    for row in start as usize..end as usize {
                        f(Q::item(fetch, row));
                    }
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
        f: impl Fn(Q::Slice<'_>) + Send + Sync,
    ) where
        for<'w> Q::Slice<'w>: Send,
    {
        // SAFETY: forwarded; each chunk's slices are created on exactly one thread.
        unsafe {
            self.par_for_each_chunk_raw(world, |arch, state, chunk| {
                let (start, len) = arch.chunk_rows_of(chunk);
                f(Q::slice(Q::fetch(arch, state), start, len))
            })
        }
    }

    /// Runs `body` once per matched (archetype, chunk), spread over rayon.
    ///
    /// # Safety
    /// As [`QueryState::for_each_unchecked`]; `body` must only touch its own chunk.
    unsafe fn par_for_each_chunk_raw(
        &mut self,
        world: &WorldCore,
        body: impl Fn(&Archetype, Q::State, usize) + Send + Sync,
    ) {
        self.update(world);
        if crate::schedule::sequential_here() {
            let archetypes = world.archetypes();
            for &(id, state) in &self.cache.matched {
                let arch = archetypes.get(id);
                for chunk in 0..arch.chunk_count() {
                    body(arch, state, chunk);
                }
            }
            return;
        }
        let work: Vec<(ArchetypeId, Q::State, usize)> = self
            .cache
            .matched
            .iter()
            .flat_map(|&(id, state)| {
                (0..world.archetypes().get(id).chunk_count()).map(move |c| (id, state, c))
            })
            .collect();
        let archetypes = world.archetypes();
        crate::schedule::on_schedule_pool(|| {
            work.into_par_iter()
                .for_each(|(id, state, chunk)| body(archetypes.get(id), state, chunk))
        });
    }
}

/// Iterator over a query's items. Created by [`QueryState::iter`] and friends.
pub struct QueryIter<'w, Q: QueryData> {
    world: &'w WorldCore,
    matched: std::slice::Iter<'w, (ArchetypeId, Q::State)>,
    fetch: Option<Q::Fetch>,
    row: usize,
    len: usize,
}

impl<'w, Q: QueryData> QueryIter<'w, Q> {
    pub(crate) fn new(world: &'w WorldCore, matched: &'w [(ArchetypeId, Q::State)]) -> Self {
        QueryIter {
            world,
            matched: matched.iter(),
            fetch: None,
            row: 0,
            len: 0,
        }
    }
}

impl<'w, Q: QueryData> Iterator for QueryIter<'w, Q> {
    type Item = Q::Item<'w>;

    #[inline]
    fn next(&mut self) -> Option<Q::Item<'w>> {
        loop {
            if self.row < self.len {
                let row = self.row;
                self.row += 1;
                let fetch = self.fetch.expect("set with len");
                // SAFETY: `row < len` is live; each row is yielded once; the
                // iterator's constructor held the access for `'w`.
                return Some(unsafe { Q::item(fetch, row) });
            }
            let &(id, state) = self.matched.next()?;
            let arch = self.world.archetypes().get(id);
            // SAFETY: `state` was matched on `arch`.
            self.fetch = Some(unsafe { Q::fetch(arch, state) });
            self.row = 0;
            self.len = arch.len();
        }
    }
}
