//! The entity table: the id allocator and the entity index in one array.
//!
//! One 12-byte slot per entity index holds the slot's generation and what the
//! slot is: where the entity's row is (the entity index of Sander Mertens's "Building an ECS #2: Archetypes and Vectorization"), or that the
//! index is live without a row, free, reserved or retired. So one load
//! answers "is this exact entity here, and where is its row?", and a world
//! spends 12 bytes per entity on bookkeeping besides the id stored in its
//! row. (Keeping the allocator's generations and the index's locations in
//! two arrays costs a second cache miss on every lookup and 8 more bytes per
//! entity.)
//!
//! **Allocation** (Bitsquid's "Building a Data-Oriented Entity System", part 1). Freed indices wait in a FIFO queue and
//! are reused only once at least `min_free_indices` of them are waiting (1024
//! by default). That spreads reuse over many slots, so a given slot cycles
//! through its generations slowly. A slot whose generation would wrap is
//! retired for good, so a stale handle can never come back to life.
//!
//! A slot can also be **reserved**: its id has been handed out for an entity
//! that does not exist yet (a spawn recorded in a command buffer). A reserved
//! id is not alive; it becomes alive when its spawn is applied
//! ([`Entities::spawn_reserved`]), or goes back to the free queue, with its
//! generation bumped so no copy of it ever comes to life, when its spawn is
//! dropped ([`Entities::cancel_reserved`]). [`Entities::reserve_many`] takes
//! ids with `&mut self`, in exactly the order [`Entities::alloc_many`] would,
//! so a caller that reserves in a fixed order gets the same ids on every run;
//! the schedule uses this to give each system its own pool of ids before the
//! systems start (`spawn_ids`), which keeps ids independent of the thread
//! count.
//! [`Entities::reserve`] needs only `&self` and hands out fresh indices
//! through an atomic cursor, for command buffers recorded outside a schedule;
//! ids reserved that way on several threads at once depend on timing.
//!
//! A batch spawn takes its ids already located at the rows it is about to
//! fill (`alloc_many_located`), so each new slot is written once.
//!
//! **Who uses what.** A [`World`](crate::World) allocates from its core's
//! table, which also indexes its rows. A [`Universe`](crate::Universe)
//! allocates from a table of its own (no rows), and each of its worlds keeps a
//! table used only as an index: such a world never allocates, because its
//! [`WorldCore`](crate::WorldCore) offers no way to reach its table.

mod by_archetype;
mod image;
pub(crate) mod spawn_ids;
pub(crate) use by_archetype::ByArchetype;
pub use image::{EntityTableImage, ImageError};

use crate::entity::{Entity, MIN_FREE_INDICES};
use crate::location::Location;
use crate::stamp::Stamp;
use crate::storage::{ArchetypeId, Row};
use std::collections::VecDeque;
use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};

/// What one slot holds besides its generation.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SlotState {
    /// The entity of this generation has a row here.
    Located(Location),
    /// In an allocating table: the entity of this generation is alive but has
    /// no row (only between allocation and placement, or in a universe's own
    /// table). In an index: no entity of this slot is here.
    Unlocated,
    /// Free: waiting in the queue; the generation is the next one to use.
    Free,
    /// Reserved for a recorded spawn; the generation is the entity's.
    Reserved,
    /// Retired for good: its generation would have wrapped.
    Retired,
}

/// One slot, packed into 12 bytes: `code` is 0 unlocated, 1 free, 2 reserved,
/// 3 retired, or `LOCATED + archetype index` with `row` the row.
#[derive(Copy, Clone, Debug)]
#[repr(C)]
struct Slot {
    generation: u32,
    code: u32,
    row: u32,
}

const UNLOCATED: u32 = 0;
const FREE: u32 = 1;
const RESERVED: u32 = 2;
const RETIRED: u32 = 3;
const LOCATED: u32 = 4;

impl Slot {
    const EMPTY: Slot = Slot {
        generation: 0,
        code: UNLOCATED,
        row: 0,
    };

    #[inline]
    fn state(self) -> SlotState {
        match self.code {
            UNLOCATED => SlotState::Unlocated,
            FREE => SlotState::Free,
            RESERVED => SlotState::Reserved,
            RETIRED => SlotState::Retired,
            code => SlotState::Located(Location {
                archetype: ArchetypeId::from_index((code - LOCATED) as usize),
                row: Row(self.row),
            }),
        }
    }

    #[inline]
    fn located(generation: u32, location: Location) -> Slot {
        let index = location.archetype.index() as u32;
        Slot {
            generation,
            code: LOCATED
                .checked_add(index)
                .expect("doecs: too many archetypes"),
            row: location.row.0,
        }
    }

    #[inline]
    fn with(generation: u32, code: u32) -> Slot {
        Slot {
            generation,
            code,
            row: 0,
        }
    }

    /// Whether this slot is alive (with or without a row).
    #[inline]
    fn is_live(self) -> bool {
        self.code == UNLOCATED || self.code >= LOCATED
    }
}

/// The entity table. See the module docs.
///
/// # Invariants
/// - In an allocating table, `live` counts unlocated and located slots,
///   `reserved` reserved ones and `retired` retired ones; every free slot is
///   in `free` exactly once and nothing else is. In an index-only table no
///   slot is free, reserved or retired.
/// - `located` counts located slots.
/// - `pending >= slots.len()`; indices in `slots.len()..pending` were handed
///   out by [`Entities::reserve`] and are reserved with generation 0 (they get
///   their slots at the next `&mut self` call).
/// - `departures` is this table's own lineage (no other table has had it),
///   and its count grows whenever a located entity stops being located
///   under its id (its location cleared, its generation changed) or the
///   whole table is overwritten: an unchanged stamp means every entity
///   located then is located still.
pub struct Entities {
    slots: Vec<Slot>,
    free: VecDeque<u32>,
    min_free_indices: usize,
    live: usize,
    located: usize,
    reserved: usize,
    retired: usize,
    pending: AtomicU32,
    departures: Stamp,
}

impl Default for Entities {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for Entities {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Entities")
            .field("slots", &self.slots.len())
            .field("live", &self.live)
            .field("located", &self.located)
            .field("reserved", &self.reserved_count())
            .field("free", &self.free.len())
            .field("retired", &self.retired)
            .finish()
    }
}

impl Entities {
    /// Makes this table a copy of `other`, reusing this one's memory.
    pub(crate) fn copy_from(&mut self, other: &Entities) {
        self.slots.clone_from(&other.slots);
        self.free.clone_from(&other.free);
        self.min_free_indices = other.min_free_indices;
        self.live = other.live;
        self.located = other.located;
        self.reserved = other.reserved;
        self.retired = other.retired;
        *self.pending.get_mut() = other.pending.load(std::sync::atomic::Ordering::Acquire);
        self.departures = Stamp::fresh();
    }

    /// The table's stamp for departures (see the invariants): equal stamps
    /// taken at two moments mean no located entity left in between.
    pub(crate) fn departures(&self) -> Stamp {
        self.departures
    }

    /// Frees every located entity (their generations move on): for
    /// emptying a world whose rows were lost.
    pub(crate) fn free_all_located(&mut self) {
        let located: Vec<Entity> = (0..self.slots.len())
            .filter_map(|i| {
                let slot = self.slots[i];
                matches!(slot.state(), SlotState::Located(_))
                    .then(|| Entity::from_parts(i as u32, slot.generation))
            })
            .collect();
        for e in located {
            self.clear_location(e);
            self.free(e);
        }
    }

    /// An empty table with the default reuse threshold ([`MIN_FREE_INDICES`]).
    pub fn new() -> Self {
        Self::with_min_free_indices(MIN_FREE_INDICES)
    }

    /// An empty table that reuses an index only once `min_free_indices`
    /// freed indices are waiting. Zero reuses at once.
    pub fn with_min_free_indices(min_free_indices: usize) -> Self {
        Entities {
            slots: Vec::new(),
            free: VecDeque::new(),
            min_free_indices,
            live: 0,
            located: 0,
            reserved: 0,
            retired: 0,
            pending: AtomicU32::new(0),
            departures: Stamp::fresh(),
        }
    }

    #[inline]
    fn slot(&self, entity: Entity) -> Option<Slot> {
        self.slots
            .get(entity.index() as usize)
            .copied()
            .filter(|s| s.generation == entity.generation())
    }

    /// Whether `entity` is alive: one load and one compare.
    #[inline]
    pub fn alive(&self, entity: Entity) -> bool {
        self.slot(entity).is_some_and(Slot::is_live)
    }

    /// Where exactly `entity` (generation included) has its row, if it has one.
    #[inline]
    pub fn location(&self, entity: Entity) -> Option<Location> {
        match self.slot(entity)?.state() {
            SlotState::Located(location) => Some(location),
            _ => None,
        }
    }

    /// Where exactly `entity` has its row, as (archetype index, row): the
    /// lookup of [`Entities::location`] with nothing to decode, for hot
    /// loops of lookups.
    #[inline(always)]
    pub(crate) fn locate(&self, entity: Entity) -> Option<(usize, usize)> {
        let slot = self.slots.get(entity.index() as usize)?;
        if slot.generation != entity.generation() || slot.code < LOCATED {
            return None;
        }
        Some(((slot.code - LOCATED) as usize, slot.row as usize))
    }

    /// What slot `index` holds, and its generation.
    pub fn slot_state(&self, index: u32) -> Option<(u32, SlotState)> {
        let slot = self.slots.get(index as usize)?;
        Some((slot.generation, slot.state()))
    }

    /// Whether `entity` is reserved: handed out for a spawn not yet applied.
    pub fn is_reserved(&self, entity: Entity) -> bool {
        match self.slots.get(entity.index() as usize) {
            Some(slot) => slot.generation == entity.generation() && slot.code == RESERVED,
            None => {
                entity.generation() == 0 && entity.index() < self.pending.load(Ordering::Relaxed)
            }
        }
    }

    /// Number of live entities (allocated and not freed).
    #[inline]
    pub fn len(&self) -> usize {
        self.live
    }

    /// Whether no entity is alive.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Number of entities with a row.
    #[inline]
    pub fn located_count(&self) -> usize {
        self.located
    }

    /// Number of reserved ids (handed out, not yet spawned nor cancelled).
    pub fn reserved_count(&self) -> usize {
        self.reserved + self.pending_count()
    }

    /// Number of slots ever created; every live index is below this.
    #[inline]
    pub fn slot_count(&self) -> usize {
        self.slots.len()
    }

    /// Number of slots retired because their generation would have wrapped.
    pub fn retired_count(&self) -> usize {
        self.retired
    }

    /// Number of freed indices waiting in the FIFO.
    pub fn free_count(&self) -> usize {
        self.free.len()
    }

    /// The configured reuse threshold.
    pub fn min_free_indices(&self) -> usize {
        self.min_free_indices
    }

    /// The live entity currently in slot `index`, if any.
    #[inline]
    pub fn entity_at(&self, index: u32) -> Option<Entity> {
        let slot = self.slots.get(index as usize)?;
        slot.is_live()
            .then(|| Entity::from_parts(index, slot.generation))
    }

    /// Every entity with a row, as `(entity, location)`, in index order.
    pub fn iter_located(&self) -> impl Iterator<Item = (Entity, Location)> + '_ {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| match s.state() {
                SlotState::Located(l) => Some((Entity::from_parts(i as u32, s.generation), l)),
                _ => None,
            })
    }

    /// Bytes the table holds.
    pub fn memory_bytes(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<Slot>()
            + self.free.capacity() * std::mem::size_of::<u32>()
    }

    // --- The index: rows of this world. ---

    /// Records where `entity` lives (generation included), growing an index
    /// as needed.
    #[inline]
    pub(crate) fn set_location(&mut self, entity: Entity, location: Location) {
        let i = entity.index() as usize;
        if i >= self.slots.len() {
            self.grow_index(i);
        }
        let slot = &mut self.slots[i];
        if slot.code < LOCATED {
            self.located += 1;
        } else if slot.generation != entity.generation() {
            // An index-only table placing a newer id over an older one.
            self.departures.bump();
        }
        *slot = Slot::located(entity.generation(), location);
    }

    /// Moves an entity that has a row, with this generation, to another
    /// row: [`Entities::set_location`] without the bookkeeping of a first
    /// placement, for the row moves of structural changes.
    ///
    /// # Panics
    /// If the index was never allocated (in debug builds also if the entity
    /// has no row or another generation).
    #[inline(always)]
    pub(crate) fn relocate(&mut self, entity: Entity, location: Location) {
        let slot = &mut self.slots[entity.index() as usize];
        debug_assert!(slot.code >= LOCATED && slot.generation == entity.generation());
        *slot = Slot::located(entity.generation(), location);
    }

    #[cold]
    fn grow_index(&mut self, index: usize) {
        let len = (index + 1).max(self.slots.len() * 2).max(64);
        self.slots.resize(len, Slot::EMPTY);
        *self.pending.get_mut() = (*self.pending.get_mut()).max(len as u32);
    }

    /// Makes room for indices below `len` without further reallocation.
    pub(crate) fn reserve_slots(&mut self, len: usize) {
        self.sync_pending();
        let extra = len.saturating_sub(self.slots.len());
        self.slots.reserve_exact(extra);
    }

    /// Forgets `entity`'s row (generation must match): the slot becomes
    /// unlocated, the entity still alive if it was.
    #[inline]
    pub(crate) fn clear_location(&mut self, entity: Entity) {
        if let Some(slot) = self.slots.get_mut(entity.index() as usize) {
            if slot.generation == entity.generation() && slot.code >= LOCATED {
                *slot = Slot::with(slot.generation, UNLOCATED);
                self.located -= 1;
                self.departures.bump();
            }
        }
    }

    // --- The allocator. ---

    /// Ids reserved through `&self` that have no slot yet.
    #[inline]
    fn pending_count(&self) -> usize {
        (self.pending.load(Ordering::Relaxed) as usize).saturating_sub(self.slots.len())
    }

    /// Gives ids reserved through [`Entities::reserve`] their slots. Every
    /// allocating `&mut self` method calls this first.
    #[inline]
    fn sync_pending(&mut self) {
        let end = *self.pending.get_mut() as usize;
        if end > self.slots.len() {
            self.reserved += end - self.slots.len();
            self.slots.resize(end, Slot::with(0, RESERVED));
        }
    }

    /// Creates one entity (alive, with no row yet).
    pub fn alloc(&mut self) -> Entity {
        self.sync_pending();
        let index = self.next_index();
        self.live += 1;
        let slot = &mut self.slots[index as usize];
        slot.code = UNLOCATED;
        Entity::from_parts(index, slot.generation)
    }

    /// Creates `count` entities and appends them to `out`. Reused indices come
    /// first (only those above the reuse threshold), then fresh ones.
    pub fn alloc_many(&mut self, count: usize, out: &mut Vec<Entity>) {
        self.take_many(count, out, |_, generation| {
            Slot::with(generation, UNLOCATED)
        });
        self.live += count;
    }

    /// [`alloc_many`](Self::alloc_many), each new entity located at once:
    /// the `k`-th at row `first + k` of `archetype`, which the caller
    /// fills before anything reads it. Each slot is written once. Returns
    /// the first index when every id took a fresh slot: then their indices
    /// are that index, the next, and so on, in order.
    pub(crate) fn alloc_many_located(
        &mut self,
        count: usize,
        out: &mut Vec<Entity>,
        archetype: ArchetypeId,
        first: usize,
    ) -> Option<u32> {
        let at_row_zero = Slot::located(
            0,
            Location {
                archetype,
                row: Row(0),
            },
        );
        let fresh_from = self.take_many(count, out, |k, generation| Slot {
            generation,
            row: (first + k) as u32,
            ..at_row_zero
        });
        self.live += count;
        self.located += count;
        fresh_from
    }

    /// Reserves `count` ids and appends them to `out`, taking exactly the
    /// indices [`Entities::alloc_many`] would. They are not alive until
    /// [`Entities::spawn_reserved`].
    pub fn reserve_many(&mut self, count: usize, out: &mut Vec<Entity>) {
        self.take_many(count, out, |_, generation| Slot::with(generation, RESERVED));
        self.reserved += count;
    }

    /// The next index `alloc` hands out, with its slot made to exist (still
    /// marked free, holding the generation to use).
    fn next_index(&mut self) -> u32 {
        if self.free.len() >= self.min_free_indices.max(1) {
            if let Some(index) = self.free.pop_front() {
                return index;
            }
        }
        let index = self.slots.len();
        assert!(
            index < u32::MAX as usize,
            "doecs: entity index space (2^32 slots) exhausted"
        );
        self.slots.push(Slot::with(0, FREE));
        *self.pending.get_mut() = self.slots.len() as u32;
        index as u32
    }

    /// Takes `count` indices as `alloc` would and sets the slot of the
    /// `k`-th to `slot(k, generation)`, given the generation to use; the
    /// caller counts them.
    /// Returns the first index when none was reused (the rest follow it
    /// in order).
    fn take_many(
        &mut self,
        count: usize,
        out: &mut Vec<Entity>,
        slot: impl Fn(usize, u32) -> Slot,
    ) -> Option<u32> {
        self.sync_pending();
        out.reserve(count);
        // Each reuse must happen with at least `min_free_indices` (and at least
        // one) indices waiting, exactly as repeated `alloc` calls would.
        let reusable = self
            .free
            .len()
            .saturating_sub(self.min_free_indices.saturating_sub(1))
            .min(count);
        for k in 0..reusable {
            let index = self.free.pop_front().expect("counted above");
            let taken = &mut self.slots[index as usize];
            *taken = slot(k, taken.generation);
            out.push(Entity::from_parts(index, taken.generation));
        }
        let fresh = count - reusable;
        let start = self.slots.len();
        let end = start
            .checked_add(fresh)
            .filter(|&end| end <= u32::MAX as usize)
            .expect("doecs: entity index space (2^32 slots) exhausted");
        self.slots.extend((reusable..count).map(|k| slot(k, 0)));
        *self.pending.get_mut() = end as u32;
        out.extend((start..end).map(|i| Entity::from_parts(i as u32, 0)));
        (reusable == 0).then_some(start as u32)
    }

    /// Reserves a fresh entity id with only shared access. It is not alive
    /// until [`Entities::spawn_reserved`]. Reserved ids never come from the
    /// free queue, so reservation cannot race with reuse.
    pub fn reserve(&self) -> Entity {
        // Never wraps: a wrapped cursor would hand out indices of live slots.
        let index = self
            .pending
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |c| {
                c.checked_add(1).filter(|&next| next != u32::MAX)
            })
            .expect("doecs: entity index space (2^32 slots) exhausted");
        Entity::from_parts(index, 0)
    }

    /// Makes the reserved id `entity` alive (with no row yet). Returns
    /// `false`, changing nothing, if it is not reserved.
    pub fn spawn_reserved(&mut self, entity: Entity) -> bool {
        self.sync_pending();
        match self.slots.get_mut(entity.index() as usize) {
            Some(slot) if slot.generation == entity.generation() && slot.code == RESERVED => {
                slot.code = UNLOCATED;
                self.reserved -= 1;
                self.live += 1;
                true
            }
            _ => false,
        }
    }

    /// Gives back a reserved id whose spawn will never happen. Copies of it
    /// may exist, so the slot's generation moves on (or the slot retires) and
    /// the index joins the free queue like a despawned one. Returns `false`,
    /// changing nothing, if `entity` is not reserved.
    pub fn cancel_reserved(&mut self, entity: Entity) -> bool {
        self.sync_pending();
        if !self.is_reserved(entity) {
            return false;
        }
        self.reserved -= 1;
        self.retire_or_free(entity);
        true
    }

    /// Gives back reserved ids that were never handed to anyone, undoing
    /// [`Entities::reserve_many`] as far as the state allows: the last fresh
    /// slots are removed again, and every other id goes back to the front of
    /// the free queue with its generation unchanged (no copy of it exists).
    /// Ids are taken in reverse, so giving back what `reserve_many` returned
    /// restores the queue's order. An id that is no longer reserved (a
    /// command that named it spawned it) is skipped.
    pub fn unreserve_unused(&mut self, ids: &[Entity]) {
        self.sync_pending();
        for &e in ids.iter().rev() {
            if !self.is_reserved(e) {
                continue;
            }
            self.reserved -= 1;
            let i = e.index() as usize;
            if i + 1 == self.slots.len() && e.generation() == 0 {
                self.slots.pop();
                *self.pending.get_mut() = self.slots.len() as u32;
            } else {
                self.slots[i].code = FREE;
                self.free.push_front(e.index());
            }
        }
    }

    /// Makes sure slots `..end` exist, reserving every new one with
    /// generation 0, and returns the range of indices added. The schedule
    /// uses this for ids its systems computed from a fixed layout past the
    /// end of the table.
    pub fn reserve_fresh_up_to(&mut self, end: usize) -> std::ops::Range<usize> {
        self.sync_pending();
        let start = self.slots.len();
        if end > start {
            assert!(
                end <= u32::MAX as usize,
                "doecs: entity index space (2^32 slots) exhausted"
            );
            self.slots.resize(end, Slot::with(0, RESERVED));
            self.reserved += end - start;
            *self.pending.get_mut() = end as u32;
        }
        start..end.max(start)
    }

    /// Destroys `entity`, which must have no row (the world removes it
    /// first). Returns `false`, changing nothing, if it was not alive.
    pub fn free(&mut self, entity: Entity) -> bool {
        self.sync_pending();
        match self.slot(entity) {
            Some(slot) if slot.code == UNLOCATED => {
                self.live -= 1;
                self.retire_or_free(entity);
                true
            }
            Some(slot) => {
                debug_assert!(slot.code < LOCATED, "free a located entity");
                false
            }
            None => false,
        }
    }

    /// Ends the current generation of `entity`'s slot: the slot becomes free
    /// with the next generation, or retires if that would wrap.
    fn retire_or_free(&mut self, entity: Entity) {
        let slot = &mut self.slots[entity.index() as usize];
        match entity.generation().checked_add(1) {
            Some(next) => {
                *slot = Slot::with(next, FREE);
                self.free.push_back(entity.index());
            }
            None => {
                *slot = Slot::with(entity.generation(), RETIRED);
                self.retired += 1;
            }
        }
    }

    /// Test hook: sets the generation of a live slot, so that wrap-around can
    /// be tested without four billion despawns. The caller renames the
    /// entity wherever else it is stored.
    #[doc(hidden)]
    pub fn debug_set_generation(&mut self, entity: Entity, generation: u32) -> Option<Entity> {
        if !self.alive(entity) {
            return None;
        }
        self.slots[entity.index() as usize].generation = generation;
        self.departures.bump();
        Some(Entity::from_parts(entity.index(), generation))
    }

    /// Verifies the invariants of an allocating table. Panics with a
    /// description on failure.
    pub fn check_invariants(&self) {
        let mut counts = [0usize; 5];
        for slot in &self.slots {
            counts[slot.code.min(LOCATED) as usize] += 1;
        }
        let [unlocated, free, reserved, retired, located] = counts;
        assert_eq!(
            located, self.located,
            "located count disagrees with the slots"
        );
        assert_eq!(
            unlocated + located,
            self.live,
            "live count disagrees with the slots"
        );
        assert_eq!(
            reserved, self.reserved,
            "reserved count disagrees with the slots"
        );
        assert_eq!(
            retired, self.retired,
            "retired count disagrees with the slots"
        );
        assert_eq!(free, self.free.len(), "every free slot is queued once");
        let mut seen = vec![false; self.slots.len()];
        for &i in &self.free {
            assert_eq!(self.slots[i as usize].code, FREE, "free index {i} is free");
            assert!(
                !std::mem::replace(&mut seen[i as usize], true),
                "index {i} freed twice"
            );
        }
        assert!(self.pending.load(Ordering::Relaxed) as usize >= self.slots.len());
    }

    /// Verifies the invariants of an index-only table (a universe world's).
    pub fn check_index_invariants(&self) {
        let located = self.slots.iter().filter(|s| s.code >= LOCATED).count();
        assert_eq!(
            located, self.located,
            "located count disagrees with the slots"
        );
        assert!(
            self.slots
                .iter()
                .all(|s| s.code == UNLOCATED || s.code >= LOCATED),
            "an index holds only locations"
        );
        assert!(
            self.free.is_empty() && self.live == 0,
            "an index allocates nothing"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_twelve_bytes() {
        assert_eq!(std::mem::size_of::<Slot>(), 12);
    }

    #[test]
    fn fifo_reuse_waits_for_threshold() {
        let mut entities = Entities::with_min_free_indices(4);
        let es: Vec<_> = (0..8).map(|_| entities.alloc()).collect();
        for &e in &es[..3] {
            assert!(entities.free(e));
        }
        // Only 3 waiting: a fresh index.
        assert_eq!(entities.alloc().index(), 8);
        entities.free(es[3]);
        // 4 waiting: the oldest freed index comes back, with a new generation.
        let reused = entities.alloc();
        assert_eq!(reused.index(), es[0].index());
        assert_ne!(reused.generation(), es[0].generation());
        assert!(!entities.alive(es[0]));
        assert!(entities.alive(reused));
        entities.check_invariants();
    }

    #[test]
    fn double_free_is_refused() {
        let mut entities = Entities::new();
        let e = entities.alloc();
        assert!(entities.free(e));
        assert!(!entities.free(e));
        // A forged handle with the next generation is dead too.
        let forged = Entity::from_parts(e.index(), e.generation() + 1);
        assert!(!entities.alive(forged));
        entities.check_invariants();
    }

    #[test]
    fn wrapping_slot_is_retired() {
        let mut entities = Entities::with_min_free_indices(0);
        let e = entities.alloc();
        let e = entities.debug_set_generation(e, u32::MAX).unwrap();
        assert!(entities.free(e));
        assert_eq!(entities.retired_count(), 1);
        let next = entities.alloc();
        assert_ne!(next.index(), e.index(), "retired slot must not be reused");
        assert!(!entities.alive(e));
        for g in [0, 1, u32::MAX - 1, u32::MAX] {
            assert!(!entities.alive(Entity::from_parts(e.index(), g)));
        }
        entities.check_invariants();
    }

    #[test]
    fn alloc_many_respects_threshold() {
        let mut entities = Entities::with_min_free_indices(2);
        let mut out = Vec::new();
        entities.alloc_many(5, &mut out);
        for &e in &out {
            entities.free(e);
        }
        let mut again = Vec::new();
        entities.alloc_many(5, &mut again);
        // 5 waiting, threshold 2: at most 4 can be reused while keeping reuse legal
        // (each reuse happens with >= 2 waiting).
        let reused = again.iter().filter(|e| e.index() < 5).count();
        assert_eq!(reused, 4);
        assert_eq!(entities.free_count(), 1);
        entities.check_invariants();
    }

    #[test]
    fn reserve_then_spawn_or_cancel() {
        let mut entities = Entities::new();
        let a = entities.alloc();
        let r1 = entities.reserve();
        let r2 = entities.reserve();
        assert!(!entities.alive(r1));
        assert!(entities.is_reserved(r1) && entities.is_reserved(r2));
        assert_eq!(entities.reserved_count(), 2);
        // A later allocation skips the reserved indices.
        let b = entities.alloc();
        assert_eq!(b.index(), 3);
        assert!(entities.spawn_reserved(r1));
        assert!(!entities.spawn_reserved(r1), "only once");
        assert!(entities.alive(r1) && entities.alive(a));
        assert!(entities.cancel_reserved(r2));
        assert!(!entities.alive(r2) && !entities.is_reserved(r2));
        assert_eq!(entities.len(), 3);
        assert_eq!(entities.reserved_count(), 0);
        entities.check_invariants();
    }

    #[test]
    fn reserve_many_takes_what_alloc_many_would_and_unreserve_restores() {
        let mut entities = Entities::with_min_free_indices(2);
        let mut es = Vec::new();
        entities.alloc_many(6, &mut es);
        for &e in &es[..4] {
            entities.free(e);
        }
        let snapshot = |e: &Entities| {
            let slots: Vec<(u32, u32, u32)> = e
                .slots
                .iter()
                .map(|s| (s.generation, s.code, s.row))
                .collect();
            (slots, e.free.clone())
        };
        let before = snapshot(&entities);
        let mut reserved = Vec::new();
        entities.reserve_many(5, &mut reserved);
        entities.check_invariants();
        entities.unreserve_unused(&reserved);
        assert_eq!(snapshot(&entities), before, "exactly as before");
        let mut allocated = Vec::new();
        entities.alloc_many(5, &mut allocated);
        assert_eq!(allocated, reserved, "the same ids, in the same order");
        entities.check_invariants();
    }

    #[test]
    fn locations_carry_the_generation() {
        let mut entities = Entities::new();
        let e = entities.alloc();
        let here = Location {
            archetype: ArchetypeId::from_index(3),
            row: Row(17),
        };
        entities.set_location(e, here);
        assert_eq!(entities.location(e), Some(here));
        assert_eq!(
            entities.location(Entity::from_parts(e.index(), e.generation() + 1)),
            None
        );
        assert_eq!(entities.located_count(), 1);
        entities.check_invariants();
        entities.clear_location(e);
        assert!(entities.alive(e) && entities.location(e).is_none());
        assert!(entities.free(e));
        entities.check_invariants();
    }
}
