//! One scene graph: a transform manager in a world follows the world's
//! `ChildOf` pairs. A proptest model drives random hierarchy and transform
//! changes through every path (single and batch parents, single and batch
//! transforms, batch transforms over a parented batch that may have gone
//! stale, removing a transform, reparenting, detaching, despawning,
//! snapshots) in immediate and deferred mode, and after every step checks
//! that each instance's parent is the instance of its entity's nearest
//! `ChildOf` ancestor with a transform, and that world transforms are
//! right.

use doecs::raw::ParentedBatch;

use doecs::{DestroyNotice, Entity, Snapshot, World};
use doecs_transform::{TransformError, TransformManager, WorldTransforms};
use glam::{Affine3A, Vec3};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Spawn,
    SpawnBatch(u8),
    SetParent(usize, usize),
    RemoveParent(usize),
    AddTransform(usize, i8),
    AddTransforms(usize, u8),
    AddTransformsToBatch(usize),
    DestroyTransform(usize),
    SetLocal(usize, i8),
    Despawn(usize),
    Snapshot,
    Restore,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => Just(Op::Spawn),
        1 => (1u8..6).prop_map(Op::SpawnBatch),
        4 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Op::SetParent(a, b)),
        1 => any::<usize>().prop_map(Op::RemoveParent),
        3 => (any::<usize>(), any::<i8>()).prop_map(|(a, x)| Op::AddTransform(a, x)),
        1 => (any::<usize>(), 1u8..5).prop_map(|(a, n)| Op::AddTransforms(a, n)),
        2 => any::<usize>().prop_map(Op::AddTransformsToBatch),
        1 => any::<usize>().prop_map(Op::DestroyTransform),
        2 => (any::<usize>(), any::<i8>()).prop_map(|(a, x)| Op::SetLocal(a, x)),
        1 => any::<usize>().prop_map(Op::Despawn),
        1 => Just(Op::Snapshot),
        1 => Just(Op::Restore),
    ]
}

fn t(x: i8) -> Affine3A {
    Affine3A::from_translation(Vec3::new(f32::from(x), 1.0, 0.0))
}

fn close(a: Affine3A, b: Affine3A) -> bool {
    let (x, y) = (a.to_cols_array(), b.to_cols_array());
    x.iter().zip(&y).all(|(p, q)| (p - q).abs() <= 1e-3)
}

/// The entity's nearest `ChildOf` ancestor that has a transform, found by
/// walking up the pairs (the model of what the manager links to).
fn nearest_with_transform(world: &World, tm: &TransformManager, e: Entity) -> Option<Entity> {
    let mut at = world.parent(e);
    while let Some(a) = at {
        if tm.lookup(a).is_some() {
            return Some(a);
        }
        at = world.parent(a);
    }
    None
}

/// The manager agrees with ChildOf: every instance's parent is the
/// instance of its entity's nearest ancestor with a transform (none where
/// no ancestor has one), and, once propagated, every world transform is
/// its parent's world times its local.
fn check(world: &mut World) {
    let hierarchy_parents: Vec<(Entity, Option<Entity>)> = {
        let tm = world.manager::<TransformManager>().unwrap();
        tm.iter()
            .map(|i| (i.entity(), nearest_with_transform(world, tm, i.entity())))
            .collect()
    };
    let tm = world.transforms_mut();
    tm.check_invariants();
    tm.propagate();
    for (e, parent) in hierarchy_parents {
        let inst = tm.lookup(e).unwrap();
        let want = parent.map(|p| tm.lookup(p).expect("has a transform"));
        assert_eq!(
            tm.parent(inst).map(|p| p.entity()),
            want.map(|p| p.entity()),
            "{e:?}: the manager's parent is the nearest ChildOf ancestor with a transform"
        );
        let local = tm.local(inst).unwrap();
        let expected = match want {
            Some(p) => tm.world(p).unwrap() * local,
            None => local,
        };
        assert!(close(tm.world(inst).unwrap(), expected), "{e:?} world");
    }
    world.check_invariants();
}

fn run(ops: Vec<Op>, deferred: bool) {
    let mut world = World::new();
    world.add_manager(
        if deferred {
            TransformManager::deferred()
        } else {
            TransformManager::new()
        },
        DestroyNotice::Callback,
    );
    let mut known: Vec<Entity> = (0..4).map(|_| world.spawn(())).collect();
    let mut snapshot = Snapshot::new();
    let mut have_snapshot = false;
    let mut batches: Vec<ParentedBatch> = Vec::new();
    for op in ops {
        let pick = |k: usize| known[k % known.len()];
        match op {
            Op::Spawn => known.push(world.spawn(())),
            Op::SpawnBatch(n) => {
                let es: Vec<Entity> = (0..n).map(|_| world.spawn(())).collect();
                // A chain inside the batch, under nothing.
                let parents: Vec<Option<u32>> = (0..n as u32).map(|k| k.checked_sub(1)).collect();
                known.extend(&es);
                batches.push(doecs::raw::parent_batch(&mut world, es, parents).unwrap());
            }
            Op::SetParent(a, b) => {
                let (a, b) = (pick(a), pick(b));
                let before = world.parent(a);
                match world.set_parent(a, b) {
                    Ok(()) => assert_eq!(world.parent(a), Some(b)),
                    Err(_) => assert_eq!(world.parent(a), before, "a refusal changes nothing"),
                }
            }
            Op::RemoveParent(a) => {
                world.remove_parent(pick(a));
            }
            Op::AddTransform(a, x) => {
                let e = pick(a);
                let had = world
                    .manager::<TransformManager>()
                    .unwrap()
                    .lookup(e)
                    .is_some();
                match world.add_transform(e, t(x)) {
                    Ok(_) => assert!(!had),
                    Err(TransformError::AlreadyExists(_)) => assert!(had),
                    Err(TransformError::NotAlive(_)) => assert!(!world.alive(e)),
                    Err(other) => panic!("{other}"),
                }
            }
            Op::AddTransforms(a, n) => {
                let es: Vec<Entity> = (0..n as usize).map(|k| pick(a + k)).collect();
                let locals = vec![t(n as i8); es.len()];
                let len_before = world.manager::<TransformManager>().unwrap().len();
                if world.add_transforms(&es, &locals).is_err() {
                    let tm = world.manager::<TransformManager>().unwrap();
                    assert_eq!(tm.len(), len_before, "a refused batch adds nothing");
                }
            }
            Op::AddTransformsToBatch(b) => {
                let Some(batch) = batches.get(b % batches.len().max(1)) else {
                    continue;
                };
                // A confirmed batch's parents are the world's (later ops may
                // have changed them, and then it must not be confirmed).
                if let Some(parents) = world.hierarchy().batch_parents(batch) {
                    for (&child, parent) in batch.children().iter().zip(parents) {
                        let want = parent.map(|p| batch.children()[p as usize]);
                        assert_eq!(world.parent(child), want, "confirmed, so current");
                    }
                }
                let locals: Vec<Affine3A> =
                    (0..batch.children().len()).map(|k| t(k as i8)).collect();
                let len_before = world.manager::<TransformManager>().unwrap().len();
                if world.add_transforms_to_batch(batch, &locals).is_err() {
                    let tm = world.manager::<TransformManager>().unwrap();
                    assert_eq!(tm.len(), len_before, "a refused batch adds nothing");
                }
            }
            Op::DestroyTransform(a) => {
                let tm = world.transforms_mut();
                if let Some(i) = tm.lookup(pick(a)) {
                    tm.destroy(i).unwrap();
                }
            }
            Op::SetLocal(a, x) => {
                let tm = world.transforms_mut();
                if let Some(i) = tm.lookup(pick(a)) {
                    tm.set_local(i, t(x)).unwrap();
                }
            }
            Op::Despawn(a) => {
                let _ = world.despawn(pick(a));
            }
            Op::Snapshot => {
                world.snapshot_into(&mut snapshot).unwrap();
                have_snapshot = true;
            }
            Op::Restore => {
                if have_snapshot {
                    world.restore(&snapshot).unwrap();
                }
            }
        }
        known.retain(|&e| world.alive(e));
        if known.is_empty() {
            known.push(world.spawn(()));
        }
        check(&mut world);
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 4 } else { 64 },
        ..ProptestConfig::default()
    })]

    #[test]
    fn the_manager_always_agrees_with_child_of(
        ops in proptest::collection::vec(op(), 1..if cfg!(miri) { 20 } else { 80 }),
        deferred in any::<bool>(),
    ) {
        run(ops, deferred);
    }
}

/// A manager that joins a world with links of its own takes the world's
/// hierarchy instead; instances created before their parent had one are
/// adopted when it gets one.
#[test]
fn joining_a_world_replaces_the_managers_links_with_child_of() {
    let mut world = World::new();
    let [a, b, c] = [(), (), ()].map(|()| world.spawn(()));
    let mut tm = TransformManager::new();
    let (ia, ib, ic) = (
        tm.create(a, t(1)).unwrap(),
        tm.create(b, t(2)).unwrap(),
        tm.create(c, t(4)).unwrap(),
    );
    tm.link(ib, ia).unwrap();
    tm.link(ic, ib).unwrap();
    // The world says: c is a child of a, and b is a root.
    world.set_parent(c, a).unwrap();
    world.add_manager(tm, DestroyNotice::Callback);
    let tm = world.manager::<TransformManager>().unwrap();
    assert!(tm.follows_hierarchy());
    assert_eq!(tm.parent(ib), None);
    assert_eq!(tm.parent(ic).map(|i| i.entity()), Some(a));
    assert_eq!(tm.world(ic).unwrap().translation.x, 5.0);
    tm.check_invariants();
}

/// A batch whose entities' parents lie outside it, and children that had
/// transforms before their parent: all linked in one call.
#[test]
fn a_batch_links_to_parents_outside_it_and_adopts_children() {
    let mut world = World::new();
    let [root, mid, leaf] = [(), (), ()].map(|()| world.spawn(()));
    world.set_parent(mid, root).unwrap();
    world.set_parent(leaf, mid).unwrap();
    world.add_transform(root, t(1)).unwrap();
    world.add_transform(leaf, t(4)).unwrap();
    // `leaf` waits as a root for `mid`, which the batch brings.
    let extra = world.spawn(());
    world.set_parent(extra, root).unwrap();
    world.add_transforms(&[extra, mid], &[t(8), t(2)]).unwrap();
    let tm = world.manager::<TransformManager>().unwrap();
    let leaf_i = tm.lookup(leaf).unwrap();
    assert_eq!(tm.parent(leaf_i).map(|i| i.entity()), Some(mid));
    assert_eq!(tm.world(leaf_i).unwrap().translation.x, 7.0);
    let extra_i = tm.lookup(extra).unwrap();
    assert_eq!(tm.parent(extra_i).map(|i| i.entity()), Some(root));
    tm.check_invariants();
    // A refused batch (an entity twice) changes nothing.
    let [x, y] = [(), ()].map(|()| world.spawn(()));
    let len = world.manager::<TransformManager>().unwrap().len();
    assert_eq!(
        world.add_transforms(&[x, y, x], &[t(0); 3]),
        Err(TransformError::DuplicateEntity(x))
    );
    assert_eq!(world.manager::<TransformManager>().unwrap().len(), len);
    // Dead entities are refused before anything happens.
    world.despawn(y).unwrap();
    assert_eq!(
        world.add_transform(y, t(0)),
        Err(TransformError::NotAlive(y))
    );
}

/// A parented batch gets its transforms linked from its parent indices when
/// the world confirms them, and by looking each entity up when it does
/// not; the manager ends the same either way.
#[test]
fn a_parented_batch_links_its_transforms_confirmed_or_stale() {
    let build = |stale: bool| {
        let mut world = World::new();
        // Pairs from before the batch: its rows do not start at 0.
        let [a, b] = [(), ()].map(|()| world.spawn(()));
        world.set_parent(b, a).unwrap();
        let es: Vec<Entity> = (0..6).map(|_| world.spawn(())).collect();
        let parents = vec![None, Some(0), Some(0), Some(1), None, Some(4)];
        let batch = doecs::raw::parent_batch(&mut world, es.clone(), parents).unwrap();
        assert!(world.hierarchy().batch_parents(&batch).is_some());
        if stale {
            // Moves a batch row (the last one fills the removed row's
            // place) and gives a root of the batch a parent outside it.
            world.remove_parent(es[1]);
            world.set_parent(es[4], a).unwrap();
            assert_eq!(world.hierarchy().batch_parents(&batch), None);
        }
        let locals: Vec<Affine3A> = (0..6).map(|k| t(k as i8)).collect();
        world.add_transforms_to_batch(&batch, &locals).unwrap();
        check(&mut world);
        let tm = world.manager::<TransformManager>().unwrap();
        let parent_of = |e: Entity| {
            let i = tm.lookup(e).unwrap();
            tm.parent(i).map(|p| p.entity())
        };
        (es.iter().map(|&e| parent_of(e)).collect::<Vec<_>>(), es)
    };
    let (confirmed, es) = build(false);
    assert_eq!(
        confirmed,
        vec![
            None,
            Some(es[0]),
            Some(es[0]),
            Some(es[1]),
            None,
            Some(es[4])
        ]
    );
    // Stale: es[1] is a root now, es[4] is under `a`, which has no transform.
    let (stale, es) = build(true);
    assert_eq!(
        stale,
        vec![None, None, Some(es[0]), Some(es[1]), None, Some(es[4])]
    );
}

/// A column spawn into fresh entity slots hands the manager one run of
/// indices, whose map entries it appends in one write; into reused slots it
/// claims each entry. Both lay out the same instances, beside transforms
/// made before (some of them destroyed with their entities).
#[test]
fn a_parented_column_spawn_links_the_same_with_or_without_an_index_run() {
    use doecs::raw::ParentsFirst;
    use doecs::WorldConfig;
    let build = |reuse: bool| {
        let mut world = World::with_config(WorldConfig {
            min_free_indices: 1,
            ..WorldConfig::default()
        });
        let before: Vec<Entity> = (0..4).map(|_| world.spawn(())).collect();
        for (k, &e) in before.iter().enumerate() {
            world.add_transform(e, t(k as i8)).unwrap();
        }
        world.set_parent(before[1], before[0]).unwrap();
        if reuse {
            world.despawn(before[3]).unwrap();
            world.despawn(before[2]).unwrap();
        }
        let id = world.component_id::<u32>();
        let values: [u32; 5] = [0, 1, 2, 3, 4];
        let parents = ParentsFirst::new(vec![None, Some(0), Some(0), Some(1), None]).unwrap();
        // SAFETY: five valid u32 values, which are `Copy`.
        let batch = unsafe {
            doecs::raw::spawn_columns_parented(
                &mut world,
                &[id],
                &[values.as_ptr().cast()],
                parents,
            )
        }
        .unwrap();
        assert_eq!(batch.index_run().is_some(), !reuse);
        let locals: Vec<Affine3A> = (0..5).map(|k| t(10 + k as i8)).collect();
        world.add_transforms_to_batch(&batch, &locals).unwrap();
        check(&mut world);
        let tm = world.manager::<TransformManager>().unwrap();
        let es = batch.children();
        let described: Vec<_> = es
            .iter()
            .map(|&e| {
                let i = tm.lookup(e).unwrap();
                let parent = tm
                    .parent(i)
                    .map(|p| es.iter().position(|&c| c == p.entity()));
                (tm.local(i).unwrap(), parent)
            })
            .collect();
        assert_eq!(
            tm.lookup(before[1])
                .and_then(|i| tm.parent(i))
                .map(|p| p.entity()),
            Some(before[0])
        );
        described
    };
    let fresh = build(false);
    assert_eq!(fresh, build(true));
    let parent_of: Vec<_> = fresh.iter().map(|(_, p)| *p).collect();
    assert_eq!(
        parent_of,
        vec![None, Some(Some(0)), Some(Some(0)), Some(Some(1)), None]
    );
}
