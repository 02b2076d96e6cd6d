//! One sparse component's storage: a sparse set keyed by entity index.
//!
//! Design. A component registered sparse does not live in archetypes. Its
//! values sit in one dense array per world, packed in the order they were
//! added (a removal moves the last value into the hole), beside a parallel
//! array of their entities and of their added and changed stamps; an index
//! array keyed by entity index says which slot holds an entity's value.
//! Adding or removing the component therefore moves no archetype row and
//! creates no archetype: it is an append or a swap-remove in this one set,
//! whatever else the entity holds. This is the sparse set of bevy's
//! `StorageType::SparseSet` and of flecs's sparse components, and the
//! classic structure of Briggs and Torczon's "An efficient representation
//! for sparse sets": O(1) add, remove and lookup, and iteration over the
//! dense array alone.
//!
//! The price is paid by readers: a query that walks archetypes looks each
//! row's entity up here (one index load and one generation compare), so a
//! component read by every entity every frame belongs in an archetype. The
//! sparse choice suits tags toggled often and components few entities have.
//!
//! # The aliasing rule
//! As for archetype columns (see [`crate::storage`]): values and stamps are
//! raw allocations reached only through raw pointers, which `&SparseSet`
//! hands out; only a holder of exclusive access to a value (`&mut` to the
//! world, or a schedule-granted write of the component) may write through
//! one. The structural functions (`push_uninit`, `swap_remove_forget`,
//! `clear_forget`) take `&mut SparseSet` and invalidate every pointer handed
//! out before them.

use super::column::Column;
use crate::component::{ComponentId, SnapshotCopy};
use crate::entity::Entity;
use crate::tick::Tick;
use std::alloc::Layout;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};

/// A slot of a [`SparseSet`]'s dense arrays.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct SparseSlot(u32);

impl SparseSlot {
    /// The slot at `index`.
    #[inline(always)]
    pub(crate) fn from_index(index: usize) -> Self {
        SparseSlot(index as u32)
    }

    /// The slot as an index.
    #[inline(always)]
    pub(crate) fn index(self) -> usize {
        self.0 as usize
    }
}

/// One sparse component's values. See the module docs.
///
/// # Invariants
/// - `entities.len()` values are live, in slots `0..entities.len()` of
///   `values`, `added` and `changed`, each of capacity `capacity`.
/// - `index[e.index()] == s + 1` exactly when `entities[s] == e`; every
///   other entry of `index` is 0.
pub(crate) struct SparseSet {
    component: ComponentId,
    index: Vec<u32>,
    entities: Vec<Entity>,
    values: Column,
    added: Column,
    changed: Column,
    capacity: usize,
    /// A changed stamp every value has at least: a loop that hands out
    /// every value mutably stamps this once instead of each value.
    every_changed: AtomicU64,
}

// SAFETY: the set owns `Send + Sync` component values through raw columns;
// access to them follows the aliasing rule in the module docs.
unsafe impl Send for SparseSet {}
// SAFETY: as above; `&SparseSet` only reads the set's own fields.
unsafe impl Sync for SparseSet {}

impl std::fmt::Debug for SparseSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SparseSet")
            .field("component", &self.component)
            .field("len", &self.entities.len())
            .finish()
    }
}

impl SparseSet {
    /// An empty set for component `component`, whose values have layout
    /// `item` and drop with `drop_fn`.
    pub(crate) fn new(
        component: ComponentId,
        item: Layout,
        drop_fn: Option<unsafe fn(*mut u8)>,
    ) -> Self {
        SparseSet {
            component,
            index: Vec::new(),
            entities: Vec::new(),
            values: Column::new(item, drop_fn),
            added: Column::new(Layout::new::<Tick>(), None),
            changed: Column::new(Layout::new::<Tick>(), None),
            capacity: 0,
            every_changed: AtomicU64::new(0),
        }
    }

    /// The component stored here.
    #[inline]
    pub(crate) fn component(&self) -> ComponentId {
        self.component
    }

    /// How many entities have the component.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.entities.len()
    }

    /// The entities with the component, in slot order.
    #[inline]
    pub(crate) fn entities(&self) -> &[Entity] {
        &self.entities
    }

    /// The layout of one value.
    #[inline]
    pub(crate) fn item(&self) -> Layout {
        self.values.item()
    }

    /// How a value drops.
    #[inline]
    pub(crate) fn drop_fn(&self) -> Option<unsafe fn(*mut u8)> {
        self.values.drop_fn()
    }

    /// The slot holding `entity`'s value (the exact entity: an older or
    /// newer generation of its index misses).
    #[inline(always)]
    pub(crate) fn slot_of(&self, entity: Entity) -> Option<SparseSlot> {
        let stored = *self.index.get(entity.index() as usize)?;
        let slot = stored.checked_sub(1)?;
        (self.entities.get(slot as usize) == Some(&entity)).then_some(SparseSlot(slot))
    }

    /// Whether `entity` has the component.
    #[inline]
    pub(crate) fn contains(&self, entity: Entity) -> bool {
        self.slot_of(entity).is_some()
    }

    /// Pointer to the value in `slot`.
    ///
    /// # Safety
    /// `slot` must be below [`SparseSet::len`].
    #[inline(always)]
    pub(crate) unsafe fn value_ptr(&self, slot: SparseSlot) -> NonNull<u8> {
        debug_assert!(slot.index() < self.len());
        // SAFETY: the slot is live (caller), so inside the allocation.
        unsafe { self.values.slot(slot.index()) }
    }

    /// The first entity; the others follow, in slot order.
    #[inline(always)]
    pub(crate) fn entities_ptr(&self) -> NonNull<Entity> {
        NonNull::from(self.entities.as_slice()).cast()
    }

    /// The first value; the others follow at the layout's size.
    #[inline]
    pub(crate) fn values_ptr(&self) -> NonNull<u8> {
        self.values.ptr()
    }

    /// The added and changed stamps of `slot`.
    ///
    /// # Safety
    /// `slot` must be below [`SparseSet::len`], and no writer of its stamps
    /// may run meanwhile.
    #[inline(always)]
    pub(crate) unsafe fn ticks(&self, slot: SparseSlot) -> (Tick, Tick) {
        let every = Tick::new(self.every_changed.load(Ordering::Relaxed));
        // SAFETY: live slots hold initialised stamps (type invariant).
        unsafe {
            (
                self.added.slot(slot.index()).cast::<Tick>().read(),
                self.changed
                    .slot(slot.index())
                    .cast::<Tick>()
                    .read()
                    .max(every),
            )
        }
    }

    /// Pointer to `slot`'s changed stamp, for a writer to stamp.
    ///
    /// # Safety
    /// `slot` must be below [`SparseSet::len`].
    #[inline(always)]
    pub(crate) unsafe fn changed_ptr(&self, slot: SparseSlot) -> NonNull<Tick> {
        // SAFETY: the slot is live (caller).
        unsafe { self.changed.slot(slot.index()).cast::<Tick>() }
    }

    /// Marks the value in `slot` changed at `tick`.
    ///
    /// # Safety
    /// `slot` must be below [`SparseSet::len`], and the caller must hold
    /// exclusive access to its stamps (see the module docs).
    #[inline(always)]
    pub(crate) unsafe fn stamp_changed(&self, slot: SparseSlot, tick: Tick) {
        // SAFETY: forwarded contract.
        unsafe { self.changed_ptr(slot).write(tick) }
    }

    /// Marks every value changed at `tick`.
    ///
    /// # Safety
    /// The caller must hold exclusive access to every value's stamps (see
    /// the module docs).
    #[inline]
    pub(crate) unsafe fn stamp_all_changed(&self, tick: Tick) {
        // One stamp for all: `ticks` reads the later of it and a value's
        // own. Ticks only grow, and the caller's exclusive access keeps
        // other writers away.
        self.every_changed.store(tick.get(), Ordering::Relaxed);
    }

    /// Appends an uninitialised value slot for `entity`, stamped added (and
    /// changed) at `tick`.
    ///
    /// # Safety
    /// `entity` must not be in the set, and the caller must write a valid
    /// value into the slot before anything else reads the set.
    pub(crate) unsafe fn push_uninit(&mut self, entity: Entity, tick: Tick) -> SparseSlot {
        debug_assert!(!self.contains(entity));
        let slot = self.entities.len();
        self.reserve_one();
        let at = entity.index() as usize;
        match self.index.get_mut(at) {
            Some(entry) => *entry = slot as u32 + 1,
            None => self.grow_index(at, slot),
        }
        self.entities.push(entity);
        // SAFETY: `slot < capacity`; stamps are plain `Tick`s.
        unsafe {
            self.added.slot(slot).cast::<Tick>().write(tick);
            self.changed.slot(slot).cast::<Tick>().write(tick);
        }
        SparseSlot(slot as u32)
    }

    /// Appends `entity` with its value written by `write` into the new
    /// slot, stamped `added` and `changed`. A panicking `write` leaves the
    /// set as it was.
    ///
    /// # Safety
    /// `entity` must not be in the set, and `write` must initialise the
    /// slot it is handed with a valid value (or panic).
    unsafe fn push_with(
        &mut self,
        entity: Entity,
        added: Tick,
        changed: Tick,
        write: impl FnOnce(*mut u8),
    ) {
        let slot = self.entities.len();
        self.reserve_one();
        // SAFETY: `slot < capacity`.
        write(unsafe { self.values.slot(slot).as_ptr() });
        // SAFETY: the value is in; the rest is bookkeeping, which cannot
        // panic but for allocation failure (an abort).
        unsafe { self.push_uninit(entity, added) };
        // SAFETY: the slot was just pushed.
        unsafe { self.stamp_changed(SparseSlot(slot as u32), changed) };
    }

    /// Extends the index to cover entity index `at`, which maps to `slot`.
    #[cold]
    #[inline(never)]
    fn grow_index(&mut self, at: usize, slot: usize) {
        self.index.resize(at + 1, 0);
        self.index[at] = slot as u32 + 1;
    }

    /// Makes room for one more value.
    #[inline]
    fn reserve_one(&mut self) {
        if self.entities.len() == self.capacity {
            self.grow();
        }
    }

    /// Doubles the capacity of every array.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let new = (self.capacity * 2).max(4);
        // SAFETY: `capacity` is every column's capacity (invariant); growing
        // keeps every live slot.
        unsafe {
            self.values.resize(self.capacity, new);
            self.added.resize(self.capacity, new);
            self.changed.resize(self.capacity, new);
        }
        self.capacity = new;
        self.entities.reserve_exact(new - self.entities.len());
    }

    /// Makes `self` a copy of `source` (a set of the same component),
    /// values copied by `copy`, keeping its allocations. A panicking
    /// `Clone` leaves `self` holding the values copied so far.
    ///
    /// # Panics
    /// If `copy` is [`SnapshotCopy::Unsupported`] and `source` is not
    /// empty (callers check first).
    pub(crate) fn copy_from(&mut self, source: &SparseSet, copy: SnapshotCopy) {
        debug_assert_eq!(self.item(), source.item());
        self.clear();
        // The copied stamps are the source's as `ticks` reads them.
        *self.every_changed.get_mut() = 0;
        let size = self.item().size();
        for (slot, &e) in source.entities.iter().enumerate() {
            let slot = SparseSlot(slot as u32);
            // SAFETY: `slot` is live in `source`.
            let (from, (added, changed)) = unsafe { (source.value_ptr(slot), source.ticks(slot)) };
            let write = |to: *mut u8| match copy {
                // SAFETY: `from` is a live value of the component, `to` a
                // free slot of the same layout; a `Bytes` component is
                // copied as raw memory.
                SnapshotCopy::Bytes => unsafe {
                    std::ptr::copy_nonoverlapping(from.as_ptr(), to, size)
                },
                // SAFETY: as above, through the component's clone function.
                SnapshotCopy::Clone(clone, _) => unsafe { clone(from.as_ptr(), to) },
                // SAFETY: `to` is a free slot of the component's layout.
                SnapshotCopy::Reset(fresh) => unsafe { fresh(to) },
                SnapshotCopy::Unsupported => {
                    panic!("doecs: copying a sparse set of a component that cannot be copied")
                }
            };
            // SAFETY: `self` was cleared, and `source` holds each entity
            // once; `write` initialises the slot or panics.
            unsafe { self.push_with(e, added, changed, write) };
        }
    }

    /// Removes `slot` without dropping its value, moving the last value
    /// into the hole.
    ///
    /// # Safety
    /// `slot` must be below [`SparseSet::len`], and its value must already
    /// be moved out (or be dropped by the caller).
    pub(crate) unsafe fn swap_remove_forget(&mut self, slot: SparseSlot) {
        let last = self.entities.len() - 1;
        let gone = self.entities.swap_remove(slot.index());
        self.index[gone.index() as usize] = 0;
        if slot.index() != last {
            let size = self.values.size();
            // SAFETY: both slots are below the capacity and distinct; the
            // last value moves as raw bytes, its old slot is then dead.
            unsafe {
                crate::storage::archetype::copy_value(
                    self.values.slot(last).as_ptr(),
                    self.values.slot(slot.index()).as_ptr(),
                    size,
                );
                for stamps in [&self.added, &self.changed] {
                    let value = stamps.slot(last).cast::<Tick>().read();
                    stamps.slot(slot.index()).cast::<Tick>().write(value);
                }
            }
            let moved = self.entities[slot.index()];
            self.index[moved.index() as usize] = slot.0 + 1;
        }
    }

    /// Empties the set without dropping any value.
    ///
    /// # Safety
    /// Every live value must already be moved out or dropped.
    pub(crate) unsafe fn clear_forget(&mut self) {
        for e in self.entities.drain(..) {
            self.index[e.index() as usize] = 0;
        }
    }

    /// Drops every value and empties the set. A panicking `Drop` still
    /// leaves the set empty (the values after it leak).
    pub(crate) fn clear(&mut self) {
        let len = self.len();
        let drop_fn = self.values.drop_fn();
        // SAFETY: the values are forgotten first, so a panic below leaves
        // the set empty and consistent; each live value drops once.
        unsafe { self.clear_forget() };
        if let Some(drop_fn) = drop_fn {
            for slot in 0..len {
                // SAFETY: slot `slot` held a live value, now owned here.
                unsafe { drop_fn(self.values.slot(slot).as_ptr()) };
            }
        }
    }

    /// Checks the invariants in the type docs. Panics with a description of
    /// the first one broken.
    pub(crate) fn check_invariants(&self) {
        assert!(
            self.entities.len() <= self.capacity,
            "sparse set {:?}: {} values in capacity {}",
            self.component,
            self.entities.len(),
            self.capacity
        );
        for (slot, e) in self.entities.iter().enumerate() {
            assert_eq!(
                self.index.get(e.index() as usize).copied(),
                Some(slot as u32 + 1),
                "sparse set {:?}: index of {e:?} does not point at slot {slot}",
                self.component
            );
        }
        let pointing = self.index.iter().filter(|&&s| s != 0).count();
        assert_eq!(
            pointing,
            self.entities.len(),
            "sparse set {:?}: index has stale entries",
            self.component
        );
    }
}

impl Drop for SparseSet {
    fn drop(&mut self) {
        /// Frees the columns even if a value's `Drop` panics.
        struct Free<'a>(&'a mut SparseSet);
        impl Drop for Free<'_> {
            fn drop(&mut self) {
                let cap = self.0.capacity;
                // SAFETY: `clear` left no live value; `cap` is every
                // column's capacity.
                unsafe {
                    self.0.values.free(cap);
                    self.0.added.free(cap);
                    self.0.changed.free(cap);
                }
                self.0.capacity = 0;
            }
        }
        let guard = Free(self);
        guard.0.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set_of_strings() -> SparseSet {
        unsafe fn drop_string(p: *mut u8) {
            // SAFETY: the set passes a live `String`.
            unsafe { p.cast::<String>().drop_in_place() }
        }
        SparseSet::new(
            ComponentId::from_index(0),
            Layout::new::<String>(),
            Some(drop_string),
        )
    }

    fn put(set: &mut SparseSet, e: Entity, s: &str, tick: u64) {
        // SAFETY: `e` is new to the set, and the slot is written at once.
        unsafe {
            let slot = set.push_uninit(e, Tick::new(tick));
            set.value_ptr(slot).cast::<String>().write(s.to_owned());
        }
    }

    fn read(set: &SparseSet, e: Entity) -> Option<String> {
        let slot = set.slot_of(e)?;
        // SAFETY: the slot is live and holds a `String`.
        Some(unsafe { (*set.value_ptr(slot).cast::<String>().as_ptr()).clone() })
    }

    #[test]
    fn add_remove_and_generations() {
        let mut set = set_of_strings();
        let a = Entity::from_parts(3, 0);
        let b = Entity::from_parts(0, 0);
        let c = Entity::from_parts(9, 2);
        put(&mut set, a, "a", 1);
        put(&mut set, b, "b", 2);
        put(&mut set, c, "c", 3);
        set.check_invariants();
        assert_eq!(read(&set, b).as_deref(), Some("b"));
        assert_eq!(
            read(&set, Entity::from_parts(9, 1)),
            None,
            "stale generation"
        );
        assert_eq!(read(&set, Entity::from_parts(4, 0)), None);
        let slot = set.slot_of(a).unwrap();
        // SAFETY: the value is dropped here, then its slot forgotten.
        unsafe {
            set.value_ptr(slot).cast::<String>().drop_in_place();
            set.swap_remove_forget(slot);
        }
        set.check_invariants();
        assert_eq!(read(&set, a), None);
        assert_eq!(read(&set, c).as_deref(), Some("c"));
        let slot = set.slot_of(c).unwrap();
        // SAFETY: the slot is live and nothing writes the stamps.
        let ticks = unsafe { set.ticks(slot) };
        assert_eq!(ticks, (Tick::new(3), Tick::new(3)));
        assert_eq!(set.entities(), &[c, b]);
        for i in 0..100 {
            put(&mut set, Entity::from_parts(100 + i, 0), "x", 4);
        }
        set.check_invariants();
        assert_eq!(set.len(), 102);
        set.clear();
        set.check_invariants();
        assert_eq!(set.len(), 0);
        put(&mut set, a, "again", 5);
        assert_eq!(read(&set, a).as_deref(), Some("again"));
    }

    #[test]
    fn zero_sized_and_over_aligned() {
        #[repr(align(64))]
        #[derive(Clone, Copy, PartialEq, Debug)]
        struct Wide(u8);
        let mut set = SparseSet::new(ComponentId::from_index(1), Layout::new::<Wide>(), None);
        for i in 0..10 {
            // SAFETY: each entity is new; the slot is written at once.
            unsafe {
                let slot = set.push_uninit(Entity::from_parts(i, 0), Tick::new(1));
                let p = set.value_ptr(slot);
                assert_eq!(p.as_ptr() as usize % 64, 0);
                p.cast::<Wide>().write(Wide(i as u8));
            }
        }
        set.check_invariants();
        let mut tags = SparseSet::new(ComponentId::from_index(2), Layout::new::<()>(), None);
        // SAFETY: as above; a zero-sized value needs no write.
        unsafe { tags.push_uninit(Entity::from_parts(7, 0), Tick::new(1)) };
        assert!(tags.contains(Entity::from_parts(7, 0)));
        tags.check_invariants();
    }
}
