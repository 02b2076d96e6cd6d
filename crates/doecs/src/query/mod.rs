//! Typed queries over the world's archetypes.
//!
//! - [`data`]: what a query fetches (`&T`, `&mut T`, `Option<..>`, `Entity`, tuples).
//! - [`filter`]: `With<T>` / `Without<T>`.
//! - [`access`]: read/write sets, used for aliasing checks and by the schedule.
//! - [`state`]: [`Query`], the cached matching and every loop form.
//!
//! `World::query_mut` and friends borrow the world and reuse a per-world cache
//! of matched archetypes keyed by the query's shape, so ad-hoc queries are cheap
//! too; holding a [`Query`] avoids even the cache lookup.

pub mod access;
pub mod data;
pub mod filter;
pub mod state;

pub use access::{Access, AccessKey};
pub use data::{QueryData, ReadOnlyQueryData};
pub use filter::{QueryFilter, With, Without};
pub use state::{Query, QueryCaches, QueryIter};

use crate::entity::Entity;
use crate::error::EntityError;
use crate::world::World;

/// A query borrowing its world: `world.query_mut::<Q>()`.
pub struct QueryMut<'w, Q: QueryData, F: QueryFilter + 'static = ()> {
    world: &'w mut World,
    query: Option<Query<Q, F>>,
}

/// A read-only query borrowing its world: `world.query::<Q>()`.
pub struct QueryRef<'w, Q: ReadOnlyQueryData, F: QueryFilter + 'static = ()> {
    world: &'w World,
    query: Query<Q, F>,
}

impl<'w, Q: QueryData, F: QueryFilter + 'static> QueryMut<'w, Q, F> {
    /// Calls `f` with every matching entity's item.
    pub fn for_each(mut self, f: impl FnMut(Q::Item<'_>)) {
        let world: &World = self.world;
        // SAFETY: `self.world` is borrowed mutably for `'w`, so this is the only access.
        unsafe {
            self.query
                .as_mut()
                .expect("present")
                .for_each_unchecked(world, f)
        }
    }

    /// Calls `f` with every matching chunk's slices.
    pub fn for_each_chunk(mut self, f: impl FnMut(Q::Slice<'_>)) {
        let world: &World = self.world;
        // SAFETY: as in `for_each`.
        unsafe {
            self.query
                .as_mut()
                .expect("present")
                .for_each_chunk_unchecked(world, f)
        }
    }

    /// Parallel `for_each` over chunks, on the current rayon pool.
    pub fn par_for_each(mut self, f: impl Fn(Q::Item<'_>) + Send + Sync)
    where
        for<'a> Q::Item<'a>: Send,
    {
        let world: &World = self.world;
        // SAFETY: as in `for_each`.
        unsafe {
            self.query
                .as_mut()
                .expect("present")
                .par_for_each_unchecked(world, f)
        }
    }

    /// Parallel `for_each_chunk`, on the current rayon pool.
    pub fn par_for_each_chunk(mut self, f: impl Fn(Q::Slice<'_>) + Send + Sync)
    where
        for<'a> Q::Slice<'a>: Send,
    {
        let world: &World = self.world;
        // SAFETY: as in `for_each`.
        unsafe {
            self.query
                .as_mut()
                .expect("present")
                .par_for_each_chunk_unchecked(world, f)
        }
    }

    /// The item of one entity.
    pub fn get(&mut self, entity: Entity) -> Result<Q::Item<'_>, EntityError> {
        let world: &World = self.world;
        // SAFETY: the item borrows `self`, which holds the world mutably.
        unsafe {
            self.query
                .as_mut()
                .expect("present")
                .get_unchecked(world, entity)
        }
    }

    /// Number of matching entities.
    pub fn count(&mut self) -> usize {
        let world: &World = self.world;
        self.query.as_mut().expect("present").count(world)
    }

    /// An iterator over the items.
    pub fn iter(&mut self) -> QueryIter<'_, Q> {
        let world: &mut World = self.world;
        self.query.as_mut().expect("present").iter_mut(world)
    }
}

impl<Q: QueryData, F: QueryFilter + 'static> Drop for QueryMut<'_, Q, F> {
    fn drop(&mut self) {
        if let Some(q) = self.query.take() {
            self.world.query_caches.put_back::<Q, F>(q.cache);
        }
    }
}

impl<'w, Q: ReadOnlyQueryData, F: QueryFilter + 'static> QueryRef<'w, Q, F> {
    /// Calls `f` with every matching entity's item.
    pub fn for_each(mut self, f: impl FnMut(Q::Item<'_>)) {
        self.query.for_each_ref(self.world, f)
    }

    /// Calls `f` with every matching chunk's slices.
    pub fn for_each_chunk(mut self, f: impl FnMut(Q::Slice<'_>)) {
        // SAFETY: read-only query on a shared world.
        unsafe { self.query.for_each_chunk_unchecked(self.world, f) }
    }

    /// The item of one entity.
    pub fn get(&mut self, entity: Entity) -> Result<Q::Item<'w>, EntityError> {
        self.query.get(self.world, entity)
    }

    /// Number of matching entities.
    pub fn count(&mut self) -> usize {
        self.query.count(self.world)
    }

    /// An iterator over the items.
    pub fn iter(&mut self) -> QueryIter<'_, Q> {
        self.query.iter(self.world)
    }
}

impl World {
    /// A query with mutable access, e.g. `world.query_mut::<(&mut Pos, &Vel)>()`.
    ///
    /// # Panics
    /// If `Q` names a component mutably twice, or mutably and immutably.
    pub fn query_mut<Q: QueryData>(&mut self) -> QueryMut<'_, Q, ()> {
        self.query_filtered_mut::<Q, ()>()
    }

    /// A filtered query with mutable access: `world.query_filtered_mut::<&mut Pos, With<Player>>()`.
    pub fn query_filtered_mut<Q: QueryData, F: QueryFilter + 'static>(
        &mut self,
    ) -> QueryMut<'_, Q, F> {
        let world = self.id();
        let cache = self.query_caches.take::<Q, F>(world);
        let mut query = Query::from_cache(cache);
        query.update(self);
        QueryMut {
            world: self,
            query: Some(query),
        }
    }

    /// A read-only query on a shared world. It matches archetypes afresh; hold a
    /// [`Query`] to cache across calls.
    pub fn query<Q: ReadOnlyQueryData>(&self) -> QueryRef<'_, Q, ()> {
        self.query_filtered::<Q, ()>()
    }

    /// A filtered read-only query on a shared world.
    pub fn query_filtered<Q: ReadOnlyQueryData, F: QueryFilter + 'static>(
        &self,
    ) -> QueryRef<'_, Q, F> {
        QueryRef {
            world: self,
            query: Query::new(self),
        }
    }
}
