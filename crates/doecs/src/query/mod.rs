//! Typed queries over the world's archetypes.
//!
//! - [`data`]: what a query fetches (`&T`, `&mut T`, `Option<..>`, `Entity`, tuples).
//! - [`filter`]: `With<T>`, `Without<T>`, `Or<(..)>`; [`change`]:
//!   `Changed<T>`, `Added<T>`.
//! - [`access`]: read/write sets, used for aliasing checks and by the schedule.
//! - [`state`]: [`QueryState`], the cached matching; `loops` and `iter`:
//!   every loop form over it.
//! - [`view`]: [`View`], one component type by entity, resolved once.
//! - `terms`: [`Has`], [`AnyOf`], [`Ref`] (a read with its change stamps)
//!   and [`Mut`] (a write stamped only when written through).
//! - `entity_terms`: whole-entity views as query data:
//!   [`EntityRef`](crate::EntityRef) (reads any component of each entity)
//!   and [`EntityMut`] (reads and writes any, no structural changes).
//! - `combinations`: [`Combinations`] and [`CombinationsMut`], every set of
//!   `K` distinct matching entities.
//! - `sparse`: [`Sparse`] terms, which reach components stored sparse.
//! - `relation` and `inherit`: the relation terms, query data that follows
//!   an entity's pairs: [`Up`] (a target's data, "my parent's `Height`"),
//!   [`Pairs`] (the entity's targets) and [`OwnOrInherited`] (its own
//!   component, else its prefab's), with their aliasing argument; and
//!   [`Query::for_each_source`], the sources of one target.
//!
//! A [`Query`] is a query borrowing its world: what `world.query_mut()`,
//! `world.query()` and a system's `ctx.query()` return. It reads through
//! `&self` ([`Query::iter`], [`Query::get`], [`Query::single`],
//! [`Query::iter_combinations`], `for x in &query`), handing out the
//! read-only form of its data ([`QueryData::ReadOnly`]: `&mut T` as `&T`),
//! so any number of its items may be alive at once; it writes through
//! `&mut self` ([`Query::iter_mut`], [`Query::get_mut`],
//! [`Query::single_mut`], `for x in &mut query`, and the callback loops
//! `for_each`, `for_each_chunk` and their parallel forms). It reuses a
//! per-world (or per-system) cache of matched archetypes keyed by the
//! query's shape, so ad-hoc queries are cheap too; holding a [`QueryState`]
//! avoids even the cache lookup. It carries its change window: a system's,
//! or, on a world, the one since the last use of its shape there.

pub mod access;
pub mod batched;
pub mod change;
mod combinations;
pub mod data;
pub(crate) mod derived;
mod entity_terms;
pub mod filter;
mod inherit;
mod iter;
mod loops;
mod relation;
mod sparse;
pub mod state;
mod terms;
pub mod view;

pub use access::{Access, AccessKey, AliasError, FilteredAccess, QueryError};
pub use batched::{Batch, BatchedIter};
pub use change::{Added, Changed};
pub use combinations::{Combinations, CombinationsMut};
pub use data::{EveryRowData, QueryData, ReadOnlyQueryData};
pub use entity_terms::EntityMut;
pub use filter::{ArchetypeFilter, Or, QueryFilter, With, Without};
pub use inherit::OwnOrInherited;
pub use iter::QueryIter;
pub use relation::{Pairs, Up};
pub use sparse::Sparse;
pub use state::{QueryCaches, QueryState};
pub use terms::{AnyOf, Has, Mut, Ref};
pub use view::{View, ViewMut};

use crate::entity::Entity;
use crate::error::{EntityError, QuerySingleError};
use crate::tick::ChangeWindow;
use crate::world::{World, WorldCore};
use state::Matched;

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

    #[inline]
    fn state_ref(&self) -> &QueryState<Q, F> {
        match &self.state {
            StateRef::Owned(s) => s,
            StateRef::Borrowed(s) => s,
        }
    }

    /// The matched archetypes, for the read-only form.
    ///
    /// They are current for the query's whole life: the constructor
    /// updated the state, and no archetype can be created while the query
    /// borrows its world (`&'w WorldCore` for `'w`: structural changes need
    /// `&mut World`, and a system's are deferred as commands). So the
    /// `&self` methods read it without updating.
    #[inline]
    fn matched(&self) -> &[Matched<Q::ReadOnly, F>] {
        let state = self.state_ref();
        debug_assert_eq!(
            state.matched_archetypes(),
            state.matched_archetypes_current(self.world),
            "a query's matched archetypes stay current while it lives"
        );
        &state.cache.matched
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

    /// The item of one entity, read only (`&mut T` parts come as `&T`).
    /// One whose relation term finds nothing (no parent, say) is
    /// [`EntityError::MissingComponent`].
    pub fn get(&self, entity: Entity) -> Result<ReadOnlyItem<'_, Q>, EntityError> {
        // SAFETY: the constructor's caller vouched for the access for `'w`
        // (the read-only form reads a subset of it), `&self` keeps every
        // mutable item of this query away, and the state is current (see
        // `Query::matched`).
        unsafe {
            self.state_ref()
                .get_matched::<Q::ReadOnly>(self.world, self.window, entity)
        }
    }

    /// The item of one entity, with the query's mutable parts (stamped as
    /// written).
    pub fn get_mut(&mut self, entity: Entity) -> Result<Q::Item<'_>, EntityError> {
        let (world, window) = (self.world, self.window);
        // SAFETY: as in `for_each`; the item borrows `self`.
        unsafe { self.state().get_unchecked(world, window, entity) }
    }

    /// Whether `entity` matches the query (and passes its filter).
    pub fn contains(&self, entity: Entity) -> bool {
        self.get(entity).is_ok()
    }

    /// The item of the one matching entity, read only: for a player, a
    /// camera, a singleton. Counts at most two matches.
    ///
    /// # Errors
    /// [`QuerySingleError::NoEntities`] or
    /// [`QuerySingleError::MultipleEntities`].
    ///
    /// ```
    /// use doecs::{QuerySingleError, World};
    /// struct Player(u32);
    /// let mut world = World::new();
    /// assert!(matches!(world.query::<&Player>().single(), Err(QuerySingleError::NoEntities(_))));
    /// world.spawn((Player(1),));
    /// assert_eq!(world.query::<&Player>().single().unwrap().0, 1);
    /// world.spawn((Player(2),));
    /// assert!(matches!(world.query::<&Player>().single(), Err(QuerySingleError::MultipleEntities(_))));
    /// ```
    pub fn single(&self) -> Result<ReadOnlyItem<'_, Q>, QuerySingleError> {
        one_of(self.iter())
    }

    /// The item of the one matching entity, with its mutable parts.
    ///
    /// # Errors
    /// As [`Query::single`].
    ///
    /// # Panics
    /// As [`Query::iter_mut`].
    pub fn single_mut(&mut self) -> Result<Q::Item<'_>, QuerySingleError> {
        one_of(self.iter_mut())
    }

    /// Number of matching entities (under a change filter: that pass it).
    pub fn count(&self) -> usize {
        // SAFETY: the constructor's caller vouched for the filter's reads;
        // the state is current (see `Query::matched`).
        unsafe { self.state_ref().count_matched(self.world, self.window) }
    }

    /// Whether no entity matches.
    pub fn is_empty(&self) -> bool {
        self.iter().next().is_none()
    }

    /// An iterator over the items, read only (`&mut T` parts come as `&T`),
    /// so any number may be alive at once: `for x in &query` does the
    /// same.
    pub fn iter(&self) -> QueryIter<'_, Q::ReadOnly, F> {
        // SAFETY: the constructor's caller vouched for the access for `'w`
        // (the read-only form reads a subset of it), and `&self` keeps
        // every mutable item of this query away. The read-only form matches
        // with the same states, so the matched list serves it as it is.
        unsafe { QueryIter::new(self.world, self.matched(), self.window) }
    }

    /// An iterator over the items with the query's mutable parts: `for x
    /// in &mut query` does the same.
    ///
    /// # Panics
    /// If a relation term reads what the query writes, like `(&mut Height,
    /// Up<ChildOf, &Height>)`: collected items could hold one entity's
    /// value both ways (see [`QueryState::iterable`]). Such a query runs in
    /// [`Query::for_each`]; [`Query::try_iter_mut`] returns the error
    /// instead.
    pub fn iter_mut(&mut self) -> QueryIter<'_, Q, F> {
        let (world, window) = (self.world, self.window);
        let state = self.state();
        state.update(world);
        // SAFETY: the constructor's caller vouched for the access for `'w`,
        // and the iterator borrows `self` mutably.
        unsafe { QueryIter::new(world, &state.cache.matched, window) }
    }

    /// [`Query::iter_mut`], or the reason the query may not iterate.
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
    /// assert!(matches!(q.try_iter_mut(), Err(AliasError::RelatedWrite(_))));
    /// q.for_each(|(own, parent)| own.0 = parent.0); // the callback loop runs
    /// ```
    pub fn try_iter_mut(&mut self) -> Result<QueryIter<'_, Q, F>, AliasError> {
        QueryState::<Q, F>::iterable()?;
        Ok(self.iter_mut())
    }

    /// Every set of `K` distinct matching entities, once each, read only:
    /// for pairwise work (collisions, gravity between bodies). The sets
    /// come in iteration order (`[a, b]` with `a` before `b`).
    ///
    /// ```
    /// let mut world = doecs::World::new();
    /// world.spawn_batch((1..=4u32).map(|i| (i,)));
    /// let q = world.query::<&u32>();
    /// let pairs: Vec<(u32, u32)> = q.iter_combinations::<2>().map(|[a, b]| (*a, *b)).collect();
    /// assert_eq!(pairs, [(1, 2), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4)]);
    /// ```
    pub fn iter_combinations<const K: usize>(&self) -> Combinations<'_, 'w, Q, F, K> {
        Combinations::new(self)
    }

    /// Every set of `K` distinct matching entities with their mutable
    /// parts, one set at a time: `while let Some([a, b]) =
    /// combos.fetch_next()`. A set borrows the iterator, so two sets are
    /// never alive together.
    ///
    /// # Panics
    /// As [`Query::iter_mut`].
    pub fn iter_combinations_mut<const K: usize>(&mut self) -> CombinationsMut<'_, 'w, Q, F, K> {
        QueryState::<Q, F>::assert_iterable();
        CombinationsMut::new(self)
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

/// One read-only item of query data `Q`: what [`Query::iter`] and
/// [`Query::get`] hand out.
pub type ReadOnlyItem<'w, Q> = <<Q as QueryData>::ReadOnly as QueryData>::Item<'w>;

/// The one item of `items`, or why there is not exactly one.
fn one_of<I: Iterator>(mut items: I) -> Result<I::Item, QuerySingleError> {
    let name = std::any::type_name::<I>();
    let first = items.next().ok_or(QuerySingleError::NoEntities(name))?;
    match items.next() {
        None => Ok(first),
        Some(_) => Err(QuerySingleError::MultipleEntities(name)),
    }
}

impl<'a, 'w, Q: QueryData, F: QueryFilter + 'static> IntoIterator for &'a Query<'w, Q, F> {
    type Item = ReadOnlyItem<'a, Q>;
    type IntoIter = QueryIter<'a, Q::ReadOnly, F>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'a, 'w, Q: QueryData, F: QueryFilter + 'static> IntoIterator for &'a mut Query<'w, Q, F> {
    type Item = Q::Item<'a>;
    type IntoIter = QueryIter<'a, Q, F>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter_mut()
    }
}

impl World {
    /// A query with mutable access, e.g. `world.query_mut::<(&mut Pos, &Vel)>()`.
    ///
    /// # Panics
    /// If `Q` names a component mutably twice, or mutably and immutably,
    /// or writes a component the world registered immutable
    /// ([`QueryState::try_new`] returns these as errors).
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
