//! The typed component API: insert and remove Rust values.
//!
//! Each call validates (the entity is here, the bundle is well formed) and
//! then calls the one core of its operation in `structure`, so these are
//! the same paths the untyped API and command buffers take.

use super::core::WorldCore;
use super::structure::typed_writer;
use super::World;
use crate::bundle::Bundle;
use crate::component::Component;
use crate::entity::Entity;
use crate::error::EntityError;

impl World {
    /// Adds `value` to `entity`, replacing (and dropping) any `T` it
    /// already has, then applies what hooks recorded. A reserved id
    /// ([`World::reserve_entity`]) is spawned with `value`.
    ///
    /// ```
    /// let mut world = doecs::World::new();
    /// let e = world.spawn((1u8,));
    /// world.insert_one(e, 2.5f32).unwrap();
    /// assert_eq!(world.get::<f32>(e), Ok(&2.5));
    /// ```
    pub fn insert_one<T: Component>(
        &mut self,
        entity: Entity,
        value: T,
    ) -> Result<(), EntityError> {
        self.insert(entity, (value,))
    }

    /// Adds every component of `bundle` to `entity`, then applies what
    /// hooks recorded. Components it already has are replaced; the old
    /// values drop after the new ones are in place. A bundle that names one
    /// type twice is refused, changing nothing. A reserved id
    /// ([`World::reserve_entity`]) is spawned with `bundle`.
    pub fn insert<B: Bundle>(&mut self, entity: Entity, bundle: B) -> Result<(), EntityError> {
        let Some(location) = self.live_or_reserved(entity)? else {
            return self.spawn_reserved(entity, bundle);
        };
        let result = self.with_checks_held(|w| w.core.insert_at(entity, location, bundle));
        self.flush_hooks();
        result
    }

    /// Where live `entity` is, or `None` for a reserved id; a dead one is
    /// [`EntityError::NoSuchEntity`]. One entity-table look for the
    /// common case.
    #[inline]
    fn live_or_reserved(
        &self,
        entity: Entity,
    ) -> Result<Option<crate::location::Location>, EntityError> {
        match self.core.entities.location(entity) {
            Some(location) => Ok(Some(location)),
            None if self.core.entities.is_reserved(entity) => Ok(None),
            None => Err(EntityError::NoSuchEntity(entity)),
        }
    }

    /// Where `entity` is for a removal: a reserved id is spawned (empty)
    /// first, so it lacks what is removed.
    #[inline]
    fn location_for_removal(
        &mut self,
        entity: Entity,
    ) -> Result<crate::location::Location, EntityError> {
        match self.live_or_reserved(entity)? {
            Some(location) => Ok(location),
            None => {
                self.spawn_if_reserved(entity);
                self.core.location(entity)
            }
        }
    }

    /// Removes `T` from `entity` and returns it, then applies what hooks
    /// recorded. A reserved id is spawned (empty) first, so it lacks `T`.
    pub fn remove_one<T: Component>(&mut self, entity: Entity) -> Result<T, EntityError> {
        self.remove::<(T,)>(entity).map(|(value,)| value)
    }

    /// Removes every component of bundle `B` from `entity` and returns
    /// them, then applies what hooks recorded. If any is missing, nothing
    /// changes. A reserved id is spawned (empty) first, so it lacks `B`.
    pub fn remove<B: Bundle>(&mut self, entity: Entity) -> Result<B, EntityError> {
        let location = self.location_for_removal(entity)?;
        let result = self.with_checks_held(|w| w.core.remove_at::<B>(entity, location));
        self.flush_hooks();
        result
    }

    /// Swaps bundle `Old` for bundle `New` on `entity` in one move, and
    /// returns the old values, then applies what hooks recorded. If the
    /// entity lacks one of `Old`'s components, nothing changes.
    ///
    /// ```
    /// let mut world = doecs::World::new();
    /// let e = world.spawn((1u8, 2u16));
    /// let old: (u8,) = world.exchange(e, (3.0f32,)).unwrap();
    /// assert_eq!(old, (1,));
    /// assert!(world.get::<u8>(e).is_err());
    /// assert_eq!(world.get::<f32>(e), Ok(&3.0));
    /// ```
    pub fn exchange<Old: Bundle, New: Bundle>(
        &mut self,
        entity: Entity,
        new: New,
    ) -> Result<Old, EntityError> {
        let result = self.with_checks_held(|w| w.core.exchange::<Old, New>(entity, new));
        self.flush_hooks();
        result
    }
}

impl WorldCore {
    /// Adds every component of `bundle` to `entity`. Components it already has
    /// are replaced; the old values drop after the new ones are in place. A
    /// bundle that names one type twice is refused, changing nothing.
    #[inline]
    pub(crate) fn insert<B: Bundle>(
        &mut self,
        entity: Entity,
        bundle: B,
    ) -> Result<(), EntityError> {
        let location = self.location(entity)?;
        self.insert_at(entity, location, bundle)
    }

    /// [`WorldCore::insert`] for `entity` at its `location`.
    #[inline]
    pub(crate) fn insert_at<B: Bundle>(
        &mut self,
        entity: Entity,
        location: crate::location::Location,
        bundle: B,
    ) -> Result<(), EntityError> {
        let id = self.bundle_id::<B>()?;
        // SAFETY: `location` is the entity's; the writer fills exactly `B`'s fields.
        unsafe { self.insert_fields(entity, location, id, typed_writer(bundle)) };
        self.sanitize();
        Ok(())
    }

    /// Removes `T` from `entity` and returns it.
    #[inline]
    pub(crate) fn remove_one<T: Component>(&mut self, entity: Entity) -> Result<T, EntityError> {
        self.remove::<(T,)>(entity).map(|(value,)| value)
    }

    /// Removes every component of bundle `B` from `entity` and returns them. If
    /// any is missing, nothing changes.
    pub(crate) fn remove<B: Bundle>(&mut self, entity: Entity) -> Result<B, EntityError> {
        let location = self.location(entity)?;
        self.remove_at(entity, location)
    }

    /// [`WorldCore::remove`] for `entity` at its `location`.
    #[inline]
    pub(crate) fn remove_at<B: Bundle>(
        &mut self,
        entity: Entity,
        location: crate::location::Location,
    ) -> Result<B, EntityError> {
        let id = match self.bundles.id_of::<B>() {
            Some(id) => id,
            None => self.first_removal::<B>(entity)?,
        };
        let mut values = None;
        // SAFETY: `location` is the entity's; `take` reads every field out
        // (typed, in field order) and cannot panic.
        unsafe {
            self.remove_fields(entity, location, id, |bases, row| {
                values = Some(B::read_row(bases, row));
            })?
        };
        self.sanitize();
        Ok(values.expect("read by remove_fields"))
    }

    /// Swaps bundle `Old` for bundle `New` on `entity` in one move, and
    /// returns the old values. If the entity lacks one of `Old`'s
    /// components, nothing changes.
    pub(crate) fn exchange<Old: Bundle, New: Bundle>(
        &mut self,
        entity: Entity,
        new: New,
    ) -> Result<Old, EntityError> {
        let location = self.location(entity)?;
        let old = match self.bundles.id_of::<Old>() {
            Some(id) => id,
            None => self.first_removal::<Old>(entity)?,
        };
        let new_id = self.bundle_id::<New>()?;
        let mut values = None;
        // SAFETY: `location` is the entity's; `take` reads every field of
        // `Old` out (typed); the writer fills exactly `New`'s fields.
        unsafe {
            self.exchange_fields(
                entity,
                location,
                old,
                new_id,
                |bases, row| values = Some(Old::read_row(bases, row)),
                typed_writer(new),
            )?
        };
        self.sanitize();
        Ok(values.expect("read by exchange_fields"))
    }

    /// Mutable references to the `T` of several distinct entities at once.
    ///
    /// ```
    /// let mut world = doecs::World::new();
    /// let a = world.spawn((1u32,));
    /// let b = world.spawn((2u32,));
    /// let [x, y] = world.get_many_mut::<u32, 2>([a, b]).unwrap();
    /// std::mem::swap(x, y);
    /// assert_eq!(world.get::<u32>(a), Ok(&2));
    /// assert!(world.get_many_mut::<u32, 2>([a, a]).is_err());
    /// ```
    ///
    /// # Errors
    /// [`EntityError::AliasedEntity`] for an entity named twice, and the
    /// errors of [`WorldCore::get_mut`] (an immutable `T` among them); the
    /// world is unchanged then.
    pub fn get_many_mut<T: Component, const N: usize>(
        &mut self,
        entities: [Entity; N],
    ) -> Result<[&mut T; N], EntityError> {
        for (i, e) in entities.iter().enumerate() {
            if entities[..i].contains(e) {
                return Err(EntityError::AliasedEntity(*e));
            }
        }
        let mut slots = [None; N];
        for (slot, &e) in slots.iter_mut().zip(&entities) {
            *slot = Some(self.write_slot::<T>(e)?);
        }
        // Every entity checked out: only now mark them changed.
        let tick = self.write_tick();
        Ok(slots.map(|slot| {
            // SAFETY: the entities are distinct and alive, so each slot is a
            // different initialised `T`; `&mut self` makes them exclusive.
            unsafe {
                &mut *self
                    .stamp_write_slot(slot.expect("filled above"), tick)
                    .cast::<T>()
            }
        }))
    }

    /// The bundle id of `B` for its first removal: refused, registering
    /// nothing, if one of its types was never registered (no entity has it).
    #[cold]
    fn first_removal<B: Bundle>(
        &mut self,
        entity: Entity,
    ) -> Result<crate::bundle::BundleId, EntityError> {
        let mut ids = Vec::new();
        if !B::registered_ids(&self.components, &mut ids) {
            return Err(EntityError::MissingComponent {
                entity,
                component: std::any::type_name::<B>(),
            });
        }
        self.bundle_id::<B>()
    }
}
