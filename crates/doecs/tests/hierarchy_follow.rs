//! The hierarchy as managers see it: `set_parents_in_batch` (all or
//! nothing), and the notices a manager gets of every `ChildOf` change.

use doecs::raw::ParentedBatch;

use doecs::{ComponentManager, DestroyNotice, Entity, Hierarchy, RelationError, World};

/// Records what the world told it.
#[derive(Default)]
struct Follower {
    joined_with: Vec<(Entity, Option<Entity>)>,
    changes: Vec<(Entity, Option<Entity>)>,
    watched: Vec<Entity>,
}

impl ComponentManager for Follower {
    fn on_destroy(&mut self, _: &[Entity]) {}
    fn follow_hierarchy(&mut self, hierarchy: Hierarchy<'_>) {
        self.joined_with = self
            .watched
            .iter()
            .map(|&e| (e, hierarchy.parent(e)))
            .collect();
    }
    fn on_parent_changed(&mut self, _: Hierarchy<'_>, child: Entity, parent: Option<Entity>) {
        self.changes.push((child, parent));
    }
}

#[test]
fn managers_hear_of_every_child_of_change() {
    let mut world = World::new();
    let [a, b, c] = [(), (), ()].map(|()| world.spawn(()));
    world.set_parent(b, a).unwrap();
    world.add_manager(
        Follower {
            watched: vec![a, b],
            ..Default::default()
        },
        DestroyNotice::Callback,
    );
    let f = world.manager::<Follower>().unwrap();
    assert_eq!(f.joined_with, vec![(a, None), (b, Some(a))]);
    world.set_parent(c, b).unwrap();
    world.set_parent(c, a).unwrap();
    world.remove_parent(c);
    world.add_pair(b, c, doecs::ChildOf).unwrap();
    world.remove_pair::<doecs::ChildOf>(b, c).unwrap();
    // Refused changes are not reported.
    assert!(world.set_parent(a, a).is_err());
    // Other relations are not the hierarchy.
    #[derive(Clone)]
    struct Likes;
    impl doecs::Relation for Likes {}
    world.add_pair(a, c, Likes).unwrap();
    let f = world.manager::<Follower>().unwrap();
    assert_eq!(
        f.changes,
        vec![
            (c, Some(b)),
            (c, Some(a)),
            (c, None),
            (b, Some(c)),
            (b, None)
        ]
    );
    // A batch reports each pair.
    let es: Vec<Entity> = (0..3).map(|_| world.spawn(())).collect();
    world
        .set_parents_in_batch(&es, &[None, Some(0), Some(1)])
        .unwrap();
    let f = world.manager::<Follower>().unwrap();
    assert_eq!(f.changes[5..], [(es[1], Some(es[0])), (es[2], Some(es[1]))]);
    assert_eq!(world.children(es[0]).collect::<Vec<_>>(), vec![es[1]]);
}

#[test]
fn a_refused_batch_of_parents_changes_nothing() {
    let mut world = World::new();
    let es: Vec<Entity> = (0..4).map(|_| world.spawn(())).collect();
    let dead = world.spawn(());
    world.despawn(dead).unwrap();
    let owned = world.spawn(());
    world.set_parent(owned, es[0]).unwrap();
    let pairs = world.relations().len();
    let cases: Vec<(Vec<Entity>, Vec<Option<u32>>, RelationError)> = vec![
        (
            es.clone(),
            vec![None; 3],
            RelationError::BatchLength {
                children: 4,
                parents: 3,
            },
        ),
        (
            vec![es[1], dead],
            vec![None, Some(0)],
            RelationError::NoSuchEntity(dead),
        ),
        (
            vec![es[1], owned],
            vec![None, Some(0)],
            RelationError::HasParent(owned),
        ),
        (
            vec![es[1], es[2], es[1]],
            vec![None, Some(0), None],
            RelationError::HasParent(es[1]),
        ),
        (
            vec![es[1], es[2]],
            vec![None, Some(2)],
            RelationError::BatchParentOutOfRange { item: 1, parent: 2 },
        ),
    ];
    for (children, parents, want) in cases {
        assert_eq!(world.set_parents_in_batch(&children, &parents), Err(want));
        assert_eq!(world.relations().len(), pairs);
    }
    // A cycle inside the batch.
    let err = world
        .set_parents_in_batch(&es[1..4], &[Some(2), Some(0), Some(1)])
        .unwrap_err();
    assert!(matches!(err, RelationError::Cycle { .. }), "{err}");
    // A self parent is a cycle too.
    let err = world
        .set_parents_in_batch(&es[1..2], &[Some(0)])
        .unwrap_err();
    assert!(matches!(err, RelationError::Cycle { .. }), "{err}");
    assert_eq!(world.relations().len(), pairs);
    for &e in &es[1..] {
        assert_eq!(world.parent(e), None);
    }
    world.check_invariants();
}

/// A batch parented through the checked call keeps what the checks found:
/// whether its parents come first (as proof) and a bound on its indices,
/// whatever order its entities come in.
#[test]
fn a_checked_batch_keeps_its_order_and_index_bound() {
    let mut world = World::new();
    let es: Vec<Entity> = (0..6).map(|_| world.spawn(())).collect();
    let first =
        doecs::raw::parent_batch(&mut world, es[..3].to_vec(), vec![None, Some(0), Some(1)])
            .unwrap();
    assert_eq!(
        first
            .parents_first()
            .map(doecs::raw::ParentsFirst::as_slice),
        Some(&[None, Some(0), Some(1)][..])
    );
    assert_eq!(first.index_bound(), es[2].index() as usize + 1);
    // Existing entities: their indices are not known to be a run.
    assert_eq!(first.index_run(), None);
    // Children listed before their parent, and entities out of index order.
    let later = vec![es[5], es[3], es[4]];
    let unordered =
        doecs::raw::parent_batch(&mut world, later.clone(), vec![None, Some(2), Some(0)]).unwrap();
    assert_eq!(unordered.parents_first(), None);
    assert_eq!(unordered.parents(), &[None, Some(2), Some(0)][..]);
    assert_eq!(unordered.index_bound(), es[5].index() as usize + 1);
    assert_eq!(world.parent(es[3]), Some(es[4]));
    assert_eq!(world.parent(es[4]), Some(es[5]));
    // An empty batch.
    let empty = doecs::raw::parent_batch(&mut world, Vec::new(), Vec::new()).unwrap();
    assert_eq!(
        (empty.index_bound(), empty.parents_first().is_some()),
        (0, true)
    );
    world.check_invariants();
}

/// `batch_parents` confirms a parented batch only while every one of its
/// pairs is still there, in place, and its roots still have no parent.
#[test]
fn a_parented_batch_is_confirmed_only_while_its_pairs_hold() {
    let mut world = World::new();
    let earlier: Vec<Entity> = (0..3).map(|_| world.spawn(())).collect();
    world.set_parent(earlier[1], earlier[0]).unwrap();
    let fresh = |world: &mut World| -> ParentedBatch {
        let es: Vec<Entity> = (0..4).map(|_| world.spawn(())).collect();
        doecs::raw::parent_batch(world, es, vec![None, Some(0), Some(1), None]).unwrap()
    };
    let parents = [None, Some(0), Some(1), None];
    let batch = fresh(&mut world);
    assert_eq!(world.hierarchy().batch_parents(&batch), Some(&parents[..]));
    // A change elsewhere that moves no row of the batch leaves it confirmed.
    world.set_parent(earlier[2], earlier[0]).unwrap();
    assert_eq!(world.hierarchy().batch_parents(&batch), Some(&parents[..]));
    // A root that gets a parent.
    world.set_parent(batch.children()[3], earlier[0]).unwrap();
    assert_eq!(world.hierarchy().batch_parents(&batch), None);
    // A removed pair, and a pair whose row moved when an earlier one went.
    let batch = fresh(&mut world);
    world.remove_parent(batch.children()[2]);
    assert_eq!(world.hierarchy().batch_parents(&batch), None);
    let batch = fresh(&mut world);
    world.remove_parent(earlier[1]);
    assert_eq!(world.hierarchy().batch_parents(&batch), None);
    // A despawned child takes its pair with it.
    let batch = fresh(&mut world);
    world.despawn(batch.children()[2]).unwrap();
    assert_eq!(world.hierarchy().batch_parents(&batch), None);
    // In another world, where none of it holds.
    assert_eq!(World::new().hierarchy().batch_parents(&batch), None);
    // Restored from a snapshot taken before the batch: its pairs are gone,
    // and stay unconfirmed however many pairs are added after (the restored
    // table counts its changes afresh, not on from the batch's count).
    let mut before = doecs::Snapshot::new();
    world.snapshot_into(&mut before).unwrap();
    let batch = fresh(&mut world);
    let mut after = doecs::Snapshot::new();
    world.snapshot_into(&mut after).unwrap();
    world.restore(&before).unwrap();
    assert_eq!(world.hierarchy().batch_parents(&batch), None);
    for k in 0..4 {
        let e = world.spawn(());
        world.set_parent(e, earlier[k % 3]).unwrap();
        assert_eq!(world.hierarchy().batch_parents(&batch), None);
    }
    // Restored from one taken after it: the pairs hold, checked row by row.
    world.restore(&after).unwrap();
    assert_eq!(world.hierarchy().batch_parents(&batch), Some(&parents[..]));
    // A batch of roots only, in a world with no pairs at all.
    let mut world = World::new();
    let es: Vec<Entity> = (0..2).map(|_| world.spawn(())).collect();
    let roots = doecs::raw::parent_batch(&mut world, es.clone(), vec![None, None]).unwrap();
    assert_eq!(
        world.hierarchy().batch_parents(&roots),
        Some(&[None, None][..])
    );
    assert_eq!(roots.into_children(), es);
    // A refused batch changes nothing, as `set_parents_in_batch`.
    let err = doecs::raw::parent_batch(&mut world, es.clone(), vec![Some(1), Some(0)]).unwrap_err();
    assert!(matches!(err, RelationError::Cycle { .. }), "{err}");
    assert_eq!(world.relations().len(), 0);
    world.check_invariants();
}

/// `spawn_columns_raw_parented` spawns and parents in one operation: the
/// pairs are in place, in batch order, the batch is confirmed and lists its
/// parents first, managers hear of each pair, and a hook's command waits
/// until the entities are parented.
#[test]
fn a_parented_column_spawn_is_one_operation() {
    use doecs::raw::ParentsFirst;
    use doecs::ComponentHooks;
    let mut world = World::new();
    let earlier = world.spawn((0u32,));
    world.add_manager(Follower::default(), DestroyNotice::Callback);
    // Each new u32 records, when its hook's command runs, its entity's parent.
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    world.set_hooks::<u32>(ComponentHooks::new().on_add(move |ctx| {
        let log = log.clone();
        let entity = ctx.entity;
        ctx.commands.push_closure(move |world: &mut World| {
            log.lock().unwrap().push((entity, world.parent(entity)));
            Ok(())
        });
    }));
    seen.lock().unwrap().clear();
    let values: [u32; 5] = [10, 11, 12, 13, 14];
    let id = world.component_id::<u32>();
    let parents = ParentsFirst::new(vec![None, Some(0), Some(0), None, Some(3)]).unwrap();
    // SAFETY: five valid u32 values, which are `Copy`: the world may keep
    // copies of them.
    let batch = unsafe {
        doecs::raw::spawn_columns_parented(
            &mut world,
            &[id],
            &[values.as_ptr().cast()],
            parents.clone(),
        )
    }
    .unwrap();
    let es = batch.children().to_vec();
    assert_eq!(es.len(), 5);
    // Fresh slots after `earlier`'s: one run of indices.
    assert_eq!(batch.index_run(), Some(1..6));
    assert_eq!(batch.parents_first(), Some(&parents));
    let bound = es.iter().map(|e| e.index() as usize + 1).max().unwrap();
    assert_eq!(batch.index_bound(), bound);
    assert_eq!(
        world.hierarchy().batch_parents(&batch),
        Some(parents.as_slice())
    );
    for (k, &e) in es.iter().enumerate() {
        assert_eq!(world.get::<u32>(e), Ok(&values[k]));
    }
    assert_eq!(
        world.children(es[0]).collect::<Vec<_>>(),
        vec![es[1], es[2]]
    );
    assert_eq!(world.parent(es[4]), Some(es[3]));
    assert_eq!(world.parent(earlier), None);
    let expected = [(es[1], es[0]), (es[2], es[0]), (es[4], es[3])];
    let f = world.manager::<Follower>().unwrap();
    assert_eq!(
        f.changes,
        expected.map(|(c, p)| (c, Some(p))).to_vec(),
        "one notice per pair, in batch order"
    );
    // Every hook command ran after the parents were set.
    let parent_of = |k: usize| parents.as_slice()[k].map(|p| es[p as usize]);
    let want: Vec<_> = (0..5).map(|k| (es[k], parent_of(k))).collect();
    assert_eq!(*seen.lock().unwrap(), want);
    world.check_invariants();
    // Parents that do not come first are refused before anything exists.
    assert_eq!(
        ParentsFirst::new(vec![None, Some(1)]),
        Err(RelationError::ParentNotBefore { item: 1, parent: 1 })
    );
    // Unknown components are refused with the world unchanged.
    let before = world.entities().len();
    let bogus = doecs::ComponentId::from_index(9999);
    // SAFETY: the call is refused before any source is read.
    let refused = unsafe {
        doecs::raw::spawn_columns_parented(&mut world, &[bogus], &[values.as_ptr().cast()], parents)
    };
    assert!(refused.is_err());
    assert_eq!(world.entities().len(), before);
    assert_eq!(world.relations().len(), 3);
    world.check_invariants();
}

/// Hook commands recorded inside `as_one_operation` wait for its end; a
/// panic inside leaves them queued for the next operation.
#[test]
fn one_operation_holds_hook_commands_until_it_ends() {
    use doecs::ComponentHooks;
    let mut world = World::new();
    world.set_hooks::<u32>(ComponentHooks::new().on_add(|ctx| {
        ctx.commands.despawn(ctx.entity);
    }));
    let (a, b, alive_inside) = doecs::raw::as_one_operation(&mut world, |world| {
        let a = world.spawn((1u32,));
        let b = world.spawn((2u32,));
        world.set_parent(b, a).unwrap();
        (a, b, world.alive(a) && world.alive(b))
    });
    assert!(alive_inside);
    assert!(!world.alive(a) && !world.alive(b));
    // Nested: the inner operation's commands wait for the outer one.
    let (inner, alive_after_inner) = doecs::raw::as_one_operation(&mut world, |world| {
        let inner = doecs::raw::as_one_operation(world, |world| world.spawn((3u32,)));
        (inner, world.alive(inner))
    });
    assert!(alive_after_inner && !world.alive(inner));
    // A panic inside: the commands stay queued and the next operation
    // applies them.
    let c = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        doecs::raw::as_one_operation(&mut world, |world| {
            let c = world.spawn((4u32,));
            std::panic::panic_any(c)
        })
    }))
    .unwrap_err();
    let c = *c.downcast::<Entity>().unwrap();
    assert!(world.alive(c), "its despawn is still queued");
    world.spawn(());
    assert!(!world.alive(c));
    world.check_invariants();
}

/// `batch_located` answers at once while no entity left the world since
/// the batch was parented, and looks each entity up otherwise: a
/// departure elsewhere leaves the batch located, one of its own does not,
/// and a restore is checked entity by entity.
#[test]
fn a_batch_is_located_until_one_of_its_entities_leaves() {
    let mut world = World::new();
    let other = world.spawn(());
    let es = world.spawn_batch((0..3).map(|_| ()));
    let batch =
        doecs::raw::parent_batch(&mut world, es.clone(), vec![None, Some(0), Some(0)]).unwrap();
    assert!(doecs::raw::batch_located(&world, &batch));
    // Another entity leaves: the stamp moved, the lookups confirm.
    world.despawn(other).unwrap();
    assert!(doecs::raw::batch_located(&world, &batch));
    // Restored from a snapshot taken before the batch: its entities are gone.
    let mut before = doecs::Snapshot::new();
    let mut world2 = World::new();
    world2.snapshot_into(&mut before).unwrap();
    let es2 = world2.spawn_batch((0..2).map(|_| ()));
    let batch2 = doecs::raw::parent_batch(&mut world2, es2, vec![None, Some(0)]).unwrap();
    assert!(doecs::raw::batch_located(&world2, &batch2));
    world2.restore(&before).unwrap();
    assert!(!doecs::raw::batch_located(&world2, &batch2));
    // The batch's own entity leaves (a despawned root takes its children).
    world.despawn(es[0]).unwrap();
    assert!(!doecs::raw::batch_located(&world, &batch));
    // In another world, where none of it is.
    assert!(!doecs::raw::batch_located(&World::new(), &batch));
    world.check_invariants();
}

/// A column spawn into reused entity slots is no index run; into fresh
/// slots it is one, after every slot ever used.
#[test]
fn a_parented_column_spawn_reports_its_index_run_only_for_fresh_slots() {
    use doecs::raw::ParentsFirst;
    use doecs::WorldConfig;
    let mut world = World::with_config(WorldConfig {
        min_free_indices: 1,
        ..WorldConfig::default()
    });
    let id = world.component_id::<u32>();
    let spawn = |world: &mut World, n: usize| {
        let values: Vec<u32> = (0..n as u32).collect();
        // Each a child of the first (despawning one takes no other).
        let parents =
            ParentsFirst::new((0..n as u32).map(|k| (k > 0).then_some(0)).collect()).unwrap();
        // SAFETY: `n` valid u32 values, which are `Copy`.
        unsafe {
            doecs::raw::spawn_columns_parented(world, &[id], &[values.as_ptr().cast()], parents)
        }
        .unwrap()
    };
    let first = spawn(&mut world, 4);
    assert_eq!(first.index_run(), Some(0..4));
    world.despawn(first.children()[1]).unwrap();
    world.despawn(first.children()[2]).unwrap();
    // Two freed slots are reused first, then fresh ones follow.
    let mixed = spawn(&mut world, 3);
    assert_eq!(mixed.index_run(), None);
    let indices: Vec<u32> = mixed.children().iter().map(|e| e.index()).collect();
    assert_eq!(indices, vec![1, 2, 4]);
    assert_eq!(mixed.index_bound(), 5);
    let fresh = spawn(&mut world, 2);
    assert_eq!(fresh.index_run(), Some(5..7));
    assert_eq!(spawn(&mut world, 0).index_run(), Some(7..7));
    world.check_invariants();
}
