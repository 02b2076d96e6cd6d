//! The instance data: structure of arrays in a single allocation (Bitsquid's
//! "Building a Data-Oriented Entity System", parts 2–3).
//!
//! Like the article's `InstanceData`, one raw buffer holds every column: `local`,
//! `world`, `entity`, the four hierarchy links and two bytes of deferred-mode
//! state. Columns are laid out back to back, largest alignment first, so each
//! starts suitably aligned. The buffer is allocated **zeroed** (or, when a
//! batch grows it, its new slots are written before anything reads them:
//! [`Storage::write_columns`]) and every column
//! type (`Affine3A`, `u64`, [`Link`], `u8`) is plain old data for which the
//! all-zero pattern is a valid value, so every slot below the capacity is always
//! initialized. That lets this file hand out ordinary safe slices of the full
//! capacity and keeps all `unsafe` code here: the rest of the crate is safe
//! Rust. Slot contents past the live size are meaningless, but never undefined.
//!
//! The structural columns (`entity` and the four links) change only when
//! the hierarchy does, while `local`, `world` and the two state bytes may
//! change every frame. A [`StructureTag`] names the structural columns'
//! contents, so that a snapshot copy can skip them when they are what it
//! copied last time: every way of writing them ([`Storage::cols_mut`],
//! [`Storage::write_columns`]) takes a fresh tag, and the writers that may
//! run every frame get [`Storage::values_mut`], which cannot write them.

use crate::link::Link;
use glam::Affine3A;
use std::alloc::{self, Layout};
use std::mem::MaybeUninit;
use std::ptr::NonNull;

/// Bytes per slot, over all columns.
const SLOT_BYTES: usize = 2 * size_of::<Affine3A>() + size_of::<u64>() + 4 * size_of::<Link>() + 2;
/// Alignment of the buffer: the largest column alignment.
const BUF_ALIGN: usize = align_of::<Affine3A>();

/// A process-wide counter of structure tags: each number names one content.
static NEXT_STRUCTURE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Names the contents of a storage's structural columns (`entity` and the
/// four links): two storages whose tags have the same `id` hold the same
/// structural values in their first `min(slots)` slots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct StructureTag {
    id: u64,
    slots: usize,
}

impl StructureTag {
    /// A number no storage had: for contents just written.
    fn fresh(slots: usize) -> Self {
        let id = NEXT_STRUCTURE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        StructureTag { id, slots }
    }
}

/// Mutable views of the value columns (`local`, `world`, `flags`, `idle`)
/// and shared views of the structural ones, each `capacity` long: for the
/// writers that leave the hierarchy alone (see the module docs).
pub(crate) struct ValuesMut<'a> {
    pub local: &'a mut [Affine3A],
    pub world: &'a mut [Affine3A],
    pub flags: &'a mut [u8],
    pub idle: &'a mut [u8],
    pub entity: &'a [u64],
    pub parent: &'a [Link],
    pub first_child: &'a [Link],
    pub next_sibling: &'a [Link],
}

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
///   [`Storage::write_columns`], which allocates raw and writes or zeroes
///   every slot before it returns or unwinds.
/// - Column `c` occupies `[off_c, off_c + cap * size_of::<T_c>())`; the ranges
///   are disjoint and each start is aligned for `T_c` (sizes are multiples of
///   the next column's alignment, and the buffer is aligned to 16).
/// - `structure` names the structural columns' contents: any write to them
///   takes a fresh tag (see the module docs), and a copy carries the
///   source's tag over the slots it copied.
pub(crate) struct Storage {
    buf: NonNull<u8>,
    cap: usize,
    structure: StructureTag,
}

// SAFETY: `Storage` uniquely owns a buffer of plain data (like `Vec<u8>`); it has
// no interior mutability and no thread affinity.
unsafe impl Send for Storage {}
// SAFETY: shared access only hands out `&[T]` of `Sync` plain data.
unsafe impl Sync for Storage {}

impl Storage {
    /// The layout of `cap` slots. Panics past `isize::MAX` bytes, so every
    /// column offset (`Offsets::new`) fits too.
    fn layout(cap: usize) -> Layout {
        cap.checked_mul(SLOT_BYTES)
            .and_then(|bytes| Layout::from_size_align(bytes, BUF_ALIGN).ok())
            .expect("transform storage layout")
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
        Storage {
            buf,
            cap,
            structure: StructureTag::fresh(cap),
        }
    }

    /// Number of slots.
    #[inline]
    pub(crate) fn capacity(&self) -> usize {
        self.cap
    }

    /// The structure tag's number and slots (for tests).
    #[cfg(test)]
    pub(crate) fn structure_tag(&self) -> (u64, usize) {
        (self.structure.id, self.structure.slots)
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
    /// may have different capacities (different column offsets). The
    /// structural columns are skipped when both tags name the same contents
    /// over at least `n` slots: they hold the same values already.
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
        let same_structure = self.structure.id == src.structure.id
            && self.structure.slots >= n
            && src.structure.slots >= n;
        // Values first, then (unless skipped) the structural columns.
        let pairs = [
            (0, 0, size_of::<Affine3A>()),
            (o.world, d.world, size_of::<Affine3A>()),
            (o.flags, d.flags, 1),
            (o.idle, d.idle, 1),
            (o.entity, d.entity, size_of::<u64>()),
            (o.parent, d.parent, size_of::<Link>()),
            (o.first_child, d.first_child, size_of::<Link>()),
            (o.next_sibling, d.next_sibling, size_of::<Link>()),
            (o.prev_sibling, d.prev_sibling, size_of::<Link>()),
        ];
        let pairs = &pairs[..if same_structure { 4 } else { pairs.len() }];
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
        for &(from, to, size) in pairs {
            // SAFETY: in bounds, disjoint, plain old data (see above).
            unsafe {
                std::ptr::copy_nonoverlapping(
                    src.buf.as_ptr().add(from),
                    self.buf.as_ptr().add(to),
                    n * size,
                );
            }
        }
        if !same_structure {
            self.structure = StructureTag {
                id: src.structure.id,
                slots: n.min(src.structure.slots),
            };
        }
    }

    /// Mutable slices of the value columns and shared slices of the
    /// structural ones, `capacity()` long: the structure keeps its tag.
    pub(crate) fn values_mut(&mut self) -> ValuesMut<'_> {
        let o = Offsets::new(self.cap);
        let base = self.buf.as_ptr();
        let cap = self.cap;
        // SAFETY: (for every slice below) as in `cols_mut`: each column lies
        // inside the live allocation at its offset, aligned and initialized;
        // the columns are disjoint, so the mutable slices alias nothing, and
        // the shared ones are not written while they live (`&mut self`
        // excludes every other access to the buffer).
        unsafe {
            ValuesMut {
                local: std::slice::from_raw_parts_mut(base.cast(), cap),
                world: std::slice::from_raw_parts_mut(base.add(o.world).cast(), cap),
                flags: std::slice::from_raw_parts_mut(base.add(o.flags), cap),
                idle: std::slice::from_raw_parts_mut(base.add(o.idle), cap),
                entity: std::slice::from_raw_parts(base.add(o.entity).cast(), cap),
                parent: std::slice::from_raw_parts(base.add(o.parent).cast(), cap),
                first_child: std::slice::from_raw_parts(base.add(o.first_child).cast(), cap),
                next_sibling: std::slice::from_raw_parts(base.add(o.next_sibling).cast(), cap),
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

    /// Mutable slices of every column, `capacity()` long and pairwise
    /// disjoint. The structural columns may be written: they take a fresh
    /// tag.
    pub(crate) fn cols_mut(&mut self) -> ColsMut<'_> {
        self.structure = StructureTag::fresh(self.cap);
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
    /// Zeroes slots `from..to` of every column.
    ///
    /// # Safety
    /// `to` is at most the buffer's capacity, and nothing else reads or
    /// writes the buffer meanwhile. The slots may be uninitialized.
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

    /// Slots `from..from + n` of every column, as [`NewColumn`]s.
    ///
    /// # Safety
    /// `from + n` is at most the buffer's capacity, and nothing else reads
    /// or writes those slots for `'a`.
    unsafe fn new_columns<'a>(self, from: usize, n: usize) -> NewColumns<'a> {
        /// # Safety
        /// As `new_columns`, for the one column `col` starts.
        unsafe fn range<'a, T>(col: *mut T, from: usize, n: usize) -> NewColumn<'a, T> {
            // SAFETY: the range lies inside the column (caller), which is
            // aligned for `T`; `MaybeUninit` asks nothing of the contents;
            // the caller gives this slice exclusive access for `'a`.
            let slots = unsafe {
                std::slice::from_raw_parts_mut(col.add(from).cast::<MaybeUninit<T>>(), n)
            };
            NewColumn { slots }
        }
        // SAFETY: the caller's contract, for each column (the columns are
        // disjoint: type invariant of `Storage`).
        unsafe {
            NewColumns {
                local: range(self.local, from, n),
                world: range(self.world, from, n),
                entity: range(self.entity, from, n),
                parent: range(self.parent, from, n),
                first_child: range(self.first_child, from, n),
                next_sibling: range(self.next_sibling, from, n),
                prev_sibling: range(self.prev_sibling, from, n),
                flags: range(self.flags, from, n),
                idle: range(self.idle, from, n),
            }
        }
    }
}

/// The slots one column gains in a batch
/// ([`Storage::write_columns`]), possibly uninitialized: each writer below
/// writes every one of them, in one pass, and returns the proof
/// ([`Written`]). Indices are relative to the batch's first slot.
pub(crate) struct NewColumn<'a, T> {
    slots: &'a mut [MaybeUninit<T>],
}

/// A column's new slots, every one written by a [`NewColumn`] writer:
/// a plain slice from then on (a later pass may still change them, as the
/// sibling links are).
pub(crate) struct Written<'a, T> {
    slots: &'a mut [T],
}

impl<T> std::ops::Deref for Written<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.slots
    }
}

impl<T> std::ops::DerefMut for Written<'_, T> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.slots
    }
}

impl<'a, T: Copy> NewColumn<'a, T> {
    /// The slots as written.
    ///
    /// # Safety
    /// Every slot of `slots` is initialized.
    unsafe fn written(slots: &'a mut [MaybeUninit<T>]) -> Written<'a, T> {
        let (ptr, n) = (slots.as_mut_ptr().cast::<T>(), slots.len());
        // SAFETY: `MaybeUninit<T>` has `T`'s layout, every slot holds a
        // valid `T` (caller), and the borrow moves into the result.
        let slots = unsafe { std::slice::from_raw_parts_mut(ptr, n) };
        Written { slots }
    }

    /// Every slot set to `value`.
    pub(crate) fn fill(self, value: T) -> Written<'a, T> {
        self.slots.fill(MaybeUninit::new(value));
        // SAFETY: every slot was just written.
        unsafe { Self::written(self.slots) }
    }

    /// Slot `k` set to `f(k)`, in order.
    #[inline(always)]
    pub(crate) fn write_with(self, mut f: impl FnMut(usize) -> T) -> Written<'a, T> {
        for (k, slot) in self.slots.iter_mut().enumerate() {
            slot.write(f(k));
        }
        // SAFETY: the loop wrote every slot.
        unsafe { Self::written(self.slots) }
    }

    /// Slot `k` set to the first value of `f(k, earlier)`, where `earlier`
    /// holds this column's slots before `k` (written already), and slot
    /// `k` of `beside` to the second, in one pass: a value that depends on
    /// earlier ones (a child's world transform on its parent's) is
    /// computed beside another column it needs (its local transform), so
    /// the batch's input is read once.
    #[inline(always)]
    pub(crate) fn write_with_earlier_beside<U: Copy>(
        self,
        beside: NewColumn<'a, U>,
        mut f: impl FnMut(usize, &[T]) -> (T, U),
    ) -> (Written<'a, T>, Written<'a, U>) {
        let n = self.slots.len();
        assert_eq!(beside.slots.len(), n, "columns of one batch");
        let this = self.slots.as_mut_ptr().cast::<T>();
        let other = beside.slots.as_mut_ptr().cast::<U>();
        for k in 0..n {
            // SAFETY: slots `0..k` were written by the iterations before
            // (`MaybeUninit<T>` has `T`'s layout); the shared slice covers
            // only them, while the write below is to slot `k`.
            let earlier = unsafe { std::slice::from_raw_parts(this, k) };
            let (value, next_to) = f(k, earlier);
            // SAFETY: `k < n`, inside both slices, which this call borrows
            // exclusively; plain writes, nothing to drop.
            unsafe {
                this.add(k).write(value);
                other.add(k).write(next_to);
            }
        }
        // SAFETY: the loop wrote every slot of both.
        unsafe { (Self::written(self.slots), NewColumn::written(beside.slots)) }
    }
}

/// Every column's new slots in a batch ([`Storage::write_columns`]).
pub(crate) struct NewColumns<'a> {
    pub local: NewColumn<'a, Affine3A>,
    pub world: NewColumn<'a, Affine3A>,
    pub entity: NewColumn<'a, u64>,
    pub parent: NewColumn<'a, Link>,
    pub first_child: NewColumn<'a, Link>,
    pub next_sibling: NewColumn<'a, Link>,
    pub prev_sibling: NewColumn<'a, Link>,
    pub flags: NewColumn<'a, u8>,
    pub idle: NewColumn<'a, u8>,
}

/// Every column's new slots, written: what a batch's fill returns to
/// [`Storage::write_columns`] as the proof that it left nothing unwritten.
pub(crate) struct WrittenColumns<'a> {
    pub local: Written<'a, Affine3A>,
    pub world: Written<'a, Affine3A>,
    pub entity: Written<'a, u64>,
    pub parent: Written<'a, Link>,
    pub first_child: Written<'a, Link>,
    pub next_sibling: Written<'a, Link>,
    pub prev_sibling: Written<'a, Link>,
    pub flags: Written<'a, u8>,
    pub idle: Written<'a, u8>,
}

impl WrittenColumns<'_> {
    /// Whether these are the slots `from..from + n` of `cols`, every
    /// column: a fill cannot hand back slots it was not given.
    fn cover(&self, cols: ColPtrs, from: usize, n: usize) -> bool {
        fn at<T>(written: &Written<'_, T>, col: *mut T, from: usize, n: usize) -> bool {
            written.len() == n && std::ptr::eq(written.as_ptr(), col.wrapping_add(from))
        }
        at(&self.local, cols.local, from, n)
            && at(&self.world, cols.world, from, n)
            && at(&self.entity, cols.entity, from, n)
            && at(&self.parent, cols.parent, from, n)
            && at(&self.first_child, cols.first_child, from, n)
            && at(&self.next_sibling, cols.next_sibling, from, n)
            && at(&self.prev_sibling, cols.prev_sibling, from, n)
            && at(&self.flags, cols.flags, from, n)
            && at(&self.idle, cols.idle, from, n)
    }
}

/// Restores the storage invariant if a fill stops early (a panic): a
/// grown buffer's new slots, `from..to`, are zeroed.
struct UnwrittenGuard {
    cols: ColPtrs,
    from: usize,
    to: usize,
}

impl Drop for UnwrittenGuard {
    fn drop(&mut self) {
        // SAFETY: `from..to` lies below the capacity and the storage is
        // still exclusively borrowed by `write_columns`.
        unsafe { self.cols.zero(self.from, self.to) }
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

    /// Writes slots `base..base + n` column by column: `fill` gets each
    /// column's new slots ([`NewColumns`]) and hands them back written
    /// ([`WrittenColumns`]), each column in a pass of its own or beside
    /// one other, so every loop writes few arrays (a slot-by-slot loop
    /// that writes all nine measured slower). If the capacity is short of
    /// `base + n + 1`, the buffer grows first, keeping the first
    /// `base + 1` slots, and the new slots are written in place: a slot
    /// about to be written is never zeroed first (a level of 10,000
    /// transforms is 1.5 MB that would be written twice).
    ///
    /// # Panics
    /// If `base` is not below the capacity, `base + n + 1` overflows, or `fill`
    /// hands back slots it was not given (slots are left initialized).
    pub(crate) fn write_columns(
        &mut self,
        base: usize,
        n: usize,
        fill: impl for<'a> FnOnce(NewColumns<'a>) -> WrittenColumns<'a>,
    ) {
        assert!(base < self.cap, "slot {base} beyond capacity {}", self.cap);
        // Checked: a wrapped `end` would pass the capacity test below.
        let end = base.checked_add(n).filter(|&e| e < usize::MAX);
        let end = end.expect("transform batch too large");
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
            let mut new = Storage {
                buf,
                cap,
                structure: StructureTag::fresh(cap),
            };
            new.copy_slots_from(self, base + 1);
            // SAFETY: `end..cap` lies inside the new buffer, owned here.
            unsafe { new.col_ptrs().zero(end, cap) };
            *self = new;
        }
        let cols = self.col_ptrs();
        // When the buffer grew, slots `base + 1..end` are uninitialized
        // until written: the guard zeroes them if the fill panics, or
        // hands back other slots.
        let guard = UnwrittenGuard {
            cols,
            from: base,
            to: if grown { end } else { base },
        };
        // SAFETY: `end < cap`, and `&mut self` excludes any other access
        // to the buffer while this call runs.
        let new = unsafe { cols.new_columns(base, n) };
        let written = fill(new);
        assert!(
            written.cover(cols, base, n),
            "a batch fill handed back slots it was not given"
        );
        std::mem::forget(guard);
        self.structure = StructureTag::fresh(self.cap);
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
mod tests;
