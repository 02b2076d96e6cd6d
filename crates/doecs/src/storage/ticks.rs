//! Change ticks in storage: one pair per chunk and column, and per row where
//! a change filter needs them.
//!
//! Every column of an archetype keeps, for each of its chunks, the latest
//! tick at which a row of that chunk got the component (`added`) and at
//! which a row's value was written (`changed`; adding counts as a change).
//! This is the chunk version of Unity's DOTS: a writer stores one tick per
//! chunk it touches, whatever the chunk's row count, so keeping it costs a
//! store per 16 KiB; and a change filter skips every chunk whose version is
//! older than its window without looking at the chunk's rows. The chunk
//! ticks are atomics: pieces of one chunk handed to different threads by a
//! parallel loop all store the same tick, and an atomic makes that a
//! non-event instead of a data race.
//!
//! Row ticks are the finer level: per row, the tick it got the component and
//! the tick its value was last written. They cost 16 bytes a row, so a
//! component has them only once some query filters on its changes
//! ([`crate::query::Changed`], [`crate::query::Added`]); from then on every
//! archetype holding the component keeps them, and a filter that passes a
//! chunk checks its rows one by one. A component without row ticks is never
//! filtered by row; when it gets them, each row starts from its chunk's
//! ticks (an upper bound of its true stamps, see `world::tracking` for why
//! that is exact for every reader).
//!
//! # Invariants (checked by `Archetype::check_invariants`)
//! - A chunk's ticks are at least the ticks of every row in it:
//!   `chunk.added >= rows.added[r]` and `chunk.changed >= rows.changed[r]`.
//! - A row got its component no later than its value last changed:
//!   `rows.added[r] <= rows.changed[r]`.
//!
//! # Aliasing rule
//! A column's ticks belong to whoever may write the column: the holder of
//! `&mut` to the world, or a system granted a write of the component. Chunk
//! ticks are atomics and may be stored through `&Archetype` by such a
//! writer; row ticks are plain memory written through raw pointers under the
//! same exclusivity as the values, row by row. Readers (change filters) hold
//! read access to the component, which excludes every writer.

use super::column::Column;
use crate::tick::Tick;
use std::alloc::Layout;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// One chunk's ticks for one column. See the module docs.
#[derive(Debug, Default)]
pub struct ChunkTicks {
    added: AtomicU64,
    changed: AtomicU64,
}

impl ChunkTicks {
    /// The latest tick a row of the chunk got the component.
    #[inline(always)]
    pub fn added(&self) -> Tick {
        Tick::new(self.added.load(Relaxed))
    }

    /// The latest tick a row of the chunk was written.
    #[inline(always)]
    pub fn changed(&self) -> Tick {
        Tick::new(self.changed.load(Relaxed))
    }

    /// Records a write at `tick`, the current tick (so no stored tick is later).
    #[inline(always)]
    pub(crate) fn stamp_changed(&self, tick: Tick) {
        self.changed.store(tick.get(), Relaxed);
    }

    /// Records rows added (and so changed) at `tick`, the current tick.
    #[inline(always)]
    pub(crate) fn stamp_added(&self, tick: Tick) {
        self.added.store(tick.get(), Relaxed);
        self.changed.store(tick.get(), Relaxed);
    }

    /// Takes in a row that moved here with stamps `(added, changed)`. A
    /// stamp no later than the chunk's (the common case: rows move in
    /// with older stamps) costs a load, not an atomic read-modify-write.
    #[inline(always)]
    pub(crate) fn absorb(&self, added: u64, changed: u64) {
        if added > self.added.load(Relaxed) {
            self.added.fetch_max(added, Relaxed);
        }
        if changed > self.changed.load(Relaxed) {
            self.changed.fetch_max(changed, Relaxed);
        }
    }

    fn raw(&self) -> (u64, u64) {
        (self.added.load(Relaxed), self.changed.load(Relaxed))
    }
}

/// The per-row stamps of one column, `capacity` rows each.
#[derive(Debug)]
pub(crate) struct RowTicks {
    added: Column,
    changed: Column,
}

impl RowTicks {
    fn new() -> Self {
        RowTicks {
            added: Column::new(Layout::new::<u64>(), None),
            changed: Column::new(Layout::new::<u64>(), None),
        }
    }

    #[inline(always)]
    fn added_ptr(&self) -> NonNull<u64> {
        self.added.ptr().cast()
    }

    #[inline(always)]
    fn changed_ptr(&self) -> NonNull<u64> {
        self.changed.ptr().cast()
    }
}

/// Where a query finds one column's ticks, for its whole archetype: copied
/// into query fetches, so it is plain pointers.
#[derive(Copy, Clone, Debug)]
pub struct TickPtrs {
    chunks: NonNull<ChunkTicks>,
    /// Row stamps `(added, changed)`, when the column has them.
    rows: Option<(NonNull<u64>, NonNull<u64>)>,
    /// log2 of the archetype's rows per chunk.
    shift: u32,
}

// SAFETY: the pointers address tick storage owned by an archetype; who may
// write through them is governed by the aliasing rule in the module docs,
// which the query's access upholds on every thread.
unsafe impl Send for TickPtrs {}
// SAFETY: as above.
unsafe impl Sync for TickPtrs {}

impl TickPtrs {
    /// Records that rows `start..start + len` were written at `tick`.
    ///
    /// # Safety
    /// The rows must be live, and the caller must hold write access to the
    /// column (see the aliasing rule) for them.
    #[inline(always)]
    pub(crate) unsafe fn stamp_changed(self, start: usize, len: usize, tick: Tick) {
        if len == 0 {
            return;
        }
        let (first, last) = (start >> self.shift, (start + len - 1) >> self.shift);
        // SAFETY: live rows lie in allocated chunks, whose ticks exist.
        unsafe { self.chunks.add(first).as_ref() }.stamp_changed(tick);
        // Most runs lie in one chunk (every run of a small archetype), so
        // that case stays one store with no loop to set up.
        if last != first {
            for chunk in first + 1..last + 1 {
                // SAFETY: as above.
                unsafe { self.chunks.add(chunk).as_ref() }.stamp_changed(tick);
            }
        }
        if let Some((_, changed)) = self.rows {
            // SAFETY: the rows are live, so within the row-tick arrays'
            // capacity; the caller's write access makes them ours.
            unsafe {
                std::slice::from_raw_parts_mut(changed.as_ptr().add(start), len).fill(tick.get())
            };
        }
    }

    /// Chunk `chunk`'s ticks `(added, changed)`.
    ///
    /// # Safety
    /// The chunk must hold live rows.
    #[inline(always)]
    pub(crate) unsafe fn chunk_stamps(self, chunk: usize) -> (u64, u64) {
        // SAFETY: chunks of live rows have ticks; atomics may be read
        // through a shared reference at any time.
        unsafe { self.chunks.add(chunk).as_ref() }.raw()
    }

    /// The `added` (`which == 0`) or `changed` (`which == 1`) stamps of
    /// rows `from..to`, if the column keeps row stamps.
    ///
    /// # Safety
    /// The rows must be live, and no writer of the column may run meanwhile.
    #[inline(always)]
    pub(crate) unsafe fn row_stamps(
        self,
        which: usize,
        from: usize,
        to: usize,
    ) -> Option<&'static [u64]> {
        let base = match which {
            0 => self.rows?.0,
            _ => self.rows?.1,
        };
        // SAFETY: live rows are initialised stamps within capacity; the
        // caller excludes writers and uses the slice at once.
        Some(unsafe { std::slice::from_raw_parts(base.as_ptr().add(from), to - from) })
    }

    /// Row `row`'s stamps `(added, changed)`, if the column has them.
    ///
    /// # Safety
    /// The row must be live, and no writer of the column may run meanwhile.
    #[inline(always)]
    pub(crate) unsafe fn row(self, row: usize) -> Option<(u64, u64)> {
        // SAFETY: live rows are within the arrays' capacity; the caller
        // excludes writers.
        self.rows
            .map(|(a, c)| unsafe { (a.add(row).read(), c.add(row).read()) })
    }

    /// The chunk holding `row`.
    #[inline(always)]
    pub(crate) fn chunk_of(self, row: usize) -> usize {
        row >> self.shift
    }
}

/// The change stamps a dense write of whole archetypes stores, gathered
/// once: the `changed` tick of every chunk holding rows, and the row-stamp
/// run of every column that keeps them. A query's plan keeps one beside its
/// fetches (see `query::state::FetchPlan`), so a loop over many small
/// archetypes stamps them all in one tight pass instead of working out each
/// archetype's chunks between its rows.
///
/// # Invariants
/// Each entry was taken from a [`TickPtrs`] of a column with `len` live rows
/// by `WriteStamps::push_rows`: `chunks` addresses the ticks of chunks
/// `0..=(len - 1) >> shift`, `rows` the `changed` stamps of rows `0..len`.
/// They stay valid exactly as long as the pointers they came from: until the
/// archetype is changed (see [`super::LayoutStamp`]).
#[derive(Debug, Default)]
pub(crate) struct WriteStamps {
    chunks: Vec<NonNull<ChunkTicks>>,
    rows: Vec<(NonNull<u64>, usize)>,
}

// SAFETY: addresses, not access: `stamp_changed`'s caller must hold write
// access to the columns, under the aliasing rule, on whichever thread.
unsafe impl Send for WriteStamps {}
// SAFETY: as above; `&WriteStamps` stores nothing by itself.
unsafe impl Sync for WriteStamps {}

impl WriteStamps {
    /// Forgets every entry.
    pub(crate) fn clear(&mut self) {
        self.chunks.clear();
        self.rows.clear();
    }

    /// Adds the stamps of rows `0..len` of the column `ticks` points into.
    ///
    /// # Safety
    /// Rows `0..len` of that column must be live.
    pub(crate) unsafe fn push_rows(&mut self, ticks: TickPtrs, len: usize) {
        if len == 0 {
            return;
        }
        let last = ticks.chunk_of(len - 1);
        // SAFETY: chunks `0..=last` hold live rows (caller), so their ticks
        // exist and each offset stays inside the tick array.
        self.chunks
            .extend((0..=last).map(|c| unsafe { ticks.chunks.add(c) }));
        if let Some((_, changed)) = ticks.rows {
            self.rows.push((changed, len));
        }
    }

    /// Records that every row gathered here was written at `tick`: the same
    /// stores as [`TickPtrs::stamp_changed`] over each column's rows.
    ///
    /// # Safety
    /// Every column gathered must still have the rows it had when gathered
    /// (none of their archetypes changed since), and the caller must hold
    /// write access to all of them (see the aliasing rule).
    #[inline]
    pub(crate) unsafe fn stamp_changed(&self, tick: Tick) {
        for chunk in &self.chunks {
            // SAFETY: the chunk held live rows when gathered and still does
            // (caller); chunk ticks are atomics, stored through `&`.
            unsafe { chunk.as_ref() }.stamp_changed(tick);
        }
        for &(changed, len) in &self.rows {
            // SAFETY: rows `0..len` are live, within the stamps' capacity,
            // and ours to write (caller).
            unsafe { std::slice::from_raw_parts_mut(changed.as_ptr(), len) }.fill(tick.get());
        }
    }
}

/// All change ticks of one column. See the module docs.
#[derive(Debug)]
pub(crate) struct ColumnTicks {
    /// One per chunk of the archetype's capacity.
    chunks: Vec<ChunkTicks>,
    rows: Option<RowTicks>,
}

impl ColumnTicks {
    pub(crate) fn new() -> Self {
        ColumnTicks {
            chunks: Vec::new(),
            rows: None,
        }
    }

    /// Pointers for queries; `shift` is log2 of the rows per chunk.
    #[inline]
    pub(crate) fn ptrs(&self, shift: u32) -> TickPtrs {
        TickPtrs {
            // A `Vec`'s pointer is dangling but well aligned when empty;
            // only chunks of live rows are ever reached through it.
            chunks: NonNull::new(self.chunks.as_ptr().cast_mut())
                .expect("vec pointers are non-null"),
            rows: self.rows.as_ref().map(|r| (r.added_ptr(), r.changed_ptr())),
            shift,
        }
    }

    /// The ticks of chunk `chunk`.
    #[inline]
    pub(crate) fn chunk(&self, chunk: usize) -> &ChunkTicks {
        &self.chunks[chunk]
    }

    /// The ticks of the chunk holding `row`, without a bounds check.
    ///
    /// # Safety
    /// `row` must be below the archetype's capacity: `resize` keeps one
    /// entry per chunk of the capacity, so the chunk has one.
    #[inline(always)]
    unsafe fn chunk_of(&self, row: usize, shift: u32) -> &ChunkTicks {
        debug_assert!(
            row >> shift < self.chunks.len(),
            "row {row} beyond the chunks"
        );
        // SAFETY: in bounds by the caller's contract (see above).
        unsafe { self.chunks.get_unchecked(row >> shift) }
    }

    /// Whether the column keeps row stamps.
    #[inline]
    pub(crate) fn has_rows(&self) -> bool {
        self.rows.is_some()
    }

    /// Resizes for a capacity change from `old` to `new` rows, spanning
    /// `chunks` chunks. New chunks start at tick zero; row stamps past the
    /// live rows are meaningless.
    ///
    /// # Safety
    /// `old` must be the current capacity of the row stamps.
    pub(crate) unsafe fn resize(&mut self, old: usize, new: usize, chunks: usize) {
        self.chunks.resize_with(chunks, ChunkTicks::default);
        if let Some(rows) = &mut self.rows {
            // SAFETY: the row stamps have capacity `old` (caller); they are
            // plain `u64`s, nothing to drop.
            unsafe {
                rows.added.resize(old, new);
                rows.changed.resize(old, new);
            }
        }
    }

    /// Frees the row stamps' memory.
    ///
    /// # Safety
    /// `capacity` must be their current capacity.
    pub(crate) unsafe fn free(&mut self, capacity: usize) {
        if let Some(rows) = &mut self.rows {
            // SAFETY: forwarded; plain `u64`s.
            unsafe {
                rows.added.free(capacity);
                rows.changed.free(capacity);
            }
        }
    }

    /// Starts keeping row stamps: each of rows `0..len` starts from its
    /// chunk's ticks. `capacity` is the archetype's capacity; `shift` log2
    /// of its rows per chunk.
    pub(crate) fn enable_rows(&mut self, len: usize, capacity: usize, shift: u32) {
        if self.rows.is_some() {
            return;
        }
        let mut rows = RowTicks::new();
        // SAFETY: fresh columns have capacity 0.
        unsafe {
            rows.added.resize(0, capacity);
            rows.changed.resize(0, capacity);
        }
        for r in 0..len {
            let (added, changed) = self.chunks[r >> shift].raw();
            // SAFETY: `r < len <= capacity`.
            unsafe {
                rows.added_ptr().add(r).write(added);
                rows.changed_ptr().add(r).write(changed);
            }
        }
        self.rows = Some(rows);
    }

    /// A row's stamps `(added, changed)`: its own, or its chunk's.
    ///
    /// # Safety
    /// `row` must be live; `shift` as for [`ColumnTicks::enable_rows`].
    #[inline]
    pub(crate) unsafe fn row_or_chunk(&self, row: usize, shift: u32) -> (u64, u64) {
        match &self.rows {
            // SAFETY: live rows are initialised stamps.
            Some(r) => unsafe {
                (
                    r.added_ptr().add(row).read(),
                    r.changed_ptr().add(row).read(),
                )
            },
            // SAFETY: a live row is below the capacity.
            None => unsafe { self.chunk_of(row, shift) }.raw(),
        }
    }

    /// Stamps live row `row` as added (and changed) at `tick`, the current tick.
    ///
    /// # Safety
    /// `row` must be below the capacity; the caller holds `&mut` to the
    /// archetype (or write access to the row, per the aliasing rule).
    #[inline]
    pub(crate) unsafe fn stamp_added(&self, row: usize, len: usize, tick: Tick, shift: u32) {
        if len == 0 {
            return;
        }
        for chunk in (row >> shift)..=((row + len - 1) >> shift) {
            self.chunks[chunk].stamp_added(tick);
        }
        if let Some(r) = &self.rows {
            // SAFETY: the rows are within capacity and ours (caller).
            unsafe {
                std::slice::from_raw_parts_mut(r.added_ptr().as_ptr().add(row), len)
                    .fill(tick.get());
                std::slice::from_raw_parts_mut(r.changed_ptr().as_ptr().add(row), len)
                    .fill(tick.get());
            }
        }
    }

    /// Stamps one live row: as added (and changed) at `tick` when `added`,
    /// else as changed. The one-row form of [`ColumnTicks::stamp_added`],
    /// for inserts of one entity (no range to walk).
    ///
    /// # Safety
    /// As [`ColumnTicks::stamp_added`].
    #[inline(always)]
    pub(crate) unsafe fn stamp_row(&self, row: usize, added: bool, tick: Tick, shift: u32) {
        // SAFETY: the row is below the capacity (caller).
        let chunk = unsafe { self.chunk_of(row, shift) };
        if added {
            chunk.stamp_added(tick);
        } else {
            chunk.stamp_changed(tick);
        }
        if let Some(r) = &self.rows {
            // SAFETY: the row is within capacity and ours (caller).
            unsafe {
                if added {
                    r.added_ptr().as_ptr().add(row).write(tick.get());
                }
                r.changed_ptr().as_ptr().add(row).write(tick.get());
            }
        }
    }

    /// Writes `stamps` as row `row`'s own, and raises its chunk's ticks to
    /// them: a row moving in (from another archetype, or into a hole).
    ///
    /// # Safety
    /// As [`ColumnTicks::stamp_added`].
    #[inline]
    pub(crate) unsafe fn move_in(&self, row: usize, stamps: (u64, u64), shift: u32) {
        // SAFETY: the row is below the capacity (caller).
        unsafe { self.chunk_of(row, shift) }.absorb(stamps.0, stamps.1);
        if let Some(r) = &self.rows {
            // SAFETY: as in `stamp_added`.
            unsafe {
                r.added_ptr().add(row).write(stamps.0);
                r.changed_ptr().add(row).write(stamps.1);
            }
        }
    }

    /// For rows `from..to` restored with the values they had at a snapshot
    /// taken at `since`: every row written after `since` now holds a
    /// different value again, so it is stamped changed at `now`; the others
    /// keep their stamps.
    ///
    /// # Safety
    /// The rows must be live and within one chunk; the caller holds `&mut`
    /// to the archetype.
    pub(crate) unsafe fn restamp_reverted(
        &self,
        from: usize,
        to: usize,
        since: Tick,
        now: Tick,
        shift: u32,
    ) {
        if from == to {
            return;
        }
        let chunk = &self.chunks[from >> shift];
        if chunk.changed() <= since {
            return;
        }
        chunk.changed.store(now.get(), Relaxed);
        if let Some(r) = &self.rows {
            for row in from..to {
                // SAFETY: live rows within capacity, ours (caller).
                unsafe {
                    let stamp = r.changed_ptr().as_ptr().add(row);
                    if *stamp > since.get() {
                        *stamp = now.get();
                    }
                }
            }
        }
    }

    /// Sets every chunk's ticks back to zero, before rows move in again
    /// with [`ColumnTicks::move_in`].
    pub(crate) fn reset_chunk(&self, chunk: usize) {
        self.chunks[chunk].added.store(0, Relaxed);
        self.chunks[chunk].changed.store(0, Relaxed);
    }

    /// Checks the invariants for rows `0..len`. Panics on failure.
    pub(crate) fn check(&self, len: usize, shift: u32) {
        if len > 0 {
            assert!(
                self.chunks.len() > (len - 1) >> shift,
                "every chunk of live rows has ticks"
            );
        }
        let Some(rows) = &self.rows else { return };
        for r in 0..len {
            // SAFETY: live rows hold initialised stamps.
            let (a, c) = unsafe {
                (
                    rows.added_ptr().add(r).read(),
                    rows.changed_ptr().add(r).read(),
                )
            };
            let (ca, cc) = self.chunks[r >> shift].raw();
            assert!(a <= c, "row {r}: added {a} after changed {c}");
            assert!(
                ca >= a && cc >= c,
                "row {r}: chunk ticks ({ca}, {cc}) below the row's ({a}, {c})"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A column of `capacity` rows in chunks of 4 (`shift` 2), with row
    /// stamps if `rows`, every stamp initialised to 0.
    fn column(capacity: usize, rows: bool) -> ColumnTicks {
        let mut ticks = ColumnTicks::new();
        // SAFETY: a fresh column's row stamps (none) have capacity 0.
        unsafe { ticks.resize(0, capacity, capacity.div_ceil(4)) };
        if rows {
            ticks.enable_rows(capacity, capacity, 2);
        }
        ticks
    }

    /// Gathered stamps store exactly what stamping each column's rows
    /// directly stores: the chunks and rows of `0..len`, nothing past them.
    #[test]
    fn gathered_stamps_match_direct_stamps() {
        for (len, rows) in [(1, false), (4, false), (5, true), (11, true), (0, true)] {
            let (mut gathered, mut direct) = (column(16, rows), column(16, rows));
            let mut stamps = WriteStamps::default();
            // SAFETY: rows `0..len` count as live here: the tick arrays
            // cover all 16 rows, every stamp initialised.
            unsafe {
                stamps.push_rows(gathered.ptrs(2), len);
                stamps.stamp_changed(Tick::new(7));
                direct.ptrs(2).stamp_changed(0, len, Tick::new(7));
            }
            for chunk in 0..4 {
                let want = if chunk * 4 < len { 7 } else { 0 };
                assert_eq!(gathered.chunk(chunk).changed(), Tick::new(want));
                assert_eq!(gathered.chunk(chunk).raw(), direct.chunk(chunk).raw());
            }
            if rows {
                for row in 0..len {
                    // SAFETY: within the row stamps' capacity.
                    let (g, d) =
                        unsafe { (gathered.row_or_chunk(row, 2), direct.row_or_chunk(row, 2)) };
                    assert_eq!(g, (0, 7), "row {row}");
                    assert_eq!(g, d, "row {row}");
                }
            }
            // SAFETY: both have capacity 16.
            unsafe {
                gathered.free(16);
                direct.free(16);
            }
        }
    }
}
