//! `create_many` has two paths: batches whose parents come before their
//! children (what a level blob holds) are laid out in batch order with links
//! written in place; any other batch is sorted breadth-first. These tests hold
//! the two to the same results and the same errors.

use doecs::raw::Entities;

use doecs::Entity;
use doecs_transform::{Instance, TransformError, TransformManager};
use glam::{Affine3A, Quat, Vec3};
use proptest::prelude::*;

fn local(k: usize) -> Affine3A {
    Affine3A::from_scale_rotation_translation(
        Vec3::splat(1.0 + (k % 3) as f32 * 0.5),
        Quat::from_rotation_z(k as f32 * 0.1),
        Vec3::new(k as f32, 1.0, -(k as f32)),
    )
}

/// Per entity: world transform, parent entity, children entities in list order.
fn snapshot(
    tm: &TransformManager,
    handles: &[Instance],
) -> Vec<(Entity, Affine3A, Option<Entity>, Vec<Entity>)> {
    let mut out: Vec<_> = handles
        .iter()
        .map(|&h| {
            (
                h.entity(),
                tm.world(h).unwrap(),
                tm.parent(h).map(|p| p.entity()),
                tm.children(h).map(|c| c.entity()).collect(),
            )
        })
        .collect();
    out.sort_by_key(|x| x.0);
    out
}

fn close(a: &Affine3A, b: &Affine3A) -> bool {
    a.abs_diff_eq(*b, 1e-3 * (1.0 + a.translation.abs().max_element()))
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 4 } else { 128 },
        ..ProptestConfig::default()
    })]

    /// The same forest, given parents-first (the in-order path) and in a
    /// shuffled order (the general path), gives the same worlds, parents and
    /// child lists (child lists in batch order on both paths).
    #[test]
    fn in_order_and_shuffled_batches_agree(
        picks in prop::collection::vec(any::<prop::sample::Index>(), 1..if cfg!(miri) { 12 } else { 200 }),
        roots in prop::collection::vec(any::<bool>(), 200),
        shuffle_seed in any::<u64>(),
    ) {
        let n = picks.len();
        // Parents-first forest: item k's parent is some item before it.
        let parents: Vec<Option<u32>> = (0..n)
            .map(|k| (k > 0 && !roots[k]).then(|| picks[k].index(k) as u32))
            .collect();
        let mut entities = Entities::new();
        let mut es = Vec::new();
        entities.alloc_many(n, &mut es);
        let locals: Vec<Affine3A> = (0..n).map(local).collect();

        let mut in_order = TransformManager::new();
        let a = in_order.create_many(&es, &locals, &parents).unwrap();
        in_order.check_invariants();
        for (k, h) in a.iter().enumerate() {
            prop_assert_eq!(h.entity(), es[k]);
        }

        // A permutation that puts the last child first, so it is not in order
        // whenever any item has a parent.
        let mut perm: Vec<usize> = (0..n).collect();
        let mut x = shuffle_seed | 1;
        for i in (1..n).rev() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            perm.swap(i, (x % (i as u64 + 1)) as usize);
        }
        let mut position = vec![0; n];
        for (new, &old) in perm.iter().enumerate() {
            position[old] = new;
        }
        let shuffled_es: Vec<Entity> = perm.iter().map(|&o| es[o]).collect();
        let shuffled_locals: Vec<Affine3A> = perm.iter().map(|&o| locals[o]).collect();
        let shuffled_parents: Vec<Option<u32>> = perm
            .iter()
            .map(|&o| parents[o].map(|p| position[p as usize] as u32))
            .collect();
        let mut general = TransformManager::new();
        let b = general
            .create_many(&shuffled_es, &shuffled_locals, &shuffled_parents)
            .unwrap();
        general.check_invariants();

        let (sa, sb) = (snapshot(&in_order, &a), snapshot(&general, &b));
        for (x, y) in sa.iter().zip(&sb) {
            prop_assert_eq!(x.0, y.0);
            prop_assert!(close(&x.1, &y.1), "{:?}: {:?} vs {:?}", x.0, x.1, y.1);
            prop_assert_eq!(x.2, y.2);
            // Child lists follow batch order, which the shuffle changed.
            let mut ca = x.3.clone();
            let mut cb = y.3.clone();
            let in_batch_order = ca.windows(2).all(|w| w[0] < w[1]);
            prop_assert!(in_batch_order, "in-order child list {:?}", ca);
            ca.sort();
            cb.sort();
            prop_assert_eq!(ca, cb);
        }
        // World transforms are also what a full recomputation gives.
        let before = snapshot(&in_order, &a);
        in_order.update_all();
        for (x, y) in before.iter().zip(&snapshot(&in_order, &a)) {
            prop_assert!(close(&x.1, &y.1));
        }
    }
}

#[test]
fn in_order_batch_errors_change_nothing() {
    let mut entities = Entities::new();
    let mut es = Vec::new();
    entities.alloc_many(4, &mut es);
    let l = [Affine3A::IDENTITY; 4];
    let parents = [None, Some(0), Some(1), Some(0)];
    let mut tm = TransformManager::new();

    // A duplicate late in an in-order batch: refused, earlier claims undone.
    let dup = [es[0], es[1], es[2], es[1]];
    assert!(matches!(
        tm.create_many(&dup, &l, &parents),
        Err(TransformError::DuplicateEntity(e)) if e == es[1]
    ));
    assert!(tm.is_empty());
    tm.check_invariants();
    for &e in &es {
        assert!(tm.lookup(e).is_none());
    }

    // The same entities then go in fine.
    let hs = tm.create_many(&es, &l, &parents).unwrap();
    assert_eq!(tm.len(), 4);
    assert_eq!(tm.parent(hs[2]).unwrap().entity(), es[1]);

    // An entity that already has an instance: refused, nothing added.
    let mut more = Vec::new();
    entities.alloc_many(2, &mut more);
    let again = [more[0], es[3], more[1]];
    assert!(matches!(
        tm.create_many(&again, &l[..3], &[None, Some(0), Some(0)]),
        Err(TransformError::AlreadyExists(e)) if e == es[3]
    ));
    assert_eq!(tm.len(), 4);
    assert!(tm.lookup(more[0]).is_none());
    tm.check_invariants();
}

#[test]
fn in_order_batch_replaces_a_stale_instance() {
    // An index reused with a new generation while the old generation's
    // instance was never destroyed: the batch falls back to the general path,
    // which drops the stale instance first.
    let mut entities = Entities::with_min_free_indices(0);
    let old = entities.alloc();
    let keep = entities.alloc();
    let mut tm = TransformManager::new();
    tm.create(old, Affine3A::IDENTITY).unwrap();
    tm.create(keep, Affine3A::IDENTITY).unwrap();
    assert!(entities.free(old));
    let new = entities.alloc();
    assert_eq!(new.index(), old.index());
    let hs = tm
        .create_many(&[new], &[Affine3A::from_translation(Vec3::X)], &[None])
        .unwrap();
    assert_eq!(tm.len(), 2);
    assert!(tm.lookup(old).is_none());
    assert_eq!(tm.world(hs[0]).unwrap().translation, Vec3::X.into());
    assert!(tm.lookup(keep).is_some());
    tm.check_invariants();
}
