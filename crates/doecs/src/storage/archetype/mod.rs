//! One archetype: every entity with exactly one sorted set of components.
//!
//! Rows are dense: rows `0..len` are live, and removing a row moves the
//! archetype's last row into the hole (the swap-remove of Bitsquid's
//! "Building a Data-Oriented Entity System"). Each component lives in its
//! own `Column`, one contiguous array per component, and the entity ids
//! in one more; all columns share the archetype's capacity, which grows
//! geometrically (and starts small, so the many small archetypes of a
//! fragmented world cost little). Systems see the rows in chunks of
//! [`ChunkShape::rows`] rows, the 16 KiB unit of Jungwan Byun's
//! "Data-oriented Entity Component System" (see [`super::layout`]).
//!
//! This layer knows nothing of the entity index. Operations that move an entity
//! into a row report which entity moved, and the world fixes its location. The
//! unsafe API is narrow: pushing a row leaves its components uninitialised for
//! the caller to write, and removing a row either forgets its values (the caller
//! moved them out) or drops them. Drops run after the archetype is consistent
//! again, and a panicking drop still lets the other values of the row drop.

mod column_map;
mod column_starts;
mod image;
mod rows;

use super::column::Column;
use super::layout::ChunkShape;
use super::ticks::{ChunkTicks, ColumnTicks, TickPtrs};
use super::{ArchetypeId, Row};
use crate::bundle::BundleId;
use crate::component::{ComponentId, Components};
use crate::entity::Entity;
use crate::tick::Tick;
use column_map::ColumnMap;
use column_starts::ColumnStarts;
pub(crate) use image::{ArchetypeImage, RestoreScratch};
pub(crate) use rows::{copy_value, drop_each};
use std::alloc::Layout;
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

/// Capacity of an archetype's first allocation, in rows.
const FIRST_CAPACITY: usize = 4;

/// One archetype. See the module docs.
///
/// # Invariants
/// - `components` is sorted and has no duplicates; `columns[i]` stores
///   `components[i]`, and `column_map` finds it there (see `ColumnMap`);
///   `starts` holds the columns' current starts (see `ColumnStarts`).
/// - `len <= capacity`, and every column (and `entities`) has capacity
///   `capacity`.
/// - For every row `r < len`, the entity slot and every column slot of `r`
///   hold an initialised value (between `push_uninit` and the caller's writes,
///   the new row's columns are the only exception, which the caller must
///   close). Slots `len..capacity` hold nothing.
/// - `insert_edges` and `remove_edges` are sorted by bundle id.
/// - `drops` is whether any column has a drop function.
/// - `ticks[i]` holds column `i`'s change ticks (see [`ChunkTicks`](crate::raw::ChunkTicks)): one
///   pair per chunk of the capacity, and row stamps (capacity `capacity`)
///   exactly when the component tracks rows. Live rows' stamps are
///   initialised, and the tick invariants hold for them.
pub struct Archetype {
    id: ArchetypeId,
    components: Box<[ComponentId]>,
    /// Each component's column, by id.
    column_map: ColumnMap,
    /// Each column's start, by id: the typed lookups' short path.
    starts: ColumnStarts,
    columns: Box<[Column]>,
    ticks: Box<[ColumnTicks]>,
    /// Which hooks any of the components has (a mask of `HookKind` bits).
    hook_mask: u8,
    /// Whether any column's values need dropping: decided once here, so a
    /// removal of plain data skips the drop pass.
    drops: bool,
    entities: Column,
    shape: ChunkShape,
    len: usize,
    capacity: usize,
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
            .field("capacity", &self.capacity)
            .field("chunk_rows", &self.shape.rows())
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
        let columns: Box<[Column]> = components
            .iter()
            .map(|&c| {
                let info = registry.info(c);
                Column::new(info.layout(), info.drop_fn())
            })
            .collect();
        let layouts: Vec<Layout> = columns.iter().map(Column::item).collect();
        let shape = ChunkShape::new(chunk_bytes, &layouts);
        let ticks: Box<[ColumnTicks]> = components
            .iter()
            .map(|&c| {
                let mut ticks = ColumnTicks::new();
                if registry.info(c).tracks_rows() {
                    ticks.enable_rows(0, 0, shape.shift());
                }
                ticks
            })
            .collect();
        let hook_mask = components
            .iter()
            .fold(0, |m, &c| m | registry.info(c).hook_mask());
        let drops = columns.iter().any(|c| c.drop_fn().is_some());
        Archetype {
            id,
            drops,
            column_map: ColumnMap::new(&components),
            starts: ColumnStarts::new(&components, &columns),
            components,
            shape,
            ticks,
            hook_mask,
            columns,
            entities: Column::new(Layout::new::<Entity>(), None),
            len: 0,
            capacity: 0,
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
        self.len
    }

    /// Whether the archetype holds no entity.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Rows the columns have room for.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The chunk shape: rows per chunk.
    #[inline]
    pub fn shape(&self) -> ChunkShape {
        self.shape
    }

    /// Rows per chunk.
    #[inline]
    pub fn chunk_rows(&self) -> usize {
        self.shape.rows()
    }

    /// Number of chunks the rows span.
    #[inline]
    pub fn chunk_count(&self) -> usize {
        self.shape.chunks(self.len)
    }

    /// The rows of chunk `chunk`: its first row and its length.
    ///
    /// # Panics
    /// If `chunk` is not below [`Archetype::chunk_count`].
    #[inline]
    pub fn chunk_rows_of(&self, chunk: usize) -> (usize, usize) {
        assert!(
            chunk < self.chunk_count(),
            "doecs: chunk {chunk} out of range ({} chunks)",
            self.chunk_count()
        );
        let start = chunk * self.shape.rows();
        (start, self.shape.rows().min(self.len - start))
    }

    /// The column storing `component`, if this archetype has it.
    #[inline]
    pub fn column_of(&self, component: ComponentId) -> Option<ColumnIndex> {
        let found = self.column_map.column_of(&self.components, component);
        found.map(|i| ColumnIndex(i as u32))
    }

    /// The slot of live row `row` in the column storing `component`, if
    /// this archetype has it: [`Archetype::column_of`] and
    /// [`Archetype::slot_ptr`] in one step, for random lookups.
    ///
    /// # Panics
    /// If `row` is not live (not below [`Archetype::len`]).
    #[inline]
    pub fn component_slot_ptr(&self, component: ComponentId, row: Row) -> Option<NonNull<u8>> {
        assert!(row.index() < self.len, "doecs: row {} is not live", row.0);
        // SAFETY: `row < len <= capacity`, checked just above.
        unsafe { self.component_slot_ptr_unchecked(component, row) }
    }

    /// [`Archetype::component_slot_ptr`] without the row check, for hot
    /// lookups whose row comes from the entity index.
    ///
    /// # Safety
    /// `row` must be below [`Archetype::capacity`] (a live row, for a
    /// pointer to read or write through).
    #[inline]
    pub unsafe fn component_slot_ptr_unchecked(
        &self,
        component: ComponentId,
        row: Row,
    ) -> Option<NonNull<u8>> {
        let column = self.column_of(component)?;
        debug_assert!(row.index() < self.capacity);
        debug_assert!(column.index() < self.columns.len());
        // SAFETY: `column_of` returns an index into `components` (the
        // column map's invariant), which has as many entries as `columns`
        // (type invariant); `row` is below the capacity (caller).
        Some(unsafe { self.columns.get_unchecked(column.index()).slot(row.index()) })
    }

    /// [`Archetype::component_slot_ptr_unchecked`] for a caller that knows
    /// the component's type: one load of the column's start (see
    /// `ColumnStarts`) and a multiplication by a constant.
    ///
    /// # Safety
    /// `component`'s values must have `T`'s layout, and `row` must be below
    /// [`Archetype::capacity`].
    #[inline(always)]
    pub(crate) unsafe fn typed_slot_ptr_unchecked<T>(
        &self,
        component: ComponentId,
        row: Row,
    ) -> Option<NonNull<T>> {
        match self.starts.start_of(component) {
            // SAFETY: the start is the column's (type invariant), whose items
            // are `T`s (caller), and `row` is below the capacity (caller), so
            // the offset stays inside (or one past) the allocation.
            Some(start) => Some(unsafe { start.cast::<T>().add(row.index()) }),
            // SAFETY: forwarded contract.
            None => unsafe { self.component_slot_ptr_unchecked(component, row) }.map(NonNull::cast),
        }
    }

    /// Whether the archetype has `component`.
    #[inline]
    pub fn has(&self, component: ComponentId) -> bool {
        self.column_of(component).is_some()
    }

    /// Start of the entity array (row 0).
    #[inline]
    pub fn entities_ptr(&self) -> NonNull<Entity> {
        self.entities.ptr().cast()
    }

    /// The entities of every row, in row order.
    #[inline]
    pub fn entities(&self) -> &[Entity] {
        // SAFETY: rows `0..len` hold initialised entities (type invariant), and
        // the shared borrow of `self` keeps them unchanged.
        unsafe { std::slice::from_raw_parts(self.entities_ptr().as_ptr(), self.len) }
    }

    /// The entity in a row.
    ///
    /// # Panics
    /// If `row` is not live.
    #[inline]
    pub fn entity_at(&self, row: Row) -> Entity {
        self.entities()[row.index()]
    }

    /// Start of column `column`: row 0 of the component.
    ///
    /// # Panics
    /// If `column` is out of range.
    #[inline]
    pub fn column_ptr(&self, column: ColumnIndex) -> NonNull<u8> {
        self.columns[column.index()].ptr()
    }

    /// Pointer to one live row's slot in column `column`.
    ///
    /// # Panics
    /// If `row` is not live (not below [`Archetype::len`]), or `column` is
    /// out of range.
    #[inline]
    pub fn slot_ptr(&self, row: Row, column: ColumnIndex) -> NonNull<u8> {
        assert!(row.index() < self.len, "doecs: row {} is not live", row.0);
        // SAFETY: `row < len <= capacity`, checked just above.
        unsafe { self.slot_ptr_unchecked(row, column) }
    }

    /// [`Archetype::slot_ptr`] without the row check, for the structural
    /// code's hot paths.
    ///
    /// # Safety
    /// `row` must be below [`Archetype::capacity`] (a live row, for a
    /// pointer to read or write through).
    ///
    /// # Panics
    /// If `column` is out of range.
    #[inline]
    pub unsafe fn slot_ptr_unchecked(&self, row: Row, column: ColumnIndex) -> NonNull<u8> {
        debug_assert!(row.index() < self.capacity);
        // SAFETY: `row` is below the capacity (caller).
        unsafe { self.columns[column.index()].slot(row.index()) }
    }

    /// Which hooks any of the components has (a mask of `HookKind` bits).
    #[inline]
    pub(crate) fn hook_mask(&self) -> u8 {
        self.hook_mask
    }

    /// Recomputes the hook mask after a component's hooks changed.
    pub(crate) fn refresh_hook_mask(&mut self, registry: &Components) {
        self.hook_mask = self
            .components
            .iter()
            .fold(0, |m, &c| m | registry.info(c).hook_mask());
    }

    /// Where queries find column `column`'s change ticks.
    #[inline]
    pub fn column_ticks(&self, column: ColumnIndex) -> TickPtrs {
        self.ticks[column.index()].ptrs(self.shape.shift())
    }

    /// Chunk `chunk`'s change ticks for column `column`.
    ///
    /// # Panics
    /// If the chunk is beyond the capacity.
    #[inline]
    pub fn chunk_ticks(&self, column: ColumnIndex, chunk: usize) -> &ChunkTicks {
        self.ticks[column.index()].chunk(chunk)
    }

    /// A live row's change stamps for column `column` as `(added, changed)`:
    /// its own, or its chunk's when the component keeps no row stamps.
    ///
    /// # Panics
    /// If `row` is not live.
    #[inline]
    pub fn row_ticks(&self, row: Row, column: ColumnIndex) -> (Tick, Tick) {
        assert!(row.index() < self.len, "live row");
        // SAFETY: the row is live.
        let (a, c) =
            unsafe { self.ticks[column.index()].row_or_chunk(row.index(), self.shape.shift()) };
        (Tick::new(a), Tick::new(c))
    }

    /// Whether column `column` keeps row stamps.
    #[inline]
    pub fn tracks_rows(&self, column: ColumnIndex) -> bool {
        self.ticks[column.index()].has_rows()
    }

    /// Starts keeping row stamps for column `column` (each live row starts
    /// from its chunk's ticks).
    pub(crate) fn enable_row_ticks(&mut self, column: ColumnIndex) {
        let (len, capacity, shift) = (self.len, self.capacity, self.shape.shift());
        self.ticks[column.index()].enable_rows(len, capacity, shift);
    }

    /// Stamps rows `start..start + len` of column `column` as added (and
    /// changed) at `tick`, the world's current tick.
    ///
    /// # Safety
    /// The rows must be below `len()` after the push that made them, and the
    /// caller holds `&mut` to the world (or write access to the rows).
    #[inline]
    pub(crate) unsafe fn stamp_added(
        &self,
        column: ColumnIndex,
        start: usize,
        len: usize,
        tick: Tick,
    ) {
        debug_assert!(start + len <= self.len);
        // SAFETY: forwarded.
        unsafe { self.ticks[column.index()].stamp_added(start, len, tick, self.shape.shift()) }
    }

    /// Stamps live row `row` of column `column` at `tick`, the world's
    /// current tick: as added (and changed) when `added`, else as changed.
    ///
    /// # Safety
    /// As [`Archetype::stamp_added`].
    #[inline(always)]
    pub(crate) unsafe fn stamp_row(&self, column: ColumnIndex, row: Row, added: bool, tick: Tick) {
        debug_assert!(row.index() < self.len);
        // SAFETY: forwarded.
        unsafe {
            self.ticks[column.index()].stamp_row(row.index(), added, tick, self.shape.shift())
        }
    }

    /// Stamps rows `start..start + len` of every column as added (and
    /// changed) at `tick`: rows just pushed with all-new values.
    ///
    /// # Safety
    /// As [`Archetype::stamp_added`].
    #[inline]
    pub(crate) unsafe fn stamp_rows_added(&self, start: usize, len: usize, tick: Tick) {
        debug_assert!(start + len <= self.len);
        let shift = self.shape.shift();
        for ticks in self.ticks.iter() {
            // SAFETY: forwarded.
            unsafe { ticks.stamp_added(start, len, tick, shift) };
        }
    }

    /// Stamps live row `row` of every column as added (and changed) at
    /// `tick`: one new row, its chunk's ticks stored once per column.
    ///
    /// # Safety
    /// As [`Archetype::stamp_added`].
    #[inline]
    pub(crate) unsafe fn stamp_row_added(&self, row: Row, tick: Tick) {
        debug_assert!(row.index() < self.len);
        let shift = self.shape.shift();
        for ticks in self.ticks.iter() {
            // SAFETY: forwarded.
            unsafe { ticks.stamp_row(row.index(), true, tick, shift) };
        }
    }

    /// Whether any column keeps per-row change stamps (a `Changed` or
    /// `Added` reader of one of its components exists).
    pub(crate) fn keeps_row_ticks(&self) -> bool {
        self.ticks.iter().any(|t| t.has_rows())
    }

    /// Gives row `row` of column `column` the stamps a value moving in
    /// brings, `(added, changed)` (from [`Archetype::row_ticks`] of its old
    /// row), raising its chunk's ticks to them.
    ///
    /// # Safety
    /// As [`Archetype::stamp_added`].
    #[inline]
    pub(crate) unsafe fn stamp_moved_in(
        &self,
        column: ColumnIndex,
        row: Row,
        stamps: (Tick, Tick),
    ) {
        debug_assert!(row.index() < self.len);
        // SAFETY: forwarded.
        unsafe {
            self.ticks[column.index()].move_in(
                row.index(),
                (stamps.0.get(), stamps.1.get()),
                self.shape.shift(),
            )
        }
    }

    /// Size in bytes of one value of column `column`.
    #[inline]
    pub fn column_size(&self, column: ColumnIndex) -> usize {
        self.columns[column.index()].size()
    }

    /// Bytes the columns hold, in use or not.
    pub fn memory_bytes(&self) -> usize {
        let row: usize =
            self.entities.size() + self.columns.iter().map(Column::size).sum::<usize>();
        row * self.capacity
    }

    /// Makes room for `additional` more rows without further growth.
    pub(crate) fn reserve(&mut self, additional: usize) {
        let needed = self
            .len
            .checked_add(additional)
            .expect("doecs: archetype row count overflows");
        if needed > self.capacity {
            self.set_capacity(needed);
        }
    }

    /// Grows for at least one more row: double, or the first small allocation.
    #[cold]
    fn grow_one(&mut self) {
        let doubled = self.capacity.saturating_mul(2).max(FIRST_CAPACITY);
        self.set_capacity(doubled);
    }

    /// Resizes every column to `capacity` rows.
    fn set_capacity(&mut self, capacity: usize) {
        assert!(capacity >= self.len, "live rows stay");
        assert!(
            capacity <= u32::MAX as usize,
            "doecs: an archetype holds at most 2^32 - 1 rows"
        );
        let old = self.capacity;
        for column in self
            .columns
            .iter_mut()
            .chain(std::iter::once(&mut self.entities))
        {
            // SAFETY: every column has capacity `old` (type invariant); rows
            // `len..` hold nothing, and `capacity >= len`.
            unsafe { column.resize(old, capacity) };
        }
        let chunks = self.shape.chunks(capacity);
        for ticks in self.ticks.iter_mut() {
            // SAFETY: the row stamps have capacity `old` (type invariant).
            unsafe { ticks.resize(old, capacity, chunks) };
        }
        self.starts.refresh(&self.components, &self.columns);
        self.capacity = capacity;
    }

    /// Appends a row for `entity` and returns it. Only the entity slot is
    /// written.
    ///
    /// # Safety
    /// Before any other method of this archetype runs (or a panic can occur), the
    /// caller must write a valid value into every column of the returned row.
    #[inline(always)]
    pub(crate) unsafe fn push_uninit(&mut self, entity: Entity) -> Row {
        if self.len == self.capacity {
            self.grow_one();
        }
        let row = self.len;
        // SAFETY: `row < capacity`, so the slot lies inside the entity array.
        unsafe {
            self.entities
                .slot(row)
                .cast::<Entity>()
                .as_ptr()
                .write(entity)
        };
        self.len += 1;
        Row(row as u32)
    }

    /// Appends one row per entity of `entities` (their entity slots written
    /// with one copy) and returns the first new row.
    ///
    /// # Safety
    /// As [`Archetype::push_uninit`], for every new row.
    pub(crate) unsafe fn push_many_uninit(&mut self, entities: &[Entity]) -> Row {
        self.reserve(entities.len());
        let first = self.len;
        // SAFETY: `reserve` made room for the rows `first..first + n` in the
        // entity array; the source is a distinct slice.
        unsafe {
            std::ptr::copy_nonoverlapping(
                entities.as_ptr(),
                self.entities.slot(first).cast::<Entity>().as_ptr(),
                entities.len(),
            )
        };
        self.len += entities.len();
        Row(first as u32)
    }

    /// Returns the columns' unused capacity to the allocator (down to the
    /// rows in use) and reports the bytes freed.
    pub(crate) fn shrink_to_fit(&mut self) -> usize {
        let before = self.memory_bytes();
        if self.capacity != self.len {
            self.set_capacity(self.len);
        }
        before - self.memory_bytes()
    }

    /// Drops every value, forgetting the rows first, so a panicking drop
    /// leaves an empty (and consistent) archetype. The columns keep their
    /// memory.
    pub(crate) fn drop_all_values(&mut self) {
        let len = self.len;
        self.len = 0;
        let doomed = self
            .columns
            .iter()
            .filter_map(|c| Some((c.drop_fn()?, c)))
            .flat_map(|(drop_fn, c)| {
                (0..len).map(move |r| {
                    // SAFETY: `r < len <= capacity`.
                    let slot = unsafe { c.slot(r) };
                    (drop_fn, slot.as_ptr())
                })
            });
        // SAFETY: every pointer is a distinct initialised value of a row that was
        // live and is now forgotten; the memory stays allocated meanwhile.
        unsafe { drop_each(doomed) };
    }

    /// Verifies the archetype's structural invariants. Panics on failure.
    pub fn check_invariants(&self) {
        assert!(
            self.len <= self.capacity,
            "{:?}: len within capacity",
            self.id
        );
        assert!(
            self.components.windows(2).all(|w| w[0] < w[1]),
            "components sorted"
        );
        assert_eq!(
            self.columns.len(),
            self.components.len(),
            "one column per component"
        );
        self.column_map.check_invariants(&self.components);
        assert_eq!(
            self.drops,
            self.columns.iter().any(|c| c.drop_fn().is_some()),
            "drops iff a column needs dropping"
        );
        self.starts
            .check_invariants(&self.components, &self.columns);
        assert!(
            self.insert_edges.windows(2).all(|w| w[0].0 < w[1].0),
            "insert edges sorted"
        );
        assert!(
            self.remove_edges.windows(2).all(|w| w[0].0 < w[1].0),
            "remove edges sorted"
        );
        for column in self.columns.iter().chain(std::iter::once(&self.entities)) {
            assert_eq!(
                column.ptr().as_ptr().addr() % column.item().align(),
                0,
                "column aligned"
            );
        }
        assert!(self.shape.rows().is_power_of_two(), "chunk rows");
        assert_eq!(
            self.ticks.len(),
            self.columns.len(),
            "one tick set per column"
        );
        for ticks in self.ticks.iter() {
            ticks.check(self.len, self.shape.shift());
        }
    }
}

impl Drop for Archetype {
    fn drop(&mut self) {
        /// Frees the columns when dropped: after the values, or while a
        /// panicking value drop unwinds.
        struct FreeColumns<'a>(&'a mut Archetype);
        impl Drop for FreeColumns<'_> {
            fn drop(&mut self) {
                let arch = &mut *self.0;
                let capacity = arch.capacity;
                for column in arch
                    .columns
                    .iter_mut()
                    .chain(std::iter::once(&mut arch.entities))
                {
                    // SAFETY: every column has capacity `capacity`. This runs
                    // after `drop_all_values` returned or unwound, and
                    // `drop_each` drops every value before its unwinding
                    // leaves it, so no live value remains.
                    unsafe { column.free(capacity) };
                }
                for ticks in arch.ticks.iter_mut() {
                    // SAFETY: the row stamps have capacity `capacity`.
                    unsafe { ticks.free(capacity) };
                }
                arch.capacity = 0;
            }
        }
        let guard = FreeColumns(self);
        guard.0.drop_all_values();
    }
}

#[cfg(test)]
mod tests;
