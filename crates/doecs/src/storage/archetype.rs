//! One archetype: every entity with exactly one sorted set of components.
//!
//! Rows live in fixed-capacity chunks ([`ChunkLayout`]). Rows are dense: every
//! chunk but the last is full, and removing a row moves the archetype's last row
//! into the hole (seed 001's swap-remove). So a row is addressed by
//! `(ChunkIndex, ChunkRow)`, and iteration walks whole chunks as slices.
//!
//! This layer knows nothing of the entity index. Operations that move an entity
//! into a row report which entity moved, and the world fixes its location. The
//! unsafe API is narrow: pushing a row leaves its components uninitialised for
//! the caller to write, and removing a row either forgets its values (the caller
//! moved them out) or drops them. Drops run after the archetype is consistent
//! again, and a panicking drop still lets the other values of the row drop.
//!
//! Chunk memory comes from the archetype's [`ChunkPool`]: chunks carved in order
//! from large blocks, an emptied chunk kept for the next push, so churn at a
//! chunk boundary does not allocate on every spawn.

use super::layout::ChunkLayout;
use super::pool::{ChunkPool, ChunkPtr};
use super::{ArchetypeId, ChunkIndex, ChunkRow};
use crate::bundle::BundleId;
use crate::component::{ComponentId, ComponentInfo, Components};
use crate::entity::Entity;
use std::ptr::NonNull;

/// A column's index within its archetype (the position of its component in the sorted set).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ColumnIndex(pub u32);

impl ColumnIndex {
    /// The index as `usize`.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

/// What an archetype needs to know per column.
#[derive(Copy, Clone, Debug)]
struct Column {
    size: usize,
    drop_fn: Option<unsafe fn(*mut u8)>,
}

/// One archetype. See the module docs.
///
/// # Invariants
/// - `components` is sorted and has no duplicates; column `i` stores `components[i]`.
/// - `chunks.len() == len.div_ceil(capacity)`: every chunk but the last is full
///   and the last holds at least one row.
/// - For every row `r < len`, the entity slot and every column slot of `r` hold
///   an initialised value (between `push_uninit` and the caller's writes, the new
///   row's columns are the only exception, which the caller must close).
/// - Every chunk in `chunks` is a slot `pool` handed out and not released;
///   `pool` holds no live value in any other slot.
/// - `insert_edges` and `remove_edges` are sorted by bundle id.
pub struct Archetype {
    id: ArchetypeId,
    components: Box<[ComponentId]>,
    columns: Box<[Column]>,
    layout: ChunkLayout,
    chunks: Vec<ChunkPtr>,
    pool: ChunkPool,
    len: u32,
    /// Rows in the last chunk (0 iff there are no chunks); kept so the hot
    /// paths never divide by the capacity.
    last_len: u32,
    /// The graph's cached edges from here, by bundle: indices into the
    /// [`super::Archetypes`] edge arenas.
    pub(super) insert_edges: Vec<(BundleId, u32)>,
    pub(super) remove_edges: Vec<(BundleId, u32)>,
}

impl std::fmt::Debug for Archetype {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Archetype")
            .field("id", &self.id)
            .field("components", &self.components)
            .field("len", &self.len)
            .field("chunks", &self.chunks.len())
            .field("capacity", &self.layout.capacity())
            .finish()
    }
}

impl Archetype {
    pub(super) fn new(
        id: ArchetypeId,
        components: Box<[ComponentId]>,
        registry: &Components,
        chunk_bytes: usize,
    ) -> Self {
        debug_assert!(components.windows(2).all(|w| w[0] < w[1]));
        let infos: Vec<&ComponentInfo> = components.iter().map(|&c| registry.info(c)).collect();
        let layouts: Vec<_> = infos.iter().map(|i| i.layout()).collect();
        let columns = infos
            .iter()
            .map(|i| Column {
                size: i.layout().size(),
                drop_fn: i.drop_fn(),
            })
            .collect();
        let layout = ChunkLayout::new(chunk_bytes, &layouts);
        Archetype {
            id,
            components,
            columns,
            pool: ChunkPool::new(&layout),
            layout,
            chunks: Vec::new(),
            len: 0,
            last_len: 0,
            insert_edges: Vec::new(),
            remove_edges: Vec::new(),
        }
    }

    /// This archetype's id.
    #[inline]
    pub fn id(&self) -> ArchetypeId {
        self.id
    }

    /// The sorted component set.
    #[inline]
    pub fn components(&self) -> &[ComponentId] {
        &self.components
    }

    /// Number of rows (entities).
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether the archetype holds no entity.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Rows per chunk.
    #[inline]
    pub fn chunk_capacity(&self) -> u32 {
        self.layout.capacity()
    }

    /// The chunk layout.
    pub fn layout(&self) -> &ChunkLayout {
        &self.layout
    }

    /// Number of chunks in use.
    #[inline]
    pub fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    /// Rows in chunk `chunk` (`capacity` for all but the last).
    #[inline]
    pub fn chunk_len(&self, chunk: usize) -> usize {
        if chunk + 1 == self.chunks.len() {
            self.last_len as usize
        } else {
            self.layout.capacity() as usize
        }
    }

    /// The column storing `component`, if this archetype has it.
    #[inline]
    pub fn column_of(&self, component: ComponentId) -> Option<ColumnIndex> {
        self.components
            .binary_search(&component)
            .ok()
            .map(|i| ColumnIndex(i as u32))
    }

    /// Whether the archetype has `component`.
    #[inline]
    pub fn has(&self, component: ComponentId) -> bool {
        self.column_of(component).is_some()
    }

    /// Start of the entity array of `chunk`.
    ///
    /// # Panics
    /// If `chunk` is not a chunk in use.
    #[inline]
    pub fn entities_ptr(&self, chunk: usize) -> NonNull<Entity> {
        self.chunks[chunk].ptr().cast()
    }

    /// The entities of chunk `chunk`.
    #[inline]
    pub fn chunk_entities(&self, chunk: usize) -> &[Entity] {
        let len = self.chunk_len(chunk);
        // SAFETY: rows `0..len` of a chunk in use hold initialised entities (type
        // invariant), and the shared borrow of `self` keeps them unchanged.
        unsafe { std::slice::from_raw_parts(self.entities_ptr(chunk).as_ptr(), len) }
    }

    /// The entity in a row.
    #[inline]
    pub fn entity_at(&self, chunk: ChunkIndex, row: ChunkRow) -> Entity {
        self.chunk_entities(chunk.index())[row.index()]
    }

    /// Start of column `column` in chunk `chunk`: `capacity` slots of the component.
    ///
    /// # Panics
    /// If `chunk` or `column` is out of range.
    #[inline]
    pub fn column_ptr(&self, chunk: usize, column: ColumnIndex) -> NonNull<u8> {
        let base = self.chunks[chunk].ptr();
        // SAFETY: the column offset lies inside the chunk allocation (ChunkLayout invariant).
        unsafe { base.add(self.layout.column_offset(column.index())) }
    }

    /// Pointer to one component slot.
    ///
    /// # Panics
    /// If `chunk` or `column` is out of range. `row` is only debug-checked.
    #[inline]
    pub fn slot_ptr(&self, chunk: ChunkIndex, row: ChunkRow, column: ColumnIndex) -> NonNull<u8> {
        debug_assert!(row.0 < self.layout.capacity());
        let size = self.columns[column.index()].size;
        // SAFETY: `row < capacity`, so the slot lies inside the column's array.
        unsafe {
            self.column_ptr(chunk.index(), column)
                .add(row.index() * size)
        }
    }

    /// Appends a row for `entity` and returns its position. Only the entity slot
    /// is written.
    ///
    /// # Safety
    /// Before any other method of this archetype runs (or a panic can occur), the
    /// caller must write a valid value into every column of the returned row.
    #[inline(always)]
    pub(crate) unsafe fn push_uninit(&mut self, entity: Entity) -> (ChunkIndex, ChunkRow) {
        if self.last_len == self.layout.capacity() || self.chunks.is_empty() {
            self.last_len = 0;
            let chunk = self.pool.acquire();
            self.chunks.push(chunk);
        }
        let chunk = self.chunks.len() - 1;
        let row = self.last_len;
        // SAFETY: `row < capacity` and the entity array holds `capacity` entries.
        unsafe {
            self.entities_ptr(chunk)
                .as_ptr()
                .add(row as usize)
                .write(entity)
        };
        self.len += 1;
        self.last_len += 1;
        (ChunkIndex(chunk as u32), ChunkRow(row))
    }

    /// Reserves room for `additional` more rows: chunk memory in one block
    /// where the pool has none to spare, so a batch's chunks sit back to back.
    pub(crate) fn reserve(&mut self, additional: usize) {
        let cap = self.layout.capacity() as usize;
        let room_in_last = if self.chunks.is_empty() {
            0
        } else {
            cap - self.last_len as usize
        };
        let more = additional.saturating_sub(room_in_last).div_ceil(cap);
        self.chunks.reserve(more);
        self.pool.reserve(more);
    }

    /// Removes a row whose component values the caller has already moved out or
    /// dropped, by moving the last row into it. Returns the entity that moved
    /// into `(chunk, row)`, if any; the caller must update its location.
    ///
    /// # Safety
    /// `(chunk, row)` must be a live row, and the caller must treat its component
    /// values as moved out (they are overwritten without being dropped).
    #[inline(always)]
    pub(crate) unsafe fn swap_remove_forget(
        &mut self,
        chunk: ChunkIndex,
        row: ChunkRow,
    ) -> Option<Entity> {
        let (last_chunk, last_row) = self.last_position();
        let moved = if (chunk, row) != (last_chunk, last_row) {
            let src_base = self.chunks[last_chunk.index()].ptr().as_ptr();
            let dst_base = self.chunks[chunk.index()].ptr().as_ptr();
            // SAFETY: the last row is live, so its entity slot is initialised.
            let entity = unsafe { src_base.cast::<Entity>().add(last_row.index()).read() };
            for (col, &offset) in self.columns.iter().zip(self.layout.column_offsets()) {
                // SAFETY: both slots are live rows of this column (inside their
                // chunks by the layout invariant) and distinct; the destination's
                // value was moved out by the caller.
                unsafe {
                    copy_value(
                        src_base.add(offset + last_row.index() * col.size),
                        dst_base.add(offset + row.index() * col.size),
                        col.size,
                    )
                };
            }
            // SAFETY: `row` is a live row of `chunk`.
            unsafe { dst_base.cast::<Entity>().add(row.index()).write(entity) };
            Some(entity)
        } else {
            None
        };
        self.pop_last_row();
        if last_row.0 == 0 {
            let emptied = self.chunks.pop().expect("the last row's chunk");
            // SAFETY: the chunk came from the pool, holds no live value now, and
            // is no longer in `chunks`.
            unsafe { self.pool.release(emptied) };
        }
        moved
    }

    /// Size in bytes of one value of column `column`.
    #[inline]
    pub fn column_size(&self, column: ColumnIndex) -> usize {
        self.columns[column.index()].size
    }

    /// Removes a row and drops its values. The last row moves into the hole
    /// first; `relocated` is called with the entity that moved (if any) before any
    /// value is dropped, so the caller's entity index is consistent even if a drop
    /// panics. Every value of the row is dropped exactly once, even if one of the
    /// drops panics (a second panic while unwinding aborts, as in `Vec`).
    ///
    /// # Safety
    /// `(chunk, row)` must be a live row.
    pub(crate) unsafe fn swap_remove_drop(
        &mut self,
        chunk: ChunkIndex,
        row: ChunkRow,
        relocated: impl FnOnce(Option<Entity>),
    ) {
        let (last_chunk, last_row) = self.last_position();
        let moved = if (chunk, row) != (last_chunk, last_row) {
            let entity = self.entity_at(last_chunk, last_row);
            for c in 0..self.columns.len() {
                let c = ColumnIndex(c as u32);
                let size = self.columns[c.index()].size;
                let a = self.slot_ptr(last_chunk, last_row, c);
                let b = self.slot_ptr(chunk, row, c);
                // SAFETY: two distinct live slots of one column, each `size` bytes.
                unsafe { std::ptr::swap_nonoverlapping(a.as_ptr(), b.as_ptr(), size) };
            }
            // SAFETY: `row` is a live row of `chunk`.
            unsafe {
                self.entities_ptr(chunk.index())
                    .as_ptr()
                    .add(row.index())
                    .write(entity)
            };
            Some(entity)
        } else {
            None
        };
        // The doomed values now sit in the last row. Pop it; an emptied chunk
        // goes back to the pool, whose memory stays allocated while we drop.
        self.pop_last_row();
        let base = self.chunks[last_chunk.index()].ptr();
        if last_row.0 == 0 {
            let emptied = self.chunks.pop().expect("the last row's chunk");
            // SAFETY: the chunk came from the pool and is no longer in `chunks`;
            // the values still in it are dropped below, before any push can
            // hand the slot out again (a release never frees memory).
            unsafe { self.pool.release(emptied) };
        }
        relocated(moved);
        let layout = &self.layout;
        let doomed = self.columns.iter().enumerate().filter_map(|(i, col)| {
            let drop_fn = col.drop_fn?;
            // SAFETY: the slot lies in the chunk at `base` (ChunkLayout invariant).
            let ptr = unsafe {
                base.as_ptr()
                    .add(layout.column_offset(i) + last_row.index() * col.size)
            };
            Some((drop_fn, ptr))
        });
        // SAFETY: each pointer addresses one initialised value of the popped row,
        // which no longer belongs to any live row; each is dropped once.
        unsafe { drop_each(doomed) };
    }

    #[inline]
    fn last_position(&self) -> (ChunkIndex, ChunkRow) {
        debug_assert!(self.len > 0 && self.last_len > 0, "no rows");
        (
            ChunkIndex(self.chunks.len() as u32 - 1),
            ChunkRow(self.last_len - 1),
        )
    }

    /// Counts the last row out. When that empties the last chunk, the caller
    /// pops the chunk; `last_len` then describes the chunk before it, which is full.
    #[inline]
    fn pop_last_row(&mut self) {
        self.len -= 1;
        self.last_len -= 1;
        if self.last_len == 0 && self.chunks.len() > 1 {
            self.last_len = self.layout.capacity();
        }
    }

    /// Bytes of chunk memory the archetype holds: its chunks in use and the
    /// emptied ones it keeps for reuse.
    pub fn chunk_memory_bytes(&self) -> usize {
        self.pool.reserved_bytes()
    }

    /// Returns to the allocator every block of chunk memory none of whose
    /// chunks is in use, and reports the bytes freed.
    pub(crate) fn free_unused_chunk_memory(&mut self) -> usize {
        let before = self.pool.reserved_bytes();
        self.pool.trim();
        before - self.pool.reserved_bytes()
    }

    /// Drops every value and returns the chunk memory to the allocator.
    pub(crate) fn clear(&mut self) {
        let len = self.len as usize;
        let cap = self.layout.capacity() as usize;
        // Forget the rows first, so a panicking drop leaves an empty archetype.
        self.len = 0;
        self.last_len = 0;
        let chunks = std::mem::take(&mut self.chunks);
        for &chunk in &chunks {
            // SAFETY: each chunk came from the pool and left `chunks` above; its
            // values are dropped below, and a release never frees memory, so
            // they stay readable until the `trim` after the drops.
            unsafe { self.pool.release(chunk) };
        }
        let columns = &self.columns;
        let layout = &self.layout;
        let doomed = chunks.iter().enumerate().flat_map(|(ci, chunk)| {
            let rows = (len - ci * cap).min(cap);
            columns.iter().enumerate().flat_map(move |(i, col)| {
                let drop_fn = col.drop_fn;
                (0..rows).filter_map(move |r| {
                    // SAFETY: slot `r` of column `i` lies inside this chunk.
                    let ptr = unsafe {
                        chunk
                            .ptr()
                            .as_ptr()
                            .add(layout.column_offset(i) + r * col.size)
                    };
                    drop_fn.map(|f| (f, ptr))
                })
            })
        });
        // SAFETY: every pointer is a distinct initialised value of a row that was
        // live and is now forgotten; the pool keeps the memory until `trim`.
        unsafe { drop_each(doomed) };
        // Reached only if no drop panicked; otherwise the blocks stay allocated
        // (still consistent, reused by later pushes) until the pool drops.
        self.pool.trim();
    }

    /// Verifies the archetype's structural invariants. Panics on failure.
    pub fn check_invariants(&self) {
        let cap = self.layout.capacity() as usize;
        assert_eq!(
            self.chunks.len(),
            (self.len as usize).div_ceil(cap),
            "{:?}: chunk count",
            self.id
        );
        assert!(
            self.components.windows(2).all(|w| w[0] < w[1]),
            "components sorted"
        );
        assert!(
            self.insert_edges.windows(2).all(|w| w[0].0 < w[1].0),
            "insert edges sorted"
        );
        assert!(
            self.remove_edges.windows(2).all(|w| w[0].0 < w[1].0),
            "remove edges sorted"
        );
        self.pool.check_invariants(&self.chunks);
        for c in 0..self.chunks.len() {
            assert!(
                self.chunk_len(c) >= 1 && self.chunk_len(c) <= cap,
                "chunk fill"
            );
            if c + 1 < self.chunks.len() {
                assert_eq!(self.chunk_len(c), cap, "every chunk but the last is full");
            }
        }
    }
}

/// Copies one component value of `size` bytes as raw memory: pointer
/// provenance and uninitialised (padding) bytes are carried over exactly, as
/// `ptr::copy_nonoverlapping` does. The common sizes get a constant length,
/// which the compiler turns into plain loads and stores instead of a call.
///
/// # Safety
/// `src` and `dst` must be valid for `size` bytes and not overlap.
#[inline(always)]
pub(crate) unsafe fn copy_value(src: *const u8, dst: *mut u8, size: usize) {
    // SAFETY: each arm copies exactly `size` bytes, as the caller allows.
    unsafe {
        match size {
            0 => {}
            4 => std::ptr::copy_nonoverlapping(src, dst, 4),
            8 => std::ptr::copy_nonoverlapping(src, dst, 8),
            12 => std::ptr::copy_nonoverlapping(src, dst, 12),
            16 => std::ptr::copy_nonoverlapping(src, dst, 16),
            _ => std::ptr::copy_nonoverlapping(src, dst, size),
        }
    }
}

/// Drops each value, and if one drop panics, still drops the rest while unwinding.
///
/// # Safety
/// Every pointer must address an initialised value that `drop_fn` may drop, and
/// that nothing uses afterwards.
pub(crate) unsafe fn drop_each(mut values: impl Iterator<Item = (unsafe fn(*mut u8), *mut u8)>) {
    struct DropRest<'a, I: Iterator<Item = (unsafe fn(*mut u8), *mut u8)>>(&'a mut I);
    impl<I: Iterator<Item = (unsafe fn(*mut u8), *mut u8)>> Drop for DropRest<'_, I> {
        fn drop(&mut self) {
            for (drop_fn, ptr) in &mut *self.0 {
                // SAFETY: the caller of `drop_each` vouched for every pair.
                unsafe { drop_fn(ptr) }
            }
        }
    }
    let guard = DropRest(&mut values);
    for (drop_fn, ptr) in guard.0.by_ref() {
        // SAFETY: the caller of `drop_each` vouched for every pair.
        unsafe { drop_fn(ptr) }
    }
}

impl Drop for Archetype {
    fn drop(&mut self) {
        self.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    thread_local! {
        static DROPS: Cell<usize> = const { Cell::new(0) };
    }

    struct Counted(#[allow(dead_code)] u32);
    impl Drop for Counted {
        fn drop(&mut self) {
            DROPS.with(|d| d.set(d.get() + 1));
        }
    }

    fn drops() -> usize {
        DROPS.with(|d| d.get())
    }

    /// An archetype of (u32, Counted) with `cap`-row chunks.
    fn archetype(chunk_bytes: usize) -> (Archetype, ComponentId, ComponentId) {
        let mut registry = Components::default();
        let a = registry.register::<u32>();
        let c = registry.register::<Counted>();
        let arch = Archetype::new(
            ArchetypeId::from_index(1),
            [a, c].into(),
            &registry,
            chunk_bytes,
        );
        (arch, a, c)
    }

    fn push(arch: &mut Archetype, i: u32) -> (ChunkIndex, ChunkRow) {
        let e = Entity::from_parts(i, 0);
        // SAFETY: both columns of the new row are written just below.
        let (chunk, row) = unsafe { arch.push_uninit(e) };
        // SAFETY: column 0 is u32 and column 1 is Counted; the row is fresh.
        unsafe {
            arch.slot_ptr(chunk, row, ColumnIndex(0))
                .cast::<u32>()
                .as_ptr()
                .write(i);
            arch.slot_ptr(chunk, row, ColumnIndex(1))
                .cast::<Counted>()
                .as_ptr()
                .write(Counted(i));
        }
        (chunk, row)
    }

    fn value(arch: &Archetype, chunk: usize, row: usize) -> u32 {
        // SAFETY: callers pass live rows; column 0 is u32.
        unsafe {
            arch.slot_ptr(
                ChunkIndex(chunk as u32),
                ChunkRow(row as u32),
                ColumnIndex(0),
            )
            .cast::<u32>()
            .as_ptr()
            .read()
        }
    }

    #[test]
    fn rows_fill_chunks_in_order() {
        let (mut arch, _, _) = archetype(200);
        let cap = arch.chunk_capacity() as usize;
        assert!(cap >= 2, "test needs several rows per chunk");
        for i in 0..(2 * cap + 1) as u32 {
            let (chunk, row) = push(&mut arch, i);
            assert_eq!(chunk.index() * cap + row.index(), i as usize);
            arch.check_invariants();
        }
        assert_eq!(arch.chunk_count(), 3);
        assert_eq!(arch.chunk_len(0), cap);
        assert_eq!(arch.chunk_len(2), 1);
        assert_eq!(arch.chunk_entities(1)[0], Entity::from_parts(cap as u32, 0));
        assert_eq!(value(&arch, 2, 0), 2 * cap as u32);
    }

    #[test]
    fn swap_remove_moves_the_last_row_and_keeps_the_emptied_chunk() {
        let (mut arch, _, _) = archetype(200);
        let cap = arch.chunk_capacity() as usize;
        let n = cap + 1;
        for i in 0..n as u32 {
            push(&mut arch, i);
        }
        let before = drops();
        // Forget row 0's values (we "moved them out" by hand), last row fills it.
        // SAFETY: row (0, 0) is live; read out its Counted so it is owned here.
        let taken = unsafe {
            arch.slot_ptr(ChunkIndex(0), ChunkRow(0), ColumnIndex(1))
                .cast::<Counted>()
                .as_ptr()
                .read()
        };
        // SAFETY: row (0, 0) is live and its values were moved out above.
        let moved = unsafe { arch.swap_remove_forget(ChunkIndex(0), ChunkRow(0)) };
        assert_eq!(moved, Some(Entity::from_parts(n as u32 - 1, 0)));
        assert_eq!(value(&arch, 0, 0), n as u32 - 1);
        assert_eq!(arch.chunk_count(), 1, "the emptied last chunk is popped");
        assert_eq!(arch.pool.free_count(), 1, "and kept by the pool");
        let emptied = arch.pool.acquire();
        // SAFETY: just acquired, holds nothing; handed straight back.
        unsafe { arch.pool.release(emptied) };
        assert_eq!(drops(), before, "forget drops nothing");
        drop(taken);
        arch.check_invariants();
        // Growing again reuses the emptied chunk instead of allocating.
        push(&mut arch, 99);
        assert_eq!(arch.pool.free_count(), 0);
        assert_eq!(arch.chunk_count(), 2);
        assert_eq!(arch.chunks[1], emptied, "the same slot");
        // swap_remove_drop: relocation is reported before the drop.
        let mut relocated = None;
        // SAFETY: (0, 1) is a live row.
        unsafe {
            arch.swap_remove_drop(ChunkIndex(0), ChunkRow(1), |m| {
                relocated = Some((m, drops()));
            })
        };
        assert_eq!(
            relocated,
            Some((Some(Entity::from_parts(99, 0)), before + 1))
        );
        assert_eq!(
            drops(),
            before + 2,
            "exactly the removed row's value dropped"
        );
        assert_eq!(value(&arch, 0, 1), 99);
        arch.check_invariants();
        // Removing the last row itself moves nothing.
        let last = (
            arch.chunk_count() - 1,
            arch.chunk_len(arch.chunk_count() - 1) - 1,
        );
        let mut relocated = Some(None);
        // SAFETY: `last` is the last live row.
        unsafe {
            arch.swap_remove_drop(ChunkIndex(last.0 as u32), ChunkRow(last.1 as u32), |m| {
                relocated = Some(m)
            })
        };
        assert_eq!(relocated, Some(None));
        assert_eq!(arch.len(), n - 2);
        arch.check_invariants();
        let left = arch.len();
        drop(arch);
        assert_eq!(drops(), before + 3 + left, "drop clears every row once");
    }

    #[test]
    fn copy_value_copies_every_size() {
        for size in [0usize, 1, 3, 4, 8, 12, 16, 17, 64] {
            let src: Vec<u8> = (0..size as u8).collect();
            let mut dst = vec![0xffu8; size];
            // SAFETY: both buffers hold `size` bytes and do not overlap.
            unsafe { copy_value(src.as_ptr(), dst.as_mut_ptr(), size) };
            assert_eq!(src, dst);
        }
    }
}
