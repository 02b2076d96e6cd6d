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
//! Besides `&mut self` allocation, [`Entities::reserve`] hands out fresh ids
//! through an atomic cursor with only `&self`, so command buffers recorded on
//! worker threads can name entities that do not exist yet. Such ids become alive
//! when [`Entities::flush_reserved`] runs, which `World` does before every
//! structural change.

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
/// - `slots[i] < 2^32` iff slot `i` is in use, and then the live entity in slot
///   `i` has exactly that generation. A free slot holds `FREE_BIT | next_generation`.
/// - Every index in `free` is a free slot that is not retired, and each such index
///   appears there once.
/// - A retired slot holds exactly `RETIRED` and is never in `free`.
/// - `reserved_cursor >= slots.len()`; indices in
///   `slots.len()..reserved_cursor` were handed out by [`Entities::reserve`]
///   and become live at the next [`Entities::flush_reserved`].
pub struct Entities {
    slots: Vec<u64>,
    free: VecDeque<u32>,
    min_free_indices: usize,
    live: usize,
    retired: usize,
    reserved_cursor: AtomicU32,
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
            .field("free", &self.free.len())
            .field("retired", &self.retired)
            .finish()
    }
}

/// Generation given to a slot the first time it is used.
const FIRST_GENERATION: u32 = 0;
/// Set in the slot word of every free slot; no 32-bit generation has it.
const FREE_BIT: u64 = 1 << 32;
/// The slot word of a retired slot.
const RETIRED: u64 = u64::MAX;

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
            retired: 0,
            reserved_cursor: AtomicU32::new(0),
        }
    }

    /// Whether `entity` is alive: one load and one compare.
    #[inline]
    pub fn alive(&self, entity: Entity) -> bool {
        self.slots.get(entity.index as usize) == Some(&(entity.generation as u64))
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
        let word = *self.slots.get(index as usize)?;
        let generation = u32::try_from(word).ok()?;
        Some(Entity { index, generation })
    }

    /// Creates one entity.
    pub fn alloc(&mut self) -> Entity {
        self.flush_reserved();
        self.live += 1;
        if self.free.len() >= self.min_free_indices.max(1) {
            if let Some(index) = self.free.pop_front() {
                return self.revive(index);
            }
        }
        self.fresh()
    }

    /// Creates `count` entities and appends them to `out`. Reused indices come
    /// first (only those above the reuse threshold), then fresh ones.
    pub fn alloc_many(&mut self, count: usize, out: &mut Vec<Entity>) {
        self.flush_reserved();
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
            let e = self.revive(index);
            out.push(e);
        }
        let fresh = count - reusable;
        let start = self.slots.len();
        let end = start
            .checked_add(fresh)
            .filter(|&end| end <= u32::MAX as usize)
            .expect("doecs: entity index space (2^32 slots) exhausted");
        self.slots.resize(end, FIRST_GENERATION as u64);
        *self.reserved_cursor.get_mut() = end as u32;
        out.extend((start..end).map(|i| Entity::from_parts(i as u32, FIRST_GENERATION)));
        self.live += count;
    }

    /// Reserves a fresh entity id with only shared access. It is not alive until
    /// [`Entities::flush_reserved`] runs (the world does this before any
    /// structural change). Reserved ids never come from the free queue, so
    /// reservation cannot race with reuse.
    pub fn reserve(&self) -> Entity {
        // Never wraps: a wrapped cursor would hand out indices of live slots.
        let index = self
            .reserved_cursor
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |c| {
                c.checked_add(1).filter(|&next| next != u32::MAX)
            })
            .expect("doecs: entity index space (2^32 slots) exhausted");
        Entity::from_parts(index, FIRST_GENERATION)
    }

    /// Number of ids reserved but not yet flushed.
    #[inline]
    pub fn pending_reserved(&self) -> usize {
        self.reserved_cursor.load(Ordering::Relaxed) as usize - self.slots.len()
    }

    /// Makes every reserved id alive and returns the range of their indices.
    pub fn flush_reserved(&mut self) -> std::ops::Range<u32> {
        let start = self.slots.len() as u32;
        let end = *self.reserved_cursor.get_mut();
        if end > start {
            self.slots.resize(end as usize, FIRST_GENERATION as u64);
            self.live += (end - start) as usize;
        }
        start..end
    }

    /// Destroys `entity`. Returns `false`, changing nothing, if it was not alive.
    pub fn free(&mut self, entity: Entity) -> bool {
        if !self.alive(entity) {
            return false;
        }
        let slot = &mut self.slots[entity.index as usize];
        self.live -= 1;
        match entity.generation.checked_add(1) {
            Some(next) => {
                *slot = FREE_BIT | next as u64;
                self.free.push_back(entity.index);
            }
            None => {
                // The generation would wrap: retire the slot for good.
                *slot = RETIRED;
                self.retired += 1;
            }
        }
        true
    }

    fn revive(&mut self, index: u32) -> Entity {
        let slot = &mut self.slots[index as usize];
        debug_assert!(
            *slot & FREE_BIT != 0 && *slot != RETIRED,
            "slot must be free, not retired"
        );
        let generation = *slot as u32;
        *slot = generation as u64;
        Entity::from_parts(index, generation)
    }

    fn fresh(&mut self) -> Entity {
        let index = self.slots.len();
        assert!(
            index < u32::MAX as usize,
            "doecs: entity index space (2^32 slots) exhausted"
        );
        self.slots.push(FIRST_GENERATION as u64);
        *self.reserved_cursor.get_mut() = self.slots.len() as u32;
        Entity::from_parts(index as u32, FIRST_GENERATION)
    }

    /// Test hook: sets the generation of a free slot, so that wrap-around can be
    /// tested without four billion despawns.
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
        let in_use = self.slots.iter().filter(|w| **w < FREE_BIT).count();
        assert_eq!(in_use, self.live, "live count disagrees with slot words");
        let retired = self.slots.iter().filter(|w| **w == RETIRED).count();
        assert_eq!(
            retired, self.retired,
            "retired count disagrees with slot words"
        );
        let mut seen = vec![false; self.slots.len()];
        for &i in &self.free {
            let w = self.slots[i as usize];
            assert!(
                w & FREE_BIT != 0 && w != RETIRED,
                "free index {i} has slot word {w:#x}"
            );
            assert!(
                !std::mem::replace(&mut seen[i as usize], true),
                "index {i} freed twice"
            );
        }
        assert_eq!(
            self.free.len() + self.live + self.retired,
            self.slots.len(),
            "every slot is live, free or retired"
        );
        assert!(self.reserved_cursor.load(Ordering::Relaxed) as usize >= self.slots.len());
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
    fn reserve_then_flush() {
        let mut entities = Entities::new();
        let a = entities.alloc();
        let r1 = entities.reserve();
        let r2 = entities.reserve();
        assert!(!entities.alive(r1));
        assert_eq!(entities.pending_reserved(), 2);
        let range = entities.flush_reserved();
        assert_eq!(range, 1..3);
        assert!(entities.alive(r1) && entities.alive(r2) && entities.alive(a));
        assert_eq!(entities.len(), 3);
        entities.check_invariants();
    }
}
