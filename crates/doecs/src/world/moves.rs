//! Insert and remove: moving an entity along an edge of the archetype graph.
//!
//! A move appends a row to the target archetype, copies the components both
//! archetypes share bitwise (never dropping and rebuilding them), and removes
//! the source row by moving the source's last row into the hole. Components
//! the target lacks are moved out first: returned to the caller, or parked in a
//! [`Graveyard`] and dropped only once the world is consistent again.

use super::World;
use crate::bundle::{Bundle, MAX_BUNDLE_FIELDS};
use crate::component::{Component, ComponentId};
use crate::entity::Entity;
use crate::error::EntityError;
use crate::location::Location;
use crate::storage::archetype::copy_value;
use crate::storage::{ArchetypeId, ColumnIndex};
use std::alloc::Layout;

impl World {
    /// Adds `value` to `entity`, replacing (and dropping) any `T` it already has.
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
        self.flush_reserved();
        let location = self.location(entity)?;
        let id = self.components.register::<T>();
        let source = self.archetypes.get(location.archetype);
        if let Some(column) = source.column_of(id) {
            let slot = source
                .slot_ptr(location.chunk, location.row, column)
                .cast::<T>();
            // SAFETY: the slot holds an initialised `T`; `&mut self` makes access unique.
            // The old value drops after the world is already consistent.
            drop(unsafe { slot.as_ptr().replace(value) });
            return Ok(());
        }
        let target = self
            .archetypes
            .insert_target_absent(location.archetype, id, &self.components);
        // SAFETY: every column the target has beyond the source is `T`'s, written below.
        let new = unsafe {
            self.move_row(entity, location, target, |_, _| {
                unreachable!("target is a superset")
            })
        };
        let arch = self.archetypes.get(target);
        let column = arch.column_of(id).expect("target has T");
        // SAFETY: the new row's `T` slot is uninitialised and typed `T`.
        unsafe {
            arch.slot_ptr(new.chunk, new.row, column)
                .cast::<T>()
                .as_ptr()
                .write(value)
        };
        Ok(())
    }

    /// Adds every component of `bundle` to `entity`. Components it already has
    /// are replaced; the old values drop after the new ones are in place.
    pub fn insert<B: Bundle>(&mut self, entity: Entity, bundle: B) -> Result<(), EntityError> {
        self.flush_reserved();
        let location = self.location(entity)?;
        let (ids, count) = self.bundle_ids::<B>();
        let ids = &ids[..count];
        let mut target = location.archetype;
        for &id in ids {
            target = self.archetypes.insert_target(target, id, &self.components);
        }
        // Park the values being replaced before anything moves.
        let source = self.archetypes.get(location.archetype);
        let mut graveyard = Graveyard::default();
        for &id in ids {
            if let Some(column) = source.column_of(id) {
                let slot = source.slot_ptr(location.chunk, location.row, column);
                let c = self.components.info(id);
                // SAFETY: the slot holds an initialised value of component `id`,
                // which the bundle is about to overwrite without dropping.
                unsafe { graveyard.bury(slot.as_ptr(), c.layout(), c.drop_fn()) };
            }
        }
        let new = if target == location.archetype {
            location
        } else {
            // SAFETY: the columns the target adds are all bundle fields, written below.
            unsafe {
                self.move_row(entity, location, target, |_, _| {
                    unreachable!("target is a superset")
                })
            }
        };
        let arch = self.archetypes.get(target);
        let mut bases = [std::ptr::null_mut::<u8>(); MAX_BUNDLE_FIELDS];
        for (base, &id) in bases.iter_mut().zip(ids) {
            let column = arch.column_of(id).expect("target has every bundle field");
            *base = arch.column_ptr(new.chunk.index(), column).as_ptr();
        }
        // SAFETY: each base is the column of that field's type; every field's slot
        // is either uninitialised (new) or parked in the graveyard (replaced).
        unsafe { bundle.write_row(&bases[..B::FIELD_COUNT], new.row.index()) };
        drop(graveyard);
        Ok(())
    }

    /// Removes `T` from `entity` and returns it.
    pub fn remove_one<T: Component>(&mut self, entity: Entity) -> Result<T, EntityError> {
        self.flush_reserved();
        let location = self.location(entity)?;
        let missing = EntityError::MissingComponent {
            entity,
            component: std::any::type_name::<T>(),
        };
        let id = self.components.id_of::<T>().ok_or(missing)?;
        let column = self
            .archetypes
            .get(location.archetype)
            .column_of(id)
            .ok_or(missing)?;
        let target =
            self.archetypes
                .remove_target_present(location.archetype, id, &self.components);
        let source = self.archetypes.get(location.archetype);
        // SAFETY: the slot holds an initialised `T`; the move below forgets it.
        let value = unsafe {
            source
                .slot_ptr(location.chunk, location.row, column)
                .cast::<T>()
                .as_ptr()
                .read()
        };
        // SAFETY: the target is the source minus `T`, which was read out above.
        unsafe { self.move_row(entity, location, target, |_, _| {}) };
        Ok(value)
    }

    /// Removes every component of bundle `B` from `entity` and returns them. If
    /// any is missing, nothing changes.
    pub fn remove<B: Bundle>(&mut self, entity: Entity) -> Result<B, EntityError> {
        self.flush_reserved();
        let location = self.location(entity)?;
        let mut ids = Vec::with_capacity(B::FIELD_COUNT);
        let missing = EntityError::MissingComponent {
            entity,
            component: std::any::type_name::<B>(),
        };
        if !B::registered_ids(&self.components, &mut ids) {
            return Err(missing);
        }
        let source = self.archetypes.get(location.archetype);
        let mut bases = [std::ptr::null_mut::<u8>(); MAX_BUNDLE_FIELDS];
        for (base, &id) in bases.iter_mut().zip(&ids) {
            let column = source.column_of(id).ok_or(missing)?;
            *base = source.column_ptr(location.chunk.index(), column).as_ptr();
        }
        let mut target = location.archetype;
        for &id in &ids {
            target = self
                .archetypes
                .remove_target(target, id, &self.components)
                .ok_or(missing)?;
        }
        // SAFETY: each base is the column of that field's type, holding an
        // initialised value at the row; the move below forgets those values.
        let values = unsafe { B::read_row(&bases[..B::FIELD_COUNT], location.row.index()) };
        // SAFETY: the target is the source minus the bundle, all read out above.
        unsafe { self.move_row(entity, location, target, |_, _| {}) };
        Ok(values)
    }

    /// Removes component `id` from `entity` and drops it.
    pub fn remove_by_id(&mut self, entity: Entity, id: ComponentId) -> Result<(), EntityError> {
        self.flush_reserved();
        let location = self.location(entity)?;
        if self.components.get_info(id).is_none() {
            return Err(EntityError::UnknownComponent(id));
        }
        let target = self
            .archetypes
            .remove_target(location.archetype, id, &self.components)
            .ok_or(EntityError::MissingComponentId { entity, id })?;
        let mut graveyard = Graveyard::default();
        let info = self.components.info(id);
        let (layout, drop_fn) = (info.layout(), info.drop_fn());
        // SAFETY: the target is the source minus `id`, the only leftover; its
        // value goes to the graveyard.
        unsafe {
            self.move_row(entity, location, target, |dropped, ptr| {
                debug_assert_eq!(dropped, id);
                graveyard.bury(ptr, layout, drop_fn);
            })
        };
        drop(graveyard);
        Ok(())
    }

    /// The bundle's component ids in field order, without allocating.
    pub(super) fn bundle_ids<B: Bundle>(&mut self) -> ([ComponentId; MAX_BUNDLE_FIELDS], usize) {
        let ids = &self.bundle_slot::<B>().info.ids;
        let mut out = [ComponentId::from_index(0); MAX_BUNDLE_FIELDS];
        out[..ids.len()].copy_from_slice(ids);
        (out, ids.len())
    }

    /// Moves `entity` from its row at `from` to a new row in `to`. Components in
    /// both are copied; each source component `to` lacks is passed to `leftover`
    /// (its id and slot) before the source row is overwritten. Returns the new
    /// location; the index is updated for `entity` and for the row that filled
    /// the hole.
    ///
    /// # Safety
    /// `from` must be `entity`'s location and `to != from.archetype`. Every
    /// column of `to` that the source lacks is left uninitialised: the caller
    /// must write it before anything else touches the world. `leftover` must
    /// take ownership of (read or bury) each value it is handed, and not panic.
    pub(super) unsafe fn move_row(
        &mut self,
        entity: Entity,
        from: Location,
        to: ArchetypeId,
        mut leftover: impl FnMut(ComponentId, *mut u8),
    ) -> Location {
        let (source, target) = self.archetypes.pair_mut(from.archetype, to);
        // SAFETY: the caller initialises the target-only columns; shared columns
        // are copied just below.
        let (chunk, row) = unsafe { target.push_uninit(entity) };
        let (src_ids, dst_ids) = (source.components(), target.components());
        let mut d = 0;
        for (s, &id) in src_ids.iter().enumerate() {
            while d < dst_ids.len() && dst_ids[d] < id {
                d += 1;
            }
            let s = ColumnIndex(s as u32);
            let src = source.slot_ptr(from.chunk, from.row, s);
            if d < dst_ids.len() && dst_ids[d] == id {
                let dst = target.slot_ptr(chunk, row, ColumnIndex(d as u32));
                // SAFETY: two slots of the same component type in different
                // archetypes' chunks; the source value is forgotten below.
                unsafe { copy_value(src.as_ptr(), dst.as_ptr(), source.column_size(s)) };
            } else {
                leftover(id, src.as_ptr());
            }
        }
        // SAFETY: every value of the source row was copied or handed to `leftover`.
        let moved = unsafe { source.swap_remove_forget(from.chunk, from.row) };
        if let Some(moved) = moved {
            self.locations.set(moved, from);
        }
        let new = Location {
            archetype: to,
            chunk,
            row,
        };
        self.locations.set(entity, new);
        new
    }
}

/// Values moved out of storage, dropped when the graveyard drops (after the
/// world is consistent). A panicking drop still lets the rest drop, and the
/// buffers are freed either way.
#[derive(Default)]
pub(super) struct Graveyard {
    graves: Vec<Grave>,
}

/// One buried value: a heap copy and how to drop and free it.
struct Grave {
    drop_fn: unsafe fn(*mut u8),
    ptr: *mut u8,
    layout: Layout,
}

impl Graveyard {
    /// Moves the value at `ptr` into the graveyard.
    ///
    /// # Safety
    /// `ptr` must point to an initialised value of `layout` that `drop_fn` may
    /// drop; the caller must treat the original as moved out.
    pub(super) unsafe fn bury(
        &mut self,
        ptr: *mut u8,
        layout: Layout,
        drop_fn: Option<unsafe fn(*mut u8)>,
    ) {
        let Some(drop_fn) = drop_fn else { return };
        let copy = if layout.size() == 0 {
            std::ptr::null_mut::<u8>().wrapping_add(layout.align())
        } else {
            // SAFETY: `layout` has non-zero size.
            let p = unsafe { std::alloc::alloc(layout) };
            if p.is_null() {
                std::alloc::handle_alloc_error(layout);
            }
            // SAFETY: `p` is fresh and `layout.size()` bytes long; `ptr` is a valid value.
            unsafe { std::ptr::copy_nonoverlapping(ptr, p, layout.size()) };
            p
        };
        self.graves.push(Grave {
            drop_fn,
            ptr: copy,
            layout,
        });
    }
}

impl Drop for Graveyard {
    fn drop(&mut self) {
        struct FreeAll<'a>(&'a [Grave]);
        impl Drop for FreeAll<'_> {
            fn drop(&mut self) {
                for grave in self.0 {
                    if grave.layout.size() != 0 {
                        // SAFETY: allocated in `bury` with this layout.
                        unsafe { std::alloc::dealloc(grave.ptr, grave.layout) };
                    }
                }
            }
        }
        let _free = FreeAll(&self.graves);
        let values = self.graves.iter().map(|g| (g.drop_fn, g.ptr));
        // SAFETY: each buried copy is an initialised value, dropped once here.
        unsafe { crate::storage::archetype::drop_each(values) };
    }
}
