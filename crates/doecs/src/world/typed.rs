//! The typed component API: insert and remove Rust values.
//!
//! Each call validates (the entity is here, the bundle is well formed) and
//! then calls the one core of its operation in `structure`, so these are
//! the same paths the untyped API and command buffers take.

use super::core::WorldCore;
use super::structure::typed_writer;
use crate::bundle::Bundle;
use crate::component::Component;
use crate::entity::Entity;
use crate::error::EntityError;

impl WorldCore {
    /// Adds `value` to `entity`, replacing (and dropping) any `T` it already has.
    ///
    /// ```
    /// let mut world = doecs::World::new();
    /// let e = world.spawn((1u8,));
    /// world.insert_one(e, 2.5f32).unwrap();
    /// assert_eq!(world.get::<f32>(e), Ok(&2.5));
    /// ```
    #[inline]
    pub fn insert_one<T: Component>(
        &mut self,
        entity: Entity,
        value: T,
    ) -> Result<(), EntityError> {
        self.insert(entity, (value,))
    }

    /// Adds every component of `bundle` to `entity`. Components it already has
    /// are replaced; the old values drop after the new ones are in place. A
    /// bundle that names one type twice is refused, changing nothing.
    #[inline]
    pub fn insert<B: Bundle>(&mut self, entity: Entity, bundle: B) -> Result<(), EntityError> {
        let location = self.location(entity)?;
        let id = self.bundle_id::<B>()?;
        // SAFETY: `location` is the entity's; the writer fills exactly `B`'s fields.
        unsafe { self.insert_fields(entity, location, id, typed_writer(bundle)) };
        Ok(())
    }

    /// Removes `T` from `entity` and returns it.
    #[inline]
    pub fn remove_one<T: Component>(&mut self, entity: Entity) -> Result<T, EntityError> {
        self.remove::<(T,)>(entity).map(|(value,)| value)
    }

    /// Removes every component of bundle `B` from `entity` and returns them. If
    /// any is missing, nothing changes.
    pub fn remove<B: Bundle>(&mut self, entity: Entity) -> Result<B, EntityError> {
        let location = self.location(entity)?;
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
        Ok(values.expect("read by remove_fields"))
    }

    /// The bundle id of `B` for its first removal: refused, registering
    /// nothing, if one of its types was never registered (no entity has it).
    #[cold]
    fn first_removal<B: Bundle>(&mut self, entity: Entity) -> Result<crate::BundleId, EntityError> {
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
