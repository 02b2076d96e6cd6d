//! The instance data: structure of arrays in a single allocation (Bitsquid's
//! "Building a Data-Oriented Entity System", parts 2–3).
//!
//! Like the article's `InstanceData`, one raw buffer holds every column: `local`,
//! `world`, `entity`, the four hierarchy links and two bytes of deferred-mode
//! state. Columns are laid out back to back, largest alignment first, so each
//! starts suitably aligned. The buffer is allocated **zeroed** and every column
//! type (`Affine3A`, `u64`, [`Link`], `u8`) is plain old data for which the
//! all-zero pattern is a valid value, so every slot below the capacity is always
//! initialized. That lets this file hand out ordinary safe slices of the full
//! capacity and keeps all `unsafe` code here: the rest of the crate is safe
//! Rust. Slot contents past the live size are meaningless, but never undefined.

use crate::link::Link;
use glam::Affine3A;
use std::alloc::{self, Layout};
use std::ptr::NonNull;

/// Bytes per slot, over all columns.
const SLOT_BYTES: usize = 2 * size_of::<Affine3A>() + size_of::<u64>() + 4 * size_of::<Link>() + 2;
/// Alignment of the buffer: the largest column alignment.
const BUF_ALIGN: usize = align_of::<Affine3A>();

/// Mutable views of every column, each `capacity` long.
pub(crate) struct ColsMut<'a> {
    pub local: &'a mut [Affine3A],
    pub world: &'a mut [Affine3A],
    pub entity: &'a mut [u64],
    pub parent: &'a mut [Link],
    pub first_child: &'a mut [Link],
    pub next_sibling: &'a mut [Link],
    pub prev_sibling: &'a mut [Link],
    pub flags: &'a mut [u8],
    pub idle: &'a mut [u8],
}

/// Shared views of every column, each `capacity` long.
pub(crate) struct Cols<'a> {
    pub local: &'a [Affine3A],
    pub world: &'a [Affine3A],
    pub entity: &'a [u64],
    pub parent: &'a [Link],
    pub first_child: &'a [Link],
    pub next_sibling: &'a [Link],
    pub prev_sibling: &'a [Link],
    pub flags: &'a [u8],
}

/// Byte offsets of the columns for a given capacity.
#[derive(Clone, Copy)]
struct Offsets {
    world: usize,
    entity: usize,
    parent: usize,
    first_child: usize,
    next_sibling: usize,
    prev_sibling: usize,
    flags: usize,
    idle: usize,
}

impl Offsets {
    fn new(cap: usize) -> Self {
        let world = cap * size_of::<Affine3A>();
        let entity = world + cap * size_of::<Affine3A>();
        let parent = entity + cap * size_of::<u64>();
        let first_child = parent + cap * size_of::<Link>();
        let next_sibling = first_child + cap * size_of::<Link>();
        let prev_sibling = next_sibling + cap * size_of::<Link>();
        let flags = prev_sibling + cap * size_of::<Link>();
        let idle = flags + cap;
        Offsets {
            world,
            entity,
            parent,
            first_child,
            next_sibling,
            prev_sibling,
            flags,
            idle,
        }
    }
}

/// One zeroed allocation holding `cap` slots of every column.
///
/// # Invariants
/// - `buf` points to a live allocation made with `Self::layout(cap)`, `cap >= 1`.
/// - Every byte of it is initialized (allocated zeroed, only ever written with
///   valid column values through the slices below).
/// - Column `c` occupies `[off_c, off_c + cap * size_of::<T_c>())`; the ranges
///   are disjoint and each start is aligned for `T_c` (sizes are multiples of
///   the next column's alignment, and the buffer is aligned to 16).
pub(crate) struct Storage {
    buf: NonNull<u8>,
    cap: usize,
}

// SAFETY: `Storage` uniquely owns a buffer of plain data (like `Vec<u8>`); it has
// no interior mutability and no thread affinity.
unsafe impl Send for Storage {}
// SAFETY: shared access only hands out `&[T]` of `Sync` plain data.
unsafe impl Sync for Storage {}

impl Storage {
    fn layout(cap: usize) -> Layout {
        // Capacity is bounded by `u32::MAX` slots, so this cannot overflow on 64-bit.
        Layout::from_size_align(cap * SLOT_BYTES, BUF_ALIGN).expect("transform storage layout")
    }

    /// A zeroed buffer with room for `cap` slots (at least one).
    pub(crate) fn with_capacity(cap: usize) -> Self {
        let cap = cap.max(1);
        let layout = Self::layout(cap);
        // SAFETY: `layout` has a non-zero size because `cap >= 1` and `SLOT_BYTES > 0`.
        let ptr = unsafe { alloc::alloc_zeroed(layout) };
        let Some(buf) = NonNull::new(ptr) else {
            alloc::handle_alloc_error(layout)
        };
        Storage { buf, cap }
    }

    /// Number of slots.
    #[inline]
    pub(crate) fn capacity(&self) -> usize {
        self.cap
    }

    /// Grows to at least `min_cap` slots, keeping the first `keep` slots of every column.
    pub(crate) fn grow(&mut self, min_cap: usize, keep: usize) {
        if min_cap <= self.cap {
            return;
        }
        let keep = keep.min(self.cap);
        let mut new = Storage::with_capacity(min_cap.max(self.cap * 2));
        new.copy_slots_from(self, keep);
        *self = new; // drops (frees) the old buffer
    }

    /// Copies the first `n` slots of every column of `src` into the first `n`
    /// slots of `self`, column by column (one `memcpy` each): the columns are
    /// plain old data, so a raw byte copy is a valid copy. The two buffers
    /// may have different capacities (different column offsets).
    ///
    /// # Panics
    /// If either buffer has fewer than `n` slots.
    pub(crate) fn copy_slots_from(&mut self, src: &Storage, n: usize) {
        assert!(
            n <= self.cap && n <= src.cap,
            "copying {n} slots between capacities {} and {}",
            src.cap,
            self.cap
        );
        let (o, d) = (Offsets::new(src.cap), Offsets::new(self.cap));
        let pairs = [
            (0, 0, size_of::<Affine3A>()),
            (o.world, d.world, size_of::<Affine3A>()),
            (o.entity, d.entity, size_of::<u64>()),
            (o.parent, d.parent, size_of::<Link>()),
            (o.first_child, d.first_child, size_of::<Link>()),
            (o.next_sibling, d.next_sibling, size_of::<Link>()),
            (o.prev_sibling, d.prev_sibling, size_of::<Link>()),
            (o.flags, d.flags, 1),
            (o.idle, d.idle, 1),
        ];
        // Why the copies below are sound: by the type invariant each column
        // lies inside its live buffer at these offsets and holds `cap`
        // elements of `size` bytes, and `n` is at most either capacity
        // (asserted above), so both ranges are in bounds. `&mut self` and
        // `&Storage` cannot be the same storage, and each storage owns its
        // own allocation, so the ranges do not overlap. The source bytes are
        // initialized, valid values of the same column type at the same
        // element alignment, and every column type is plain old data (`Copy`,
        // no drop), so the byte copy leaves valid values behind and the
        // destination stays fully initialized.
        for (from, to, size) in pairs {
            // SAFETY: in bounds, disjoint, plain old data (see above).
            unsafe {
                std::ptr::copy_nonoverlapping(
                    src.buf.as_ptr().add(from),
                    self.buf.as_ptr().add(to),
                    n * size,
                );
            }
        }
    }

    /// Shared slices of every column, `capacity()` long.
    pub(crate) fn cols(&self) -> Cols<'_> {
        let o = Offsets::new(self.cap);
        let base = self.buf.as_ptr();
        let cap = self.cap;
        // SAFETY: (for every slice below) the type invariant says the column lies
        // inside the live allocation at this offset, is aligned for its element
        // type, fully initialized with valid values, and `&self` keeps it borrowed
        // immutably for the returned lifetime.
        unsafe {
            Cols {
                local: std::slice::from_raw_parts(base.cast(), cap),
                world: std::slice::from_raw_parts(base.add(o.world).cast(), cap),
                entity: std::slice::from_raw_parts(base.add(o.entity).cast(), cap),
                parent: std::slice::from_raw_parts(base.add(o.parent).cast(), cap),
                first_child: std::slice::from_raw_parts(base.add(o.first_child).cast(), cap),
                next_sibling: std::slice::from_raw_parts(base.add(o.next_sibling).cast(), cap),
                prev_sibling: std::slice::from_raw_parts(base.add(o.prev_sibling).cast(), cap),
                flags: std::slice::from_raw_parts(base.add(o.flags), cap),
            }
        }
    }

    /// Mutable slices of every column, `capacity()` long and pairwise disjoint.
    pub(crate) fn cols_mut(&mut self) -> ColsMut<'_> {
        let o = Offsets::new(self.cap);
        let base = self.buf.as_ptr();
        let cap = self.cap;
        // SAFETY: (for every slice below) as in `cols`, plus: the column ranges are
        // disjoint (type invariant), so the mutable slices do not alias each other,
        // and `&mut self` gives exclusive access to the whole buffer for their lifetime.
        unsafe {
            ColsMut {
                local: std::slice::from_raw_parts_mut(base.cast(), cap),
                world: std::slice::from_raw_parts_mut(base.add(o.world).cast(), cap),
                entity: std::slice::from_raw_parts_mut(base.add(o.entity).cast(), cap),
                parent: std::slice::from_raw_parts_mut(base.add(o.parent).cast(), cap),
                first_child: std::slice::from_raw_parts_mut(base.add(o.first_child).cast(), cap),
                next_sibling: std::slice::from_raw_parts_mut(base.add(o.next_sibling).cast(), cap),
                prev_sibling: std::slice::from_raw_parts_mut(base.add(o.prev_sibling).cast(), cap),
                flags: std::slice::from_raw_parts_mut(base.add(o.flags), cap),
                idle: std::slice::from_raw_parts_mut(base.add(o.idle), cap),
            }
        }
    }
}

/// Per-slot write access to the `local` and `flags` columns, shared across
/// threads, for batch updates whose slots are known to be distinct; the
/// `entity` column reads as a plain shared slice meanwhile.
///
/// # Aliasing rule
/// The writer borrows the storage mutably, so nothing else touches the
/// buffer while it lives. Through it, `entity` is only read, and `local` and
/// `flags` are only reached one slot at a time through [`SharedSlots::slot`],
/// whose caller promises that no slot is handed out twice at once.
pub(crate) struct SharedSlots<'a> {
    local: NonNull<Affine3A>,
    flags: NonNull<u8>,
    entity: &'a [u64],
    cap: usize,
}

// SAFETY: the pointers address plain data owned by the mutably borrowed
// storage; sharing the writer between threads is sound because every slot
// access goes through `slot`, whose contract forbids two live accesses to one
// slot, and the `entity` slice is only read.
unsafe impl Sync for SharedSlots<'_> {}

impl SharedSlots<'_> {
    /// The entity column, `capacity` long.
    #[inline]
    pub(crate) fn entity(&self) -> &[u64] {
        self.entity
    }

    /// Slot `i`'s local transform and flags.
    ///
    /// # Safety
    /// While the returned references live, no other call (on any thread) may
    /// pass the same `i`.
    #[inline]
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn slot(&self, i: usize) -> (&mut Affine3A, &mut u8) {
        assert!(i < self.cap, "slot {i} beyond capacity {}", self.cap);
        // SAFETY: `i < cap`, so both addresses lie inside their columns
        // (type invariant of `Storage`), which are initialized, aligned and
        // disjoint from each other and from `entity`; the caller makes this
        // the only access to slot `i` for the references' lifetime.
        unsafe {
            (
                &mut *self.local.as_ptr().add(i),
                &mut *self.flags.as_ptr().add(i),
            )
        }
    }
}

impl Storage {
    /// Shared per-slot write access to `local` and `flags`; see [`SharedSlots`].
    pub(crate) fn shared_slots(&mut self) -> SharedSlots<'_> {
        let o = Offsets::new(self.cap);
        let base = self.buf.as_ptr();
        // SAFETY: the columns lie inside the live allocation at these offsets
        // (type invariant); `entity` is initialized and, under the writer's
        // aliasing rule, never written while the slice lives.
        unsafe {
            SharedSlots {
                local: NonNull::new_unchecked(base.cast()),
                flags: NonNull::new_unchecked(base.add(o.flags)),
                entity: std::slice::from_raw_parts(base.add(o.entity).cast(), self.cap),
                cap: self.cap,
            }
        }
    }
}

impl Drop for Storage {
    fn drop(&mut self) {
        // SAFETY: `buf` was allocated by `alloc_zeroed` with exactly this layout
        // (type invariant) and is freed only here, once.
        unsafe { alloc::dealloc(self.buf.as_ptr(), Self::layout(self.cap)) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grow_keeps_columns_and_zeroes_the_rest() {
        let mut s = Storage::with_capacity(2);
        {
            let c = s.cols_mut();
            c.entity[1] = 7;
            c.parent[0] = Link::some(3);
            c.idle[1] = 9;
            c.world[1] = Affine3A::from_translation(glam::Vec3::X);
        }
        s.grow(5, 2);
        assert!(s.capacity() >= 5);
        let c = s.cols();
        assert_eq!(c.entity[1], 7);
        assert_eq!(c.parent[0].get(), Some(3));
        assert_eq!(c.world[1].translation, glam::Vec3A::X);
        assert_eq!(c.entity[4], 0);
        assert_eq!(c.local[4], Affine3A::from_cols_array(&[0.0; 12]));
        assert_eq!(s.cols_mut().idle[1], 9);
    }
}
