//! Entities: generational ids and the allocator that hands them out.
//!
//! An [`Entity`] is a plain `Copy` id made of a 32-bit slot index and a 32-bit
//! generation, packed into a `u64`. The allocator, [`Entities`], keeps one
//! generation word per slot. A handle is alive exactly when its generation equals
//! the slot's current generation, so [`Entities::alive`] is one bounds-checked
//! load and one compare, and every stale copy of a despawned handle reads as dead:
//! entities work as weak references (seed 001, part 1).
//!
//! Each slot stores its generation widened to 64 bits; a free slot also has bit 32
//! set, so it can never equal any 32-bit generation, not even a forged one. Freed indices wait in
//! a FIFO queue and are reused only once at least `min_free_indices` of them are
//! waiting (1024 by default). That spreads reuse over many slots, so a given slot
//! cycles through its generations slowly. A slot whose generation would wrap is
//! retired for good, so a stale handle can never come back to life.
//!
//! Besides live, free and retired, a slot can be **reserved**: its id has
//! been handed out for an entity that does not exist yet (a spawn recorded in
//! a command buffer). A reserved id is not alive; it becomes alive when its
//! spawn is applied ([`Entities::spawn_reserved`]), or goes back to the free
//! queue, with its generation bumped so no copy of it ever comes to life,
//! when its spawn is dropped ([`Entities::cancel_reserved`]).
//!
//! Ids are reserved in two ways. [`Entities::reserve_many`] takes them with
//! `&mut self`, in exactly the order [`Entities::alloc_many`] would, so a
//! caller that reserves in a fixed order gets the same ids on every run; the
//! schedule uses this to give each system its own pool of ids before the
//! systems start, which keeps ids independent of the thread count.
//! [`Entities::reserve`] needs only `&self` and hands out fresh indices
//! through an atomic cursor, for command buffers recorded outside a schedule;
//! ids reserved that way on several threads at once depend on timing.

use std::collections::VecDeque;
use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};

/// Default number of freed indices that must wait before any is reused.
pub const MIN_FREE_INDICES: usize = 1024;

/// A generational entity id: a 32-bit index and a 32-bit generation.
///
/// Entities are weak references. Keep copies anywhere; after the entity is
/// despawned every copy reads as dead, even once its index is reused.
///
/// ```
/// use doecs::Entities;
/// let mut entities = Entities::new();
/// let e = entities.alloc();
/// let stale = e;
/// entities.free(e);
/// assert!(!entities.alive(stale));
/// ```
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Entity {
    // Field order makes the derived `Ord` sort by index first.
    index: u32,
    generation: u32,
}

impl Entity {
    /// Builds a handle from its parts. A handle built this way is alive only if
    /// the allocator really issued this index with this generation.
    #[inline]
    pub const fn from_parts(index: u32, generation: u32) -> Self {
        Entity { index, generation }
    }

    /// The slot index, dense from zero. Side tables can be indexed by it.
    #[inline]
    pub const fn index(self) -> u32 {
        self.index
    }

    /// The generation of the slot when this entity was created.
    #[inline]
    pub const fn generation(self) -> u32 {
        self.generation
    }

    /// Packs the entity into a `u64`: generation in the high half, index in the low.
    #[inline]
    pub const fn to_bits(self) -> u64 {
        ((self.generation as u64) << 32) | self.index as u64
    }

    /// Unpacks an entity packed by [`Entity::to_bits`].
    #[inline]
    pub const fn from_bits(bits: u64) -> Self {
        Entity {
            index: bits as u32,
            generation: (bits >> 32) as u32,
        }
    }
}

impl fmt::Debug for Entity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}v{}", self.index, self.generation)
    }
}

impl fmt::Display for Entity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// The entity allocator: one generation per slot plus the free-index FIFO.
///
/// # Invariants
/// - Each slot word is one of: a live generation `g` (`< 2^32`); a free slot
///   `FREE_BIT | g` (its next generation); a reserved slot `RESERVED_BIT | g`
///   (the generation its entity will have); or exactly `RETIRED`.
/// - `live` counts live words, `reserved` reserved words, `retired` retired ones.
/// - Every index in `free` is a free, non-retired slot, and appears there once;
///   every free slot is in `free`.
/// - `pending >= slots.len()`; indices in `slots.len()..pending` were handed
///   out by [`Entities::reserve`] and are reserved with generation 0 (they get
///   their slot words at the next `&mut self` call).
pub struct Entities {
    slots: Vec<u64>,
    free: VecDeque<u32>,
    min_free_indices: usize,
    live: usize,
    reserved: usize,
    retired: usize,
    pending: AtomicU32,
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
            .field("reserved", &self.reserved_count())
            .field("free", &self.free.len())
            .field("retired", &self.retired)
            .finish()
    }
}

/// Generation given to a slot the first time it is used.
const FIRST_GENERATION: u32 = 0;
/// Set in the slot word of every free slot; no 32-bit generation has it.
const FREE_BIT: u64 = 1 << 32;
/// Set in the slot word of every reserved slot.
const RESERVED_BIT: u64 = 1 << 33;
/// The slot word of a retired slot.
const RETIRED: u64 = u64::MAX;

/// What one slot word says.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum SlotState {
    Live(u32),
    Free(u32),
    Reserved(u32),
    Retired,
}

#[inline]
fn state(word: u64) -> SlotState {
    if word == RETIRED {
        SlotState::Retired
    } else if word & RESERVED_BIT != 0 {
        SlotState::Reserved(word as u32)
    } else if word & FREE_BIT != 0 {
        SlotState::Free(word as u32)
    } else {
        SlotState::Live(word as u32)
    }
}

impl Entities {
    /// An empty allocator with the default reuse threshold ([`MIN_FREE_INDICES`]).
    pub fn new() -> Self {
        Self::with_min_free_indices(MIN_FREE_INDICES)
    }

    /// An empty allocator that reuses an index only once `min_free_indices`
    /// freed indices are waiting. Zero reuses at once.
    pub fn with_min_free_indices(min_free_indices: usize) -> Self {
        Entities {
            slots: Vec::new(),
            free: VecDeque::new(),
            min_free_indices,
            live: 0,
            reserved: 0,
            retired: 0,
            pending: AtomicU32::new(0),
        }
    }

    /// Whether `entity` is alive: one load and one compare.
    #[inline]
    pub fn alive(&self, entity: Entity) -> bool {
        self.slots.get(entity.index as usize) == Some(&(entity.generation as u64))
    }

    /// Whether `entity` is reserved: handed out for a spawn not yet applied.
    pub fn is_reserved(&self, entity: Entity) -> bool {
        match self.slots.get(entity.index as usize) {
            Some(&word) => word == RESERVED_BIT | entity.generation as u64,
            None => {
                entity.generation == FIRST_GENERATION
                    && entity.index < self.pending.load(Ordering::Relaxed)
            }
        }
    }

    /// Number of live entities.
    #[inline]
    pub fn len(&self) -> usize {
        self.live
    }

    /// Whether no entity is alive.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.live == 0
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
        match state(*self.slots.get(index as usize)?) {
            SlotState::Live(generation) => Some(Entity { index, generation }),
            _ => None,
        }
    }

    /// Ids reserved through `&self` that have no slot word yet.
    #[inline]
    fn pending_count(&self) -> usize {
        self.pending.load(Ordering::Relaxed) as usize - self.slots.len()
    }

    /// Gives ids reserved through [`Entities::reserve`] their slot words.
    /// Every `&mut self` method calls this first.
    #[inline]
    fn sync_pending(&mut self) {
        let end = *self.pending.get_mut() as usize;
        if end > self.slots.len() {
            self.reserved += end - self.slots.len();
            self.slots
                .resize(end, RESERVED_BIT | FIRST_GENERATION as u64);
        }
    }

    /// Creates one entity.
    pub fn alloc(&mut self) -> Entity {
        self.sync_pending();
        let index = self.next_index();
        self.live += 1;
        let generation = self.slots[index as usize] as u32;
        self.slots[index as usize] = generation as u64;
        Entity { index, generation }
    }

    /// Creates `count` entities and appends them to `out`. Reused indices come
    /// first (only those above the reuse threshold), then fresh ones.
    pub fn alloc_many(&mut self, count: usize, out: &mut Vec<Entity>) {
        let start = out.len();
        self.take_many(count, out);
        for e in &out[start..] {
            self.slots[e.index as usize] = e.generation as u64;
        }
        self.live += count;
    }

    /// Reserves `count` ids and appends them to `out`, taking exactly the
    /// indices [`Entities::alloc_many`] would. They are not alive until
    /// [`Entities::spawn_reserved`].
    pub fn reserve_many(&mut self, count: usize, out: &mut Vec<Entity>) {
        let start = out.len();
        self.take_many(count, out);
        for e in &out[start..] {
            self.slots[e.index as usize] = RESERVED_BIT | e.generation as u64;
        }
        self.reserved += count;
    }

    /// The next index `alloc` hands out, with the slot made to exist (its
    /// word still says free, holding the generation to use).
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
        self.slots.push(FREE_BIT | FIRST_GENERATION as u64);
        *self.pending.get_mut() = self.slots.len() as u32;
        index as u32
    }

    /// Takes `count` indices as `alloc` would, leaving their words free
    /// (holding the generation to use) for the caller to set.
    fn take_many(&mut self, count: usize, out: &mut Vec<Entity>) {
        self.sync_pending();
        out.reserve(count);
        // Each reuse must happen with at least `min_free_indices` (and at least
        // one) indices waiting, exactly as repeated `alloc` calls would.
        let reusable = self
            .free
            .len()
            .saturating_sub(self.min_free_indices.saturating_sub(1))
            .min(count);
        for _ in 0..reusable {
            let index = self.free.pop_front().expect("counted above");
            let generation = self.slots[index as usize] as u32;
            out.push(Entity { index, generation });
        }
        let fresh = count - reusable;
        let start = self.slots.len();
        let end = start
            .checked_add(fresh)
            .filter(|&end| end <= u32::MAX as usize)
            .expect("doecs: entity index space (2^32 slots) exhausted");
        self.slots.resize(end, FREE_BIT | FIRST_GENERATION as u64);
        *self.pending.get_mut() = end as u32;
        out.extend((start..end).map(|i| Entity::from_parts(i as u32, FIRST_GENERATION)));
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
        Entity::from_parts(index, FIRST_GENERATION)
    }

    /// Makes the reserved id `entity` alive. Returns `false`, changing
    /// nothing, if it is not reserved.
    pub fn spawn_reserved(&mut self, entity: Entity) -> bool {
        self.sync_pending();
        let Some(slot) = self.slots.get_mut(entity.index as usize) else {
            return false;
        };
        if *slot != RESERVED_BIT | entity.generation as u64 {
            return false;
        }
        *slot = entity.generation as u64;
        self.reserved -= 1;
        self.live += 1;
        true
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
    /// restores the queue's order.
    pub fn unreserve_unused(&mut self, ids: &[Entity]) {
        self.sync_pending();
        for &e in ids.iter().rev() {
            assert!(self.is_reserved(e), "doecs: {e} is not reserved");
            self.reserved -= 1;
            let i = e.index as usize;
            if i + 1 == self.slots.len() && e.generation == FIRST_GENERATION {
                self.slots.pop();
                *self.pending.get_mut() = self.slots.len() as u32;
            } else {
                self.slots[i] = FREE_BIT | e.generation as u64;
                self.free.push_front(e.index);
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
            self.slots
                .resize(end, RESERVED_BIT | FIRST_GENERATION as u64);
            self.reserved += end - start;
            *self.pending.get_mut() = end as u32;
        }
        start..end.max(start)
    }

    /// Destroys `entity`. Returns `false`, changing nothing, if it was not alive.
    pub fn free(&mut self, entity: Entity) -> bool {
        self.sync_pending();
        if !self.alive(entity) {
            return false;
        }
        self.live -= 1;
        self.retire_or_free(entity);
        true
    }

    /// Ends the current generation of `entity`'s slot: the slot becomes free
    /// with the next generation, or retires if that would wrap.
    fn retire_or_free(&mut self, entity: Entity) {
        let slot = &mut self.slots[entity.index as usize];
        match entity.generation.checked_add(1) {
            Some(next) => {
                *slot = FREE_BIT | next as u64;
                self.free.push_back(entity.index);
            }
            None => {
                *slot = RETIRED;
                self.retired += 1;
            }
        }
    }

    /// Test hook: sets the generation of a live slot, so that wrap-around can
    /// be tested without four billion despawns.
    #[doc(hidden)]
    pub fn debug_set_generation(&mut self, entity: Entity, generation: u32) -> Option<Entity> {
        if !self.alive(entity) {
            return None;
        }
        self.slots[entity.index as usize] = generation as u64;
        Some(Entity::from_parts(entity.index, generation))
    }

    /// Verifies the allocator's invariants. Panics with a description on failure.
    pub fn check_invariants(&self) {
        let mut counts = [0usize; 4];
        for &w in &self.slots {
            counts[match state(w) {
                SlotState::Live(_) => 0,
                SlotState::Free(_) => 1,
                SlotState::Reserved(_) => 2,
                SlotState::Retired => 3,
            }] += 1;
        }
        assert_eq!(counts[0], self.live, "live count disagrees with slot words");
        assert_eq!(
            counts[2], self.reserved,
            "reserved count disagrees with slot words"
        );
        assert_eq!(
            counts[3], self.retired,
            "retired count disagrees with slot words"
        );
        assert_eq!(counts[1], self.free.len(), "every free slot is queued once");
        let mut seen = vec![false; self.slots.len()];
        for &i in &self.free {
            let w = self.slots[i as usize];
            assert!(
                matches!(state(w), SlotState::Free(_)),
                "free index {i} has slot word {w:#x}"
            );
            assert!(
                !std::mem::replace(&mut seen[i as usize], true),
                "index {i} freed twice"
            );
        }
        assert!(self.pending.load(Ordering::Relaxed) as usize >= self.slots.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_round_trip() {
        let e = Entity::from_parts(7, 9);
        assert_eq!(Entity::from_bits(e.to_bits()), e);
        assert_eq!(e.to_bits(), (9u64 << 32) | 7);
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
        let snapshot = |e: &Entities| (e.slots.clone(), e.free.clone());
        let before = snapshot(&entities);
        let mut reserved = Vec::new();
        entities.reserve_many(5, &mut reserved);
        entities.check_invariants();
        let mut cancelled = Vec::new();
        entities.unreserve_unused(&reserved);
        assert_eq!(snapshot(&entities), before, "exactly as before");
        entities.alloc_many(5, &mut cancelled);
        assert_eq!(cancelled, reserved, "the same ids, in the same order");
        entities.check_invariants();
    }
}
