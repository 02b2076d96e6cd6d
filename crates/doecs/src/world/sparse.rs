//! Sparse components: stored in a sparse set per component, not in
//! archetypes (registration, lookups; the structural side is in
//! `sparse_moves`).
//!
//! Design. A component registered sparse ([`WorldCore::register_sparse`],
//! or a descriptor made with [`ComponentDescriptor::sparse`]) never enters
//! an archetype: its values live in the world's [`SparseSet`] for it, so
//! adding or removing it is an append or a swap-remove there, with no row
//! move and no new archetype. The storage is chosen once per component and
//! is fixed from its first use on, so every bundle knows, when it is
//! registered, whether it has sparse fields ([`SparseSplit`]); a bundle
//! without them pays one load and one branch per structural change for the
//! feature. A bundle with them is split at the structural core: its fields
//! are written once into a staging buffer, the dense ones move
//! into the entity's row through the dense sub-bundle's usual path, and the
//! sparse ones go to their sets. So every front end (typed, untyped,
//! deferred, batch) keeps calling the one core per operation, and hooks,
//! observers, removal logs, change stamps and required components cover
//! sparse components through the same functions as dense ones.
//!
//! Order. In one operation the dense fields go first (with their hooks),
//! then the sparse ones: `on_replace` for the sparse components replaced,
//! the writes, then `on_add` for the new ones and `on_insert` for all. A
//! despawn fires the sparse components' `on_replace` and `on_remove` after
//! the dense ones', and drops their values after the row's.
//!
//! Sparse components are not inherited through `IsA` (a prefab's sparse
//! values stay its own).

use super::core::WorldCore;
use super::id_list::IdList;
use crate::component::{Component, ComponentDescriptor, ComponentId, RegisterError};
use crate::entity::Entity;
use crate::error::EntityError;
use crate::location::Location;
use crate::storage::sparse_set::{SparseSet, SparseSlot};
use crate::storage::ColumnIndex;
use crate::tick::Tick;
use std::alloc::Layout;
use std::ptr::NonNull;

/// Where an entity's component is, checked for a write (see
/// [`WorldCore::write_slot`]): valid until the next structural change.
#[derive(Clone, Copy, Debug)]
pub(crate) enum WriteSlot {
    /// In the entity's row: the column and the row's location.
    Row(ColumnIndex, Location),
    /// In the component's sparse set.
    Sparse(ComponentId, SparseSlot),
}

/// The world's sparse sets, one per sparse component.
#[derive(Debug, Default)]
pub(crate) struct SparseSets {
    sets: Vec<SparseSet>,
    /// Component index to set index + 1 (0: not sparse).
    of_component: Vec<u32>,
}

impl SparseSets {
    /// Whether the world has no sparse component.
    #[inline(always)]
    pub(crate) fn is_empty(&self) -> bool {
        self.sets.is_empty()
    }

    /// The set of component `id`, if it is sparse.
    #[inline]
    pub(crate) fn get(&self, id: ComponentId) -> Option<&SparseSet> {
        let at = self.of_component.get(id.index())?.checked_sub(1)?;
        Some(&self.sets[at as usize])
    }

    /// The set of component `id`, if it is sparse.
    #[inline]
    pub(crate) fn get_mut(&mut self, id: ComponentId) -> Option<&mut SparseSet> {
        let at = self.of_component.get(id.index())?.checked_sub(1)?;
        Some(&mut self.sets[at as usize])
    }

    /// How many sets there are.
    pub(crate) fn len(&self) -> usize {
        self.sets.len()
    }

    /// Every set, in the order the components were made sparse.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &SparseSet> {
        self.sets.iter()
    }

    /// Every set, mutably.
    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = &mut SparseSet> {
        self.sets.iter_mut()
    }

    /// The sparse components `entity` has, in the order of the sets.
    pub(crate) fn components_of(&self, entity: Entity) -> IdList {
        let mut out = IdList::new();
        for set in &self.sets {
            if set.contains(entity) {
                out.push(set.component());
            }
        }
        out
    }

    fn add(&mut self, id: ComponentId, item: Layout, drop_fn: Option<unsafe fn(*mut u8)>) {
        if self.of_component.len() <= id.index() {
            self.of_component.resize(id.index() + 1, 0);
        }
        self.sets.push(SparseSet::new(id, item, drop_fn));
        self.of_component[id.index()] = self.sets.len() as u32;
    }

    /// Checks every set's invariants.
    pub(crate) fn check_invariants(&self) {
        for set in &self.sets {
            set.check_invariants();
        }
    }
}

impl WorldCore {
    /// Registers `T` (if it is not yet) as a sparse component: its values
    /// live in a sparse set keyed by entity, not in archetypes, so adding
    /// or removing it moves no row and creates no archetype. Idempotent;
    /// returns `T`'s id.
    ///
    /// Choose sparse for tags toggled often and for components few
    /// entities have; keep dense (the default) what many entities have and
    /// loops read every frame: a query reaches a sparse value through one
    /// more lookup per row.
    ///
    /// Queries read sparse components through
    /// [`Sparse`](crate::Sparse) terms (`Sparse<&T>`, `Sparse<&mut T>`,
    /// `Option<Sparse<&T>>`); a plain `&T` term of a sparse `T` is refused
    /// ([`QueryError::SparseTerm`](crate::QueryError::SparseTerm)).
    ///
    /// # Errors
    /// [`RegisterError::StorageFixed`] if `T` already has values in
    /// archetypes or is named by a bundle: register it sparse first.
    ///
    /// ```
    /// use doecs::{Sparse, World};
    ///
    /// struct Stunned(u32);
    /// struct Pos(f32);
    ///
    /// let mut world = World::new();
    /// world.register_sparse::<Stunned>().unwrap();
    /// let a = world.spawn((Pos(0.0),));
    /// let b = world.spawn((Pos(1.0), Stunned(3)));
    /// let archetypes = doecs::raw::archetypes(&world).len();
    /// world.insert_one(a, Stunned(1)).unwrap(); // no row moves
    /// assert_eq!(doecs::raw::archetypes(&world).len(), archetypes);
    /// assert_eq!(world.get::<Stunned>(a).unwrap().0, 1);
    ///
    /// let mut stunned = Vec::new();
    /// world
    ///     .query::<(doecs::Entity, &Pos, Sparse<&Stunned>)>()
    ///     .for_each(|(e, _, s)| stunned.push((e, s.0)));
    /// stunned.sort();
    /// assert_eq!(stunned, vec![(a, 1), (b, 3)]);
    /// world.remove_one::<Stunned>(b).unwrap();
    /// assert!(world.get::<Stunned>(b).is_err());
    /// ```
    pub fn register_sparse<T: Component>(&mut self) -> Result<ComponentId, RegisterError> {
        let id = self.components.register::<T>();
        self.make_sparse(id)
    }

    /// Registers a component described at runtime, or a Rust type under a
    /// stable name, making it sparse if the descriptor asks
    /// ([`ComponentDescriptor::sparse`]).
    pub(crate) fn register_described(
        &mut self,
        descriptor: ComponentDescriptor,
    ) -> Result<ComponentId, RegisterError> {
        let sparse = descriptor.is_sparse();
        let id = self.components.register_descriptor(descriptor)?;
        if sparse {
            self.make_sparse(id)?;
        }
        Ok(id)
    }

    /// Makes component `id` sparse (see [`WorldCore::register_sparse`]).
    fn make_sparse(&mut self, id: ComponentId) -> Result<ComponentId, RegisterError> {
        let info = self.components.info(id);
        if info.is_sparse() {
            return Ok(id);
        }
        if self.archetypes.iter().any(|a| a.has(id)) || self.bundles.any_contains(id) {
            return Err(RegisterError::StorageFixed(info.name().to_owned()));
        }
        let (layout, drop_fn) = (info.layout(), info.drop_fn());
        self.components.set_sparse(id);
        self.sparse.add(id, layout, drop_fn);
        Ok(id)
    }

    /// The components of `entity`, which lives in `archetype`: the
    /// archetype's, in id order, then its sparse ones.
    pub(crate) fn entity_components(
        &self,
        entity: Entity,
        archetype: crate::storage::ArchetypeId,
    ) -> impl Iterator<Item = &crate::component::ComponentInfo> + '_ {
        let sparse = self.sparse.components_of(entity);
        self.components_in(archetype).chain(
            (0..sparse.as_slice().len()).map(move |i| self.components.info(sparse.as_slice()[i])),
        )
    }

    /// Pointer to `entity`'s sparse `T`, if `T` is sparse here and the
    /// entity has one.
    #[cold]
    #[inline(never)]
    pub(crate) fn sparse_ptr<T: Component>(&self, entity: Entity) -> Option<NonNull<u8>> {
        let id = self.components.id_of::<T>()?;
        self.sparse_slot_ptr(id, entity)
    }

    /// Where `entity`'s `T` is, checked for a write but not stamped yet:
    /// its row's slot, or its sparse set's. The one lookup behind every
    /// typed `get_mut` (the world's, a system's, `get_many_mut`).
    ///
    /// # Errors
    /// [`EntityError::NoSuchEntity`], [`EntityError::MissingComponent`],
    /// [`EntityError::Inherited`] for a `T` only inherited from a prefab,
    /// [`EntityError::Immutable`] for a `T` registered immutable.
    #[inline]
    pub(crate) fn write_slot<T: Component>(
        &self,
        entity: Entity,
    ) -> Result<WriteSlot, EntityError> {
        match self.component_column::<T>(entity) {
            Ok((column, location)) => Ok(WriteSlot::Row(column, location)),
            Err(error) => self.sparse_write_slot::<T>(entity, error),
        }
    }

    /// [`WorldCore::write_slot`] for a `T` not in the entity's row: its
    /// sparse slot, or `error` (what the row lookup found) if `T` is not
    /// sparse here or the entity lacks it.
    #[cold]
    #[inline(never)]
    fn sparse_write_slot<T: Component>(
        &self,
        entity: Entity,
        error: EntityError,
    ) -> Result<WriteSlot, EntityError> {
        let Some(id) = self.components.id_of::<T>() else {
            return Err(error);
        };
        let Some(slot) = self.sparse.get(id).and_then(|set| set.slot_of(entity)) else {
            return Err(error);
        };
        if self.components.info(id).is_immutable() {
            return Err(EntityError::Immutable(std::any::type_name::<T>()));
        }
        Ok(WriteSlot::Sparse(id, slot))
    }

    /// The value at `slot`, stamped changed at `tick`.
    ///
    /// # Safety
    /// `slot` must come from [`WorldCore::write_slot`] on this world with
    /// no structural change since, and the caller must hold exclusive
    /// access to that value and its stamps (`&mut` to the world, or a
    /// declared write of the component in a running schedule).
    #[inline]
    pub(crate) unsafe fn stamp_write_slot(&self, slot: WriteSlot, tick: Tick) -> *mut u8 {
        match slot {
            // SAFETY: forwarded contract: the row is live.
            WriteSlot::Row(column, location) => unsafe { self.stamped_ptr(column, location, tick) },
            WriteSlot::Sparse(id, slot) => {
                let set = self.sparse.get(id).expect("a sparse slot's set");
                // SAFETY: the slot is live (no structural change since it
                // was found) and its stamps are the caller's (contract).
                unsafe {
                    set.stamp_changed(slot, tick);
                    set.value_ptr(slot).as_ptr()
                }
            }
        }
    }

    /// Pointer to `entity`'s value of sparse component `id`.
    pub(crate) fn sparse_slot_ptr(&self, id: ComponentId, entity: Entity) -> Option<NonNull<u8>> {
        let set = self.sparse.get(id)?;
        let slot = set.slot_of(entity)?;
        // SAFETY: `slot_of` found a live slot.
        Some(unsafe { set.value_ptr(slot) })
    }

    /// The added and changed stamps of `entity`'s sparse component `id`.
    pub(crate) fn sparse_ticks(
        &self,
        id: ComponentId,
        entity: Entity,
    ) -> Option<(crate::tick::Tick, crate::tick::Tick)> {
        let set = self.sparse.get(id)?;
        let slot = set.slot_of(entity)?;
        // SAFETY: the slot is live; `&self` keeps writers out.
        Some(unsafe { set.ticks(slot) })
    }

    /// Whether `entity` has sparse component `id`.
    #[inline]
    pub(crate) fn has_sparse(&self, id: ComponentId, entity: Entity) -> bool {
        self.sparse.get(id).is_some_and(|s| s.contains(entity))
    }
}
