//! Archetype images: a copy of an archetype's rows kept aside, for world
//! snapshots.
//!
//! An image mirrors the archetype's layout: one contiguous buffer per
//! column, plus the entity ids. Saving copies each column the way its
//! component allows ([`SnapshotCopy`]): `Copy` and plain-bytes columns as
//! raw bytes in one `memcpy` (provenance and padding travel with them, as in
//! every row move), `Clone` columns value by value. Restoring does the
//! reverse into the archetype, after dropping its current values. A clone
//! column's values are not dropped and cloned afresh where a value is
//! already there, in the image on a save or in the archetype on a restore:
//! the new value overwrites it with `clone_from`, which may keep its memory
//! (a `String` that fits). Buffers only grow, so a steady-state save
//! allocates nothing.
//!
//! Restoring keeps change detection honest: a row gets a new stamp only if
//! its value may differ from the one it replaces. Chunks whose entities sit
//! in the same rows before and after keep their stamps, except rows written
//! after the snapshot was taken (their value reverts, which is a change).
//! Rows of other chunks take the stamps of the same entity's old row in this
//! archetype, under the same rule, or are stamped added and changed now.
//!
//! # Invariants
//! - `columns[i]` mirrors the archetype's component `components[i]`; every
//!   buffer has capacity `capacity` rows.
//! - For a column copied by `Clone`, slots `0..live` hold live clones the
//!   image owns (overwritten in place by the next save, dropped when the
//!   image holds fewer rows or drops); byte columns hold plain bytes, which
//!   need no drop.
//! - Rows `0..len` of the entity buffer and of every column are the saved
//!   rows, when every column's `live` (for clone columns) equals `len`.

use super::{Archetype, Column};
use crate::component::{ComponentId, Components, SnapshotCopy};
use crate::entity::Entity;
use crate::tick::Tick;
use std::alloc::Layout;

/// One column's saved values.
struct ImageColumn {
    buffer: Column,
    copy: SnapshotCopy,
    /// Live clones in slots `0..live` (clone columns only).
    live: usize,
}

impl ImageColumn {
    /// Drops the clones in slots `keep..live`; `live` becomes at most `keep`.
    fn drop_clones_from(&mut self, keep: usize) {
        let live = self.live;
        self.live = live.min(keep);
        if let Some(drop_fn) = self.buffer.drop_fn() {
            let buffer = &self.buffer;
            // SAFETY: slots `keep..live` lie within the buffer's capacity and
            // hold clones this image owns, now forgotten (`live` is at most
            // `keep`), each dropped once.
            unsafe { super::drop_each((keep..live).map(|r| (drop_fn, buffer.slot(r).as_ptr()))) };
        }
    }
}

/// A saved copy of one archetype's rows. See the module docs.
pub(crate) struct ArchetypeImage {
    components: Box<[ComponentId]>,
    entities: Column,
    columns: Vec<ImageColumn>,
    len: usize,
    capacity: usize,
}

// SAFETY: the buffers hold `Send + Sync` component values and entity ids,
// reached only through `&mut self` (writes) or `&self` (reads).
unsafe impl Send for ArchetypeImage {}
// SAFETY: as above.
unsafe impl Sync for ArchetypeImage {}

impl ArchetypeImage {
    /// An empty image of an archetype with `components`.
    fn new(components: &[ComponentId], registry: &Components) -> Self {
        ArchetypeImage {
            components: components.into(),
            entities: Column::new(Layout::new::<Entity>(), None),
            columns: components
                .iter()
                .map(|&c| {
                    let info = registry.info(c);
                    ImageColumn {
                        buffer: Column::new(info.layout(), info.drop_fn()),
                        copy: info.snapshot_copy(),
                        live: 0,
                    }
                })
                .collect(),
            len: 0,
            capacity: 0,
        }
    }

    /// The saved rows' entity ids.
    pub(crate) fn entities(&self) -> &[Entity] {
        // SAFETY: rows `0..len` hold saved entity ids (type invariant).
        unsafe { std::slice::from_raw_parts(self.entities.ptr().cast().as_ptr(), self.len) }
    }

    /// Bytes the buffers hold.
    pub(crate) fn memory_bytes(&self) -> usize {
        let row: usize =
            self.entities.size() + self.columns.iter().map(|c| c.buffer.size()).sum::<usize>();
        row * self.capacity
    }

    /// Drops the clones this image holds.
    fn drop_clones(&mut self) {
        self.len = 0;
        for column in &mut self.columns {
            column.drop_clones_from(0);
        }
    }

    fn grow(&mut self, rows: usize) {
        if rows <= self.capacity {
            return;
        }
        for column in self
            .columns
            .iter_mut()
            .map(|c| &mut c.buffer)
            .chain(std::iter::once(&mut self.entities))
        {
            // SAFETY: every buffer has capacity `self.capacity` (type
            // invariant), and growing keeps every slot's bytes.
            unsafe { column.resize(self.capacity, rows) };
        }
        self.capacity = rows;
    }
}

impl Drop for ArchetypeImage {
    fn drop(&mut self) {
        self.drop_clones();
        let capacity = self.capacity;
        for column in self
            .columns
            .iter_mut()
            .map(|c| &mut c.buffer)
            .chain(std::iter::once(&mut self.entities))
        {
            // SAFETY: capacity is every buffer's; no clone is live any more.
            unsafe { column.free(capacity) };
        }
    }
}

/// Copies `rows` values of `column`'s kind from `from` to `to`. For a clone
/// column, slots `0..*live` of `to` hold live values, overwritten in place
/// (`clone_from`); the others get fresh clones, counted in `live` as they
/// are made (so a panicking clone leaves `live` exact).
///
/// # Safety
/// `from` holds `rows` live values of the column's type; `to` has room for
/// `rows` values, of which slots `0..*live` hold live ones and the rest
/// none; `*live <= rows`.
unsafe fn copy_values(
    copy: SnapshotCopy,
    size: usize,
    from: *const u8,
    to: *mut u8,
    rows: usize,
    live: &mut usize,
) {
    match copy {
        // SAFETY: `Bytes` columns are `Copy` or plain bytes: copying the raw
        // memory makes valid, independent values (caller: both ranges valid,
        // and distinct allocations).
        SnapshotCopy::Bytes => unsafe { std::ptr::copy_nonoverlapping(from, to, rows * size) },
        SnapshotCopy::Clone(clone, clone_into) => {
            for r in 0..*live {
                // SAFETY: slot `r` of `from` and of `to` are live values of
                // the type, in distinct allocations.
                unsafe { clone_into(from.add(r * size), to.add(r * size)) };
            }
            for r in *live..rows {
                // SAFETY: slot `r` of `from` is live, slot `r` of `to` is free.
                unsafe { clone(from.add(r * size), to.add(r * size)) };
                *live += 1;
            }
        }
        // Skipped columns keep nothing (the restore writes defaults).
        SnapshotCopy::Reset(_) => {}
        // Only empty archetypes may hold such columns (checked by the caller).
        SnapshotCopy::Unsupported => assert_eq!(rows, 0, "doecs: copying an uncopyable column"),
    }
}

/// Restores `rows` values of `column`'s kind from `from` into `to`: a copy
/// (for a clone column, overwriting slots `0..live` in place), or for a
/// skipped column a fresh default value per row.
///
/// # Safety
/// As [`copy_values`], with `live` for its `*live`; `live` is 0 unless the
/// column is copied by `Clone`.
unsafe fn restore_values(
    copy: SnapshotCopy,
    size: usize,
    from: *const u8,
    to: *mut u8,
    rows: usize,
    mut live: usize,
) {
    match copy {
        SnapshotCopy::Reset(reset) => {
            for r in 0..rows {
                // SAFETY: slot `r` of `to` is free, with room for one value.
                unsafe { reset(to.add(r * size)) };
            }
        }
        // SAFETY: forwarded contract.
        copy => unsafe { copy_values(copy, size, from, to, rows, &mut live) },
    }
}

impl Archetype {
    /// Saves the rows into `image` (made afresh if it mirrors another
    /// archetype). Every component must be copyable (checked by the caller).
    /// If a `Clone` panics, the image is left holding fewer rows than the
    /// archetype; the caller marks the snapshot unfinished.
    pub(crate) fn save_into(&self, image: &mut Option<ArchetypeImage>, registry: &Components) {
        let image = match image {
            Some(i) if *i.components == *self.components => i,
            slot => slot.insert(ArchetypeImage::new(&self.components, registry)),
        };
        // Clones past the new row count go; the others are overwritten in
        // place below, unless the column is no longer copied by `Clone`.
        image.len = 0;
        for (saved, &id) in image.columns.iter_mut().zip(&*self.components) {
            let copy = registry.info(id).snapshot_copy();
            let reuse = matches!(
                (saved.copy, copy),
                (SnapshotCopy::Clone(..), SnapshotCopy::Clone(..))
            );
            saved.drop_clones_from(if reuse { self.len } else { 0 });
            saved.copy = copy;
        }
        image.grow(self.len);
        // SAFETY: both entity arrays have room for `len` ids; distinct allocations.
        unsafe {
            std::ptr::copy_nonoverlapping(
                self.entities.ptr().as_ptr(),
                image.entities.ptr().as_ptr(),
                self.len * size_of::<Entity>(),
            )
        };
        for (column, saved) in self.columns.iter().zip(&mut image.columns) {
            // SAFETY: rows `0..len` of the column are live; the image has
            // room for `len` values, and live clones in slots `0..live`
            // with `live <= len` (trimmed above).
            unsafe {
                copy_values(
                    saved.copy,
                    column.size(),
                    column.ptr().as_ptr(),
                    saved.buffer.ptr().as_ptr(),
                    self.len,
                    &mut saved.live,
                )
            };
        }
        image.len = self.len;
    }

    /// Replaces the rows with the image's. `old_row` finds an entity's row
    /// before the restore (checked against the archetype's own entity
    /// array); `since` is the tick the snapshot was taken at and `now` the
    /// restore's tick (see the module docs for the stamps). `scratch` is
    /// reused memory.
    ///
    /// If a `Clone` panics, the archetype is left empty with the values it
    /// held leaked, and the panic continues: the caller empties the world.
    pub(crate) fn restore_from(
        &mut self,
        image: &ArchetypeImage,
        since: Tick,
        now: Tick,
        old_row: impl Fn(Entity) -> Option<usize>,
        scratch: &mut RestoreScratch,
    ) {
        debug_assert_eq!(*image.components, *self.components);
        let shift = self.shape.shift();
        let per_chunk = self.shape.rows();
        let (old_len, new_len) = (self.len, image.len);
        let chunk_rows = |k: usize| (k * per_chunk, ((k + 1) * per_chunk).min(new_len));
        let chunks = self.shape.chunks(new_len);
        let old_entities = self.entities();
        let new_entities = image.entities();
        // Which chunks keep their entities row for row.
        scratch.kept.clear();
        scratch.kept.extend((0..chunks).map(|k| {
            let (from, to) = chunk_rows(k);
            to <= old_len && old_entities[from..to] == new_entities[from..to]
        }));
        // Stamps of rows in other chunks, from the entity's old row; row by
        // row, a pair per column.
        scratch.stamps.clear();
        for k in (0..chunks).filter(|&k| !scratch.kept[k]) {
            let (from, to) = chunk_rows(k);
            for &entity in &new_entities[from..to] {
                let old = old_row(entity).filter(|&r| r < old_len && old_entities[r] == entity);
                for ticks in self.ticks.iter() {
                    scratch.stamps.push(match old {
                        Some(r) => {
                            // SAFETY: `r` is a live row (checked above).
                            let (added, changed) = unsafe { ticks.row_or_chunk(r, shift) };
                            (
                                added,
                                if changed > since.get() {
                                    now.get()
                                } else {
                                    changed
                                },
                            )
                        }
                        None => (now.get(), now.get()),
                    });
                }
            }
        }
        // Drop the current values, except the first `keep` rows of each
        // clone column, which the image's values overwrite in place below
        // (`clone_from`: a `String` that fits keeps its memory). The rows
        // are forgotten first, so a panicking drop leaves an empty
        // archetype (the kept values leaked).
        let keep = old_len.min(new_len);
        let reuses = |copy: SnapshotCopy| matches!(copy, SnapshotCopy::Clone(..));
        self.len = 0;
        let doomed = self
            .columns
            .iter()
            .zip(&image.columns)
            .filter_map(|(c, saved)| {
                let from = if reuses(saved.copy) { keep } else { 0 };
                Some((c.drop_fn()?, c, from))
            })
            .flat_map(|(drop_fn, c, from)| {
                (from..old_len).map(move |r| {
                    // SAFETY: `r < old_len <= capacity`.
                    let slot = unsafe { c.slot(r) };
                    (drop_fn, slot.as_ptr())
                })
            });
        // SAFETY: every pointer is a distinct initialised value of a row
        // that was live and is now forgotten, dropped once (rows `0..keep`
        // of clone columns are not among them); the memory stays allocated.
        unsafe { super::drop_each(doomed) };
        // Growing keeps every slot's bytes, the kept values included.
        self.reserve(new_len);
        /// Empties the archetype if a clone unwinds (values leaked).
        struct Unwinding<'a>(&'a mut Archetype);
        impl Drop for Unwinding<'_> {
            fn drop(&mut self) {
                self.0.len = 0;
            }
        }
        let guard = Unwinding(self);
        let arch = &mut *guard.0;
        // Entity ids: kept chunks hold the image's ids already (compared
        // equal above, and growing keeps every slot's bytes); the others
        // are copied.
        let ids = size_of::<Entity>();
        for k in (0..chunks).filter(|&k| !scratch.kept[k]) {
            let (from, to) = chunk_rows(k);
            // SAFETY: rows `from..to` lie below `new_len <= capacity` in both
            // entity buffers; distinct allocations.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    image.entities.ptr().as_ptr().add(from * ids),
                    arch.entities.ptr().as_ptr().add(from * ids),
                    (to - from) * ids,
                )
            };
        }
        for (column, saved) in arch.columns.iter().zip(&image.columns) {
            let live = if reuses(saved.copy) { keep } else { 0 };
            // SAFETY: the image's rows `0..new_len` are live saved values
            // (none for a skipped column, which reads nothing); the
            // archetype has room for them, its slots `0..live` hold kept
            // values and the others are free (dropped above).
            unsafe {
                restore_values(
                    saved.copy,
                    column.size(),
                    saved.buffer.ptr().as_ptr(),
                    column.ptr().as_ptr(),
                    new_len,
                    live,
                )
            };
        }
        arch.len = new_len;
        std::mem::forget(guard);
        // Stamps: in place for kept chunks, from `scratch` for the others.
        let mut stamps = scratch.stamps.iter();
        for k in 0..chunks {
            let (from, to) = chunk_rows(k);
            if scratch.kept[k] {
                for ticks in self.ticks.iter() {
                    // SAFETY: rows `from..to` are live, in chunk `k`; `&mut self`.
                    unsafe { ticks.restamp_reverted(from, to, since, now, shift) };
                }
                continue;
            }
            for ticks in self.ticks.iter() {
                ticks.reset_chunk(k);
            }
            for row in from..to {
                for ticks in self.ticks.iter() {
                    let &pair = stamps.next().expect("a stamp pair per row and column");
                    // SAFETY: `row` is live; `&mut self`.
                    unsafe { ticks.move_in(row, pair, shift) };
                }
            }
        }
        // Skipped columns got fresh values: every row changed.
        for (i, saved) in image.columns.iter().enumerate() {
            if matches!(saved.copy, SnapshotCopy::Reset(_)) {
                let column = super::ColumnIndex(i as u32);
                // SAFETY: rows `0..new_len` are live; `&mut self`.
                unsafe { self.column_ticks(column).stamp_changed(0, new_len, now) };
            }
        }
    }
}

/// Reused memory for [`Archetype::restore_from`].
#[derive(Default)]
pub(crate) struct RestoreScratch {
    kept: Vec<bool>,
    stamps: Vec<(u64, u64)>,
}
