//! Entity views: one entity's components in one handle.
//!
//! `world.entity(e)` gives an [`EntityRef`] (read its components, list them);
//! `world.entity_mut(e)` an [`EntityWorldMut`], which also inserts, removes
//! and despawns. Both check the entity once, when made; every call on them
//! goes through the same paths as the world's own methods.
//!
//! An `EntityRef` is also query data (`Query<EntityRef>`, see
//! [`crate::EntityMut`] and the query layer's `entity_terms`): a query
//! makes its items over the rows it visits, and those read only the
//! entity's own components, the row the query's access covers; one from
//! `world.entity(e)` also finds the components `e` inherits from a prefab,
//! as [`WorldCore::get`] does.

use super::core::WorldCore;
use super::World;
use crate::bundle::Bundle;
use crate::component::{Component, ComponentInfo};
use crate::entity::Entity;
use crate::error::EntityError;
use crate::location::Location;
use std::ptr::NonNull;

/// Read access to one live entity. See the module docs.
///
/// ```
/// let mut world = doecs::World::new();
/// let e = world.spawn((1u32, 2.5f32));
/// let view = world.entity(e).unwrap();
/// assert_eq!(view.get::<u32>(), Some(&1));
/// assert!(view.contains::<f32>() && !view.contains::<u8>());
/// let names: Vec<&str> = view.components().map(|c| c.name()).collect();
/// assert_eq!(names, ["u32", "f32"]);
/// ```
#[derive(Copy, Clone)]
pub struct EntityRef<'w> {
    world: &'w WorldCore,
    entity: Entity,
    location: Location,
    /// Whether `get` finds inherited components too (a view from
    /// `world.entity`), or only the row's own (a query's item).
    inherits: bool,
}

impl<'w> EntityRef<'w> {
    /// A view of the row at `location`, `entity`'s, reading only its own
    /// components: a query's item.
    ///
    /// # Safety
    /// `location` must be `entity`'s live row in `world`, and nothing may
    /// write any component of that row for `'w`.
    #[inline]
    pub(crate) unsafe fn own_row(world: &'w WorldCore, entity: Entity, location: Location) -> Self {
        EntityRef {
            world,
            entity,
            location,
            inherits: false,
        }
    }

    /// The entity.
    pub fn id(&self) -> Entity {
        self.entity
    }

    /// Its `T`, if it has one: from `world.entity(e)`, also one it
    /// inherits from a prefab; as a query's item, only its own.
    pub fn get<T: Component>(&self) -> Option<&'w T> {
        if self.inherits {
            return self.world.get::<T>(self.entity).ok();
        }
        let id = self.world.components().id_of::<T>()?;
        let arch = self.world.archetypes().get(self.location.archetype);
        // SAFETY: `location` is the entity's live row (made by
        // `WorldCore::entity` or `own_row`, whose contracts say so), so
        // the row is below the capacity; `T`'s id names a column of `T`s.
        let slot = unsafe { arch.typed_slot_ptr_unchecked::<T>(id, self.location.row) }
            .map(NonNull::cast)
            .or_else(|| self.world.sparse_slot_ptr(id, self.entity))?;
        // SAFETY: the slot holds the row's initialised `T`, and nothing
        // writes the row for `'w` (`&'w WorldCore`, or `own_row`'s
        // contract).
        Some(unsafe { slot.cast::<T>().as_ref() })
    }

    /// Whether it has `T`.
    pub fn contains<T: Component>(&self) -> bool {
        self.get::<T>().is_some()
    }

    /// Its components, in the archetype's (id) order, then its sparse
    /// ones.
    pub fn components(&self) -> impl Iterator<Item = &'w ComponentInfo> + 'w {
        self.world
            .entity_components(self.entity, self.location.archetype)
    }
}

/// Write access to one live entity of a [`World`], structural changes
/// included (bevy's `EntityWorldMut`). See the module docs; for a query's
/// per-entity view without structural changes, see
/// [`EntityMut`](crate::EntityMut).
///
/// ```
/// let mut world = doecs::World::new();
/// let e = world.spawn((1u32,));
/// let mut view = world.entity_mut(e).unwrap();
/// *view.get_mut::<u32>().unwrap() += 1;
/// view.insert((2.5f32, 'x')).unwrap();
/// assert_eq!(view.remove::<(char,)>(), Ok(('x',)));
/// assert_eq!(view.components().count(), 2);
/// view.despawn();
/// assert!(!world.alive(e));
/// ```
pub struct EntityWorldMut<'w> {
    world: &'w mut World,
    entity: Entity,
}

impl EntityWorldMut<'_> {
    /// The world and the entity, for layers above the world's (observers).
    pub(crate) fn world_and_entity(&mut self) -> (&mut World, Entity) {
        (self.world, self.entity)
    }

    /// The entity.
    pub fn id(&self) -> Entity {
        self.entity
    }

    /// Its `T`, if it has one.
    pub fn get<T: Component>(&self) -> Option<&T> {
        self.world.get::<T>(self.entity).ok()
    }

    /// Its `T`, mutably. Marks it changed.
    ///
    /// # Errors
    /// As [`WorldCore::get_mut`]: [`EntityError::MissingComponent`], or
    /// [`EntityError::Immutable`] for a `T` registered immutable
    /// ([`WorldCore::register_immutable`]; insert a new value instead).
    pub fn get_mut<T: Component>(&mut self) -> Result<&mut T, EntityError> {
        self.world.get_mut::<T>(self.entity)
    }

    /// Whether it has `T`.
    pub fn contains<T: Component>(&self) -> bool {
        self.get::<T>().is_some()
    }

    /// Adds (or replaces) the components of `bundle`.
    pub fn insert<B: Bundle>(&mut self, bundle: B) -> Result<&mut Self, EntityError> {
        self.world.insert(self.entity, bundle)?;
        Ok(self)
    }

    /// Adds (or replaces) one component.
    pub fn insert_one<T: Component>(&mut self, value: T) -> Result<&mut Self, EntityError> {
        self.insert((value,))
    }

    /// Removes the components of bundle `B` and returns them.
    pub fn remove<B: Bundle>(&mut self) -> Result<B, EntityError> {
        self.world.remove::<B>(self.entity)
    }

    /// Removes one component and returns it.
    pub fn remove_one<T: Component>(&mut self) -> Result<T, EntityError> {
        self.world.remove_one::<T>(self.entity)
    }

    /// Its components, in the archetype's (id) order, then its sparse
    /// ones.
    pub fn components(&self) -> impl Iterator<Item = &ComponentInfo> + '_ {
        let location = self
            .world
            .location(self.entity)
            .expect("an EntityWorldMut's entity stays alive until `despawn`");
        let world: &WorldCore = self.world;
        world.entity_components(self.entity, location.archetype)
    }

    /// Despawns the entity, dropping its components.
    pub fn despawn(self) {
        self.world
            .despawn(self.entity)
            .expect("an EntityWorldMut's entity stays alive until `despawn`");
    }

    /// Takes the components of bundle `B` and despawns the entity (see
    /// [`World::take`]). If it lacks one of them, nothing changes and the
    /// view is handed back with the error.
    pub fn take<B: Bundle>(self) -> Result<B, (Self, EntityError)> {
        match self.world.take::<B>(self.entity) {
            Ok(values) => Ok(values),
            Err(e) => Err((self, e)),
        }
    }
}

impl WorldCore {
    /// The components of archetype `archetype`, in its (id) order.
    pub(crate) fn components_in(
        &self,
        archetype: crate::storage::ArchetypeId,
    ) -> impl Iterator<Item = &ComponentInfo> + '_ {
        self.archetypes()
            .get(archetype)
            .components()
            .iter()
            .map(move |&id| self.components().info(id))
    }

    /// A view of the live `entity`.
    pub fn entity(&self, entity: Entity) -> Result<EntityRef<'_>, EntityError> {
        let location = self.location(entity)?;
        Ok(EntityRef {
            world: self,
            entity,
            location,
            inherits: true,
        })
    }
}

impl World {
    /// A mutable view of the live `entity`.
    pub fn entity_mut(&mut self, entity: Entity) -> Result<EntityWorldMut<'_>, EntityError> {
        self.location(entity)?;
        Ok(EntityWorldMut {
            world: self,
            entity,
        })
    }
}
