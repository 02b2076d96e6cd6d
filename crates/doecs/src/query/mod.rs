//! Typed queries over the world's archetypes.
//!
//! - [`data`]: what a query fetches (`&T`, `&mut T`, `Option<..>`, `Entity`, tuples).
//! - [`filter`]: `With<T>` / `Without<T>`.
//! - [`access`]: read/write sets, used for aliasing checks and by the schedule.
//! - [`state`]: [`QueryState`], the cached matching and every loop form.
//! - [`view`]: [`View`], one component type by entity, resolved once.
//!
//! A [`Query`] is a query borrowing its world: what `world.query_mut()`,
//! `world.query()` and a system's `ctx.query()` return. It reuses a
//! per-world (or per-system) cache of matched archetypes keyed by the
//! query's shape, so ad-hoc queries are cheap too; holding a [`QueryState`]
//! avoids even the cache lookup.

pub mod access;
pub mod data;
pub mod filter;
pub mod state;
pub mod view;

pub use access::{Access, AccessKey};
pub use data::{QueryData, ReadOnlyQueryData};
pub use filter::{QueryFilter, With, Without};
pub use state::{QueryCaches, QueryIter, QueryState};
pub use view::{View, ViewMut};

use crate::entity::Entity;
use crate::error::EntityError;
use crate::world::{World, WorldCore};

/// A query borrowing its world. See the module docs.
///
/// Whoever builds one vouches that it may hand out what `Q` asks for for
/// `'w`: `world.query_mut()` holds the world mutably, `world.query()` only
/// builds read-only queries, and a system's context checked `Q` against the
/// system's declared access, which the schedule keeps from conflicting.
pub struct Query<'w, Q: QueryData, F: QueryFilter + 'static = ()> {
    world: &'w WorldCore,
    state: QueryState<Q, F>,
    /// Where the cache goes back when the query is dropped, if anywhere.
    home: Option<(&'w mut QueryCaches, state::CacheSlot)>,
}

impl<'w, Q: QueryData, F: QueryFilter + 'static> Query<'w, Q, F> {
    /// A query over `world` using (and then returning) the cache of its shape
    /// in `home`.
    ///
    /// # Safety
    /// For `'w`, nothing else may access what `Q` writes, nor write what it
    /// reads.
    #[inline]
    pub(crate) unsafe fn borrowed(world: &'w WorldCore, home: &'w mut QueryCaches) -> Self {
        let (slot, cache) = home.take::<Q, F>(world.id());
        let mut state = QueryState::from_cache(cache);
        state.update(world);
        Query {
            world,
            state,
            home: Some((home, slot)),
        }
    }

    /// A query over `world` with a fresh cache.
    ///
    /// # Safety
    /// As [`Query::borrowed`].
    pub(crate) unsafe fn fresh(world: &'w WorldCore) -> Self {
        Query {
            world,
            state: QueryState::new(world),
            home: None,
        }
    }

    /// Calls `f` with every matching entity's item.
    pub fn for_each(&mut self, f: impl FnMut(Q::Item<'_>)) {
        // SAFETY: the constructor's caller vouched for the access for `'w`,
        // and `&mut self` keeps this query's items from overlapping.
        unsafe { self.state.for_each_unchecked(self.world, f) }
    }

    /// Calls `f` with every matching chunk's slices.
    pub fn for_each_chunk(&mut self, f: impl FnMut(Q::Slice<'_>)) {
        // SAFETY: as in `for_each`.
        unsafe { self.state.for_each_chunk_unchecked(self.world, f) }
    }

    /// `for_each` split by chunk across the current rayon pool (in a system:
    /// the schedule's pool).
    pub fn par_for_each(&mut self, f: impl Fn(Q::Item<'_>) + Send + Sync)
    where
        for<'a> Q::Item<'a>: Send,
    {
        // SAFETY: as in `for_each`; each row goes to one thread.
        unsafe { self.state.par_for_each_unchecked(self.world, f) }
    }

    /// `for_each_chunk` split across the current rayon pool.
    pub fn par_for_each_chunk(&mut self, f: impl Fn(Q::Slice<'_>) + Send + Sync)
    where
        for<'a> Q::Slice<'a>: Send,
    {
        // SAFETY: as in `for_each`; each chunk goes to one thread.
        unsafe { self.state.par_for_each_chunk_unchecked(self.world, f) }
    }

    /// The item of one entity.
    pub fn get(&mut self, entity: Entity) -> Result<Q::Item<'_>, EntityError> {
        // SAFETY: as in `for_each`; the item borrows `self`.
        unsafe { self.state.get_unchecked(self.world, entity) }
    }

    /// Number of matching entities.
    pub fn count(&mut self) -> usize {
        self.state.count(self.world)
    }

    /// An iterator over the items.
    pub fn iter(&mut self) -> QueryIter<'_, Q> {
        self.state.update(self.world);
        QueryIter::new(self.world, &self.state.cache.matched)
    }

    /// Number of archetypes that match.
    pub fn matched_archetypes(&self) -> usize {
        self.state.matched_archetypes()
    }
}

impl<Q: QueryData, F: QueryFilter + 'static> Drop for Query<'_, Q, F> {
    #[inline]
    fn drop(&mut self) {
        if let Some((home, slot)) = self.home.take() {
            let cache = std::mem::replace(
                &mut self.state.cache,
                state::QueryCache::new(self.world.id()),
            );
            home.put_back(slot, cache);
        }
    }
}

impl World {
    /// A query with mutable access, e.g. `world.query_mut::<(&mut Pos, &Vel)>()`.
    ///
    /// # Panics
    /// If `Q` names a component mutably twice, or mutably and immutably.
    pub fn query_mut<Q: QueryData>(&mut self) -> Query<'_, Q, ()> {
        self.query_filtered_mut::<Q, ()>()
    }

    /// A filtered query with mutable access: `world.query_filtered_mut::<&mut Pos, With<Player>>()`.
    pub fn query_filtered_mut<Q: QueryData, F: QueryFilter + 'static>(
        &mut self,
    ) -> Query<'_, Q, F> {
        // SAFETY: the world is borrowed mutably for the query's life.
        unsafe { Query::borrowed(&self.core, &mut self.query_caches) }
    }
}

impl WorldCore {
    /// A read-only query on a shared world. It matches archetypes afresh; hold a
    /// [`QueryState`] to cache across calls.
    pub fn query<Q: ReadOnlyQueryData>(&self) -> Query<'_, Q, ()> {
        self.query_filtered::<Q, ()>()
    }

    /// A filtered read-only query on a shared world.
    pub fn query_filtered<Q: ReadOnlyQueryData, F: QueryFilter + 'static>(
        &self,
    ) -> Query<'_, Q, F> {
        // SAFETY: `Q` only reads, and `&self` keeps writers away for `'_`.
        unsafe { Query::fresh(self) }
    }
}
