//! Structural changes of bundles with sparse fields.
//!
//! Design. A bundle whose fields are all sparse moves no row: its values
//! are written straight into their sets' slots (a `FieldWriter` is handed
//! one slot per field at row 0, and a remover likewise), so inserting or
//! removing a sparse component costs a lookup and an append or a
//! swap-remove in one set, plus the hooks' checks. A bundle mixing dense
//! and sparse fields is written once into a staging buffer ([`Stage`]),
//! from which the dense fields move into the entity's row through the
//! dense sub-bundle's path and the sparse ones into their sets. Hooks,
//! observers, removal logs and change stamps go through the same functions
//! as for dense components; see `world::sparse` for the order.

use super::core::WorldCore;
use super::hooks::HookKind;
use super::id_list::IdList;
use super::scratch::{Bases, Graveyard};
use super::structure::FieldWriter;
use crate::bundle::BundleId;
use crate::component::ComponentId;
use crate::entity::Entity;
use crate::error::EntityError;
use crate::location::Location;
use std::alloc::Layout;
use std::ptr::NonNull;

/// One bundle's fields, written once into a buffer of their own, from
/// which each moves to its storage. Fields still held when the stage drops
/// are dropped with it (a panic on the way loses no value and leaks none).
struct Stage {
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

    /// Calls `write` with every field's slot (row 0); the fields are live
    /// afterwards.
    fn fill(&mut self, write: impl FieldWriter) {
        write(&self.bases, 0);
        for f in &mut self.fields {
            f.live = true;
        }
    }

    /// A writer that moves fields `fields` (by index, in this order) into
    /// the slots it is handed (row `row` of columns, or single slots at row
    /// 0), leaving them moved out of the stage.
    fn writer<'s>(&'s mut self, fields: &'s [usize]) -> impl FieldWriter + 's {
        move |bases: &[*mut u8], row: usize| {
            for (&base, &i) in bases.iter().zip(fields) {
                let size = self.fields[i].size;
                // SAFETY: the field is live in the stage; the target slot
                // (from the core) is free to overwrite; the bytes move as
                // raw memory.
                unsafe {
                    std::ptr::copy_nonoverlapping(self.bases[i], base.add(row * size), size);
                }
                self.fields[i].live = false;
            }
        }
    }

    /// A remover that moves the values it is handed (row `row`) into fields
    /// `fields` (by index, in this order), which then are live.
    fn taker<'s>(&'s mut self, fields: &'s [usize]) -> impl FnOnce(&[*mut u8], usize) + 's {
        move |bases: &[*mut u8], row: usize| {
            for (&base, &i) in bases.iter().zip(fields) {
                let size = self.fields[i].size;
                // SAFETY: the slot holds a live value of the field, which
                // moves into the stage as raw bytes.
                unsafe { std::ptr::copy_nonoverlapping(base.add(row * size), self.bases[i], size) };
                self.fields[i].live = true;
            }
        }
    }

    /// Hands every field to `take` (as slots at row 0), which moves them
    /// out.
    fn empty_into(&mut self, take: impl FnOnce(&[*mut u8], usize)) {
        for f in &mut self.fields {
            f.live = false;
        }
        take(&self.bases, 0);
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

/// The parts of a split bundle a move needs, copied out of the registry.
struct Parts {
    dense: BundleId,
    dense_fields: Box<[usize]>,
    sparse_fields: Box<[usize]>,
    sparse_ids: IdList,
}

impl WorldCore {
    /// The sparse components of `bundle`, if every field is sparse.
    #[inline]
    fn all_sparse(&self, bundle: BundleId) -> Option<IdList> {
        let info = self.bundles.info(bundle);
        let split = info.split()?;
        split
            .dense_fields
            .is_empty()
            .then(|| IdList::from_slice(info.ids()))
    }

    /// The component of `bundle` if it is one sparse component.
    #[inline]
    fn one_sparse(&self, bundle: BundleId) -> Option<ComponentId> {
        let info = self.bundles.info(bundle);
        match (info.split(), info.ids()) {
            (Some(_), &[id]) => Some(id),
            _ => None,
        }
    }

    /// The parts of a split `bundle` (one mixing dense and sparse fields).
    fn parts(&self, bundle: BundleId) -> Parts {
        let split = self.bundles.info(bundle).split().expect("a split bundle");
        let mut sparse_ids = IdList::new();
        for &(_, id) in split.sparse_fields.iter() {
            sparse_ids.push(id);
        }
        Parts {
            dense: split.dense,
            dense_fields: split.dense_fields.clone(),
            sparse_fields: split.sparse_fields.iter().map(|&(i, _)| i).collect(),
            sparse_ids,
        }
    }

    /// A new entity's row for a bundle with sparse fields: the dense fields
    /// through the row path, then the sparse ones.
    ///
    /// # Safety
    /// As [`WorldCore::place_row`].
    pub(crate) unsafe fn place_row_split(
        &mut self,
        entity: Entity,
        bundle: BundleId,
        write: impl FieldWriter,
    ) -> Location {
        if let Some(ids) = self.all_sparse(bundle) {
            let empty = self.bundles.info(bundle).split().expect("split").dense;
            // SAFETY: the empty bundle has no field to write.
            let location = unsafe { self.place_row_dense(entity, empty, |_, _| {}) };
            // SAFETY: the entity is located; `write` initialises every field.
            unsafe { self.insert_sparse_fields(entity, ids.as_slice(), write) };
            return location;
        }
        let parts = self.parts(bundle);
        let mut stage = Stage::new(self, bundle);
        stage.fill(write);
        // SAFETY: forwarded contract; the stage's writer initialises every
        // dense field.
        let location =
            unsafe { self.place_row_dense(entity, parts.dense, stage.writer(&parts.dense_fields)) };
        // SAFETY: the stage's writer initialises every sparse field.
        unsafe {
            self.insert_sparse_fields(
                entity,
                parts.sparse_ids.as_slice(),
                stage.writer(&parts.sparse_fields),
            )
        };
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
        if let Some(id) = self.one_sparse(bundle) {
            // SAFETY: forwarded contract.
            unsafe { self.insert_one_sparse(entity, id, write) };
            return location;
        }
        if let Some(ids) = self.all_sparse(bundle) {
            // SAFETY: forwarded contract.
            unsafe { self.insert_sparse_fields(entity, ids.as_slice(), write) };
            return location;
        }
        let parts = self.parts(bundle);
        let mut stage = Stage::new(self, bundle);
        stage.fill(write);
        // SAFETY: forwarded contract.
        let location = unsafe {
            self.insert_fields_dense(
                entity,
                location,
                parts.dense,
                stage.writer(&parts.dense_fields),
            )
        };
        // SAFETY: the stage's writer initialises every sparse field.
        unsafe {
            self.insert_sparse_fields(
                entity,
                parts.sparse_ids.as_slice(),
                stage.writer(&parts.sparse_fields),
            )
        };
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
        if let Some(id) = self.one_sparse(bundle) {
            // SAFETY: forwarded contract.
            return unsafe { self.take_one_sparse(entity, id, take) }.map(|()| location);
        }
        if let Some(missing) = self.split_missing(entity, location, bundle) {
            return Err(EntityError::missing(&self.components, entity, missing));
        }
        if let Some(ids) = self.all_sparse(bundle) {
            // SAFETY: the entity has every one (checked); forwarded contract.
            unsafe { self.take_sparse_fields(entity, ids.as_slice(), take) };
            return Ok(location);
        }
        let parts = self.parts(bundle);
        let mut stage = Stage::new(self, bundle);
        // SAFETY: forwarded contract; the stage's taker moves every value.
        let location = unsafe {
            self.remove_fields_dense(
                entity,
                location,
                parts.dense,
                stage.taker(&parts.dense_fields),
            )?
        };
        // SAFETY: the entity has every one (checked); the taker moves each.
        unsafe {
            self.take_sparse_fields(
                entity,
                parts.sparse_ids.as_slice(),
                stage.taker(&parts.sparse_fields),
            )
        };
        stage.empty_into(take);
        Ok(location)
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
        if self.any_hook(ids.as_slice(), HookKind::Add.bit() | HookKind::Insert.bit()) {
            for &e in entities {
                self.fire_hooks(HookKind::Add, e, ids.as_slice());
                self.fire_hooks(HookKind::Insert, e, ids.as_slice());
            }
        }
    }

    /// [`WorldCore::insert_sparse_fields`] for one component: an entity
    /// that lacks it, with nothing watching, takes the short way (a push
    /// onto the set, no parking, no hook); the rest goes the general way.
    ///
    /// # Safety
    /// As [`WorldCore::insert_sparse_fields`] with `ids` = `[id]`.
    #[inline]
    unsafe fn insert_one_sparse(
        &mut self,
        entity: Entity,
        id: ComponentId,
        write: impl FieldWriter,
    ) {
        let watched = HookKind::Replace.bit() | HookKind::Add.bit() | HookKind::Insert.bit();
        if self.components.info(id).hook_mask() & watched == 0 {
            let tick = self.write_tick();
            let set = self.sparse.get_mut(id).expect("a sparse component");
            if set.slot_of(entity).is_none() {
                // SAFETY: the entity is not in the set; the new slot is
                // written before anything reads the set.
                let slot = unsafe { set.push_uninit(entity, tick) };
                // SAFETY: the slot is live.
                write(&[unsafe { set.value_ptr(slot) }.as_ptr()], 0);
                return;
            }
        }
        // SAFETY: forwarded contract.
        unsafe { self.insert_sparse_fields(entity, &[id], write) }
    }

    /// Adds (or replaces) the sparse components `ids` of `entity`:
    /// `on_replace` for those it has, then `write(slots, 0)` writes the new
    /// values (one slot per id, in order; replaced values drop after), then
    /// `on_add` for the new ones and `on_insert` for all.
    ///
    /// # Safety
    /// `entity` must be located here and `ids` distinct sparse components;
    /// `write` must initialise every slot it is handed with a valid value
    /// of its component, without panicking.
    unsafe fn insert_sparse_fields(
        &mut self,
        entity: Entity,
        ids: &[ComponentId],
        write: impl FieldWriter,
    ) {
        let tick = self.write_tick();
        let hooked = self.any_hook(
            ids,
            HookKind::Replace.bit() | HookKind::Add.bit() | HookKind::Insert.bit(),
        );
        if let ([id], false) = (ids, hooked) {
            // One component, nothing watching: straight into its set.
            let set = self.sparse.get_mut(*id).expect("a sparse component");
            let mut graveyard = Graveyard::default();
            let slot = match set.slot_of(entity) {
                Some(slot) => {
                    // SAFETY: as below.
                    unsafe {
                        graveyard.bury(set.value_ptr(slot).as_ptr(), set.item(), set.drop_fn());
                        set.stamp_changed(slot, tick);
                    }
                    slot
                }
                // SAFETY: as below.
                None => unsafe { set.push_uninit(entity, tick) },
            };
            // SAFETY: the slot is live.
            write(&[unsafe { set.value_ptr(slot) }.as_ptr()], 0);
            return;
        }
        let mut added = IdList::new();
        if hooked {
            let mut replaced = IdList::new();
            for &id in ids {
                if self.has_sparse(id, entity) {
                    replaced.push(id);
                } else {
                    added.push(id);
                }
            }
            self.fire_hooks(HookKind::Replace, entity, replaced.as_slice());
        }
        let mut graveyard = Graveyard::default();
        let mut slots = Bases::new();
        for &id in ids {
            let set = self.sparse.get_mut(id).expect("a sparse component");
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
                // below, before anything reads the set.
                None => unsafe { set.push_uninit(entity, tick) },
            };
            // SAFETY: the slot is live (just found or pushed). Pushing into
            // the other sets leaves this one's memory in place.
            slots.push(unsafe { set.value_ptr(slot) }.as_ptr());
        }
        write(slots.as_slice(), 0);
        drop(graveyard);
        if hooked {
            self.fire_hooks(HookKind::Add, entity, added.as_slice());
            self.fire_hooks(HookKind::Insert, entity, ids);
        }
    }

    /// Takes `entity`'s sparse components `ids` out: their `on_replace`
    /// and `on_remove` hooks and removal logs, then `take(slots, 0)` moves
    /// every value out (one slot per id, in order), then the slots go.
    ///
    /// # Safety
    /// The entity must have every one of `ids` (distinct); `take` must take
    /// ownership of every value it is handed, without panicking.
    unsafe fn take_sparse_fields(
        &mut self,
        entity: Entity,
        ids: &[ComponentId],
        take: impl FnOnce(&[*mut u8], usize),
    ) {
        self.before_sparse_removal(entity, ids);
        if let [id] = ids {
            let set = self.sparse.get_mut(*id).expect("a sparse component");
            let slot = set.slot_of(entity).expect("checked by the caller");
            // SAFETY: the slot is live; its value is moved out by `take`,
            // then the slot is forgotten.
            unsafe {
                take(&[set.value_ptr(slot).as_ptr()], 0);
                set.swap_remove_forget(slot);
            }
            return;
        }
        let mut slots = Bases::new();
        for &id in ids {
            let set = self.sparse.get(id).expect("a sparse component");
            let slot = set.slot_of(entity).expect("checked by the caller");
            // SAFETY: the slot is live.
            slots.push(unsafe { set.value_ptr(slot) }.as_ptr());
        }
        take(slots.as_slice(), 0);
        for &id in ids {
            let set = self.sparse.get_mut(id).expect("a sparse component");
            let slot = set.slot_of(entity).expect("checked by the caller");
            // SAFETY: its value was moved out just above.
            unsafe { set.swap_remove_forget(slot) };
        }
    }

    /// Takes `entity`'s sparse component `id` out, as
    /// [`WorldCore::take_sparse_fields`] does, or refuses, changing nothing,
    /// if the entity lacks it. With no hook, observer or removal log to
    /// serve, this finds the set and the slot once: the short path of
    /// toggling a sparse tag.
    ///
    /// # Safety
    /// `id` must be sparse; `take` as for [`WorldCore::take_sparse_fields`].
    #[inline]
    unsafe fn take_one_sparse(
        &mut self,
        entity: Entity,
        id: ComponentId,
        take: impl FnOnce(&[*mut u8], usize),
    ) -> Result<(), EntityError> {
        let kinds = HookKind::Replace.bit() | HookKind::Remove.bit();
        if self.components.info(id).hook_mask() & kinds != 0 || self.removals_active() {
            if !self.has_sparse(id, entity) {
                return Err(EntityError::missing(&self.components, entity, id));
            }
            // SAFETY: the entity has it (checked); forwarded contract.
            unsafe { self.take_sparse_fields(entity, &[id], take) };
            return Ok(());
        }
        let set = self.sparse.get_mut(id).expect("a sparse component");
        let Some(slot) = set.slot_of(entity) else {
            return Err(EntityError::missing(&self.components, entity, id));
        };
        // SAFETY: the slot is live; `take` moves its value out, then the
        // slot is forgotten.
        unsafe {
            take(&[set.value_ptr(slot).as_ptr()], 0);
            set.swap_remove_forget(slot);
        }
        Ok(())
    }

    /// `on_replace` then `on_remove` for sparse `components` of `entity`,
    /// which are about to leave it, and their removal logs.
    #[inline]
    fn before_sparse_removal(&mut self, entity: Entity, components: &[ComponentId]) {
        if self.any_hook(components, HookKind::Replace.bit() | HookKind::Remove.bit()) {
            self.fire_hooks(HookKind::Replace, entity, components);
            self.fire_hooks(HookKind::Remove, entity, components);
        }
        if self.removals_active() {
            self.log_removals(entity, components);
        }
    }

    /// Whether any of `ids` has a hook or observer of the kinds in `kinds`
    /// (a mask of [`HookKind`] bits).
    #[inline]
    fn any_hook(&self, ids: &[ComponentId], kinds: u8) -> bool {
        ids.iter()
            .any(|&c| self.components.info(c).hook_mask() & kinds != 0)
    }

    /// Before `entity` despawns: fires its sparse components' removal hooks
    /// and logs (with `with_hooks`; only the logs without), and moves their
    /// values into `graveyard` (dropped by the caller once the world is
    /// consistent).
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
            let set = self.sparse.get_mut(id).expect("a sparse component");
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
