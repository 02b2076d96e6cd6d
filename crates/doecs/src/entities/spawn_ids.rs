//! Entity ids for spawns recorded by systems running in parallel.
//!
//! Two systems that spawn through their command buffers at the same time must
//! get the same ids whichever of them runs first, or a world's ids would
//! depend on the thread count and on timing. So no system reserves ids from
//! the shared allocator while systems run. Instead, before a parallel segment
//! starts, the schedule reserves a **pool** for each system that records
//! commands, in system order ([`Entities::reserve_many`] takes exactly the
//! ids allocation would). A system's spawns take ids from its own pool.
//!
//! A system that spawns more than its pool holds takes further ids from a
//! **lane** layout that depends only on its position: with `K` spawning
//! systems in the segment, slabs of `S = 64 << L` ids at level `L` are laid
//! out past the end of the id table as `K` consecutive slabs per level, and
//! system `k` takes slab `k` of each level in turn. The ids a system gets are
//! therefore a function of the world's state when the segment started, of
//! the system's position, and of how many ids it asked for: never of timing.
//!
//! After the segment, the schedule makes the lane ids that were used exist,
//! applies the command buffers in system order, and gives back what was not
//! used: the unused rest of each pool and the unused lane slots return to
//! the allocator as if never reserved ([`Entities::unreserve_unused`]); ids
//! handed to a spawn that never happened are cancelled. Each pool's next size
//! is twice what the system last spawned, so lanes are rare in a steady state.

use crate::entities::Entities;
use crate::entity::Entity;

/// Ids in a level-0 lane slab.
const SLAB: u64 = 64;

/// Where a system's overflow ids come from in one segment.
#[derive(Copy, Clone, Debug, Default)]
struct Lane {
    /// First index past the id table when the segment started.
    base: u64,
    /// Spawning systems in the segment.
    systems: u64,
    /// This system's position among them.
    position: u64,
}

impl Lane {
    /// The index of this system's `m`-th overflow id.
    fn index(&self, m: u64) -> u64 {
        // Level L holds ids SLAB * (2^L - 1) .. SLAB * (2^(L+1) - 1) of a system.
        let level = (m / SLAB + 1).ilog2() as u64;
        let before = SLAB * ((1 << level) - 1);
        let slab = SLAB << level;
        self.base + self.systems * before + self.position * slab + (m - before)
    }
}

/// One system's spawn ids in one world: its pool, its lane, and how many it
/// handed out. See the module docs.
#[derive(Debug, Default)]
pub(crate) struct SpawnIds {
    /// Reserved before the segment, handed out front to back.
    pool: Vec<Entity>,
    /// How many of `pool` were handed out.
    used: usize,
    lane: Lane,
    /// How many lane ids were handed out.
    overflow: u64,
    /// The pool size to reserve next time.
    target: usize,
}

impl SpawnIds {
    /// The next id for a spawn.
    ///
    /// # Panics
    /// If the lane would leave the 32-bit index space.
    pub(crate) fn next(&mut self) -> Entity {
        if let Some(&e) = self.pool.get(self.used) {
            self.used += 1;
            return e;
        }
        let index = self.lane.index(self.overflow);
        self.overflow += 1;
        let index = u32::try_from(index)
            .ok()
            .filter(|&i| i != u32::MAX)
            .expect("doecs: entity index space (2^32 slots) exhausted");
        Entity::from_parts(index, 0)
    }

    /// The largest lane index handed out, if any.
    fn last_lane_index(&self) -> Option<u64> {
        self.overflow.checked_sub(1).map(|m| self.lane.index(m))
    }

    /// Every lane id handed out.
    fn lane_ids(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.overflow).map(|m| self.lane.index(m))
    }
}

/// Reserves each system's pool, in the given (system) order, and lays out
/// their lanes past the end of the id table.
pub(crate) fn reserve_pools(entities: &mut Entities, systems: &mut [&mut SpawnIds]) {
    for ids in systems.iter_mut() {
        debug_assert!(ids.pool.is_empty(), "settled after the last segment");
        ids.used = 0;
        ids.overflow = 0;
        entities.reserve_many(ids.target, &mut ids.pool);
    }
    let base = entities.slot_count() as u64;
    let count = systems.len() as u64;
    for (position, ids) in systems.iter_mut().enumerate() {
        ids.lane = Lane {
            base,
            systems: count,
            position: position as u64,
        };
    }
}

/// Makes every lane id the systems handed out exist as a reserved id, so the
/// command buffers can spawn them. Call after the systems ran and before the
/// buffers apply.
pub(crate) fn materialize_lanes(entities: &mut Entities, systems: &mut [&mut SpawnIds]) {
    if let Some(last) = systems.iter().filter_map(|s| s.last_lane_index()).max() {
        entities.reserve_fresh_up_to(last as usize + 1);
    }
}

/// Gives back what the systems did not use, cancels ids handed to spawns that
/// never happened, and sizes the next pools. Call after the buffers applied
/// (or were discarded).
pub(crate) fn settle_pools(entities: &mut Entities, systems: &mut [&mut SpawnIds]) {
    // Lane slots nobody used were never handed out: unreserve them, highest
    // first, with the pools' unused rest.
    let base = systems.first().map_or(0, |s| s.lane.base);
    let end = entities.slot_count() as u64;
    let mut used_lane: Vec<u64> = systems.iter().flat_map(|s| s.lane_ids()).collect();
    used_lane.sort_unstable();
    let holes: Vec<Entity> = (base..end)
        .filter(|i| used_lane.binary_search(i).is_err())
        .map(|i| Entity::from_parts(i as u32, 0))
        .filter(|&e| entities.is_reserved(e))
        .collect();
    entities.unreserve_unused(&holes);
    for ids in systems.iter_mut().rev() {
        let handed: Vec<Entity> = ids.pool[..ids.used]
            .iter()
            .copied()
            .chain(ids.lane_ids().map(|i| Entity::from_parts(i as u32, 0)))
            .collect();
        for e in handed {
            // A no-op for ids whose spawn happened (they are alive now).
            entities.cancel_reserved(e);
        }
        entities.unreserve_unused(&ids.pool[ids.used..]);
        let spawned = ids.used + ids.overflow as usize;
        ids.target = if spawned == 0 {
            0
        } else {
            (2 * spawned).next_power_of_two().max(16)
        };
        ids.pool.clear();
        ids.used = 0;
        ids.overflow = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_never_overlap() {
        let lanes: Vec<Lane> = (0..3)
            .map(|position| Lane {
                base: 100,
                systems: 3,
                position,
            })
            .collect();
        let mut all: Vec<u64> = lanes
            .iter()
            .flat_map(|l| (0..1000).map(move |m| l.index(m)))
            .collect();
        all.sort_unstable();
        assert!(all.windows(2).all(|w| w[0] < w[1]), "no id twice");
        assert!(all[0] >= 100);
        // Level 0 is three slabs of 64 side by side.
        assert_eq!(lanes[1].index(0), 100 + 64);
        assert_eq!(
            lanes[0].index(64),
            100 + 3 * 64,
            "level 1 starts after level 0"
        );
    }

    #[test]
    fn pools_and_lanes_settle_back_exactly() {
        let mut entities = Entities::with_min_free_indices(0);
        let mut es = Vec::new();
        entities.alloc_many(10, &mut es);
        for &e in &es[..4] {
            entities.free(e);
        }
        let (mut a, mut b) = (SpawnIds::default(), SpawnIds::default());
        a.target = 3;
        reserve_pools(&mut entities, &mut [&mut a, &mut b]);
        let from_a: Vec<Entity> = (0..70).map(|_| a.next()).collect();
        let from_b = b.next();
        assert_eq!(
            &from_a[..3],
            &[es[0], es[1], es[2]].map(|e| { Entity::from_parts(e.index(), e.generation() + 1) })
        );
        materialize_lanes(&mut entities, &mut [&mut a, &mut b]);
        // Spawn all of a's ids but not b's.
        for &e in &from_a {
            assert!(entities.spawn_reserved(e), "{e}");
        }
        entities.check_invariants();
        settle_pools(&mut entities, &mut [&mut a, &mut b]);
        assert!(!entities.alive(from_b) && !entities.is_reserved(from_b));
        assert_eq!(entities.reserved_count(), 0);
        assert_eq!(entities.len(), 6 + 70);
        assert_eq!(a.target, 256);
        assert_eq!(b.target, 16);
        entities.check_invariants();
    }
}
