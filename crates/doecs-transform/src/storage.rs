//! The instance data: structure of arrays in a single allocation (Bitsquid's
//! "Building a Data-Oriented Entity System", parts 2–3).
//!
//! Like the article's `InstanceData`, one raw buffer holds every column: `local`,
//! `world`, `entity`, the four hierarchy links and two bytes of deferred-mode
//! state. Columns are laid out back to back, largest alignment first, so each
//! starts suitably aligned. The buffer is allocated **zeroed** (or, when a
//! batch grows it, its new slots are written before anything reads them:
//! [`Storage::write_slots`]) and every column
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
///   valid column values through the slices below), except inside
///   [`Storage::write_slots`], which allocates raw and writes or zeroes
///   every slot before it returns or unwinds.
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

/// One slot's value in every column, for [`Storage::write_slots`].
#[derive(Clone, Copy)]
pub(crate) struct SlotValues {
    pub local: Affine3A,
    pub world: Affine3A,
    pub entity: u64,
    pub parent: Link,
    pub first_child: Link,
    pub next_sibling: Link,
    pub prev_sibling: Link,
    pub flags: u8,
    pub idle: u8,
}

/// Raw pointers to the start of every column of one buffer, all derived
/// from the buffer's own pointer.
#[derive(Clone, Copy)]
struct ColPtrs {
    local: *mut Affine3A,
    world: *mut Affine3A,
    entity: *mut u64,
    parent: *mut Link,
    first_child: *mut Link,
    next_sibling: *mut Link,
    prev_sibling: *mut Link,
    flags: *mut u8,
    idle: *mut u8,
}

impl ColPtrs {
    /// Writes `v` into slot `i` of every column.
    ///
    /// # Safety
    /// `i` is below the buffer's capacity and nothing else reads or writes
    /// the buffer meanwhile. The slot may be uninitialized.
    #[inline(always)]
    unsafe fn write(self, i: usize, v: SlotValues) {
        // SAFETY: `i < cap`, so every address lies inside its column (type
        // invariant of `Storage`), aligned; raw writes need no initialized
        // old value, and the caller excludes any other access.
        unsafe {
            self.local.add(i).write(v.local);
            self.world.add(i).write(v.world);
            self.entity.add(i).write(v.entity);
            self.parent.add(i).write(v.parent);
            self.first_child.add(i).write(v.first_child);
            self.next_sibling.add(i).write(v.next_sibling);
            self.prev_sibling.add(i).write(v.prev_sibling);
            self.flags.add(i).write(v.flags);
            self.idle.add(i).write(v.idle);
        }
    }

    /// Zeroes slots `from..to` of every column.
    ///
    /// # Safety
    /// As [`ColPtrs::write`], for every slot of the range (`to <= cap`).
    unsafe fn zero(self, from: usize, to: usize) {
        let n = to.saturating_sub(from);
        // SAFETY: the range lies inside every column (caller); all-zero
        // bytes are a valid value of every column type.
        unsafe {
            self.local.add(from).write_bytes(0, n);
            self.world.add(from).write_bytes(0, n);
            self.entity.add(from).write_bytes(0, n);
            self.parent.add(from).write_bytes(0, n);
            self.first_child.add(from).write_bytes(0, n);
            self.next_sibling.add(from).write_bytes(0, n);
            self.prev_sibling.add(from).write_bytes(0, n);
            self.flags.add(from).write_bytes(0, n);
            self.idle.add(from).write_bytes(0, n);
        }
    }
}

/// Access, during [`Storage::write_slots`], to the slots before the one
/// being written (all initialized): their world transforms, read, and the
/// two links that a later slot can change, `first_child` and
/// `next_sibling` (a batch links each new child onto its parent's list as
/// it writes the child).
///
/// # Aliasing rule
/// `write_slots` holds the storage mutably and hands out no reference into
/// it: the fill reaches the written slots only through this value's raw
/// column pointers, and the loop writes only the slot after them.
pub(crate) struct WrittenSlots {
    world: *const Affine3A,
    first_child: *mut Link,
    next_sibling: *mut Link,
    end: usize,
}

impl WrittenSlots {
    /// Panics unless slot `i` is before the slot being written.
    #[inline]
    fn check(&self, i: usize) {
        assert!(i < self.end, "slot {i} is not written yet");
    }

    /// The world transform of slot `i`.
    ///
    /// # Panics
    /// If slot `i` is not before the slot being written.
    #[inline]
    pub(crate) fn world(&self, i: usize) -> Affine3A {
        self.check(i);
        // SAFETY: slots below `end` are initialized (kept, or written
        // earlier in this call) and inside the column; nothing else
        // reaches them while `fill` runs (aliasing rule above).
        unsafe { self.world.add(i).read() }
    }

    /// [`world`](Self::world) without the check.
    ///
    /// # Safety
    /// Slot `i` is before the slot being written.
    #[inline]
    pub(crate) unsafe fn world_unchecked(&self, i: usize) -> Affine3A {
        debug_assert!(i < self.end, "slot {i} is not written yet");
        // SAFETY: `i < end` (caller), so as in `world`.
        unsafe { self.world.add(i).read() }
    }

    /// Sets the first child of slot `i`, unchecked (a batch writer knows
    /// which slots it wrote).
    ///
    /// # Safety
    /// Slot `i` is before the slot being written.
    #[inline]
    pub(crate) unsafe fn set_first_child_unchecked(&mut self, i: usize, child: Link) {
        debug_assert!(i < self.end, "slot {i} is not written yet");
        // SAFETY: `i < end` (caller), so the slot is initialized and inside
        // the column, and nothing else reaches it while `fill` runs
        // (aliasing rule above); a `Link` is plain data, so the write
        // needs no drop of the old value.
        unsafe { self.first_child.add(i).write(child) }
    }

    /// Sets the next sibling of slot `i`, unchecked.
    ///
    /// # Safety
    /// Slot `i` is before the slot being written.
    #[inline]
    pub(crate) unsafe fn set_next_sibling_unchecked(&mut self, i: usize, sibling: Link) {
        debug_assert!(i < self.end, "slot {i} is not written yet");
        // SAFETY: as `set_first_child_unchecked`.
        unsafe { self.next_sibling.add(i).write(sibling) }
    }
}

/// Restores the storage invariant if a fill stops early (a panic): the
/// slots it did not write are zeroed.
struct UnwrittenGuard {
    cols: ColPtrs,
    /// The first slot not written yet.
    next: usize,
    /// The end of the uninitialized range (0 when there is none).
    end: usize,
}

impl Drop for UnwrittenGuard {
    fn drop(&mut self) {
        // SAFETY: `next..end` lies below the capacity and the storage is
        // still exclusively borrowed by `write_slots`.
        unsafe { self.cols.zero(self.next, self.end) }
    }
}

impl Storage {
    fn col_ptrs(&mut self) -> ColPtrs {
        let o = Offsets::new(self.cap);
        let base = self.buf.as_ptr();
        // SAFETY: every offset lies inside the live allocation (type
        // invariant), so the additions stay in bounds.
        unsafe {
            ColPtrs {
                local: base.cast(),
                world: base.add(o.world).cast(),
                entity: base.add(o.entity).cast(),
                parent: base.add(o.parent).cast(),
                first_child: base.add(o.first_child).cast(),
                next_sibling: base.add(o.next_sibling).cast(),
                prev_sibling: base.add(o.prev_sibling).cast(),
                flags: base.add(o.flags),
                idle: base.add(o.idle),
            }
        }
    }

    /// Writes slots `base..base + n`: slot `base + k` gets `fill(k, slots)`,
    /// where `slots` reaches the slots before it ([`WrittenSlots`]). If
    /// the capacity is short of `base + n + 1`, the buffer grows first,
    /// keeping the first `base + 1` slots, and the new slots are written in
    /// place: a slot about to be written is never zeroed first (a level of
    /// 10,000 transforms is 1.5 MB that would be written twice).
    pub(crate) fn write_slots(
        &mut self,
        base: usize,
        n: usize,
        mut fill: impl FnMut(usize, WrittenSlots) -> SlotValues,
    ) {
        let end = base + n;
        assert!(base < self.cap, "slot {base} beyond capacity {}", self.cap);
        let grown = end + 1 > self.cap;
        if grown {
            let cap = (end + 1).max(self.cap * 2);
            let layout = Self::layout(cap);
            // SAFETY: `layout` has a non-zero size (`cap >= 1`, `SLOT_BYTES > 0`).
            let ptr = unsafe { alloc::alloc(layout) };
            let Some(buf) = NonNull::new(ptr) else {
                alloc::handle_alloc_error(layout)
            };
            // The new buffer breaks the initialization invariant until the
            // fill below ends: nothing reads it before, and dropping it only
            // frees it.
            let mut new = Storage { buf, cap };
            new.copy_slots_from(self, base + 1);
            // SAFETY: `end..cap` lies inside the new buffer, owned here.
            unsafe { new.col_ptrs().zero(end, cap) };
            *self = new;
        }
        let cols = self.col_ptrs();
        // When the buffer grew, slots `base + 1..end` are uninitialized
        // until written: the guard zeroes what a fill that panics leaves.
        let mut guard = UnwrittenGuard {
            cols,
            next: base + 1,
            end: if grown { end } else { 0 },
        };
        for k in 0..n {
            let slots = WrittenSlots {
                world: cols.world,
                first_child: cols.first_child,
                next_sibling: cols.next_sibling,
                end: base + k,
            };
            let v = fill(k, slots);
            // SAFETY: `base + k < end < cap`, and `&mut self` excludes any
            // other access while this call runs.
            unsafe { cols.write(base + k, v) };
            guard.next = base + k + 1;
        }
        std::mem::forget(guard);
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
        // SAFETY: `buf` was allocated (zeroed or not) with exactly this layout
        // (type invariant) and is freed only here, once.
        unsafe { alloc::dealloc(self.buf.as_ptr(), Self::layout(self.cap)) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slot(x: f32, entity: u64) -> SlotValues {
        let m = Affine3A::from_translation(glam::Vec3::splat(x));
        SlotValues {
            local: m,
            world: m,
            entity,
            parent: Link::some(entity as u32),
            first_child: Link::NONE,
            next_sibling: Link::some(1),
            prev_sibling: Link::NONE,
            flags: 3,
            idle: 4,
        }
    }

    /// Every column of every slot below the capacity, read as values: under
    /// Miri an uninitialized byte anywhere fails the test.
    fn read_all(s: &Storage) -> u64 {
        let c = s.cols();
        let mut sum = 0u64;
        for i in 0..s.capacity() {
            sum = sum
                .wrapping_add(c.entity[i])
                .wrapping_add(c.local[i].translation.x.to_bits() as u64)
                .wrapping_add(c.world[i].matrix3.x_axis.y.to_bits() as u64)
                .wrapping_add(c.parent[i].get().unwrap_or(0) as u64)
                .wrapping_add(c.first_child[i].get().unwrap_or(0) as u64)
                .wrapping_add(c.next_sibling[i].get().unwrap_or(0) as u64)
                .wrapping_add(c.prev_sibling[i].get().unwrap_or(0) as u64)
                .wrapping_add(c.flags[i] as u64);
        }
        sum
    }

    #[test]
    fn write_slots_grows_in_place_keeps_earlier_slots_and_zeroes_the_tail() {
        let mut s = Storage::with_capacity(2);
        s.cols_mut().entity[0] = 99;
        s.write_slots(1, 5, |k, mut slots| {
            if k > 0 {
                // The slot before is written and readable, and its links
                // can be set.
                assert_eq!(slots.world(k).translation.x, (k - 1) as f32);
                // SAFETY: slot `k` is before slot `1 + k`, the one being
                // written.
                unsafe { slots.set_next_sibling_unchecked(k, Link::some(1 + k as u32)) };
            }
            slot(k as f32, k as u64 + 10)
        });
        assert!(s.capacity() >= 7);
        let c = s.cols();
        assert_eq!(c.entity[0], 99, "kept");
        for k in 0..5 {
            assert_eq!(c.entity[1 + k], k as u64 + 10);
            assert_eq!(c.world[1 + k].translation.x, k as f32);
            assert_eq!(c.flags[1 + k], 3);
        }
        for i in 1..5 {
            assert_eq!(
                c.next_sibling[i],
                Link::some(i as u32 + 1),
                "set by a later fill"
            );
        }
        for i in 6..s.capacity() {
            assert_eq!((c.entity[i], c.flags[i]), (0, 0), "tail zeroed");
        }
        read_all(&s);
        // Within capacity: overwrites in place, no growth.
        let cap = s.capacity();
        s.write_slots(2, 2, |k, _| slot(50.0, k as u64));
        assert_eq!(s.capacity(), cap);
        assert_eq!(s.cols().entity[3], 1);
        assert_eq!(s.cols().entity[4], 13, "untouched");
        read_all(&s);
    }

    #[test]
    fn a_panicking_fill_leaves_every_slot_initialized() {
        let mut s = Storage::with_capacity(1);
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            s.write_slots(0, 8, |k, _| {
                assert!(k < 3, "fill fails at slot 3");
                slot(1.0, k as u64 + 1)
            })
        }));
        assert!(caught.is_err());
        assert!(s.capacity() >= 9);
        assert_eq!(s.cols().entity[2], 3, "written before the panic");
        assert_eq!(s.cols().entity[3], 0, "zeroed by the guard");
        read_all(&s);
    }

    #[test]
    #[should_panic(expected = "not written yet")]
    fn a_fill_cannot_read_its_own_slot() {
        let mut s = Storage::with_capacity(1);
        s.write_slots(0, 2, |k, slots| {
            slots.world(k);
            slot(0.0, 0)
        });
    }

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
