//! The untyped API: components by id, values as bytes or raw pointers.
//!
//! Runtime-registered components have no Rust type, so tools and the resource
//! spawner reach them through ids. Plain-bytes components (no Rust type, no
//! drop function) can be read and written as byte slices safely. Anything else
//! goes through the raw-pointer functions, which are `unsafe`. Inserts and
//! removals take the same structural cores as the typed API, with a runtime
//! bundle of one component.

use super::core::WorldCore;
use super::scratch::Graveyard;
use super::World;
use crate::component::{ComponentId, ComponentInfo};
use crate::entity::Entity;
use crate::error::EntityError;
use std::ptr::NonNull;

impl World {
    /// Adds (or overwrites) plain-bytes component `id` on `entity` from
    /// `bytes`, then applies what hooks recorded.
    pub fn insert_bytes(
        &mut self,
        entity: Entity,
        id: ComponentId,
        bytes: &[u8],
    ) -> Result<(), EntityError> {
        let result = self.with_checks_held(|w| w.core.insert_bytes(entity, id, bytes));
        self.flush_hooks();
        result
    }

    /// Adds (or replaces) component `id` on `entity`, moving the value from
    /// `value`, then applies what hooks recorded. A replaced value is dropped.
    ///
    /// # Safety
    /// `value` must point to a valid, initialised value of component `id`
    /// (any alignment), which the world takes ownership of.
    pub(crate) unsafe fn insert_raw(
        &mut self,
        entity: Entity,
        id: ComponentId,
        value: *const u8,
    ) -> Result<(), EntityError> {
        // SAFETY: forwarded contract.
        let result = self.with_checks_held(|w| unsafe { w.core.insert_raw(entity, id, value) });
        self.flush_hooks();
        result
    }

    /// Removes component `id` from `entity` and drops it, then applies what
    /// hooks recorded.
    pub fn remove_by_id(&mut self, entity: Entity, id: ComponentId) -> Result<(), EntityError> {
        let result = self.with_checks_held(|w| w.core.remove_by_id(entity, id));
        self.flush_hooks();
        result
    }
}

impl WorldCore {
    fn info_checked(&self, id: ComponentId) -> Result<&ComponentInfo, EntityError> {
        self.components
            .get_info(id)
            .ok_or(EntityError::UnknownComponent(id))
    }

    /// Pointer to `entity`'s value of component `id`. Valid until the next
    /// structural change. Writes through it are not seen by `Changed`
    /// filters unless marked with [`WorldCore::mark_changed_by_id`].
    pub(crate) fn get_ptr(
        &self,
        entity: Entity,
        id: ComponentId,
    ) -> Result<NonNull<u8>, EntityError> {
        let location = self.location(entity)?;
        self.info_checked(id)?;
        let arch = self.archetypes.get(location.archetype);
        match arch.column_of(id) {
            Some(column) => Ok(arch.slot_ptr(location.row, column)),
            None => self
                .sparse_slot_ptr(id, entity)
                .ok_or(EntityError::MissingComponentId { entity, id }),
        }
    }

    /// Whether `entity` is here and has component `id`.
    pub fn has_id(&self, entity: Entity, id: ComponentId) -> bool {
        self.get_ptr(entity, id).is_ok()
    }

    /// The bytes of a plain-bytes component.
    pub fn get_bytes(&self, entity: Entity, id: ComponentId) -> Result<&[u8], EntityError> {
        let info = self.info_checked(id)?;
        if !info.is_plain_bytes() {
            return Err(EntityError::NotPlainBytes(id));
        }
        let size = info.layout().size();
        let ptr = self.get_ptr(entity, id)?;
        // SAFETY: plain-bytes values are fully initialised bytes (they were
        // written from byte slices); `&self` prevents mutation.
        Ok(unsafe { std::slice::from_raw_parts(ptr.as_ptr(), size) })
    }

    /// The bytes of a plain-bytes component, mutably. Marks it changed.
    ///
    /// # Errors
    /// As [`WorldCore::get_bytes`], and [`EntityError::ImmutableId`] for a
    /// component registered immutable
    /// ([`WorldCore::register_immutable_by_id`]); the world is unchanged
    /// then.
    pub fn get_bytes_mut(
        &mut self,
        entity: Entity,
        id: ComponentId,
    ) -> Result<&mut [u8], EntityError> {
        let info = self.info_checked(id)?;
        if !info.is_plain_bytes() {
            return Err(EntityError::NotPlainBytes(id));
        }
        let (size, immutable) = (info.layout().size(), info.is_immutable());
        let location = self.location(entity)?;
        let column = self
            .archetypes
            .get(location.archetype)
            .column_of(id)
            .ok_or(EntityError::MissingComponentId { entity, id })?;
        if immutable {
            return Err(EntityError::ImmutableId(id));
        }
        let tick = self.write_tick();
        // SAFETY: the row is live and `&mut self` gives write access; the
        // slot holds plain bytes, which any bytes are a valid value of.
        Ok(unsafe {
            std::slice::from_raw_parts_mut(self.stamped_ptr(column, location, tick), size)
        })
    }

    /// Whether `bytes` can be a value of component `id`: a plain-bytes
    /// component of exactly that size.
    pub(crate) fn check_plain_bytes(
        &self,
        id: ComponentId,
        bytes: &[u8],
    ) -> Result<(), EntityError> {
        let info = self.info_checked(id)?;
        if !info.is_plain_bytes() {
            return Err(EntityError::NotPlainBytes(id));
        }
        let expected = info.layout().size();
        if bytes.len() != expected {
            return Err(EntityError::WrongSize {
                id,
                expected,
                actual: bytes.len(),
            });
        }
        Ok(())
    }

    /// Adds (or overwrites) a plain-bytes component from `bytes`.
    pub(crate) fn insert_bytes(
        &mut self,
        entity: Entity,
        id: ComponentId,
        bytes: &[u8],
    ) -> Result<(), EntityError> {
        self.check_plain_bytes(id, bytes)?;
        // SAFETY: plain-bytes components accept any bytes of the right length
        // and need no drop.
        unsafe { self.insert_raw(entity, id, bytes.as_ptr()) }
    }

    /// Adds (or replaces) component `id` on `entity`, moving the value from
    /// `value`. A replaced value is dropped.
    ///
    /// # Safety
    /// `value` must point to a valid, initialised value of component `id` (any
    /// alignment), which the world takes ownership of.
    pub(crate) unsafe fn insert_raw(
        &mut self,
        entity: Entity,
        id: ComponentId,
        value: *const u8,
    ) -> Result<(), EntityError> {
        let location = self.location(entity)?;
        let size = self.info_checked(id)?.layout().size();
        let bundle = self.bundles.of_ids(&[id], &self.components)?;
        // SAFETY: `location` is the entity's; the writer copies the caller's
        // valid value of `id` into the one field slot.
        unsafe {
            self.insert_fields(entity, location, bundle, |bases, row| {
                std::ptr::copy_nonoverlapping(value, bases[0].add(row * size), size)
            })
        };
        self.sanitize();
        Ok(())
    }

    /// Removes component `id` from `entity` and drops it.
    pub(crate) fn remove_by_id(
        &mut self,
        entity: Entity,
        id: ComponentId,
    ) -> Result<(), EntityError> {
        let location = self.location(entity)?;
        let info = self.info_checked(id)?;
        let (layout, drop_fn) = (info.layout(), info.drop_fn());
        let bundle = self.bundles.of_ids(&[id], &self.components)?;
        let mut graveyard = Graveyard::default();
        // SAFETY: `location` is the entity's; the value goes to the graveyard,
        // which drops it once the world is consistent.
        unsafe {
            self.remove_fields(entity, location, bundle, |bases, row| {
                graveyard.bury(bases[0].add(row * layout.size()), layout, drop_fn)
            })
        }
        .map_err(|_| EntityError::MissingComponentId { entity, id })?;
        drop(graveyard);
        self.sanitize();
        Ok(())
    }
}
