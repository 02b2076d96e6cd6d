//! Row moves and removals: the copies a structural change makes.
//!
//! A row leaves its archetype by the swap-remove of the module above: the
//! last row fills the hole, its values copied as raw memory and its change
//! stamps moved with it. A row moving to another archetype copies the
//! values both share, walking the edge's plan (see
//! [`crate::storage::row_move`]). Values are copied as untyped bytes with
//! [`copy_value`] (provenance and padding carried over), and dropped with
//! [`drop_each`], which still drops the rest when one drop panics.
//!
//! Aliasing rule: every function here takes the archetype by `&mut`, or by
//! `&` under a contract that makes the rows it writes the caller's alone.

use super::{Archetype, Row};
use crate::entity::Entity;
use crate::storage::row_move::ColumnPair;

impl Archetype {
    /// Copies row `row`'s value of every column `target` also has into
    /// `target`'s row `to`, with its change stamps: a row move's copy,
    /// walking the edge's plan (`pairs`, see [`crate::storage::row_move`])
    /// with nothing to decide per row.
    ///
    /// # Safety
    /// `pairs` must be the move plan from this archetype to `target`; `row`
    /// must be live here and `to` a row of `target` pushed for this move
    /// (below its length, its shared slots uninitialised); the two
    /// archetypes are distinct. The values copied must then be forgotten
    /// here (the row swap-removed without drops).
    #[inline]
    pub(crate) unsafe fn copy_row_into(
        &self,
        row: Row,
        target: &Archetype,
        to: Row,
        pairs: &[ColumnPair],
    ) {
        debug_assert!(row.index() < self.len && to.index() < target.len);
        let (from_shift, to_shift) = (self.shape.shift(), target.shape.shift());
        for pair in pairs {
            let (s, d) = (pair.from.index(), pair.to.index());
            debug_assert!(self.components[s] == target.components[d]);
            // SAFETY: the plan's pairs are columns of the two archetypes
            // holding one component (caller); both rows are within capacity
            // (caller); the two slots are in distinct archetypes, so they
            // do not overlap; the source value is forgotten by the caller.
            // Stamps: `row` is live here, `to` was pushed there.
            unsafe {
                let (src, dst) = (
                    self.columns.get_unchecked(s),
                    target.columns.get_unchecked(d),
                );
                copy_value(
                    src.slot(row.index()).as_ptr(),
                    dst.slot(to.index()).as_ptr(),
                    src.size(),
                );
                let stamps = self
                    .ticks
                    .get_unchecked(s)
                    .row_or_chunk(row.index(), from_shift);
                target
                    .ticks
                    .get_unchecked(d)
                    .move_in(to.index(), stamps, to_shift);
            }
        }
    }

    /// Drops the rows from `len` on without dropping their values (they
    /// were moved out): the table's tail, removed in one step.
    ///
    /// # Safety
    /// `len <= self.len()`, and every value of the rows from `len` on must
    /// have been moved out (or need no drop).
    pub(crate) unsafe fn truncate_forget(&mut self, len: usize) {
        debug_assert!(len <= self.len);
        self.len = len;
    }

    /// Removes a row whose component values the caller has already moved out or
    /// dropped, by moving the last row into it. Returns the entity that moved
    /// into `row`, if any; the caller must update its location.
    ///
    /// # Safety
    /// `row` must be a live row, and the caller must treat its component
    /// values as moved out (they are overwritten without being dropped).
    #[inline(always)]
    pub(crate) unsafe fn swap_remove_forget(&mut self, row: Row) -> Option<Entity> {
        let last = self.len - 1;
        let row = row.index();
        debug_assert!(row <= last, "live row");
        let moved = if row != last {
            for column in self.columns.iter() {
                // SAFETY: both slots are live rows of this column and distinct;
                // the destination's value was moved out by the caller.
                unsafe {
                    copy_value(
                        column.slot(last).as_ptr(),
                        column.slot(row).as_ptr(),
                        column.size(),
                    )
                };
            }
            self.move_stamps(last, row);
            // SAFETY: both rows are live and distinct.
            Some(unsafe { self.move_entity_slot(last, row) })
        } else {
            None
        };
        self.len = last;
        moved
    }

    /// Removes a row and drops its values. The last row moves into the hole
    /// first; `relocated` is called with the entity that moved (if any) before any
    /// value is dropped, so the caller's entity index is consistent even if a drop
    /// panics. Every value of the row is dropped exactly once, even if one of the
    /// drops panics (a second panic while unwinding aborts, as in `Vec`).
    ///
    /// # Safety
    /// `row` must be a live row.
    pub(crate) unsafe fn swap_remove_drop(
        &mut self,
        row: Row,
        relocated: impl FnOnce(Option<Entity>),
    ) {
        let last = self.len - 1;
        let row = row.index();
        debug_assert!(row <= last, "live row");
        let moved = if row != last {
            self.move_stamps(last, row);
            for column in self.columns.iter() {
                // SAFETY: two distinct live slots of one column, each `size`
                // bytes. A value with a drop function is swapped to the last
                // row, to drop below; one without is simply overwritten.
                unsafe {
                    let (from, to) = (column.slot(last).as_ptr(), column.slot(row).as_ptr());
                    if column.drop_fn().is_some() {
                        std::ptr::swap_nonoverlapping(from, to, column.size());
                    } else {
                        copy_value(from, to, column.size());
                    }
                }
            }
            // SAFETY: both rows are live and distinct.
            Some(unsafe { self.move_entity_slot(last, row) })
        } else {
            None
        };
        // The doomed values now sit in the last row; count it out first, so
        // the archetype is consistent while they drop.
        self.len = last;
        relocated(moved);
        if !self.drops {
            return;
        }
        let doomed = self.columns.iter().filter_map(|c| {
            // SAFETY: `last` was a live row, so it is below the capacity.
            let slot = unsafe { c.slot(last) };
            Some((c.drop_fn()?, slot.as_ptr()))
        });
        // SAFETY: each pointer addresses one initialised value of the popped row,
        // which no longer belongs to any live row; each is dropped once.
        unsafe { drop_each(doomed) };
    }

    /// Copies the entity of live row `from` into live row `to` (the hole a
    /// swap-remove fills) and returns it.
    ///
    /// # Safety
    /// Both rows must be live and distinct.
    #[inline(always)]
    unsafe fn move_entity_slot(&self, from: usize, to: usize) -> Entity {
        // SAFETY: both rows are live (caller), and the entity column holds
        // `Entity` values, plain data.
        unsafe {
            let entities = self.entities.ptr().cast::<Entity>().as_ptr();
            let moved = entities.add(from).read();
            entities.add(to).write(moved);
            moved
        }
    }

    /// Moves the change stamps of live row `from` into live row `to`, for
    /// every column: the row at `from` is about to fill the hole at `to`.
    #[inline]
    fn move_stamps(&self, from: usize, to: usize) {
        let shift = self.shape.shift();
        for ticks in self.ticks.iter() {
            // SAFETY: both rows are live (callers), and `&mut self` (held by
            // every caller) makes the stamps ours.
            unsafe {
                let stamps = ticks.row_or_chunk(from, shift);
                ticks.move_in(to, stamps, shift);
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
