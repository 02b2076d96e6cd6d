//! One column: a growable raw array of one component type's values.
//!
//! An archetype keeps each of its components (and its entity ids) in a column
//! of its own: one contiguous allocation holding the values of every row in
//! order. So a loop over one component streams through memory from the first
//! row to the last, the access pattern the hardware prefetchers are built for,
//! whatever the archetype's size. The archetype decides the capacity; the
//! column only knows how to hold, grow and shrink its allocation, and where a
//! row's slot is. It never reads, writes or drops values on its own: that is
//! the archetype's business, and its narrow unsafe API says who owns what.
//!
//! Growth goes through `realloc`, which moves the bytes as raw memory (pointer
//! provenance and padding included) and, for large arrays, usually remaps
//! pages instead of copying them.

use std::alloc::Layout;
use std::ptr::NonNull;

/// A raw array of values of one layout. See the module docs.
///
/// # Invariants
/// - `ptr` is aligned to `item.align()`. When `capacity * item.size()` is
///   non-zero, `ptr` was returned by the global allocator for
///   [`Column::array_layout`]`(capacity)`; otherwise it is dangling and owns
///   nothing.
/// - The column owns its allocation, not the values in it: which slots hold
///   live values is the owner's knowledge.
#[derive(Debug)]
pub(crate) struct Column {
    ptr: NonNull<u8>,
    item: Layout,
    drop_fn: Option<unsafe fn(*mut u8)>,
}

// SAFETY: a column is a plain allocation of `Send + Sync` component values (or
// entity ids); access to the values is governed by the owning archetype.
unsafe impl Send for Column {}
// SAFETY: as above; shared access to the column itself only reads its fields.
unsafe impl Sync for Column {}

impl Column {
    /// An empty column (capacity 0) of values with layout `item`.
    pub(crate) fn new(item: Layout, drop_fn: Option<unsafe fn(*mut u8)>) -> Self {
        Column {
            ptr: dangling(item.align()),
            item,
            drop_fn,
        }
    }

    /// The layout of one value.
    #[inline]
    pub(crate) fn item(&self) -> Layout {
        self.item
    }

    /// Bytes per value.
    #[inline]
    pub(crate) fn size(&self) -> usize {
        self.item.size()
    }

    /// How to drop one value, if it needs dropping.
    #[inline]
    pub(crate) fn drop_fn(&self) -> Option<unsafe fn(*mut u8)> {
        self.drop_fn
    }

    /// Start of the array.
    #[inline]
    pub(crate) fn ptr(&self) -> NonNull<u8> {
        self.ptr
    }

    /// Slot `row`.
    ///
    /// # Safety
    /// `row` must be at most the column's capacity (the owner's knowledge):
    /// the offset is computed with `add`, which must stay inside (or one
    /// past) the allocation.
    #[inline]
    pub(crate) unsafe fn slot(&self, row: usize) -> NonNull<u8> {
        // SAFETY: `row <= capacity` (caller), so the offset stays inside (or
        // one past) the allocation and cannot overflow `isize` (the array's
        // layout is checked); for zero-sized values it is zero.
        unsafe { self.ptr.add(row * self.item.size()) }
    }

    /// The layout of an array of `capacity` values.
    ///
    /// # Panics
    /// If the array would be larger than `isize::MAX` bytes.
    pub(crate) fn array_layout(&self, capacity: usize) -> Layout {
        self.item
            .size()
            .checked_mul(capacity)
            .and_then(|bytes| Layout::from_size_align(bytes, self.item.align()).ok())
            .expect("doecs: a column would exceed isize::MAX bytes")
    }

    /// Moves the array from capacity `old` to capacity `new`: the first
    /// `min(old, new)` slots keep their bytes, the rest of a larger array is
    /// uninitialised.
    ///
    /// # Safety
    /// `old` must be the column's current capacity, and no live value may
    /// sit in slots `new..old` when shrinking.
    pub(crate) unsafe fn resize(&mut self, old: usize, new: usize) {
        let (old_layout, new_layout) = (self.array_layout(old), self.array_layout(new));
        if old_layout.size() == new_layout.size() {
            return;
        }
        self.ptr = if new_layout.size() == 0 {
            // SAFETY: the old array is non-empty (sizes differ), so it was
            // allocated with `old_layout` (type invariant).
            unsafe { std::alloc::dealloc(self.ptr.as_ptr(), old_layout) };
            dangling(self.item.align())
        } else if old_layout.size() == 0 {
            // SAFETY: `new_layout` has non-zero size.
            let raw = unsafe { std::alloc::alloc(new_layout) };
            NonNull::new(raw).unwrap_or_else(|| std::alloc::handle_alloc_error(new_layout))
        } else {
            let (old_ptr, new_size) = (self.ptr.as_ptr(), new_layout.size());
            // SAFETY: the old array was allocated with `old_layout` (type
            // invariant); the new size is non-zero and fits `isize` (checked by
            // `array_layout`); realloc keeps the alignment and moves the bytes
            // as raw memory.
            let raw = unsafe { std::alloc::realloc(old_ptr, old_layout, new_size) };
            NonNull::new(raw).unwrap_or_else(|| std::alloc::handle_alloc_error(new_layout))
        };
    }

    /// Frees the allocation.
    ///
    /// # Safety
    /// `capacity` must be the column's current capacity, and no live value may
    /// remain in it. The column is left with capacity 0.
    pub(crate) unsafe fn free(&mut self, capacity: usize) {
        // SAFETY: forwarded contract; shrinking to 0 frees the allocation.
        unsafe { self.resize(capacity, 0) };
    }
}

/// A dangling, well-aligned address that owns nothing, for empty arrays.
#[inline]
fn dangling(align: usize) -> NonNull<u8> {
    NonNull::new(std::ptr::without_provenance_mut(align)).expect("alignments are non-zero")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_keeps_bytes_and_shrinks() {
        let mut c = Column::new(Layout::new::<u64>(), None);
        // SAFETY: capacity 0 -> 4; nothing live.
        unsafe { c.resize(0, 4) };
        for i in 0..4 {
            // SAFETY: slot `i < 4` is in bounds and `u64`-aligned.
            unsafe { c.slot(i).cast::<u64>().as_ptr().write(i as u64 * 10) };
        }
        // SAFETY: 4 -> 1000 keeps slots 0..4.
        unsafe { c.resize(4, 1000) };
        assert_eq!(c.ptr().as_ptr() as usize % 8, 0);
        for i in 0..4 {
            // SAFETY: slot `i` kept its value.
            let kept = unsafe { c.slot(i).cast::<u64>().as_ptr().read() };
            assert_eq!(kept, i as u64 * 10);
        }
        // SAFETY: 1000 -> 2 drops only plain `u64` bytes past 2; then free.
        unsafe {
            c.resize(1000, 2);
            assert_eq!(c.slot(1).cast::<u64>().as_ptr().read(), 10);
            c.free(2);
        }
    }

    #[test]
    fn zero_sized_and_over_aligned_values() {
        #[repr(align(128))]
        struct Wide(#[allow(dead_code)] u8);
        let mut zst = Column::new(Layout::new::<()>(), None);
        // SAFETY: a zero-sized array never allocates; row 12345 is below
        // its capacity.
        unsafe {
            zst.resize(0, 1 << 20);
            assert_eq!(zst.slot(12345), zst.ptr());
        }
        let mut wide = Column::new(Layout::new::<Wide>(), None);
        // SAFETY: 0 -> 3 -> 7, nothing live; then freed.
        unsafe {
            wide.resize(0, 3);
            assert_eq!(wide.ptr().as_ptr() as usize % 128, 0);
            wide.resize(3, 7);
            assert_eq!(wide.slot(5).as_ptr() as usize % 128, 0);
            wide.free(7);
        }
    }
}
