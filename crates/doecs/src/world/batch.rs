//! Batch paths: "where there is one, there are many" (seed 001).
//!
//! `spawn_batch` fills whole chunks at a time: it computes each chunk's column
//! bases once and then writes rows with typed stores. `spawn_columns_raw`
//! spawns many entities of one archetype from per-component arrays with one
//! `memcpy` per column per chunk, which is how compiled levels load at close to
//! memcpy speed.

use super::World;
use crate::bundle::{Bundle, MAX_BUNDLE_FIELDS};
use crate::component::ComponentId;
use crate::entity::Entity;
use crate::error::EntityError;
use crate::location::Location;
use crate::storage::{ChunkIndex, ChunkRow, ColumnIndex};

impl World {
    /// Spawns one entity per item, filling whole chunks at a time, and returns
    /// the new entities in order.
    ///
    /// ```
    /// let mut world = doecs::World::new();
    /// let es = world.spawn_batch((0..1000u32).map(|i| (i, i as f32)));
    /// assert_eq!(es.len(), 1000);
    /// assert_eq!(world.get::<f32>(es[7]), Ok(&7.0));
    /// ```
    pub fn spawn_batch<B: Bundle, I: IntoIterator<Item = B>>(&mut self, bundles: I) -> Vec<Entity> {
        let mut out = Vec::new();
        self.spawn_batch_into(bundles, &mut out);
        out
    }

    /// Like [`World::spawn_batch`], appending the new entities to `out`.
    pub fn spawn_batch_into<B: Bundle, I: IntoIterator<Item = B>>(
        &mut self,
        bundles: I,
        out: &mut Vec<Entity>,
    ) {
        self.flush_reserved();
        let bundles = bundles.into_iter();
        let hint = bundles.size_hint().0;
        let slot = self.bundle_slot::<B>();
        let (archetype, columns) = (slot.archetype, slot.columns);
        let columns = &columns[..B::FIELD_COUNT];
        out.reserve(hint);
        self.archetypes.get_mut(archetype).reserve(hint);
        self.locations
            .reserve_slots(self.entities.slot_count() + hint);
        let fields = columns.len();
        let mut bases = [std::ptr::null_mut::<u8>(); MAX_BUNDLE_FIELDS];
        let mut current_chunk = None;
        for bundle in bundles {
            // User code (the iterator) has run; from here to the end of the body
            // nothing can panic before the row is complete.
            let entity = self.entities.alloc();
            let arch = self.archetypes.get_mut(archetype);
            // SAFETY: every column of the bundle's own archetype is a bundle field,
            // all written just below.
            let (chunk, row) = unsafe { arch.push_uninit(entity) };
            if current_chunk != Some(chunk) {
                for (base, &col) in bases.iter_mut().zip(columns.iter()) {
                    *base = arch.column_ptr(chunk.index(), col).as_ptr();
                }
                current_chunk = Some(chunk);
            }
            // SAFETY: `bases[i]` is field i's column in `chunk`; `row` is fresh.
            unsafe { bundle.write_row(&bases[..fields], row.index()) };
            self.locations.set(
                entity,
                Location {
                    archetype,
                    chunk,
                    row,
                },
            );
            out.push(entity);
        }
    }

    /// Spawns `count` entities with no components and returns them.
    pub fn spawn_empty_batch(&mut self, count: usize) -> Vec<Entity> {
        self.flush_reserved();
        let mut out = Vec::with_capacity(count);
        self.entities.alloc_many(count, &mut out);
        self.locations.reserve_slots(self.entities.slot_count());
        for &entity in &out {
            self.place_empty(entity);
        }
        out
    }

    /// Spawns `count` entities whose components are `ids` (any order, no
    /// duplicates), copying each component's values from `sources[i]`, which
    /// holds `count` packed values of component `ids[i]`. One `memcpy` per
    /// column per chunk. Returns the new entities in order.
    ///
    /// # Safety
    /// Each `sources[i]` must point to `count` valid, initialised values of
    /// component `ids[i]` laid out at its size (no alignment needed), which the
    /// world takes ownership of: the caller must not drop or use them again.
    pub unsafe fn spawn_columns_raw(
        &mut self,
        ids: &[ComponentId],
        count: usize,
        sources: &[*const u8],
    ) -> Result<Vec<Entity>, EntityError> {
        assert_eq!(ids.len(), sources.len(), "one source per component");
        let mut sorted = ids.to_vec();
        for &id in ids {
            if self.components.get_info(id).is_none() {
                return Err(EntityError::UnknownComponent(id));
            }
        }
        sorted.sort_unstable();
        if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
            return Err(EntityError::DuplicateComponent(w[0]));
        }
        self.flush_reserved();
        let archetype = self.archetypes.get_or_create(&sorted, &self.components);
        let mut out = Vec::with_capacity(count);
        self.entities.alloc_many(count, &mut out);
        self.locations.reserve_slots(self.entities.slot_count());
        let sizes: Vec<usize> = ids
            .iter()
            .map(|&id| self.components.info(id).layout().size())
            .collect();
        let arch = self.archetypes.get_mut(archetype);
        arch.reserve(count);
        let columns: Vec<ColumnIndex> = ids
            .iter()
            .map(|&id| arch.column_of(id).expect("archetype of ids"))
            .collect();
        let cap = arch.chunk_capacity() as usize;
        let mut done = 0;
        while done < count {
            let start_len = arch.len();
            let row0 = start_len % cap;
            let run = (cap - row0).min(count - done);
            let mut chunk = ChunkIndex(0);
            for (k, &entity) in out[done..done + run].iter().enumerate() {
                // SAFETY: the columns of this row are filled by the copies below,
                // before anything else can observe the archetype.
                let (c, r) = unsafe { arch.push_uninit(entity) };
                debug_assert_eq!(r.index(), row0 + k);
                chunk = c;
            }
            for ((&col, &size), &src) in columns.iter().zip(&sizes).zip(sources) {
                let dst = arch.slot_ptr(chunk, ChunkRow(row0 as u32), col);
                // SAFETY: the source holds `count` values of `size` bytes (caller's
                // contract); the destination run of `run` slots lies inside the
                // chunk's column because `row0 + run <= capacity`.
                unsafe {
                    std::ptr::copy_nonoverlapping(src.add(done * size), dst.as_ptr(), run * size)
                };
            }
            for (k, &entity) in out[done..done + run].iter().enumerate() {
                self.locations.set(
                    entity,
                    Location {
                        archetype,
                        chunk,
                        row: ChunkRow((row0 + k) as u32),
                    },
                );
            }
            done += run;
        }
        Ok(out)
    }

    /// Safe form of [`World::spawn_columns_raw`] for plain-bytes components
    /// (runtime components without a drop function): `sources[i]` must hold
    /// exactly `count` values of `ids[i]`.
    pub fn spawn_columns_bytes(
        &mut self,
        ids: &[ComponentId],
        count: usize,
        sources: &[&[u8]],
    ) -> Result<Vec<Entity>, EntityError> {
        assert_eq!(ids.len(), sources.len(), "one source per component");
        for (&id, src) in ids.iter().zip(sources) {
            let info = self
                .components
                .get_info(id)
                .ok_or(EntityError::UnknownComponent(id))?;
            if !info.is_plain_bytes() {
                return Err(EntityError::NotPlainBytes(id));
            }
            let expected = info.layout().size() * count;
            if src.len() != expected {
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
