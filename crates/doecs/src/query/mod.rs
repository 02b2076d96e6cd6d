//! Typed queries over the world's archetypes.
//!
//! - [`data`]: what a query fetches (`&T`, `&mut T`, `Option<..>`, `Entity`, tuples).
//! - [`filter`]: `With<T>`, `Without<T>`, `Or<(..)>`; [`change`]:
//!   `Changed<T>`, `Added<T>`.
//! - [`access`]: read/write sets, used for aliasing checks and by the schedule.
//! - [`state`]: [`QueryState`], the cached matching; `loops` and `iter`:
//!   every loop form over it.
//! - [`view`]: [`View`], one component type by entity, resolved once.
//! - `relation` and `inherit`: the relation terms, query data that follows
//!   an entity's pairs: [`Up`] (a target's data, "my parent's `Height`"),
//!   [`Pairs`] (the entity's targets) and [`OwnOrInherited`] (its own
//!   component, else its prefab's), with their aliasing argument; and
//!   [`Query::for_each_source`], the sources of one target.
//!
//! A [`Query`] is a query borrowing its world: what `world.query_mut()`,
//! `world.query()` and a system's `ctx.query()` return. It reuses a
//! per-world (or per-system) cache of matched archetypes keyed by the
//! query's shape, so ad-hoc queries are cheap too; holding a [`QueryState`]
//! avoids even the cache lookup. It carries its change window: a system's,
//! or, on a world, the one since the last use of its shape there.

pub mod access;
pub mod batched;
pub mod change;
pub mod data;
pub mod filter;
mod inherit;
mod iter;
mod loops;
mod relation;
pub mod state;
pub mod view;

pub use access::{Access, AccessKey, AliasError, FilteredAccess};
pub use batched::{Batch, BatchedIter};
pub use change::{Added, Changed};
pub use data::{QueryData, ReadOnlyQueryData};
pub use filter::{Or, QueryFilter, With, Without};
pub use inherit::OwnOrInherited;
pub use iter::QueryIter;
pub use relation::{Pairs, Up};
pub use state::{QueryCaches, QueryState};
pub use view::{View, ViewMut};

use crate::entity::Entity;
use crate::error::EntityError;
use crate::tick::ChangeWindow;
use crate::world::{World, WorldCore};

/// A query borrowing its world. See the module docs.
///
/// Whoever builds one vouches that it may hand out what `Q` asks for for
/// `'w`: `world.query_mut()` holds the world mutably, `world.query()` only
/// builds read-only queries, and a system's context or parameter checked `Q`
/// against the system's access, which the schedule keeps from conflicting.
pub struct Query<'w, Q: QueryData, F: QueryFilter + 'static = ()> {
    world: &'w WorldCore,
    state: StateRef<'w, Q, F>,
    window: ChangeWindow,
}

/// A query's state: its own, or borrowed from a cache kept elsewhere.
enum StateRef<'w, Q: QueryData, F: QueryFilter> {
    Owned(QueryState<Q, F>),
    Borrowed(&'w mut QueryState<Q, F>),
}

impl<'w, Q: QueryData, F: QueryFilter + 'static> Query<'w, Q, F> {
    /// A query over `world` using `state` (updated here), seeing changes in
    /// `window` and stamping its writes with `window.this_run`.
    ///
    /// # Safety
    /// For `'w`, nothing else may access what `Q` writes, nor write what it
    /// reads (the filter's reads included).
    #[inline]
    pub(crate) unsafe fn borrowed(
        world: &'w WorldCore,
        state: &'w mut QueryState<Q, F>,
        window: ChangeWindow,
    ) -> Self {
        state.update(world);
        Query {
            world,
            state: StateRef::Borrowed(state),
            window,
        }
    }

    /// A query over `world` with a fresh state (so a change filter sees
    /// everything).
    ///
    /// # Safety
    /// As [`Query::borrowed`].
    pub(crate) unsafe fn fresh(world: &'w WorldCore) -> Self {
        let mut state = QueryState::new(world);
        let window = state.direct_window(world);
        Query {
            world,
            state: StateRef::Owned(state),
            window,
        }
    }

    #[inline]
    fn state(&mut self) -> &mut QueryState<Q, F> {
        match &mut self.state {
            StateRef::Owned(s) => s,
            StateRef::Borrowed(s) => s,
        }
    }

    /// The change window this query sees: changes stamped after
    /// `last_run`, up to `this_run`, which also stamps its writes.
    pub fn window(&self) -> ChangeWindow {
        self.window
    }

    /// Calls `f` with every matching entity's item.
    pub fn for_each(&mut self, f: impl FnMut(Q::Item<'_>)) {
        let (world, window) = (self.world, self.window);
        // SAFETY: the constructor's caller vouched for the access for `'w`,
        // and `&mut self` keeps this query's items from overlapping.
        unsafe { self.state().for_each_unchecked(world, window, f) }
    }

    /// Calls `f` with every matching chunk's slices (under a change filter:
    /// every run of passing rows within a chunk).
    ///
    /// # Panics
    /// If a relation term reads what the query writes (see
    /// [`QueryState::iterable`]).
    pub fn for_each_chunk(&mut self, f: impl FnMut(Q::Slice<'_>)) {
        let (world, window) = (self.world, self.window);
        // SAFETY: as in `for_each`.
        unsafe { self.state().for_each_chunk_unchecked(world, window, f) }
    }

    /// `for_each` split across the current rayon pool (in a system: the
    /// schedule's pool): at chunk boundaries, and within a chunk once a
    /// thread's share is one chunk.
    ///
    /// # Panics
    /// If a relation term reads what the query writes (see
    /// [`QueryState::iterable`]).
    pub fn par_for_each(&mut self, f: impl Fn(Q::Item<'_>) + Send + Sync)
    where
        for<'a> Q::Item<'a>: Send,
    {
        let (world, window) = (self.world, self.window);
        // SAFETY: as in `for_each`; each row goes to one thread.
        unsafe { self.state().par_for_each_unchecked(world, window, f) }
    }

    /// `for_each_chunk` split across the current rayon pool.
    ///
    /// # Panics
    /// As [`Query::par_for_each`].
    pub fn par_for_each_chunk(&mut self, f: impl Fn(Q::Slice<'_>) + Send + Sync)
    where
        for<'a> Q::Slice<'a>: Send,
    {
        let (world, window) = (self.world, self.window);
        // SAFETY: as in `for_each`; each chunk goes to one thread.
        unsafe { self.state().par_for_each_chunk_unchecked(world, window, f) }
    }

    /// The item of one entity. One whose relation term finds nothing (no
    /// parent, say) is [`EntityError::MissingComponent`].
    pub fn get(&mut self, entity: Entity) -> Result<Q::Item<'_>, EntityError> {
        let (world, window) = (self.world, self.window);
        // SAFETY: as in `for_each`; the item borrows `self`.
        unsafe { self.state().get_unchecked(world, window, entity) }
    }

    /// Number of matching entities (under a change filter: that pass it).
    pub fn count(&mut self) -> usize {
        let (world, window) = (self.world, self.window);
        // SAFETY: the constructor's caller vouched for the filter's reads.
        unsafe { self.state().count_in(world, window) }
    }

    /// An iterator over the items.
    ///
    /// # Panics
    /// If a relation term reads what the query writes, like `(&mut Height,
    /// Up<ChildOf, &Height>)`: collected items could hold one entity's
    /// value both ways (see [`QueryState::iterable`]). Such a query runs in
    /// [`Query::for_each`]; [`Query::try_iter`] returns the error instead.
    pub fn iter(&mut self) -> QueryIter<'_, Q, F> {
        let (world, window) = (self.world, self.window);
        let state = self.state();
        state.update(world);
        // SAFETY: the constructor's caller vouched for the access for `'w`,
        // and the iterator borrows `self` mutably.
        unsafe { QueryIter::new(world, &state.cache.matched, window) }
    }

    /// [`Query::iter`], or the reason the query may not iterate.
    ///
    /// # Errors
    /// [`AliasError::RelatedWrite`] if a relation term reads what the query
    /// writes.
    ///
    /// ```
    /// use doecs::{AliasError, ChildOf, Up, World};
    /// struct Height(f32);
    /// let mut world = World::new();
    /// let mut q = world.query_mut::<(&mut Height, Up<ChildOf, &Height>)>();
    /// assert!(matches!(q.try_iter(), Err(AliasError::RelatedWrite(_))));
    /// q.for_each(|(own, parent)| own.0 = parent.0); // the callback loop runs
    /// ```
    pub fn try_iter(&mut self) -> Result<QueryIter<'_, Q, F>, AliasError> {
        QueryState::<Q, F>::iterable()?;
        Ok(self.iter())
    }

    /// The items in batches of at most `batch` rows, for parallel loops the
    /// caller drives: batches are disjoint, and `Send` when the items are.
    ///
    /// # Panics
    /// As [`Query::iter`].
    ///
    /// ```
    /// use rayon::prelude::*;
    /// let mut world = doecs::World::new();
    /// world.spawn_batch((0..1000u32).map(|i| (i,)));
    /// world.query_mut::<&mut u32>().iter_batched(64).par_bridge().for_each(|batch| {
    ///     for v in batch {
    ///         *v *= 2;
    ///     }
    /// });
    /// assert_eq!(world.query::<&u32>().iter().sum::<u32>(), 999 * 1000);
    /// ```
    pub fn iter_batched(&mut self, batch: usize) -> BatchedIter<'_, Q, F> {
        let (world, window) = (self.world, self.window);
        let state = self.state();
        state.update(world);
        // SAFETY: the constructor's caller vouched for the access for `'w`,
        // and the iterator borrows `self` mutably.
        unsafe { BatchedIter::new(world, &state.cache.matched, batch, window) }
    }

    /// Number of archetypes that match.
    pub fn matched_archetypes(&mut self) -> usize {
        self.state().matched_archetypes()
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
        let state = self.query_caches.state::<Q, F>(self.core.id());
        let window = state.write_window(&mut self.core);
        // SAFETY: the world is borrowed mutably for the query's life.
        unsafe { Query::borrowed(&self.core, state, window) }
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
