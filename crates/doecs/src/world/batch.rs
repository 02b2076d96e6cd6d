//! Batch paths: "where there is one, there are many" (Bitsquid's "Building a Data-Oriented Entity System").
//!
//! `spawn_batch` reserves room for the whole batch, then a [`RowPlacer`]
//! writes rows with typed stores into the columns. `spawn_columns_raw` spawns
//! many entities of one archetype from per-component arrays with one `memcpy`
//! per column, which is how compiled levels load at close to memcpy speed;
//! `spawn_columns_raw_parented` also parents them, in the same operation.
//! All place rows through the same structural core as a single spawn.

use super::structure::{typed_writer, NewRows, RowPlacer};
use super::World;
use crate::bundle::Bundle;
use crate::component::ComponentId;
use crate::entity::Entity;
use crate::error::EntityError;
use crate::relation::{ParentedBatch, ParentsFirst};

impl World {
    /// Spawns one entity per bundle and returns the new entities in order:
    /// the batch path, which reserves room for the whole batch and writes
    /// rows straight into the columns. (Builders and templates spawn one at
    /// a time, with [`World::spawn`].)
    ///
    /// ```
    /// let mut world = doecs::World::new();
    /// let es = world.spawn_batch((0..100u32).map(|i| (i, i as f32)));
    /// assert_eq!(es.len(), 100);
    /// assert_eq!(world.get::<f32>(es[7]), Ok(&7.0));
    /// ```
    ///
    /// # Panics
    /// If the bundle names one component type twice, before anything changes
    /// ([`World::try_spawn_batch`] returns that as an error instead).
    pub fn spawn_batch<B: Bundle, I: IntoIterator<Item = B>>(&mut self, bundles: I) -> Vec<Entity> {
        match self.try_spawn_batch(bundles) {
            Ok(out) => out,
            Err(e) => panic!("doecs: {e}"),
        }
    }

    /// As [`World::spawn_batch`], but a bundle that names one type twice is
    /// refused, changing nothing.
    pub fn try_spawn_batch<B: Bundle, I: IntoIterator<Item = B>>(
        &mut self,
        bundles: I,
    ) -> Result<Vec<Entity>, EntityError> {
        let bundles = bundles.into_iter();
        let mut out = Vec::with_capacity(bundles.size_hint().0);
        self.spawn_each(bundles, |e| out.push(e))?;
        Ok(out)
    }

    /// The batch core: spawns one entity per bundle, telling `spawned` each id.
    fn spawn_each<B: Bundle>(
        &mut self,
        bundles: impl Iterator<Item = B>,
        mut spawned: impl FnMut(Entity),
    ) -> Result<(), EntityError> {
        let id = self.core.bundle_id::<B>()?;
        if self.core.bundles.info(id).split().is_some() {
            for bundle in bundles {
                let entity = self.core.entities.alloc();
                // SAFETY: the entity is new; the writer fills exactly `B`'s fields.
                unsafe { self.core.place_row(entity, id, typed_writer(bundle)) };
                spawned(entity);
            }
            self.flush_hooks();
            return Ok(());
        }
        let hint = bundles.size_hint().0;
        let mut placer = RowPlacer::new(&mut self.core, id);
        placer.reserve(&mut self.core, hint);
        let slots = self.core.entities.slot_count() + hint;
        self.core.entities.reserve_slots(slots);
        for bundle in bundles {
            // User code (the iterator) has run; from here to the end of the body
            // nothing can panic before the row is complete.
            let entity = self.core.entities.alloc();
            // SAFETY: the entity is new; the writer fills exactly `B`'s fields.
            unsafe { placer.place(&mut self.core, entity, typed_writer(bundle)) };
            spawned(entity);
        }
        self.flush_hooks();
        Ok(())
    }

    /// Spawns `count` entities with no components and returns them.
    pub(crate) fn spawn_empty_batch(&mut self, count: usize) -> Vec<Entity> {
        let id = self
            .core
            .bundle_id::<()>()
            .expect("the empty bundle is valid");
        // SAFETY: the empty bundle has no fields to fill.
        let out = unsafe { self.core.place_new_rows(count, id, |_, _| {}) };
        self.flush_hooks();
        out.entities
    }

    /// Spawns `count` entities whose components are `ids` (any order, no
    /// duplicates), copying each component's values from `sources[i]`, which
    /// holds `count` packed values of component `ids[i]`. One `memcpy` per
    /// column. Returns the new entities in order.
    ///
    /// # Safety
    /// Each `sources[i]` must point to `count` valid, initialised values of
    /// component `ids[i]` laid out at its size (no alignment needed), which the
    /// world takes ownership of: the caller must not drop or use them again.
    pub(crate) unsafe fn spawn_columns_raw(
        &mut self,
        ids: &[ComponentId],
        count: usize,
        sources: &[*const u8],
    ) -> Result<Vec<Entity>, EntityError> {
        // SAFETY: the caller's contract is this function's.
        let out = unsafe { self.place_columns(ids, count, sources) }?;
        self.flush_hooks();
        Ok(out.entities)
    }

    /// [`raw::spawn_columns`](crate::raw::spawn_columns) with the new entities parented in the
    /// same operation: entity `k` becomes `ChildOf` entity `p` of the batch
    /// for each `parents[k] == Some(p)`, `count` being `parents.len()`.
    /// The entities are fresh and the indices come first by their type, so
    /// no check of [`raw::parent_batch`](crate::raw::parent_batch) is needed; the commands that
    /// hooks record while the components arrive are applied once the
    /// parents are set too. What level spawning uses.
    ///
    /// # Errors
    /// As [`raw::spawn_columns`](crate::raw::spawn_columns); the world is unchanged.
    ///
    /// # Safety
    /// As [`raw::spawn_columns`](crate::raw::spawn_columns) with `count == parents.len()`.
    ///
    /// [`raw::parent_batch`]: crate::raw::parent_batch
    pub(crate) unsafe fn spawn_columns_raw_parented(
        &mut self,
        ids: &[ComponentId],
        sources: &[*const u8],
        parents: ParentsFirst,
    ) -> Result<ParentedBatch, EntityError> {
        // SAFETY: the caller's contract, with `count == parents.len()`.
        let spawned = unsafe { self.place_columns(ids, parents.len(), sources) }?;
        // Nothing ran since the spawn but hooks, which only record commands.
        let batch = self.core.parent_fresh_batch(spawned, parents);
        self.flush_hooks();
        Ok(batch)
    }

    /// The core of both column spawns: places the rows, leaving the
    /// hooks' commands queued.
    ///
    /// # Safety
    /// As [`raw::spawn_columns`](crate::raw::spawn_columns).
    unsafe fn place_columns(
        &mut self,
        ids: &[ComponentId],
        count: usize,
        sources: &[*const u8],
    ) -> Result<NewRows, EntityError> {
        assert_eq!(ids.len(), sources.len(), "one source per component");
        let bundle = self.core.bundles.of_ids(ids, &self.core.components)?;
        let (bundle, sources, sparse) = self.core.split_columns(bundle, sources);
        let sizes: Vec<usize> = (self.core.bundles.info(bundle).ids().iter())
            .map(|&id| self.core.components.info(id).layout().size())
            .collect();
        // SAFETY: each column gets one copy of the `count` values of its
        // source (caller's contract) into the new rows `first..first +
        // count`, which lie inside its capacity.
        let out = unsafe {
            self.core.place_new_rows(count, bundle, |bases, first| {
                for ((&base, &size), &src) in bases.iter().zip(&sizes).zip(&sources) {
                    std::ptr::copy_nonoverlapping(src, base.add(first * size), count * size)
                }
            })
        };
        // SAFETY: the new entities have rows and no sparse component; the
        // sparse sources hold `count` values each (caller's contract).
        unsafe { self.core.insert_sparse_columns(&out.entities, &sparse) };
        Ok(out)
    }

    /// Safe form of [`raw::spawn_columns`](crate::raw::spawn_columns) for plain-bytes components
    /// (runtime components without a drop function): `sources[i]` must hold
    /// exactly `count` values of `ids[i]`.
    pub(crate) fn spawn_columns_bytes(
        &mut self,
        ids: &[ComponentId],
        count: usize,
        sources: &[&[u8]],
    ) -> Result<Vec<Entity>, EntityError> {
        assert_eq!(ids.len(), sources.len(), "one source per component");
        for (&id, src) in ids.iter().zip(sources) {
            let info = self
                .core
                .components
                .get_info(id)
                .ok_or(EntityError::UnknownComponent(id))?;
            if !info.is_plain_bytes() {
                return Err(EntityError::NotPlainBytes(id));
            }
            // A product past `usize::MAX` is no slice's length: refused as
            // such, not wrapped round to one that might match.
            let expected = info.layout().size().checked_mul(count);
            if expected != Some(src.len()) {
                let expected = expected.unwrap_or(usize::MAX);
                return Err(EntityError::WrongSize {
                    id,
                    expected,
                    actual: src.len(),
                });
            }
        }
        let ptrs: Vec<*const u8> = sources.iter().map(|s| s.as_ptr()).collect();
        // SAFETY: plain-bytes components accept any bytes and need no drop; the
        // lengths were checked to hold `count` values each.
        unsafe { self.spawn_columns_raw(ids, count, &ptrs) }
    }
}
