//! Structural changes: one core per operation.
//!
//! Every way of changing which components an entity has goes through one of
//! four functions here, whatever its front end (typed, untyped, command
//! buffer, batch):
//! - [`WorldCore::place_row`]: a new entity gets a row holding a bundle;
//! - [`WorldCore::insert_fields`]: add or replace a bundle's components;
//! - [`WorldCore::remove_fields`]: take a bundle's components out;
//! - [`WorldCore::despawn_rows`]: drop entities' rows and values (in
//!   `world::despawn`).
//!
//! Each looks its target up through the archetype graph's cached edge for
//! (archetype, bundle), so after the first time a change costs one binary
//! search. A move appends a row to the target archetype, copies the
//! components both archetypes share as raw bytes (never dropping and
//! rebuilding them), and removes the source row by moving the source's last
//! row into the hole. Values that an operation replaces are parked in a
//! [`Graveyard`] and dropped only once the world is consistent again, so a
//! panicking `Drop` never leaves a half-made row behind.
//!
//! Callers validate first (the entity is here, the bundle is well formed)
//! and only then call a core, so a refused call changes nothing.

use super::core::WorldCore;
use super::hooks::HookKind;
use super::id_list::IdList;
use super::scratch::{with_bases, Bases, Graveyard};
use crate::bundle::{Bundle, BundleId};
use crate::component::ComponentId;
use crate::entity::Entity;
use crate::error::EntityError;
use crate::location::Location;
use crate::storage::archetypes::{EdgeIndex, FieldTarget};
use crate::storage::row_move::MoveIndex;
use crate::storage::{Archetype, ArchetypeId, Row};
use crate::tick::Tick;

/// The entities a batch spawn ([`WorldCore::place_new_rows`]) created.
pub(crate) struct NewRows {
    /// In batch order.
    pub(crate) entities: Vec<Entity>,
    /// The first entity's index when every entity took a fresh slot, one
    /// no entity ever had: then their indices are that one, the next, and
    /// so on, in batch order.
    pub(crate) fresh_from: Option<u32>,
}

/// Places new rows of one bundle's own archetype, remembering the column
/// starts so a batch computes them again only when the columns grow.
pub(crate) struct RowPlacer {
    target: ArchetypeId,
    edge: EdgeIndex,
    /// What the new rows are stamped with.
    tick: Tick,
    /// The capacity the bases were computed for.
    capacity: Option<usize>,
    bases: Bases,
    /// Whether the target keeps row stamps (checked with the bases).
    row_ticks: bool,
    /// The chunk whose ticks this placer stamped last, while no hook has
    /// run since: its ticks still read `tick` (a batch runs no other code on
    /// the world, and ticks only rise), so rows placed in it need no store.
    stamped_chunk: Option<usize>,
}

impl RowPlacer {
    /// A placer for bundle `bundle` of `core`.
    #[inline]
    pub(crate) fn new(core: &mut WorldCore, bundle: BundleId) -> Self {
        let info = core.bundles.info(bundle);
        let edge = core
            .archetypes
            .insert_edge(ArchetypeId::EMPTY, bundle, info, &core.components);
        RowPlacer {
            target: core.archetypes.insert_edge_at(edge).target,
            edge,
            tick: core.write_tick(),
            capacity: None,
            bases: Bases::new(),
            row_ticks: true,
            stamped_chunk: None,
        }
    }

    /// Reserves room for `additional` more rows.
    pub(crate) fn reserve(&self, core: &mut WorldCore, additional: usize) {
        core.archetypes.get_mut(self.target).reserve(additional);
    }

    /// Gives the new entity `entity` a row, filled by `write`.
    ///
    /// # Safety
    /// As [`WorldCore::place_row`]; `core` must be the core this placer was
    /// made for.
    #[inline]
    pub(crate) unsafe fn place(
        &mut self,
        core: &mut WorldCore,
        entity: Entity,
        write: impl FieldWriter,
    ) -> Location {
        debug_assert!(core.entities.location(entity).is_none());
        let archetypes = &mut core.archetypes;
        // SAFETY: every column of the bundle's own archetype is a bundle field,
        // which `write` initialises just below (caller's contract).
        let row = unsafe { archetypes.get_mut(self.target).push_uninit(entity) };
        let arch = archetypes.get(self.target);
        if self.capacity != Some(arch.capacity()) {
            let fields = &archetypes.insert_edge_at(self.edge).fields;
            self.bases.fill(arch, fields);
            self.capacity = Some(arch.capacity());
            self.row_ticks = arch.keeps_row_ticks();
        }
        write(self.bases.as_slice(), row.index());
        let hooked = arch.hook_mask() & (HookKind::Add.bit() | HookKind::Insert.bit()) != 0;
        // A batch stamps each chunk's ticks once: later rows of the chunk
        // find them at `tick` already. Rows with their own stamps, and any
        // row after a hook ran, are stamped one by one.
        let chunk = arch.shape().chunk_of(row.index());
        if hooked || self.row_ticks || self.stamped_chunk != Some(chunk) {
            // SAFETY: the row was just pushed, and `&mut` to the core makes
            // it ours.
            unsafe { arch.stamp_row_added(row, self.tick) };
            self.stamped_chunk = (!hooked).then_some(chunk);
        }
        let location = Location {
            archetype: self.target,
            row,
        };
        core.entities.set_location(entity, location);
        if hooked {
            core.fire_new_row_hooks(entity, location);
        }
        location
    }
}

/// Writes a bundle's fields: `write(bases, row)` gets, in field order, each
/// field's column start in the target archetype and the row to write.
pub(crate) trait FieldWriter: FnOnce(&[*mut u8], usize) {}
impl<F: FnOnce(&[*mut u8], usize)> FieldWriter for F {}

/// The writer of a typed bundle value.
///
/// # Safety
/// The returned writer must be called with the columns of exactly `B`'s
/// fields, in field order, at a row whose field slots are free to overwrite.
#[inline]
pub(crate) unsafe fn typed_writer<B: Bundle>(bundle: B) -> impl FieldWriter {
    move |bases: &[*mut u8], row: usize| {
        // SAFETY: the caller passes `B`'s columns in field order, and the
        // slots at `row` are uninitialised or already parked.
        unsafe { bundle.write_row(bases, row) }
    }
}

impl WorldCore {
    /// The id of bundle type `B` in this world, registering it on first use.
    /// A malformed bundle is refused before anything is registered.
    #[inline]
    pub(crate) fn bundle_id<B: Bundle>(&mut self) -> Result<BundleId, EntityError> {
        self.bundles.of::<B>(&mut self.components)
    }

    /// Gives the new entity `entity` (in no archetype yet) a row holding the
    /// bundle `bundle`, whose fields `write` fills, and records its location.
    ///
    /// # Safety
    /// `entity` must have no row in this world, and `write` must initialise
    /// every field slot it is handed with a valid value of that field's type.
    #[inline]
    pub(crate) unsafe fn place_row(
        &mut self,
        entity: Entity,
        bundle: BundleId,
        write: impl FieldWriter,
    ) -> Location {
        if self.bundles.info(bundle).split().is_some() {
            // SAFETY: forwarded contract.
            return unsafe { self.place_row_split(entity, bundle, write) };
        }
        // SAFETY: forwarded contract.
        unsafe { self.place_row_dense(entity, bundle, write) }
    }

    /// [`WorldCore::place_row`] for a bundle without sparse fields.
    ///
    /// # Safety
    /// As [`WorldCore::place_row`].
    pub(crate) unsafe fn place_row_dense(
        &mut self,
        entity: Entity,
        bundle: BundleId,
        write: impl FieldWriter,
    ) -> Location {
        let mut placer = RowPlacer::new(self, bundle);
        // SAFETY: forwarded contract.
        unsafe { placer.place(self, entity, write) }
    }

    /// Gives each new entity of `entities` a row of bundle `bundle`'s own
    /// archetype, then calls `fill(bases, first_row)` once to write the
    /// fields of entity `k` into row `first_row + k` of the columns at `bases`.
    ///
    /// # Safety
    /// No entity of `entities` may have a row here, and `fill` must initialise
    /// every field slot of every new row, without panicking.
    pub(crate) unsafe fn place_rows(
        &mut self,
        entities: &[Entity],
        bundle: BundleId,
        fill: impl FnOnce(&[*mut u8], usize),
    ) {
        let placer = RowPlacer::new(self, bundle);
        let target = placer.target;
        let arch = self.archetypes.get_mut(target);
        // SAFETY: the columns of these rows are filled by `fill` below, before
        // anything else can observe the archetype.
        let first = unsafe { arch.push_many_uninit(entities) }.index();
        for (k, &entity) in entities.iter().enumerate() {
            self.entities.set_location(
                entity,
                Location {
                    archetype: target,
                    row: Row((first + k) as u32),
                },
            );
        }
        // SAFETY: forwarded contract; the rows were just pushed.
        unsafe { self.fill_new_rows(entities, &placer, first, fill) }
    }

    /// Spawns `count` new entities with rows of bundle `bundle`'s own
    /// archetype, as [`place_rows`](Self::place_rows) places them: each
    /// entity's slot is written once, already located.
    ///
    /// # Safety
    /// `fill` must initialise every field slot of every new row, without
    /// panicking.
    pub(crate) unsafe fn place_new_rows(
        &mut self,
        count: usize,
        bundle: BundleId,
        fill: impl FnOnce(&[*mut u8], usize),
    ) -> NewRows {
        let placer = RowPlacer::new(self, bundle);
        let target = placer.target;
        let first = self.archetypes.get(target).len();
        let mut entities = Vec::with_capacity(count);
        let fresh_from = self
            .entities
            .alloc_many_located(count, &mut entities, target, first);
        let arch = self.archetypes.get_mut(target);
        // SAFETY: the columns of these rows are filled by `fill` below, before
        // anything else can observe the archetype.
        let pushed = unsafe { arch.push_many_uninit(&entities) }.index();
        debug_assert_eq!(pushed, first, "located where they were pushed");
        // SAFETY: forwarded contract; the rows were just pushed.
        unsafe { self.fill_new_rows(&entities, &placer, first, fill) };
        NewRows {
            entities,
            fresh_from,
        }
    }

    /// The end [`place_rows`](Self::place_rows) and
    /// [`place_new_rows`](Self::place_new_rows) share: fills rows
    /// `first..first + entities.len()` of the placer's archetype, stamps
    /// them added and fires the hooks of their components.
    ///
    /// # Safety
    /// The rows were just pushed for `entities` (located there), and
    /// `fill` must initialise every field slot of each, without panicking.
    unsafe fn fill_new_rows(
        &mut self,
        entities: &[Entity],
        placer: &RowPlacer,
        first: usize,
        fill: impl FnOnce(&[*mut u8], usize),
    ) {
        let target = placer.target;
        let mut bases = Bases::new();
        let fields = &self.archetypes.insert_edge_at(placer.edge).fields;
        let arch = self.archetypes.get(target);
        bases.fill(arch, fields);
        fill(bases.as_slice(), first);
        // SAFETY: the rows were just pushed, and `&mut self` makes them ours.
        unsafe { arch.stamp_rows_added(first, entities.len(), placer.tick) };
        if arch.hook_mask() & (HookKind::Add.bit() | HookKind::Insert.bit()) != 0 {
            for (k, &entity) in entities.iter().enumerate() {
                let location = Location {
                    archetype: target,
                    row: Row((first + k) as u32),
                };
                self.fire_new_row_hooks(entity, location);
            }
        }
    }

    /// Fires `on_add` then `on_insert` for every component of a row that
    /// was just filled with new values.
    fn fire_new_row_hooks(&mut self, entity: Entity, location: Location) {
        self.fire_row_hooks(HookKind::Add, entity, location);
        self.fire_row_hooks(HookKind::Insert, entity, location);
    }

    /// Whether taking components off an entity at `location` has anything
    /// to tell: hooks that fire on removal, or removal logs.
    #[inline]
    pub(super) fn removal_observed(&self, location: Location) -> bool {
        let mask = HookKind::Replace.bit() | HookKind::Remove.bit();
        self.archetypes.get(location.archetype).hook_mask() & mask != 0 || self.removals_active()
    }

    /// Fires `on_replace` then `on_remove` for `components` of `entity`,
    /// which are about to leave it.
    pub(super) fn before_removal(
        &mut self,
        entity: Entity,
        location: Location,
        components: &[ComponentId],
    ) {
        let mask = HookKind::Replace.bit() | HookKind::Remove.bit();
        if self.archetypes.get(location.archetype).hook_mask() & mask != 0 {
            self.fire_hooks(HookKind::Replace, entity, components);
            self.fire_hooks(HookKind::Remove, entity, components);
        }
    }

    /// Adds the components of `bundle` to `entity`, which lives at `location`;
    /// components it already has are replaced, and their old values drop
    /// after the new ones are in place. Returns the new location.
    ///
    /// # Safety
    /// `location` must be `entity`'s location, and `write` must initialise
    /// every field slot it is handed with a valid value of that field's type.
    pub(crate) unsafe fn insert_fields(
        &mut self,
        entity: Entity,
        location: Location,
        bundle: BundleId,
        write: impl FieldWriter,
    ) -> Location {
        if self.bundles.info(bundle).split().is_some() {
            // SAFETY: forwarded contract.
            return unsafe { self.insert_fields_split(entity, location, bundle, write) };
        }
        // SAFETY: forwarded contract.
        unsafe { self.insert_fields_dense(entity, location, bundle, write) }
    }

    /// [`WorldCore::insert_fields`] for a bundle without sparse fields.
    ///
    /// # Safety
    /// As [`WorldCore::insert_fields`].
    pub(crate) unsafe fn insert_fields_dense(
        &mut self,
        entity: Entity,
        location: Location,
        bundle: BundleId,
        write: impl FieldWriter,
    ) -> Location {
        let tick = self.write_tick();
        let info = self.bundles.info(bundle);
        let edge_index =
            self.archetypes
                .insert_edge(location.archetype, bundle, info, &self.components);
        let edge = self.archetypes.insert_edge_at(edge_index);
        // Whether any field replaces a value is decided once per edge: a
        // pure addition (the common case) has no replace hooks to run and no
        // old values to park.
        let (target, replaces, moves) = (edge.target, edge.replaces_any, edge.moves);
        if replaces && self.has_hooks(location.archetype, HookKind::Replace) {
            let (replaced, _) =
                self.split_fields(&self.archetypes.insert_edge_at(edge_index).fields, bundle);
            self.fire_hooks(HookKind::Replace, entity, replaced.as_slice());
        }
        let new = if target == location.archetype {
            location
        } else {
            // SAFETY: the target is a superset of the source, `moves` the
            // edge's plan; the columns it adds are bundle fields, written
            // below.
            unsafe { self.move_row(entity, location, target, moves) }
        };
        let edge = self.archetypes.insert_edge_at(edge_index);
        let arch = self.archetypes.get(target);
        // Park the values being replaced: they now sit in the new row. A
        // pure addition builds no graveyard (nor drops one).
        let graveyard = replaces.then(|| {
            let mut graveyard = Graveyard::default();
            let info = self.bundles.info(bundle);
            for (f, &id) in edge.fields.iter().zip(info.ids()) {
                if f.replaces {
                    let c = self.components.info(id);
                    let slot = arch.slot_ptr(new.row, f.column);
                    // SAFETY: the slot holds an initialised value of `id`,
                    // which the write below overwrites without dropping.
                    unsafe { graveyard.bury(slot.as_ptr(), c.layout(), c.drop_fn()) };
                }
            }
            graveyard
        });
        with_bases(arch, edge.fields.iter().map(|f| f.column), |bases| {
            write(bases, new.row.index())
        });
        stamp_fields(arch, &edge.fields, new.row, tick);
        let inserted_hooks = arch.hook_mask() & (HookKind::Add.bit() | HookKind::Insert.bit()) != 0;
        drop(graveyard);
        if inserted_hooks {
            let (_, added) =
                self.split_fields(&self.archetypes.insert_edge_at(edge_index).fields, bundle);
            self.fire_inserted_hooks(entity, &added, bundle);
        }
        new
    }

    /// The components of `bundle` whose fields replace a value, and those
    /// that are new, by the edge's `fields` (in field order).
    fn split_fields(&self, fields: &[FieldTarget], bundle: BundleId) -> (IdList, IdList) {
        let ids = self.bundles.info(bundle).ids();
        let mut replaced = IdList::new();
        let mut added = IdList::new();
        for (f, &id) in fields.iter().zip(ids) {
            if f.replaces {
                replaced.push(id);
            } else {
                added.push(id);
            }
        }
        (replaced, added)
    }

    /// After an insert (or the insert half of an exchange) of `bundle`,
    /// whose new components are `added`: `on_add` for those, then
    /// `on_insert` for all of them.
    fn fire_inserted_hooks(&mut self, entity: Entity, added: &IdList, bundle: BundleId) {
        self.fire_hooks(HookKind::Add, entity, added.as_slice());
        let all = IdList::from_slice(self.bundles.info(bundle).ids());
        self.fire_hooks(HookKind::Insert, entity, all.as_slice());
    }

    /// Takes the components of `bundle` out of `entity`, which lives at
    /// `location`: `take(bases, row)` gets each field's column start in the
    /// entity's archetype (in field order) and must move every value out. Fails,
    /// changing nothing, if the entity lacks one of them.
    ///
    /// # Safety
    /// `location` must be `entity`'s location, and `take` must take ownership
    /// of every value it is handed (read it out or bury it) without panicking.
    pub(crate) unsafe fn remove_fields(
        &mut self,
        entity: Entity,
        location: Location,
        bundle: BundleId,
        take: impl FnOnce(&[*mut u8], usize),
    ) -> Result<Location, EntityError> {
        if self.bundles.info(bundle).split().is_some() {
            // SAFETY: forwarded contract.
            return unsafe { self.remove_fields_split(entity, location, bundle, take) };
        }
        // SAFETY: forwarded contract.
        unsafe { self.remove_fields_dense(entity, location, bundle, take) }
    }

    /// [`WorldCore::remove_fields`] for a bundle without sparse fields.
    ///
    /// # Safety
    /// As [`WorldCore::remove_fields`].
    pub(crate) unsafe fn remove_fields_dense(
        &mut self,
        entity: Entity,
        location: Location,
        bundle: BundleId,
        take: impl FnOnce(&[*mut u8], usize),
    ) -> Result<Location, EntityError> {
        let info = self.bundles.info(bundle);
        let edge_index =
            self.archetypes
                .remove_edge(location.archetype, bundle, info, &self.components);
        let edge = self.archetypes.remove_edge_at(edge_index);
        let (target, moves) = match edge.target {
            Ok(target) => (target, edge.moves),
            Err(missing) => return Err(EntityError::missing(&self.components, entity, missing)),
        };
        let removed = self
            .removal_observed(location)
            .then(|| IdList::from_slice(self.bundles.info(bundle).ids()));
        if let Some(removed) = &removed {
            self.before_removal(entity, location, removed.as_slice());
        }
        let edge = self.archetypes.remove_edge_at(edge_index);
        let source = self.archetypes.get(location.archetype);
        with_bases(source, edge.fields.iter().copied(), |bases| {
            take(bases, location.row.index())
        });
        // SAFETY: the target is the source minus the bundle, whose values
        // were all moved out above; `moves` is the edge's plan.
        let new = unsafe { self.move_row(entity, location, target, moves) };
        if let Some(removed) = &removed {
            self.log_removals(entity, removed.as_slice());
        }
        Ok(new)
    }

    /// Swaps the components of bundle `old` for those of bundle `new` on
    /// `entity`, at `location`, in one move: `take(bases, row)` gets `old`'s
    /// columns in the source and must move every value out, then `write`
    /// fills `new`'s columns in the target. Components of `new` the entity
    /// keeps from before are replaced (their old values drop last). Fails,
    /// changing nothing, if the entity lacks one of `old`'s components.
    ///
    /// # Safety
    /// As [`WorldCore::remove_fields`] for `take` and
    /// [`WorldCore::insert_fields`] for `write`.
    pub(crate) unsafe fn exchange_fields(
        &mut self,
        entity: Entity,
        location: Location,
        old: BundleId,
        new: BundleId,
        take: impl FnOnce(&[*mut u8], usize),
        write: impl FieldWriter,
    ) -> Result<Location, EntityError> {
        if self.bundles.info(old).split().is_some() || self.bundles.info(new).split().is_some() {
            // Sparse fields move no row: the exchange is a removal, then an
            // insert, each refused or done whole.
            // SAFETY: forwarded contract.
            let here = unsafe { self.remove_fields(entity, location, old, take)? };
            // SAFETY: forwarded contract; `here` is the entity's location.
            return Ok(unsafe { self.insert_fields(entity, here, new, write) });
        }
        let tick = self.write_tick();
        let edge = self
            .archetypes
            .exchange_edge(
                location.archetype,
                (old, self.bundles.info(old)),
                (new, self.bundles.info(new)),
                &self.components,
            )
            .clone();
        let target = match edge.target {
            Ok(target) => target,
            Err(missing) => return Err(EntityError::missing(&self.components, entity, missing)),
        };
        // Hooks first, while nothing has changed: the old bundle leaves, and
        // the new bundle's components the entity keeps are replaced.
        let removed = self
            .removal_observed(location)
            .then(|| self.bundles.info(old).ids().to_vec());
        if let Some(removed) = &removed {
            self.before_removal(entity, location, removed);
        }
        if self.has_hooks(location.archetype, HookKind::Replace) {
            let (kept, _) = self.split_fields(&edge.new_fields, new);
            self.fire_hooks(HookKind::Replace, entity, kept.as_slice());
        }
        let source = self.archetypes.get(location.archetype);
        with_bases(source, edge.old_fields.iter().copied(), |bases| {
            take(bases, location.row.index())
        });
        // Components in both bundles were just moved out; the move copies
        // their stale bytes, which the write overwrites without dropping
        // (the edge does not count them as replaced).
        let here = if target == location.archetype {
            location
        } else {
            // SAFETY: every source component the target lacks is one of
            // `old`'s, moved out above; the target's new columns are `new`'s
            // fields, written below; `edge.moves` is the edge's plan.
            unsafe { self.move_row(entity, location, target, edge.moves) }
        };
        let arch = self.archetypes.get(target);
        let info = self.bundles.info(new);
        let mut graveyard = Graveyard::default();
        for (f, &id) in edge.new_fields.iter().zip(info.ids()) {
            if f.replaces {
                let c = self.components.info(id);
                let slot = arch.slot_ptr(here.row, f.column);
                // SAFETY: the slot holds the entity's kept value of `id`.
                unsafe { graveyard.bury(slot.as_ptr(), c.layout(), c.drop_fn()) };
            }
        }
        with_bases(arch, edge.new_fields.iter().map(|f| f.column), |bases| {
            write(bases, here.row.index())
        });
        stamp_fields(arch, &edge.new_fields, here.row, tick);
        drop(graveyard);
        if let Some(removed) = &removed {
            self.log_removals(entity, removed);
        }
        if self.archetypes.get(target).hook_mask() & (HookKind::Add.bit() | HookKind::Insert.bit())
            != 0
        {
            let (_, added) = self.split_fields(&edge.new_fields, new);
            self.fire_inserted_hooks(entity, &added, new);
        }
        Ok(here)
    }

    /// Moves `entity` from its row at `from` to a new row in `to`, copying the
    /// components both share. Returns the new location; the index is updated
    /// for `entity` and for the row that filled the hole.
    ///
    /// # Safety
    /// `from` must be `entity`'s location, `to != from.archetype`, and
    /// `moves` the plan of the edge between them. Every
    /// source component `to` lacks must already be moved out. Every column of
    /// `to` that the source lacks is left uninitialised: the caller must write
    /// it before anything else touches the world.
    unsafe fn move_row(
        &mut self,
        entity: Entity,
        from: Location,
        to: ArchetypeId,
        moves: MoveIndex,
    ) -> Location {
        // SAFETY: forwarded contract.
        let (row, moved) = unsafe {
            self.archetypes
                .move_row(entity, (from.archetype, from.row), to, moves)
        };
        if let Some(moved) = moved {
            self.entities.relocate(moved, from);
        }
        let new = Location { archetype: to, row };
        self.entities.relocate(entity, new);
        new
    }
}

/// Stamps a bundle's fields at `row` of `arch` after a write: a field that
/// replaced a value as changed, a new one as added.
#[inline]
fn stamp_fields(arch: &Archetype, fields: &[FieldTarget], row: Row, tick: Tick) {
    for f in fields {
        // SAFETY: `row` is live and the caller holds `&mut` to the world.
        unsafe { arch.stamp_row(f.column, row, !f.replaces, tick) };
    }
}
