//! Several worlds sharing one entity id space (seed 001, part 3).
//!
//! Bitsquid lets the same entity live in a "game" world and an "inventory"
//! world at once: one entity manager hands out the ids, and each world keeps
//! its own component storage and managers. A [`Universe`] is that entity
//! manager. It owns the only allocator; its worlds keep none of their own, and
//! check an entity by its row instead (the row must hold the exact entity,
//! generation included). Destroying an entity through the universe removes its
//! row from every world and tells every world's callback managers, so no world
//! can keep a stale entity.
//!
//! Worlds are reached through [`SharedWorld`], which offers everything a world
//! does except creating or destroying ids (those belong to the universe).
//! A plain [`World`] that owns its allocator stays the default, simple case.

use crate::bundle::Bundle;
use crate::component::Component;
use crate::entity::{Entities, Entity};
use crate::error::EntityError;
use crate::manager::{ComponentManager, DestroyNotice};
use crate::query::{QueryData, QueryFilter, QueryMut};
use crate::world::{World, WorldConfig};

/// Names one world of a [`Universe`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct WorldKey(usize);

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
    worlds: Vec<World>,
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
        let mut world = World::with_config(config);
        world.shared_ids = true;
        self.worlds.push(world);
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
        self.entities.alloc()
    }

    /// Creates `count` entities at once.
    pub fn spawn_many(&mut self, count: usize) -> Vec<Entity> {
        let mut out = Vec::with_capacity(count);
        self.entities.alloc_many(count, &mut out);
        out
    }

    /// Destroys `entity` in every world.
    pub fn despawn(&mut self, entity: Entity) -> Result<(), EntityError> {
        if !self.entities.free(entity) {
            return Err(EntityError::NoSuchEntity(entity));
        }
        for world in &mut self.worlds {
            world.forget_destroyed(std::slice::from_ref(&entity));
        }
        Ok(())
    }

    /// Destroys every live entity of `entities` in every world; each world's
    /// callback managers get one call with the whole batch. Returns how many died.
    pub fn despawn_batch(&mut self, entities: &[Entity]) -> usize {
        let mut destroyed = std::mem::take(&mut self.scratch);
        destroyed.clear();
        destroyed.extend(entities.iter().copied().filter(|&e| self.entities.free(e)));
        for world in &mut self.worlds {
            world.forget_destroyed(&destroyed);
        }
        let count = destroyed.len();
        self.scratch = destroyed;
        count
    }

    /// Read access to one world.
    ///
    /// # Panics
    /// If `key` is not from this universe.
    pub fn world(&self, key: WorldKey) -> &World {
        &self.worlds[key.0]
    }

    /// Write access to one world.
    ///
    /// # Panics
    /// If `key` is not from this universe.
    pub fn world_mut(&mut self, key: WorldKey) -> SharedWorld<'_> {
        SharedWorld {
            entities: &self.entities,
            world: &mut self.worlds[key.0],
        }
    }

    /// Runs lazy garbage collection on every world's `LazyGc` managers.
    pub fn collect_garbage(&mut self) -> usize {
        let entities = &self.entities;
        self.worlds
            .iter_mut()
            .map(|w| w.collect_garbage_with(entities))
            .sum()
    }

    /// Verifies the allocator, every world, and that every entity any world
    /// stores is alive in the universe.
    pub fn check_invariants(&self) {
        self.entities.check_invariants();
        for world in &self.worlds {
            world.check_invariants();
            for arch in world.archetypes().iter() {
                for c in 0..arch.chunk_count() {
                    for &e in arch.chunk_entities(c) {
                        assert!(self.entities.alive(e), "world keeps dead entity {e}");
                    }
                }
            }
        }
    }
}

/// One world of a universe, borrowed for writing. It derefs to [`World`] for
/// reading; writes that could create or destroy ids are not offered.
pub struct SharedWorld<'u> {
    entities: &'u Entities,
    world: &'u mut World,
}

impl std::ops::Deref for SharedWorld<'_> {
    type Target = World;
    fn deref(&self) -> &World {
        self.world
    }
}

impl SharedWorld<'_> {
    /// Makes sure `entity` has a row here, if it is alive in the universe.
    fn enter(&mut self, entity: Entity) -> Result<(), EntityError> {
        if !self.entities.alive(entity) {
            return Err(EntityError::NoSuchEntity(entity));
        }
        if self.world.location(entity).is_err() {
            self.world.place_empty(entity);
        }
        Ok(())
    }

    /// Adds a component, entering the entity into this world if needed.
    pub fn insert_one<T: Component>(
        &mut self,
        entity: Entity,
        value: T,
    ) -> Result<(), EntityError> {
        self.enter(entity)?;
        self.world.insert_one(entity, value)
    }

    /// Adds a bundle, entering the entity into this world if needed.
    pub fn insert<B: Bundle>(&mut self, entity: Entity, bundle: B) -> Result<(), EntityError> {
        self.enter(entity)?;
        self.world.insert(entity, bundle)
    }

    /// Removes a component from the entity in this world.
    pub fn remove_one<T: Component>(&mut self, entity: Entity) -> Result<T, EntityError> {
        self.world.remove_one(entity)
    }

    /// Removes a bundle from the entity in this world.
    pub fn remove<B: Bundle>(&mut self, entity: Entity) -> Result<B, EntityError> {
        self.world.remove(entity)
    }

    /// Mutable access to a component.
    pub fn get_mut<T: Component>(&mut self, entity: Entity) -> Result<&mut T, EntityError> {
        self.world.get_mut(entity)
    }

    /// A query with mutable access.
    pub fn query_mut<Q: QueryData>(&mut self) -> QueryMut<'_, Q, ()> {
        self.world.query_mut()
    }

    /// A filtered query with mutable access.
    pub fn query_filtered_mut<Q: QueryData, F: QueryFilter + 'static>(
        &mut self,
    ) -> QueryMut<'_, Q, F> {
        self.world.query_filtered_mut()
    }

    /// Adds a manager to this world.
    pub fn add_manager<M: ComponentManager>(
        &mut self,
        manager: M,
        notice: DestroyNotice,
    ) -> Option<M> {
        self.world.add_manager(manager, notice)
    }

    /// A manager of this world, mutably.
    pub fn manager_mut<M: ComponentManager>(&mut self) -> Option<&mut M> {
        self.world.manager_mut()
    }

    /// The universe's allocator, e.g. for a manager's lazy collection.
    pub fn entities(&self) -> &Entities {
        self.entities
    }
}
