//! The public API of issue 5 one requirement at a time: create/lookup/destroy,
//! link/unlink/re-parent, local/world/set_local, parent and children
//! traversal, and the deferred mode's dirty partition (parents first, idle nodes
//! leave after exactly five propagations).

use doecs::raw::Entities;

use doecs::Entity;
use doecs_transform::{Instance, TransformError, TransformManager, IDLE_PROPAGATIONS};
use glam::{Affine3A, Quat, Vec3};

fn t(x: f32, y: f32) -> Affine3A {
    Affine3A::from_translation(Vec3::new(x, y, 0.0))
}

fn nodes(tm: &mut TransformManager, entities: &mut Entities, n: usize) -> Vec<Instance> {
    (0..n)
        .map(|k| tm.create(entities.alloc(), t(k as f32, 0.0)).unwrap())
        .collect()
}

#[test]
fn create_lookup_destroy() {
    let mut entities = Entities::new();
    let mut tm = TransformManager::new();
    let e = entities.alloc();
    let h = tm.create(e, t(1.0, 2.0)).unwrap();
    assert_eq!(tm.lookup(e), Some(h));
    assert_eq!(tm.local(h), Some(t(1.0, 2.0)));
    assert_eq!(tm.world(h), Some(t(1.0, 2.0)));
    assert_eq!(
        tm.create(e, Affine3A::IDENTITY),
        Err(TransformError::AlreadyExists(e))
    );
    tm.destroy(h).unwrap();
    assert_eq!(tm.lookup(e), None);
    assert!(!tm.contains(h));
    assert_eq!(tm.destroy(h), Err(TransformError::DeadInstance(e)));
    assert_eq!(
        tm.set_local(h, Affine3A::IDENTITY),
        Err(TransformError::DeadInstance(e))
    );
    assert_eq!(tm.world(h), None);
    assert!(tm.is_empty());
    tm.check_invariants();
}

#[test]
fn reparenting_moves_the_whole_subtree() {
    let mut entities = Entities::new();
    let mut tm = TransformManager::new();
    // a(1,0) -> b(0,1) -> d(0,0.5); c(10,0)
    let h = nodes(&mut tm, &mut entities, 4);
    let (a, b, c, d) = (h[0], h[1], h[2], h[3]);
    tm.set_local(a, t(1.0, 0.0)).unwrap();
    tm.set_local(b, t(0.0, 1.0)).unwrap();
    tm.set_local(c, t(10.0, 0.0)).unwrap();
    tm.set_local(d, t(0.0, 0.5)).unwrap();
    tm.link(b, a).unwrap();
    tm.link(d, b).unwrap();
    assert_eq!(tm.world(d).unwrap(), t(1.0, 1.5));

    // Re-parent b (with d) from a to c: the locals stay, the worlds follow c.
    tm.link(b, c).unwrap();
    tm.check_invariants();
    assert_eq!(tm.parent(b).map(|p| p.entity()), Some(c.entity()));
    assert_eq!(tm.children(a).count(), 0);
    let under_c: Vec<Entity> = tm.children(c).map(|k| k.entity()).collect();
    assert_eq!(under_c, vec![b.entity()]);
    assert_eq!(tm.local(b).unwrap(), t(0.0, 1.0));
    assert_eq!(tm.world(d).unwrap(), t(10.0, 1.5));

    // Linking under the current parent again is a no-op.
    tm.link(b, c).unwrap();
    assert_eq!(tm.children(c).count(), 1);

    // Unlink: b becomes a root whose world is its local; d follows.
    tm.unlink(b).unwrap();
    assert!(tm.parent(b).is_none());
    assert_eq!(tm.world(d).unwrap(), t(0.0, 1.5));
    tm.unlink(b).unwrap(); // unlinking a root is a no-op
    tm.check_invariants();
}

#[test]
fn traversal_of_children_and_ancestors() {
    let mut entities = Entities::new();
    let mut tm = TransformManager::new();
    let h = nodes(&mut tm, &mut entities, 6);
    // 0 -> {1, 2, 3}; 3 -> 4 -> 5
    for k in [1, 2, 3] {
        tm.link(h[k], h[0]).unwrap();
    }
    tm.link(h[4], h[3]).unwrap();
    tm.link(h[5], h[4]).unwrap();
    let mut kids: Vec<Entity> = tm.children(h[0]).map(|k| k.entity()).collect();
    kids.sort();
    let mut want = vec![h[1].entity(), h[2].entity(), h[3].entity()];
    want.sort();
    assert_eq!(kids, want);
    let up: Vec<Entity> = tm.ancestors(h[5]).map(|k| k.entity()).collect();
    assert_eq!(up, vec![h[4].entity(), h[3].entity(), h[0].entity()]);
    assert_eq!(tm.ancestors(h[0]).count(), 0);
    assert_eq!(tm.children(h[5]).count(), 0);
    // Handles from traversal are usable directly.
    let p = tm.parent(h[5]).unwrap();
    assert_eq!(tm.world(p), tm.world(h[4]));
    // After destroying the middle of the chain, traversal stays consistent.
    tm.destroy(h[4]).unwrap();
    assert!(tm.parent(h[5]).is_none());
    assert_eq!(tm.children(h[3]).count(), 0);
    tm.check_invariants();
}

#[test]
fn set_local_is_immediate_for_the_whole_subtree() {
    let mut entities = Entities::new();
    let mut tm = TransformManager::new();
    let h = nodes(&mut tm, &mut entities, 4);
    tm.link(h[1], h[0]).unwrap();
    tm.link(h[2], h[1]).unwrap();
    tm.link(h[3], h[0]).unwrap();
    let spin = Affine3A::from_quat(Quat::from_rotation_z(std::f32::consts::FRAC_PI_2));
    tm.set_local(h[0], spin).unwrap();
    // No propagate call: the subtree is already current.
    let local = |k: usize| tm.local(h[k]).unwrap();
    assert_eq!(tm.world(h[2]).unwrap(), spin * local(1) * local(2));
    assert_eq!(tm.world(h[3]).unwrap(), spin * local(3));
    // `propagate` has nothing left to do in immediate mode.
    let before: Vec<_> = tm.iter().map(|x| tm.world(x)).collect();
    tm.propagate();
    let after: Vec<_> = tm.iter().map(|x| tm.world(x)).collect();
    assert_eq!(before, after);
    assert_eq!(tm.dirty_len(), 0);
}

/// Whether every node of the dirty partition sits at the end of the arrays,
/// with its parent (if dirty too) before it.
fn partition_is_parent_first(tm: &TransformManager) -> bool {
    let first_dirty = (tm.len() - tm.dirty_len()) as u32;
    tm.iter().all(|h| {
        let i = h.index();
        i < first_dirty
            || tm
                .parent(h)
                .is_none_or(|p| p.index() < first_dirty || p.index() < i)
    })
}

#[test]
fn deferred_node_leaves_the_dirty_partition_after_five_idle_propagations() {
    assert_eq!(IDLE_PROPAGATIONS, 5);
    let mut entities = Entities::new();
    let mut tm = TransformManager::deferred();
    let h = nodes(&mut tm, &mut entities, 3);
    // Fresh nodes start dirty; unmoved, they leave after five propagations.
    assert_eq!(tm.dirty_len(), 3);
    for _ in 0..IDLE_PROPAGATIONS {
        tm.propagate();
    }
    assert_eq!(tm.dirty_len(), 0);

    // One move: the node enters the partition (at the end) at the next propagate.
    tm.set_local(h[1], t(0.0, 7.0)).unwrap();
    assert_eq!(tm.world(h[1]).unwrap(), t(1.0, 0.0), "deferred: not yet");
    tm.propagate();
    assert_eq!(tm.world(h[1]).unwrap(), t(0.0, 7.0));
    assert_eq!(tm.dirty_len(), 1);
    let at = tm.lookup(h[1].entity()).unwrap().index() as usize;
    assert_eq!(at, tm.len() - 1, "dirty partition is at the end");
    // Four idle propagations: still dirty. The fifth: it leaves.
    for round in 1..IDLE_PROPAGATIONS {
        tm.propagate();
        assert_eq!(tm.dirty_len(), 1, "after {round} idle propagations");
        tm.check_invariants();
    }
    tm.propagate();
    assert_eq!(tm.dirty_len(), 0);
    tm.check_invariants();

    // A node that keeps moving never leaves.
    for round in 0..3 * IDLE_PROPAGATIONS as usize {
        tm.set_local(h[2], t(round as f32, 0.0)).unwrap();
        tm.propagate();
        assert_eq!(tm.dirty_len(), 1);
        assert_eq!(tm.world(h[2]).unwrap(), t(round as f32, 0.0));
    }
}

#[test]
fn deferred_propagate_processes_parents_before_children_in_one_call() {
    let mut entities = Entities::new();
    let mut tm = TransformManager::deferred();
    let h = nodes(&mut tm, &mut entities, 8);
    for _ in 0..IDLE_PROPAGATIONS {
        tm.propagate();
    }
    assert_eq!(tm.dirty_len(), 0);
    // Build a chain whose parents are at *higher* indices than their children:
    // 7 -> 6 -> ... -> 0, all while clean, then move every node.
    for k in 0..7 {
        tm.link(h[k], h[k + 1]).unwrap();
    }
    for (k, &n) in h.iter().enumerate() {
        tm.set_local(n, t(1.0, k as f32)).unwrap();
    }
    tm.propagate(); // one call
    assert!(partition_is_parent_first(&tm));
    assert_eq!(tm.dirty_len(), 8);
    let expected_y: f32 = (0..8).sum::<usize>() as f32;
    assert_eq!(tm.world(h[0]).unwrap(), t(8.0, expected_y));
    tm.check_invariants();
    // Moving only the top re-propagates the whole (dirty) chain.
    tm.set_local(h[7], t(0.0, 0.0)).unwrap();
    tm.propagate();
    assert_eq!(tm.world(h[0]).unwrap(), t(7.0, expected_y - 7.0));
    assert!(partition_is_parent_first(&tm));
}

#[test]
fn deferred_children_of_a_moving_clean_node_join_the_partition() {
    let mut entities = Entities::new();
    let mut tm = TransformManager::deferred();
    let h = nodes(&mut tm, &mut entities, 5);
    for k in 1..5 {
        tm.link(h[k], h[0]).unwrap();
    }
    for _ in 0..2 * IDLE_PROPAGATIONS {
        tm.propagate();
    }
    assert_eq!(tm.dirty_len(), 0);
    tm.set_local(h[0], t(100.0, 0.0)).unwrap();
    tm.propagate();
    assert_eq!(tm.dirty_len(), 5, "the moved node and its subtree");
    for (k, &node) in h.iter().enumerate().skip(1) {
        assert_eq!(tm.world(node).unwrap(), t(100.0 + k as f32, 0.0));
    }
    assert!(partition_is_parent_first(&tm));
    tm.check_invariants();
}

#[test]
fn compact_keeps_every_link_and_world() {
    let mut entities = Entities::new();
    for deferred in [false, true] {
        let mut tm = if deferred {
            TransformManager::deferred()
        } else {
            TransformManager::new()
        };
        let h = nodes(&mut tm, &mut entities, 40);
        // Parents at higher indices than children, several levels.
        for k in 0..39 {
            tm.link(h[k], h[39 - (39 - k) / 3]).unwrap();
        }
        tm.propagate();
        let before: Vec<_> = h
            .iter()
            .map(|&x| {
                (
                    tm.world(x).unwrap(),
                    tm.parent(x).map(|p| p.entity()),
                    tm.children(x).count(),
                )
            })
            .collect();
        tm.compact();
        tm.check_invariants();
        let after: Vec<_> = h
            .iter()
            .map(|&x| {
                (
                    tm.world(x).unwrap(),
                    tm.parent(x).map(|p| p.entity()),
                    tm.children(x).count(),
                )
            })
            .collect();
        assert_eq!(before, after, "deferred = {deferred}");
        if !deferred {
            for &x in &h {
                let i = tm.lookup(x.entity()).unwrap().index();
                if let Some(p) = tm.parent(tm.lookup(x.entity()).unwrap()) {
                    assert!(p.index() < i, "parents first after compact");
                }
            }
        }
    }
}
