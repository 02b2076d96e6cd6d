//! Sparse components: stored in a sparse set per component, not in
//! archetypes.
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
//! are written once into a staging buffer ([`Stage`]), the dense ones move
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
use super::hooks::HookKind;
use super::id_list::IdList;
use super::structure::{FieldWriter, Graveyard};
use crate::bundle::BundleId;
use crate::component::{Component, ComponentDescriptor, ComponentId, RegisterError};
use crate::entity::Entity;
use crate::error::EntityError;
use crate::location::Location;
use crate::storage::sparse_set::SparseSet;
use std::alloc::Layout;
use std::ptr::NonNull;

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

/// One bundle's fields, written once into a buffer of their own, from
/// which each moves to its storage. Fields still held when the stage drops
/// are dropped with it (a panic on the way loses no value and leaks none).
pub(crate) struct Stage {
    ptr: NonNull<u8>,
    layout: Layout,
    fields: Vec<StagedField>,
    bases: Vec<*mut u8>,
}

struct StagedField {
    size: usize,
    drop_fn: Option<unsafe fn(*mut u8)>,
    /// Whether the stage owns a value in this field's slot.
    live: bool,
}

impl Stage {
    /// An empty stage for the fields of `bundle` (none live yet).
    fn new(core: &WorldCore, bundle: BundleId) -> Self {
        let ids = core.bundles.info(bundle).ids();
        let mut layout = Layout::from_size_align(0, 1).expect("empty layout");
        let mut offsets = Vec::with_capacity(ids.len());
        let mut fields = Vec::with_capacity(ids.len());
        for &id in ids {
            let info = core.components.info(id);
            let (grown, offset) = layout
                .extend(info.layout())
                .expect("doecs: a bundle's fields exceed isize::MAX bytes");
            layout = grown;
            offsets.push(offset);
            fields.push(StagedField {
                size: info.layout().size(),
                drop_fn: info.drop_fn(),
                live: false,
            });
        }
        let ptr = if layout.size() == 0 {
            // An aligned address that owns nothing: zero-sized fields only.
            NonNull::new(std::ptr::without_provenance_mut::<u8>(layout.align()))
                .expect("alignment is non-zero")
        } else {
            // SAFETY: the layout has non-zero size.
            let raw = unsafe { std::alloc::alloc(layout) };
            NonNull::new(raw).unwrap_or_else(|| std::alloc::handle_alloc_error(layout))
        };
        let bases = offsets
            .iter()
            // SAFETY: every offset lies inside the allocation (from `extend`);
            // for an all-zero-sized layout every offset is 0.
            .map(|&o| unsafe { ptr.as_ptr().add(o) })
            .collect();
        Stage {
            ptr,
            layout,
            fields,
            bases,
        }
    }

    /// Field `i`'s slot.
    #[inline]
    fn base(&self, i: usize) -> *mut u8 {
        self.bases[i]
    }

    /// Calls `write` with every field's slot (row 0); the fields are live
    /// afterwards.
    fn fill(&mut self, write: impl FieldWriter) {
        write(&self.bases, 0);
        for f in &mut self.fields {
            f.live = true;
        }
    }

    /// A writer that moves fields `fields` (by index, in this order) into
    /// the columns it is handed, leaving them moved out of the stage.
    fn writer<'s>(&'s mut self, fields: &'s [usize]) -> impl FieldWriter + 's {
        move |bases: &[*mut u8], row: usize| {
            for (&base, &i) in bases.iter().zip(fields) {
                let size = self.fields[i].size;
                // SAFETY: the field is live in the stage; the target slot
                // (row `row` of a column of the field's type, from the
                // core) is free to overwrite; the bytes move as raw memory.
                unsafe {
                    std::ptr::copy_nonoverlapping(self.base(i), base.add(row * size), size);
                }
                self.fields[i].live = false;
            }
        }
    }
}

impl Drop for Stage {
    fn drop(&mut self) {
        /// Frees the buffer even if a value's `Drop` panics.
        struct Free(NonNull<u8>, Layout);
        impl Drop for Free {
            fn drop(&mut self) {
                if self.1.size() != 0 {
                    // SAFETY: allocated in `Stage::new` with this layout.
                    unsafe { std::alloc::dealloc(self.0.as_ptr(), self.1) };
                }
            }
        }
        let _free = Free(self.ptr, self.layout);
        for (i, f) in self.fields.iter_mut().enumerate() {
            if std::mem::take(&mut f.live) {
                if let Some(drop_fn) = f.drop_fn {
                    // SAFETY: the field holds a live value owned by the stage.
                    unsafe { drop_fn(self.bases[i]) };
                }
            }
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

    /// Pointer to `entity`'s sparse `T`, if `T` is sparse here and the
    /// entity has one.
    #[cold]
    #[inline(never)]
    pub(crate) fn sparse_ptr<T: Component>(&self, entity: Entity) -> Option<NonNull<u8>> {
        let id = self.components.id_of::<T>()?;
        self.sparse_slot_ptr(id, entity)
    }

    /// `entity`'s sparse `T`, stamped changed, or `error` (what the dense
    /// lookup found) if `T` is not sparse here or the entity lacks it.
    #[cold]
    #[inline(never)]
    pub(crate) fn sparse_mut<T: Component>(
        &mut self,
        entity: Entity,
        error: EntityError,
    ) -> Result<&mut T, EntityError> {
        let Some(id) = self.components.id_of::<T>() else {
            return Err(error);
        };
        if self.components.info(id).is_immutable() && self.has_sparse(id, entity) {
            return Err(EntityError::Immutable(std::any::type_name::<T>()));
        }
        match self.sparse_slot_ptr_mut(id, entity) {
            // SAFETY: the slot holds a live `T`, and `&mut self` makes this
            // the only access.
            Some(ptr) => Ok(unsafe { &mut *ptr.cast::<T>().as_ptr() }),
            None => Err(error),
        }
    }

    /// Pointer to `entity`'s value of sparse component `id`.
    pub(crate) fn sparse_slot_ptr(&self, id: ComponentId, entity: Entity) -> Option<NonNull<u8>> {
        let set = self.sparse.get(id)?;
        let slot = set.slot_of(entity)?;
        // SAFETY: `slot_of` found a live slot.
        Some(unsafe { set.value_ptr(slot) })
    }

    /// Pointer to `entity`'s value of sparse component `id`, stamped
    /// changed now (for a writer holding `&mut` to the world).
    pub(crate) fn sparse_slot_ptr_mut(
        &mut self,
        id: ComponentId,
        entity: Entity,
    ) -> Option<NonNull<u8>> {
        let tick = self.write_tick();
        let set = self.sparse.get(id)?;
        let slot = set.slot_of(entity)?;
        // SAFETY: the slot is live and `&mut self` makes its stamps ours.
        unsafe {
            set.stamp_changed(slot, tick);
            Some(set.value_ptr(slot))
        }
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

    /// A new entity's row for a bundle with sparse fields: the dense fields
    /// through [`WorldCore::place_row`], then the sparse ones.
    ///
    /// # Safety
    /// As [`WorldCore::place_row`].
    pub(crate) unsafe fn place_row_split(
        &mut self,
        entity: Entity,
        bundle: BundleId,
        write: impl FieldWriter,
    ) -> Location {
        let split = self.bundles.info(bundle).split().expect("split").clone();
        let mut stage = Stage::new(self, bundle);
        stage.fill(write);
        // SAFETY: forwarded contract; the stage's writer initialises every
        // dense field.
        let location =
            unsafe { self.place_row_dense(entity, split.dense, stage.writer(&split.dense_fields)) };
        self.insert_sparse_staged(entity, &split.sparse_fields, &mut stage);
        location
    }

    /// [`WorldCore::insert_fields`] for a bundle with sparse fields.
    ///
    /// # Safety
    /// As [`WorldCore::insert_fields`].
    pub(crate) unsafe fn insert_fields_split(
        &mut self,
        entity: Entity,
        location: Location,
        bundle: BundleId,
        write: impl FieldWriter,
    ) -> Location {
        let split = self.bundles.info(bundle).split().expect("split").clone();
        let mut stage = Stage::new(self, bundle);
        stage.fill(write);
        let location = if split.dense_fields.is_empty() {
            location
        } else {
            // SAFETY: forwarded contract.
            unsafe {
                self.insert_fields_dense(
                    entity,
                    location,
                    split.dense,
                    stage.writer(&split.dense_fields),
                )
            }
        };
        self.insert_sparse_staged(entity, &split.sparse_fields, &mut stage);
        location
    }

    /// [`WorldCore::remove_fields`] for a bundle with sparse fields.
    /// Fails, changing nothing, if the entity lacks one of them.
    ///
    /// # Safety
    /// As [`WorldCore::remove_fields`].
    pub(crate) unsafe fn remove_fields_split(
        &mut self,
        entity: Entity,
        location: Location,
        bundle: BundleId,
        take: impl FnOnce(&[*mut u8], usize),
    ) -> Result<Location, EntityError> {
        let split = self.bundles.info(bundle).split().expect("split").clone();
        if let Some(missing) = self.split_missing(entity, location, bundle) {
            return Err(EntityError::missing(&self.components, entity, missing));
        }
        let mut stage = Stage::new(self, bundle);
        let location = if split.dense_fields.is_empty() {
            location
        } else {
            let fields = &split.dense_fields;
            let stage = &mut stage;
            let moved = move |bases: &[*mut u8], row: usize| {
                for (&base, &i) in bases.iter().zip(fields.iter()) {
                    let size = stage.fields[i].size;
                    // SAFETY: the row holds a live value of the field, which
                    // moves into the stage as raw bytes.
                    unsafe {
                        std::ptr::copy_nonoverlapping(base.add(row * size), stage.base(i), size)
                    };
                    stage.fields[i].live = true;
                }
            };
            // SAFETY: forwarded contract; `moved` takes every value.
            unsafe { self.remove_fields_dense(entity, location, split.dense, moved)? }
        };
        self.take_sparse_staged(entity, &split.sparse_fields, &mut stage);
        take(&stage.bases, 0);
        for f in &mut stage.fields {
            f.live = false;
        }
        Ok(location)
    }

    /// The dense part of column spawns of bundle `bundle` from `sources`
    /// (one per field): the bundle to place rows of and its sources, and
    /// the sparse fields' components with their sources. The bundle itself
    /// and `sources` when it has no sparse field.
    pub(crate) fn split_columns(
        &self,
        bundle: BundleId,
        sources: &[*const u8],
    ) -> (BundleId, Vec<*const u8>, Vec<(ComponentId, *const u8)>) {
        match self.bundles.info(bundle).split() {
            None => (bundle, sources.to_vec(), Vec::new()),
            Some(split) => (
                split.dense,
                split.dense_fields.iter().map(|&i| sources[i]).collect(),
                split
                    .sparse_fields
                    .iter()
                    .map(|&(i, id)| (id, sources[i]))
                    .collect(),
            ),
        }
    }

    /// Moves packed values of sparse components into their sets: entity
    /// `k` of `entities` gets value `k` of each `(component, source)` of
    /// `columns`; then `on_add` and `on_insert` fire for each entity.
    ///
    /// # Safety
    /// Every entity must be located here, distinct, and lack every one of
    /// the components, each sparse; each source must hold `entities.len()`
    /// initialised values of its component laid out at its size (no
    /// alignment needed), which the sets take ownership of.
    pub(crate) unsafe fn insert_sparse_columns(
        &mut self,
        entities: &[Entity],
        columns: &[(ComponentId, *const u8)],
    ) {
        if columns.is_empty() {
            return;
        }
        let tick = self.write_tick();
        let mut ids = IdList::new();
        for &(id, source) in columns {
            ids.push(id);
            let set = self.sparse.get_mut(id).expect("a sparse component");
            let size = set.item().size();
            for (k, &e) in entities.iter().enumerate() {
                // SAFETY: the entity lacks the component (caller); its new
                // slot takes value `k` of the source as raw bytes, which
                // the set now owns.
                unsafe {
                    let slot = set.push_uninit(e, tick);
                    std::ptr::copy_nonoverlapping(
                        source.add(k * size),
                        set.value_ptr(slot).as_ptr(),
                        size,
                    );
                }
            }
        }
        if self.any_hook(&ids, HookKind::Add) || self.any_hook(&ids, HookKind::Insert) {
            for &e in entities {
                self.fire_hooks(HookKind::Add, e, ids.as_slice());
                self.fire_hooks(HookKind::Insert, e, ids.as_slice());
            }
        }
    }

    /// A component of `bundle` (one with sparse fields) that `entity`, at
    /// `location`, lacks.
    pub(crate) fn split_missing(
        &self,
        entity: Entity,
        location: Location,
        bundle: BundleId,
    ) -> Option<ComponentId> {
        let arch = self.archetypes.get(location.archetype);
        self.bundles.info(bundle).ids().iter().copied().find(|&c| {
            if self.components.info(c).is_sparse() {
                !self.has_sparse(c, entity)
            } else {
                !arch.has(c)
            }
        })
    }

    /// Moves the sparse fields `fields` (field index, component) of
    /// `stage` into their sets for `entity`, with their hooks.
    fn insert_sparse_staged(
        &mut self,
        entity: Entity,
        fields: &[(usize, ComponentId)],
        stage: &mut Stage,
    ) {
        let tick = self.write_tick();
        let mut replaced = IdList::new();
        let mut added = IdList::new();
        let mut all = IdList::new();
        for &(_, id) in fields {
            all.push(id);
            if self.has_sparse(id, entity) {
                replaced.push(id);
            } else {
                added.push(id);
            }
        }
        if self.any_hook(&replaced, HookKind::Replace) {
            self.fire_hooks(HookKind::Replace, entity, replaced.as_slice());
        }
        let mut graveyard = Graveyard::default();
        for &(i, id) in fields {
            let set = self.sparse.get_mut(id).expect("sparse set");
            let size = set.item().size();
            let slot = match set.slot_of(entity) {
                Some(slot) => {
                    // SAFETY: the slot holds the entity's old value, which
                    // is parked before the new one overwrites it.
                    unsafe {
                        graveyard.bury(set.value_ptr(slot).as_ptr(), set.item(), set.drop_fn());
                        set.stamp_changed(slot, tick);
                    }
                    slot
                }
                // SAFETY: the entity is not in the set; the slot is written
                // just below.
                None => unsafe { set.push_uninit(entity, tick) },
            };
            // SAFETY: the stage's field is live and of the set's type; the
            // slot is free to overwrite.
            unsafe {
                std::ptr::copy_nonoverlapping(stage.base(i), set.value_ptr(slot).as_ptr(), size)
            };
            stage.fields[i].live = false;
        }
        drop(graveyard);
        if self.any_hook(&all, HookKind::Add) || self.any_hook(&all, HookKind::Insert) {
            self.fire_hooks(HookKind::Add, entity, added.as_slice());
            self.fire_hooks(HookKind::Insert, entity, all.as_slice());
        }
    }

    /// Moves `entity`'s values of the sparse fields `fields` out of their
    /// sets into `stage`, after their `on_replace` and `on_remove` hooks.
    /// The entity must have every one.
    fn take_sparse_staged(
        &mut self,
        entity: Entity,
        fields: &[(usize, ComponentId)],
        stage: &mut Stage,
    ) {
        let ids: IdList = {
            let mut ids = IdList::new();
            for &(_, id) in fields {
                ids.push(id);
            }
            ids
        };
        self.before_sparse_removal(entity, ids.as_slice());
        for &(i, id) in fields {
            let set = self.sparse.get_mut(id).expect("sparse set");
            let slot = set.slot_of(entity).expect("checked by the caller");
            // SAFETY: the slot's value moves into the stage as raw bytes,
            // then the slot is forgotten.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    set.value_ptr(slot).as_ptr(),
                    stage.base(i),
                    set.item().size(),
                );
                set.swap_remove_forget(slot);
            }
            stage.fields[i].live = true;
        }
    }

    /// `on_replace` then `on_remove` for sparse `components` of `entity`,
    /// which are about to leave it, and their removal logs.
    fn before_sparse_removal(&mut self, entity: Entity, components: &[ComponentId]) {
        let ids = IdList::from_slice(components);
        if self.any_hook(&ids, HookKind::Replace) || self.any_hook(&ids, HookKind::Remove) {
            self.fire_hooks(HookKind::Replace, entity, components);
            self.fire_hooks(HookKind::Remove, entity, components);
        }
        self.log_removals(entity, components);
    }

    /// Whether any of `ids` has a `kind` hook or observer.
    fn any_hook(&self, ids: &IdList, kind: HookKind) -> bool {
        ids.as_slice()
            .iter()
            .any(|&c| self.components.info(c).hook_mask() & kind.bit() != 0)
    }

    /// Before `entity` despawns: fires its sparse components' removal hooks
    /// and logs, and moves their values into `graveyard` (dropped by the
    /// caller once the world is consistent).
    pub(crate) fn despawn_sparse(
        &mut self,
        entity: Entity,
        with_hooks: bool,
        graveyard: &mut Graveyard,
    ) {
        let ids = self.sparse.components_of(entity);
        if ids.as_slice().is_empty() {
            return;
        }
        if with_hooks {
            self.before_sparse_removal(entity, ids.as_slice());
        } else {
            self.log_removals(entity, ids.as_slice());
        }
        for &id in ids.as_slice() {
            let set = self.sparse.get_mut(id).expect("sparse set");
            // A hook cannot remove it (hooks only record commands).
            let Some(slot) = set.slot_of(entity) else {
                continue;
            };
            // SAFETY: the value is parked in the graveyard, then its slot
            // is forgotten.
            unsafe {
                graveyard.bury(set.value_ptr(slot).as_ptr(), set.item(), set.drop_fn());
                set.swap_remove_forget(slot);
            }
        }
    }
}
