//! Several worlds sharing one entity id space (Bitsquid's "Building a Data-Oriented Entity System", part 3).
//!
//! Bitsquid lets the same entity live in a "game" world and an "inventory"
//! world at once: one entity manager hands out the ids, and each world keeps
//! its own component storage and managers. A [`Universe`] is that entity
//! manager: it owns the only allocating entity table, and its worlds are
//! [`WorldCore`]s, whose tables are only indices and which offer no way to
//! allocate, so no call on a world can hand out an id of its own. Destroying an entity through the universe removes its row from
//! every world and tells every world's callback managers, so no world can
//! keep a stale entity.
//!
//! Liveness has one answer: [`Universe::alive`] (also
//! [`SharedWorld::alive`] and `entities().alive`, the same allocator).
//! Whether an entity has entered one world is a different question, asked of
//! that world's core: [`WorldCore::contains_entity`].

use crate::bundle::Bundle;
use crate::component::Component;
use crate::entities::Entities;
use crate::entity::Entity;
use crate::error::EntityError;
use crate::query::{Query, QueryCaches, QueryData, QueryFilter};
use crate::world::{WorldConfig, WorldCore};

/// Names one world of a [`Universe`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct WorldKey(usize);

/// One world of a universe: its core and its query caches.
#[derive(Debug)]
struct Member {
    core: WorldCore,
    query_caches: QueryCaches,
}

/// One entity allocator shared by several worlds. See the module docs.
///
/// ```
/// use doecs::Universe;
/// let mut universe = Universe::new();
/// let game = universe.add_world();
/// let inventory = universe.add_world();
/// let sword = universe.spawn();
/// universe.world_mut(game).insert_one(sword, 3.5f32).unwrap(); // damage
/// universe.world_mut(inventory).insert_one(sword, 1u32).unwrap(); // slot
/// universe.despawn(sword).unwrap();
/// assert!(universe.world(game).get::<f32>(sword).is_err());
/// assert!(universe.world(inventory).get::<u32>(sword).is_err());
/// ```
#[derive(Debug, Default)]
pub struct Universe {
    entities: Entities,
    worlds: Vec<Member>,
    scratch: Vec<Entity>,
}

impl Universe {
    /// A universe with no worlds and the default reuse threshold.
    pub fn new() -> Self {
        Self::default()
    }

    /// A universe whose allocator reuses an index once `min_free_indices` wait.
    pub fn with_min_free_indices(min_free_indices: usize) -> Self {
        Universe {
            entities: Entities::with_min_free_indices(min_free_indices),
            ..Self::default()
        }
    }

    /// Adds a world with default settings.
    pub fn add_world(&mut self) -> WorldKey {
        self.add_world_with(WorldConfig::default())
    }

    /// Adds a world with the given settings (its `min_free_indices` is unused:
    /// the universe allocates ids).
    pub fn add_world_with(&mut self, config: WorldConfig) -> WorldKey {
        self.worlds.push(Member {
            core: WorldCore::new(config),
            query_caches: QueryCaches::default(),
        });
        WorldKey(self.worlds.len() - 1)
    }

    /// The shared allocator.
    pub fn entities(&self) -> &Entities {
        &self.entities
    }

    /// Whether `entity` is alive in the universe.
    #[inline]
    pub fn alive(&self, entity: Entity) -> bool {
        self.entities.alive(entity)
    }

    /// Creates an entity with no components in any world.
    pub fn spawn(&mut self) -> Entity {
        let entity = self.entities.alloc();
        self.sanitize();
        entity
    }

    /// Creates `count` entities at once.
    pub fn spawn_many(&mut self, count: usize) -> Vec<Entity> {
        let mut out = Vec::with_capacity(count);
        self.entities.alloc_many(count, &mut out);
        self.sanitize();
        out
    }

    /// Destroys `entity` in every world.
    pub fn despawn(&mut self, entity: Entity) -> Result<(), EntityError> {
        if !self.entities.free(entity) {
            return Err(EntityError::NoSuchEntity(entity));
        }
        for world in &mut self.worlds {
            world.core.forget_destroyed(std::slice::from_ref(&entity));
        }
        self.sanitize();
        Ok(())
    }

    /// Destroys every live entity of `entities` in every world; each world's
    /// callback managers get one call with the whole batch. Returns how many died.
    pub fn despawn_batch(&mut self, entities: &[Entity]) -> usize {
        let mut destroyed = std::mem::take(&mut self.scratch);
        destroyed.clear();
        destroyed.extend(entities.iter().copied().filter(|&e| self.entities.free(e)));
        for world in &mut self.worlds {
            world.core.forget_destroyed(&destroyed);
        }
        let count = destroyed.len();
        self.scratch = destroyed;
        self.sanitize();
        count
    }

    /// Read access to one world.
    ///
    /// # Panics
    /// If `key` is not from this universe.
    pub fn world(&self, key: WorldKey) -> &WorldCore {
        &self.worlds[key.0].core
    }

    /// Write access to one world.
    ///
    /// # Panics
    /// If `key` is not from this universe.
    pub fn world_mut(&mut self, key: WorldKey) -> SharedWorld<'_> {
        let member = &mut self.worlds[key.0];
        SharedWorld {
            entities: &self.entities,
            core: &mut member.core,
            query_caches: &mut member.query_caches,
        }
    }

    /// Runs lazy garbage collection on every world's `LazyGc` managers.
    pub fn collect_garbage(&mut self) -> usize {
        let entities = &self.entities;
        self.worlds
            .iter_mut()
            .map(|w| w.core.managers.collect_garbage(entities))
            .sum()
    }

    /// Verifies the allocator, every world, and that every entity any world
    /// stores is alive in the universe.
    pub fn check_invariants(&self) {
        self.entities.check_invariants();
        for world in &self.worlds {
            check_member(&self.entities, &world.core);
        }
    }

    /// With the `sanitize` feature, [`Universe::check_invariants`];
    /// otherwise nothing.
    #[inline]
    fn sanitize(&self) {
        #[cfg(feature = "sanitize")]
        {
            crate::world::sanitize::count_check();
            self.check_invariants();
        }
    }
}

/// Verifies one world of a universe whose allocator is `entities`: its
/// storage, its index, and that every entity it stores is alive.
fn check_member(entities: &Entities, core: &WorldCore) {
    core.check_storage_invariants();
    core.entities.check_index_invariants();
    for e in core.iter_entities() {
        assert!(entities.alive(e), "world keeps dead entity {e}");
    }
}

/// One world of a universe, borrowed for writing. It dereferences to the
/// world's [`WorldCore`]; what it adds needs the universe's allocator:
/// entering a live entity into this world on its first insert, and
/// liveness. It cannot create or destroy ids (those belong to the universe).
pub struct SharedWorld<'u> {
    entities: &'u Entities,
    core: &'u mut WorldCore,
    query_caches: &'u mut QueryCaches,
}

impl std::ops::Deref for SharedWorld<'_> {
    type Target = WorldCore;
    fn deref(&self) -> &WorldCore {
        self.core
    }
}

impl std::ops::DerefMut for SharedWorld<'_> {
    fn deref_mut(&mut self) -> &mut WorldCore {
        self.core
    }
}

impl SharedWorld<'_> {
    /// Whether `entity` is alive in the universe (it may or may not have
    /// entered this world: see [`WorldCore::contains_entity`]).
    #[inline]
    pub fn alive(&self, entity: Entity) -> bool {
        self.entities.alive(entity)
    }

    /// The universe's allocator, e.g. for a manager's lazy collection.
    pub fn entities(&self) -> &Entities {
        self.entities
    }

    /// Makes sure `entity` has a row here, if it is alive in the universe.
    fn enter(&mut self, entity: Entity) -> Result<(), EntityError> {
        if !self.entities.alive(entity) {
            return Err(EntityError::NoSuchEntity(entity));
        }
        if !self.core.contains_entity(entity) {
            let empty = self.core.bundle_id::<()>()?;
            // SAFETY: the entity has no row here; the empty bundle has no fields.
            unsafe { self.core.place_row(entity, empty, |_, _| {}) };
        }
        Ok(())
    }

    /// Adds a component, entering the entity into this world if needed.
    pub fn insert_one<T: Component>(
        &mut self,
        entity: Entity,
        value: T,
    ) -> Result<(), EntityError> {
        self.insert(entity, (value,))
    }

    /// Adds a bundle, entering the entity into this world if needed. A
    /// malformed bundle is refused before the entity enters.
    pub fn insert<B: Bundle>(&mut self, entity: Entity, bundle: B) -> Result<(), EntityError> {
        self.core.bundle_id::<B>()?;
        self.enter(entity)?;
        self.core.insert(entity, bundle)?;
        #[cfg(feature = "sanitize")]
        check_member(self.entities, self.core);
        Ok(())
    }

    /// Removes `T` from `entity` and returns it. (A universe's worlds have
    /// no hooks, so nothing is left to apply afterwards.)
    pub fn remove_one<T: Component>(&mut self, entity: Entity) -> Result<T, EntityError> {
        self.core.remove_one::<T>(entity)
    }

    /// Removes every component of bundle `B` from `entity` and returns
    /// them. If any is missing, nothing changes.
    pub fn remove<B: Bundle>(&mut self, entity: Entity) -> Result<B, EntityError> {
        self.core.remove::<B>(entity)
    }

    /// Swaps bundle `Old` for bundle `New` on `entity` in one move.
    pub fn exchange<Old: Bundle, New: Bundle>(
        &mut self,
        entity: Entity,
        new: New,
    ) -> Result<Old, EntityError> {
        self.core.exchange::<Old, New>(entity, new)
    }

    /// Adds (or overwrites) plain-bytes component `id` from `bytes`,
    /// entering the entity into this world if needed.
    pub fn insert_bytes(
        &mut self,
        entity: Entity,
        id: crate::component::ComponentId,
        bytes: &[u8],
    ) -> Result<(), EntityError> {
        // Refused before the entity enters, so a refusal changes nothing.
        self.core.check_plain_bytes(id, bytes)?;
        self.enter(entity)?;
        self.core.insert_bytes(entity, id, bytes)
    }

    /// Removes component `id` from `entity` and drops it.
    pub fn remove_by_id(
        &mut self,
        entity: Entity,
        id: crate::component::ComponentId,
    ) -> Result<(), EntityError> {
        self.core.remove_by_id(entity, id)
    }

    /// A query with mutable access.
    pub fn query_mut<Q: QueryData>(&mut self) -> Query<'_, Q, ()> {
        self.query_filtered_mut::<Q, ()>()
    }

    /// A filtered query with mutable access.
    pub fn query_filtered_mut<Q: QueryData, F: QueryFilter + 'static>(
        &mut self,
    ) -> Query<'_, Q, F> {
        let state = self.query_caches.state::<Q, F>(self.core.id());
        let window = state.write_window(self.core);
        // SAFETY: the world is borrowed mutably for the query's life.
        unsafe { Query::borrowed(self.core, state, window) }
    }
}
