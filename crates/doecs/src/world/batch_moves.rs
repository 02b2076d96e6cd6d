//! Batch structural changes: one bundle inserted into, or removed from,
//! many entities at once.
//!
//! One entity at a time, an insert looks up its edge, pushes one row into
//! the target archetype, copies each shared column's value, writes the
//! bundle and swap-removes the source row: per entity, every step walks
//! every column. A batch groups its entities into runs that share a source
//! archetype (consecutive in the batch), so the edge is looked up once per
//! run, the target's rows are pushed in one step, each shared column is
//! copied column by column across the run (one column's memory at a time),
//! and the source rows are removed from the last up, so no swap moves a row
//! the run still has to take.
//!
//! The fast path applies where nothing else must happen per entity: no
//! hooks or observers on the way (`on_add`/`on_insert` for inserts,
//! `on_replace`/`on_remove` and removal logs for removals), inserts that
//! add components rather than replace them, removals of values that need
//! no `Drop`, and no entity named twice in a run. A run that misses any of
//! these takes the one-entity path for each of its entities, with exactly
//! its semantics, so the result is the same either way: the same values,
//! stamps and hooks. Every entity is checked before anything changes, so a
//! refused batch leaves the world as it was.

use super::core::WorldCore;
use super::hooks::HookKind;
use super::scratch::with_bases;
use super::World;
use crate::bundle::{Bundle, BundleId};
use crate::entity::Entity;
use crate::error::EntityError;
use crate::location::Location;
use crate::storage::archetype::copy_value;
use crate::storage::{ArchetypeId, ColumnIndex, Row};

impl World {
    /// Inserts each bundle into its entity: as [`World::insert`] for every
    /// pair, in batch order, with entities that share an archetype moved
    /// together (see the module docs). Reserved ids are spawned first.
    ///
    /// ```
    /// # use doecs::World;
    /// struct Burning(u8);
    /// let mut world = World::new();
    /// let es = world.spawn_batch((0..100u32).map(|i| (i,)));
    /// world.insert_batch(es.iter().map(|&e| (e, (Burning(3),))))?;
    /// assert_eq!(world.query::<&Burning>().iter().count(), 100);
    /// # Ok::<(), doecs::EntityError>(())
    /// ```
    ///
    /// # Errors
    /// [`EntityError::NoSuchEntity`] for a dead entity, or a malformed
    /// bundle; nothing is changed then.
    pub fn insert_batch<B: Bundle>(
        &mut self,
        batch: impl IntoIterator<Item = (Entity, B)>,
    ) -> Result<(), EntityError> {
        let batch: Vec<(Entity, B)> = batch.into_iter().collect();
        let mut reserved = false;
        for &(e, _) in &batch {
            if self.core.entities.location(e).is_none() {
                if !self.core.entities.is_reserved(e) {
                    return Err(EntityError::NoSuchEntity(e));
                }
                reserved = true;
            }
        }
        self.core.bundle_id::<B>()?;
        if reserved {
            for &(e, _) in &batch {
                self.spawn_if_reserved(e);
            }
        }
        self.with_checks_held(|w| w.core.insert_runs(batch));
        self.flush_hooks();
        Ok(())
    }

    /// Removes (and drops) bundle `B` from each of `entities`: as
    /// [`World::remove`] for each, with entities that share an archetype
    /// moved together (see the module docs). A reserved id lacks every
    /// component, so it is refused.
    ///
    /// ```
    /// # use doecs::World;
    /// struct Burning(u8);
    /// let mut world = World::new();
    /// let es = world.spawn_batch((0..100u32).map(|i| (i, Burning(1))));
    /// world.remove_batch::<(Burning,)>(&es)?;
    /// assert_eq!(world.query::<&Burning>().iter().count(), 0);
    /// # Ok::<(), doecs::EntityError>(())
    /// ```
    ///
    /// # Errors
    /// [`EntityError::NoSuchEntity`] for a dead entity, or
    /// [`EntityError::MissingComponent`] for an entity lacking one of the
    /// components, [`EntityError::AliasedEntity`] for an entity named
    /// twice (or a malformed bundle); nothing is changed then.
    pub fn remove_batch<B: Bundle>(&mut self, entities: &[Entity]) -> Result<(), EntityError> {
        let id = self
            .core
            .bundle_for_removal::<B>(entities.first().copied())?;
        let mut seen = EntitySet::default();
        let mut checked = None;
        let split = self.core.bundles.info(id).split().is_some();
        for &e in entities {
            // A reserved id has no components yet: it lacks the bundle.
            let location = match self.core.location(e) {
                Err(_) if self.core.entities.is_reserved(e) => {
                    return Err(EntityError::MissingComponent {
                        entity: e,
                        component: std::any::type_name::<B>(),
                    })
                }
                other => other?,
            };
            // Alive: an index seen before is this very entity.
            if !seen.insert(e) {
                return Err(EntityError::AliasedEntity(e));
            }
            if split {
                if self.core.split_missing(e, location, id).is_some() {
                    return Err(EntityError::MissingComponent {
                        entity: e,
                        component: std::any::type_name::<B>(),
                    });
                }
            } else if checked != Some(location.archetype) {
                if self.core.remove_edge_of(location.archetype, id).is_err() {
                    return Err(EntityError::MissingComponent {
                        entity: e,
                        component: std::any::type_name::<B>(),
                    });
                }
                checked = Some(location.archetype);
            }
        }
        self.with_checks_held(|w| w.core.remove_runs::<B>(entities, id));
        self.flush_hooks();
        Ok(())
    }
}

impl WorldCore {
    /// The bundle id of `B` for a removal, refused (registering nothing) if
    /// one of its types was never registered: no entity can have it.
    fn bundle_for_removal<B: Bundle>(
        &mut self,
        first: Option<Entity>,
    ) -> Result<BundleId, EntityError> {
        if let Some(id) = self.bundles.id_of::<B>() {
            return Ok(id);
        }
        let mut ids = Vec::new();
        if !B::registered_ids(&self.components, &mut ids) {
            return match first {
                Some(entity) => Err(EntityError::MissingComponent {
                    entity,
                    component: std::any::type_name::<B>(),
                }),
                None => self.bundle_id::<B>(),
            };
        }
        self.bundle_id::<B>()
    }

    /// The target of removing bundle `id` from archetype `from`.
    fn remove_edge_of(
        &mut self,
        from: ArchetypeId,
        id: BundleId,
    ) -> Result<ArchetypeId, crate::component::ComponentId> {
        let info = self.bundles.info(id);
        let edge = self
            .archetypes
            .remove_edge(from, id, info, &self.components);
        self.archetypes.remove_edge_at(edge).target
    }

    /// The runs of a checked insert batch: each entity is alive.
    fn insert_runs<B: Bundle>(&mut self, batch: Vec<(Entity, B)>) {
        let id = self.bundle_id::<B>().expect("checked by insert_batch");
        if self.bundles.info(id).split().is_some() {
            // Sparse fields move no row: one at a time costs the same.
            for (entity, bundle) in batch {
                self.insert(entity, bundle)
                    .expect("every entity of the batch is alive");
            }
            return;
        }
        let entities: Vec<Entity> = batch.iter().map(|(e, _)| *e).collect();
        let mut bundles = batch.into_iter().map(|(_, b)| b);
        let mut run = Run::with_capacity(entities.len());
        let mut next = 0;
        while next < entities.len() {
            // Locations are read as the runs go: an earlier run moved its
            // entities, and an entity may come back in a later one.
            let at = self
                .entities
                .location(entities[next])
                .expect("checked alive");
            run.push(entities[next], at.row);
            next += 1;
            while let Some(l) = entities.get(next).and_then(|&e| self.entities.location(e)) {
                if l.archetype != at.archetype {
                    break;
                }
                run.push(entities[next], l.row);
                next += 1;
            }
            self.insert_run(at.archetype, id, &run, &mut bundles);
            run.clear();
        }
    }

    /// Inserts one run: entities that all live in `from`, with their
    /// bundles, the next ones `bundles` gives.
    fn insert_run<B: Bundle>(
        &mut self,
        from: ArchetypeId,
        id: BundleId,
        run: &Run,
        bundles: &mut impl Iterator<Item = B>,
    ) {
        let info = self.bundles.info(id);
        let edge = self
            .archetypes
            .insert_edge(from, id, info, &self.components);
        let e = self.archetypes.insert_edge_at(edge);
        let hooked = self.archetypes.get(e.target).hook_mask()
            & (HookKind::Add.bit() | HookKind::Insert.bit())
            != 0;
        let fast = e.target != from && !e.fields.iter().any(|f| f.replaces) && !hooked;
        if !fast || !run.distinct() {
            for (&entity, bundle) in run.entities.iter().zip(bundles.by_ref()) {
                self.insert(entity, bundle)
                    .expect("every entity of the batch is alive");
            }
            return;
        }
        let target = e.target;
        // SAFETY: the rows are the run's (distinct, live, in `from`); the
        // target adds only the bundle's fields, written just below.
        let first = unsafe { self.move_rows(from, target, &run.entities, &run.rows) };
        let tick = self.write_tick();
        let e = self.archetypes.insert_edge_at(edge);
        let arch = self.archetypes.get(target);
        with_bases(arch, e.fields.iter().map(|f| f.column), |bases| {
            for (k, bundle) in bundles.by_ref().take(run.entities.len()).enumerate() {
                // SAFETY: `bases` are the bundle's columns in field order,
                // and row `first + k` was pushed with those slots free.
                unsafe { bundle.write_row(bases, first + k) };
            }
        });
        for f in e.fields.iter() {
            // SAFETY: the run's rows were just pushed; `&mut self` makes
            // them ours. Every field is new (no replaces on this path).
            unsafe { arch.stamp_added(f.column, first, run.entities.len(), tick) };
        }
    }

    /// Removes bundle `id` (of type `B`) from every entity of `entities`;
    /// each has all of its components, once.
    fn remove_runs<B: Bundle>(&mut self, entities: &[Entity], id: BundleId) {
        if self.bundles.info(id).split().is_some() {
            for &entity in entities {
                self.remove::<B>(entity)
                    .map(drop)
                    .expect("every entity has the bundle (checked)");
            }
            return;
        }
        let mut run = Run::with_capacity(entities.len());
        let mut rest = entities.iter().peekable();
        while let Some(&e) = rest.next() {
            let at = self.entities.location(e).expect("checked alive");
            run.push(e, at.row);
            while let Some(&&next) = rest.peek() {
                match self.entities.location(next) {
                    Some(l) if l.archetype == at.archetype => run.push(next, l.row),
                    _ => break,
                }
                rest.next();
            }
            self.remove_run::<B>(at.archetype, id, &run);
            run.clear();
        }
    }

    /// Removes bundle `id` from one run: entities that all live in `from`.
    fn remove_run<B: Bundle>(&mut self, from: ArchetypeId, id: BundleId, run: &Run) {
        let target = self
            .remove_edge_of(from, id)
            .expect("every entity has the bundle (checked)");
        let observed = self.archetypes.get(from).hook_mask()
            & (HookKind::Replace.bit() | HookKind::Remove.bit())
            != 0
            || self.removals_active();
        let needs_drop = self
            .bundles
            .info(id)
            .ids()
            .iter()
            .any(|&c| self.components.info(c).drop_fn().is_some());
        if observed || needs_drop || !run.distinct() {
            for &entity in &run.entities {
                self.remove::<B>(entity)
                    .map(drop)
                    .expect("every entity has the bundle (checked)");
            }
            return;
        }
        // SAFETY: the rows are the run's; the values the target lacks are
        // the bundle's, which need no drop and are left behind.
        unsafe { self.move_rows(from, target, &run.entities, &run.rows) };
    }

    /// Moves the rows `rows` of `entities` (the same length, in the same
    /// order) from archetype `from` to new rows of `to`, copying every
    /// column both have, column by column, with its stamps; returns the
    /// first new row (entity `k` is at `first + k`). The source rows are
    /// then removed from the last up and every moved entity's location is
    /// updated.
    ///
    /// # Safety
    /// `from != to`; `rows` are distinct live rows of `from` holding
    /// `entities`; columns of `to` that `from` lacks are left
    /// uninitialised for the caller to write before anything else touches
    /// the world; values of `from`'s columns that `to` lacks are forgotten
    /// (the caller moved them out, or they need no drop).
    unsafe fn move_rows(
        &mut self,
        from: ArchetypeId,
        to: ArchetypeId,
        entities: &[Entity],
        rows: &[Row],
    ) -> usize {
        let (source, target) = self.archetypes.pair_mut(from, to);
        // SAFETY: the caller writes the target-only columns; shared ones
        // are copied below.
        let first = unsafe { target.push_many_uninit(entities) }.index();
        let k = rows.len();
        // Rows `rows[0]..rows[0] + k` in order: each column is one copy.
        let contiguous = rows.windows(2).all(|w| w[1].0 == w[0].0 + 1);
        for (d, &id) in target.components().iter().enumerate() {
            let Some(s) = source.column_of(id) else {
                continue;
            };
            let d = ColumnIndex(d as u32);
            let size = source.column_size(s);
            if contiguous && k > 0 {
                // SAFETY: rows `rows[0]..rows[0] + k` are live in the source
                // (caller) and `first..first + k` were just pushed: `k`
                // slots of one component type in each of two archetypes'
                // columns (contiguous arrays), which do not overlap; the
                // source values are forgotten below.
                unsafe {
                    let src = source.slot_ptr_unchecked(rows[0], s);
                    let dst = target.slot_ptr_unchecked(Row(first as u32), d);
                    std::ptr::copy_nonoverlapping(src.as_ptr(), dst.as_ptr(), size * k);
                }
            } else {
                for (j, &row) in rows.iter().enumerate() {
                    // SAFETY: as above, one slot at a time.
                    unsafe {
                        let src = source.slot_ptr_unchecked(row, s);
                        let dst = target.slot_ptr_unchecked(Row((first + j) as u32), d);
                        copy_value(src.as_ptr(), dst.as_ptr(), size);
                    }
                }
            }
            if contiguous && k > 0 && !source.tracks_rows(s) && !target.tracks_rows(d) {
                // Chunk stamps only: the latest of the source chunks the
                // rows leave raises each target chunk they enter (an upper
                // bound, as chunk stamps are).
                let (src_rows, dst_rows) = (source.chunk_rows(), target.chunk_rows());
                let (r0, r1) = (rows[0].index(), rows[k - 1].index());
                let (mut added, mut changed) = (0, 0);
                for chunk in r0 / src_rows..=r1 / src_rows {
                    let t = source.chunk_ticks(s, chunk);
                    added = added.max(t.added().get());
                    changed = changed.max(t.changed().get());
                }
                for chunk in first / dst_rows..=(first + k - 1) / dst_rows {
                    target.chunk_ticks(d, chunk).absorb(added, changed);
                }
            } else {
                for (j, &row) in rows.iter().enumerate() {
                    let stamps = source.row_ticks(row, s);
                    // SAFETY: the row was just pushed; `&mut self` makes it
                    // ours.
                    unsafe { target.stamp_moved_in(d, Row((first + j) as u32), stamps) };
                }
            }
        }
        let tail = contiguous && k > 0 && rows[k - 1].index() + 1 == source.len();
        if tail {
            // SAFETY: the rows are the table's tail, every value copied or
            // forgotten (caller).
            unsafe { source.truncate_forget(rows[0].index()) };
        } else {
            let mut order: Vec<Row> = rows.to_vec();
            if !rows.windows(2).all(|w| w[0] < w[1]) {
                order.sort_unstable();
            }
            for row in order.into_iter().rev() {
                // SAFETY: every value of the row was copied or is forgotten
                // (caller); rows go from the last up, so the row that fills
                // each hole is never one the run still has to remove.
                if let Some(moved) = unsafe { source.swap_remove_forget(row) } {
                    self.entities.set_location(
                        moved,
                        Location {
                            archetype: from,
                            row,
                        },
                    );
                }
            }
        }
        for (k, &entity) in entities.iter().enumerate() {
            let row = Row((first + k) as u32);
            self.entities
                .set_location(entity, Location { archetype: to, row });
        }
        first
    }
}

/// A set of live entities by index, as a bitmap: the duplicate check of a
/// batch, linear in the batch (two live entities never share an index).
#[derive(Default)]
struct EntitySet {
    bits: Vec<u64>,
}

impl EntitySet {
    /// Adds `e`; `false` if it was already in.
    fn insert(&mut self, e: Entity) -> bool {
        let i = e.index() as usize;
        if self.bits.len() <= i / 64 {
            self.bits.resize(i / 64 + 1, 0);
        }
        let bit = 1u64 << (i % 64);
        let fresh = self.bits[i / 64] & bit == 0;
        self.bits[i / 64] |= bit;
        fresh
    }
}

/// The entities of one run and their rows in its archetype, reused from
/// run to run.
struct Run {
    entities: Vec<Entity>,
    rows: Vec<Row>,
}

impl Run {
    fn with_capacity(n: usize) -> Self {
        Run {
            entities: Vec::with_capacity(n),
            rows: Vec::with_capacity(n),
        }
    }

    fn push(&mut self, entity: Entity, row: Row) {
        self.entities.push(entity);
        self.rows.push(row);
    }

    fn clear(&mut self) {
        self.entities.clear();
        self.rows.clear();
    }

    /// Whether no entity is named twice (no row repeats).
    fn distinct(&self) -> bool {
        if self.rows.windows(2).all(|w| w[0] < w[1]) {
            return true;
        }
        let mut sorted = self.rows.clone();
        sorted.sort_unstable();
        sorted.windows(2).all(|w| w[0] != w[1])
    }
}
