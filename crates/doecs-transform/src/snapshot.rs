//! The manager's part of a world snapshot (`World::snapshot_into` /
//! `World::restore`, through [`doecs::ComponentManager::save_state`]).
//!
//! Everything that decides what the manager does next is saved: the first
//! `len` slots of every storage column (local and world transforms, entity,
//! the four links, the deferred `flags` and `idle` bytes), `len`, the entity
//! map, the mode, the dirty partition (`first_dirty`, the pending list,
//! whether the partition is known to be ordered), whether the array is
//! sorted, and the lazy collector's random state. So the frames that follow a
//! restore compute bit-identical world transforms to the frames that followed
//! the snapshot. Scratch vectors are not saved: their contents never outlive
//! the call that fills them. Slots past `len` are not saved either: they are
//! never read before they are written (see `storage.rs`). Capacity is not
//! state: a restore keeps the live buffer when it is large enough.
//!
//! A saved state is reused: a snapshot into a buffer that already holds one
//! copies into its storage and vectors, so a steady-state snapshot (or
//! restore) allocates nothing.

use crate::manager::TransformManager;
use crate::storage::Storage;
use doecs::LazyGc;
use std::any::Any;

/// What [`TransformManager`] saves into a world snapshot.
pub(crate) struct TransformSnapshot {
    /// At least `len` slots; only the first `len` are meaningful.
    store: Storage,
    len: u32,
    map: Vec<u32>,
    deferred: bool,
    first_dirty: u32,
    pending: Vec<u64>,
    partition_ordered: bool,
    sorted: bool,
    gc: LazyGc,
}

impl TransformManager {
    /// Saves the state into `saved`, reusing the memory of a state saved
    /// there before.
    pub(crate) fn save_into(&self, saved: &mut Option<Box<dyn Any + Send + Sync>>) {
        let len = self.len as usize;
        if !saved.as_ref().is_some_and(|b| b.is::<TransformSnapshot>()) {
            *saved = Some(Box::new(TransformSnapshot {
                store: Storage::with_capacity(self.store.capacity()),
                len: 0,
                map: Vec::new(),
                deferred: false,
                first_dirty: 0,
                pending: Vec::new(),
                partition_ordered: true,
                sorted: true,
                gc: LazyGc::new(),
            }));
        }
        let state = saved
            .as_mut()
            .and_then(|b| b.downcast_mut::<TransformSnapshot>())
            .expect("a saved transform state is there");
        if state.store.capacity() < len {
            // Room for the live capacity, so the next snapshots fit too.
            state.store = Storage::with_capacity(self.store.capacity());
        }
        state.store.copy_slots_from(&self.store, len);
        state.len = self.len;
        state.map.clone_from(&self.map);
        state.deferred = self.deferred;
        state.first_dirty = self.first_dirty;
        state.pending.clone_from(&self.pending);
        state.partition_ordered = self.partition_ordered;
        state.sorted = self.sorted;
        state.gc.clone_from(&self.gc);
    }

    /// Puts back a state [`save_into`](Self::save_into) saved. A state of
    /// another type (not saved by this manager) is ignored.
    pub(crate) fn restore_from(&mut self, saved: &(dyn Any + Send + Sync)) {
        let Some(state) = saved.downcast_ref::<TransformSnapshot>() else {
            return;
        };
        let len = state.len as usize;
        // The spare slot at `[len]` must exist (storage invariant). Nothing
        // live needs keeping: every slot below `len` is overwritten next.
        self.store.grow(len + 1, 0);
        self.store.copy_slots_from(&state.store, len);
        self.len = state.len;
        self.map.clone_from(&state.map);
        self.deferred = state.deferred;
        self.first_dirty = state.first_dirty;
        self.pending.clone_from(&state.pending);
        self.partition_ordered = state.partition_ordered;
        self.sorted = state.sorted;
        self.gc.clone_from(&state.gc);
        // Whether this manager follows a world is not state (the snapshot
        // and the world's pairs are restored together, so the links agree);
        // orphans may exist in the restored links.
        self.may_have_orphans = self.follows;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use doecs::Entity;
    use glam::{Affine3A, Vec3};

    /// Every saved field, compared exactly (transforms by their bits).
    fn assert_same_state(a: &TransformManager, b: &TransformManager) {
        let n = a.len as usize;
        assert_eq!(a.len, b.len);
        assert_eq!(a.map, b.map);
        assert_eq!(a.deferred, b.deferred);
        assert_eq!(a.first_dirty, b.first_dirty);
        assert_eq!(a.pending, b.pending);
        assert_eq!(a.partition_ordered, b.partition_ordered);
        assert_eq!(a.sorted, b.sorted);
        assert_eq!(format!("{:?}", a.gc), format!("{:?}", b.gc));
        let bits = |t: &[Affine3A]| -> Vec<u32> {
            t.iter()
                .flat_map(|x| x.to_cols_array())
                .map(f32::to_bits)
                .collect()
        };
        let (ca, cb) = (a.store.cols(), b.store.cols());
        assert_eq!(bits(&ca.local[..n]), bits(&cb.local[..n]));
        assert_eq!(bits(&ca.world[..n]), bits(&cb.world[..n]));
        assert_eq!(ca.entity[..n], cb.entity[..n]);
        assert_eq!(ca.parent[..n], cb.parent[..n]);
        assert_eq!(ca.first_child[..n], cb.first_child[..n]);
        assert_eq!(ca.next_sibling[..n], cb.next_sibling[..n]);
        assert_eq!(ca.prev_sibling[..n], cb.prev_sibling[..n]);
        assert_eq!(ca.flags[..n], cb.flags[..n]);
        // `idle` is only reachable mutably.
        let (mut a2, mut b2) = (Storage::with_capacity(n), Storage::with_capacity(n));
        a2.copy_slots_from(&a.store, n);
        b2.copy_slots_from(&b.store, n);
        assert_eq!(a2.cols_mut().idle[..n], b2.cols_mut().idle[..n]);
    }

    /// A copy of `tm` made through a snapshot buffer.
    fn copy_of(tm: &TransformManager) -> TransformManager {
        let mut saved = None;
        tm.save_into(&mut saved);
        let mut copy = TransformManager::new();
        copy.restore_from(&**saved.as_ref().unwrap());
        copy
    }

    fn t(x: f32) -> Affine3A {
        Affine3A::from_translation(Vec3::new(x, 0.5 * x, 0.0))
    }

    #[test]
    fn save_and_restore_every_field_exactly() {
        let mut tm = TransformManager::deferred();
        let es: Vec<Entity> = (0..40).map(|i| Entity::from_parts(i, 1)).collect();
        let hs: Vec<_> = es.iter().map(|&e| tm.create(e, t(1.0)).unwrap()).collect();
        for k in 1..40 {
            tm.link(hs[k], hs[(k - 1) / 3]).unwrap();
        }
        for _ in 0..8 {
            tm.propagate();
        }
        tm.set_local(hs[7], t(2.0)).unwrap();
        tm.link(hs[30], hs[2]).unwrap();
        // Pending entries and a dirty partition are in the saved state.
        assert!(!tm.pending.is_empty());
        let mut saved = None;
        tm.save_into(&mut saved);
        let before = copy_of(&tm);
        assert_same_state(&tm, &before);

        // Diverge: more nodes (the storage grows), destroys, propagations.
        for i in 40..200 {
            tm.create(Entity::from_parts(i, 3), t(i as f32)).unwrap();
        }
        tm.destroy(tm.lookup(es[3]).unwrap()).unwrap();
        tm.propagate();
        tm.propagate();
        tm.restore_from(&**saved.as_ref().unwrap());
        tm.check_invariants();
        assert_same_state(&tm, &before);

        // The same operations now give the same state as on the copy.
        let mut copy = before;
        for m in [&mut tm, &mut copy] {
            let h = m.lookup(es[9]).unwrap();
            m.set_local(h, t(-3.0)).unwrap();
            m.destroy(m.lookup(es[1]).unwrap()).unwrap();
            for _ in 0..8 {
                m.propagate();
            }
        }
        assert_same_state(&tm, &copy);

        // Saving again into the same (now larger-than-needed) buffer reuses it.
        let store_ptr = {
            let s = saved.as_ref().unwrap().downcast_ref::<TransformSnapshot>();
            s.unwrap().store.cols().local.as_ptr()
        };
        tm.save_into(&mut saved);
        let s = saved.as_ref().unwrap().downcast_ref::<TransformSnapshot>();
        assert_eq!(s.unwrap().store.cols().local.as_ptr(), store_ptr);
        let mut other = TransformManager::with_capacity(500);
        other.restore_from(&**saved.as_ref().unwrap());
        assert_same_state(&tm, &other);
        other.check_invariants();
    }

    /// The state saved in `saved`.
    fn saved_state(saved: &Option<Box<dyn Any + Send + Sync>>) -> &TransformSnapshot {
        saved.as_ref().unwrap().downcast_ref().unwrap()
    }

    #[test]
    fn unchanged_structure_is_not_copied_again_and_restores_stay_exact() {
        let mut tm = TransformManager::deferred();
        let es: Vec<Entity> = (0..60).map(|i| Entity::from_parts(i, 1)).collect();
        let hs: Vec<_> = es.iter().map(|&e| tm.create(e, t(1.0)).unwrap()).collect();
        for k in 1..60 {
            tm.link(hs[k], hs[(k - 1) / 4]).unwrap();
        }
        tm.propagate();
        let (mut a, mut b) = (None, None);
        tm.save_into(&mut a);
        // Only values change: the next save keeps the structure it has.
        for (k, &e) in es.iter().enumerate() {
            tm.set_local(tm.lookup(e).unwrap(), t(k as f32)).unwrap();
        }
        tm.propagate();
        let tag = saved_state(&a).store.structure_tag().0;
        assert_eq!(
            tag,
            tm.store.structure_tag().0,
            "set_local leaves the structure"
        );
        tm.save_into(&mut a);
        assert_eq!(saved_state(&a).store.structure_tag().0, tag);
        let values_only = copy_of(&tm);
        assert_same_state(&tm, &values_only);
        // The structure changes: the next save copies it.
        tm.link(tm.lookup(es[40]).unwrap(), tm.lookup(es[2]).unwrap())
            .unwrap();
        tm.destroy(tm.lookup(es[7]).unwrap()).unwrap();
        tm.propagate();
        assert_ne!(tm.store.structure_tag().0, tag);
        tm.save_into(&mut b);
        let relinked = copy_of(&tm);
        // Back and forth: each restore is exact, whichever structure the
        // live manager had.
        for _ in 0..2 {
            tm.restore_from(&**a.as_ref().unwrap());
            tm.check_invariants();
            assert_same_state(&tm, &values_only);
            tm.restore_from(&**b.as_ref().unwrap());
            tm.check_invariants();
            assert_same_state(&tm, &relinked);
        }
        // A restore of the same structure, then a save into the buffer it
        // came from, skips the structure both ways and stays exact.
        tm.restore_from(&**a.as_ref().unwrap());
        tm.set_local(tm.lookup(es[3]).unwrap(), t(-1.0)).unwrap();
        tm.propagate();
        tm.save_into(&mut a);
        let after = copy_of(&tm);
        tm.restore_from(&**b.as_ref().unwrap());
        tm.restore_from(&**a.as_ref().unwrap());
        assert_same_state(&tm, &after);
    }

    #[test]
    fn restoring_into_a_smaller_manager_grows_it() {
        let mut tm = TransformManager::new();
        for i in 0..100 {
            tm.create(Entity::from_parts(i, 0), t(i as f32)).unwrap();
        }
        let mut small = TransformManager::new();
        let mut saved = None;
        tm.save_into(&mut saved);
        small.restore_from(&**saved.as_ref().unwrap());
        small.check_invariants();
        assert_same_state(&tm, &small);
        // A foreign state is ignored.
        small.restore_from(&5u32);
        assert_same_state(&tm, &small);
    }
}
