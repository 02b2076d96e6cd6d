//! Sparse components: storage, every structural path, queries, hooks,
//! observers, change detection and refusals.

use doecs::{
    ComponentDescriptor, ComponentHooks, Entity, EntityError, Has, OnAdd, OnRemove, QueryError,
    QueryState, Ref, RegisterError, Sparse, Trigger, World,
};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

#[derive(Debug, Clone, PartialEq)]
struct Pos(f32);
#[derive(Debug, Clone, PartialEq)]
struct Vel(f32);
#[derive(Debug, Clone, PartialEq)]
struct Stunned(u32);
#[derive(Debug, Clone, PartialEq)]
struct Tag;
#[derive(Debug, Clone, PartialEq)]
struct Name(String);

fn world() -> World {
    let mut w = World::new();
    w.register_sparse::<Stunned>().unwrap();
    w.register_sparse::<Tag>().unwrap();
    w.register_sparse::<Name>().unwrap();
    w
}

#[test]
fn adding_and_removing_moves_no_row_and_makes_no_archetype() {
    let mut w = world();
    let es: Vec<Entity> = (0..10)
        .map(|i| w.spawn((Pos(i as f32), Vel(1.0))))
        .collect();
    let archetypes = doecs::raw::archetypes(&w).len();
    for &e in &es {
        w.insert_one(e, Stunned(3)).unwrap();
        w.insert_one(e, Tag).unwrap();
    }
    assert_eq!(doecs::raw::archetypes(&w).len(), archetypes);
    for &e in &es[..5] {
        assert_eq!(w.remove_one::<Stunned>(e), Ok(Stunned(3)));
        w.remove::<(Tag,)>(e).unwrap();
    }
    assert_eq!(doecs::raw::archetypes(&w).len(), archetypes);
    w.check_invariants();
    for (i, &e) in es.iter().enumerate() {
        assert_eq!(w.contains::<Stunned>(e), i >= 5);
        assert_eq!(w.get::<Pos>(e), Ok(&Pos(i as f32)));
    }
    assert!(matches!(
        w.remove_one::<Stunned>(es[0]),
        Err(EntityError::MissingComponent { .. })
    ));
}

#[test]
fn mixed_bundles_split_between_rows_and_sets() {
    let mut w = world();
    let e = w.spawn((Pos(1.0), Name("a".into()), Vel(2.0), Stunned(1)));
    assert_eq!(w.get::<Pos>(e), Ok(&Pos(1.0)));
    assert_eq!(w.get::<Vel>(e), Ok(&Vel(2.0)));
    assert_eq!(w.get::<Name>(e), Ok(&Name("a".into())));
    assert_eq!(w.get::<Stunned>(e), Ok(&Stunned(1)));
    // Replacing: the old values drop, the new ones are in.
    w.insert(e, (Name("b".into()), Pos(5.0))).unwrap();
    assert_eq!(w.get::<Name>(e), Ok(&Name("b".into())));
    assert_eq!(w.get::<Pos>(e), Ok(&Pos(5.0)));
    let (n, v) = w.remove::<(Name, Vel)>(e).unwrap();
    assert_eq!((n, v), (Name("b".into()), Vel(2.0)));
    // A refused removal changes nothing: the entity lacks `Name` now.
    assert!(w.remove::<(Pos, Name)>(e).is_err());
    assert_eq!(w.get::<Pos>(e), Ok(&Pos(5.0)));
    assert!(w.remove::<(Stunned, Vel)>(e).is_err());
    assert_eq!(w.get::<Stunned>(e), Ok(&Stunned(1)));
    // Exchange across the storages.
    w.exchange::<(Stunned,), (Vel, Tag)>(e, (Vel(9.0), Tag))
        .unwrap();
    assert!(!w.contains::<Stunned>(e));
    assert!(w.contains::<Tag>(e) && w.contains::<Vel>(e));
    w.check_invariants();
    // Batches.
    let es = w.spawn_batch((0..50).map(|i| (Pos(i as f32), Stunned(i))));
    assert_eq!(es.len(), 50);
    w.insert_batch(es.iter().map(|&e| (e, (Tag,)))).unwrap();
    w.remove_batch::<(Stunned, Tag)>(&es[..25]).unwrap();
    assert!(w.remove_batch::<(Stunned,)>(&es[..30]).is_err());
    assert!(
        w.contains::<Stunned>(es[26]),
        "refused batch changes nothing"
    );
    w.check_invariants();
}

#[test]
fn get_mut_stamps_and_despawn_drops() {
    let drops = Arc::new(AtomicU32::new(0));
    struct Counted(Arc<AtomicU32>);
    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }
    let mut w = world();
    w.register_sparse::<Counted>().unwrap();
    let a = w.spawn((Pos(0.0), Counted(drops.clone())));
    let b = w.spawn((Counted(drops.clone()),));
    let before = w.change_ticks::<Stunned>(a);
    assert!(before.is_err());
    w.insert_one(a, Stunned(0)).unwrap();
    let (added, _) = w.change_ticks::<Stunned>(a).unwrap();
    w.get_mut::<Stunned>(a).unwrap().0 = 7;
    let (added2, changed) = w.change_ticks::<Stunned>(a).unwrap();
    assert_eq!(added, added2);
    assert!(changed >= added);
    w.despawn(a).unwrap();
    assert_eq!(drops.load(Ordering::Relaxed), 1);
    assert!(w.get::<Stunned>(a).is_err());
    w.insert_one(b, Counted(drops.clone())).unwrap();
    assert_eq!(drops.load(Ordering::Relaxed), 2, "replaced value dropped");
    drop(w);
    assert_eq!(
        drops.load(Ordering::Relaxed),
        3,
        "the world drops what is left"
    );
}

#[test]
fn stale_generations_miss() {
    let mut w = world();
    let a = w.spawn((Stunned(1),));
    w.despawn(a).unwrap();
    let mut b = w.spawn((Pos(0.0),));
    for _ in 0..100_000 {
        if b.index() == a.index() {
            break;
        }
        w.despawn(b).unwrap();
        b = w.spawn((Pos(0.0),));
    }
    assert_eq!(b.index(), a.index(), "the slot is reused");
    assert!(w.get::<Stunned>(b).is_err());
    assert!(w.get::<Stunned>(a).is_err());
    w.check_invariants();
}

#[test]
fn queries_mix_dense_and_sparse_terms() {
    let mut w = world();
    let es: Vec<Entity> = (0..20).map(|i| w.spawn((Pos(i as f32),))).collect();
    for &e in es.iter().step_by(3) {
        w.insert_one(e, Stunned(e.index())).unwrap();
    }
    let mut seen: Vec<Entity> = w
        .query::<(Entity, &Pos, Sparse<&Stunned>)>()
        .iter()
        .map(|(e, _, s)| {
            assert_eq!(s.0, e.index());
            e
        })
        .collect();
    seen.sort();
    let expected: Vec<Entity> = es.iter().copied().step_by(3).collect();
    assert_eq!(seen, expected);
    assert_eq!(w.query::<(&Pos, Sparse<&Stunned>)>().iter().count(), 7);
    let all = w
        .query::<(Entity, Sparse<Option<&Stunned>>, Sparse<Has<Stunned>>)>()
        .iter()
        .inspect(|(_, s, has)| assert_eq!(s.is_some(), *has))
        .count();
    assert_eq!(all, 20);
    // Writes, stamped; read back through `Ref`.
    w.query_mut::<Sparse<&mut Stunned>>()
        .for_each(|s| s.0 += 100);
    for &e in &expected {
        assert_eq!(w.get::<Stunned>(e).unwrap().0, e.index() + 100);
    }
    let mut state = QueryState::<(Entity, Sparse<Ref<Stunned>>)>::new(&w);
    assert_eq!(state.iter(&w).filter(|(_, r)| r.is_changed()).count(), 7);
    assert_eq!(state.iter(&w).filter(|(_, r)| r.is_changed()).count(), 0);
    w.get_mut::<Stunned>(es[3]).unwrap().0 = 1;
    let changed: Vec<Entity> = state
        .iter(&w)
        .filter(|(_, r)| r.is_changed())
        .map(|(e, _)| e)
        .collect();
    assert_eq!(changed, vec![es[3]]);
    // Chunk and parallel forms.
    let mut rows = 0;
    w.query_mut::<(&Pos, Sparse<&mut Stunned>)>()
        .for_each_chunk(|(pos, stunned)| {
            for (p, s) in pos.iter().zip(stunned) {
                rows += 1;
                if let Some(s) = s {
                    s.0 = p.0 as u32;
                }
            }
        });
    assert_eq!(rows, 20);
    w.query_mut::<(&Pos, Sparse<&mut Stunned>)>()
        .par_for_each(|(p, s)| s.0 = p.0 as u32 * 2);
    assert_eq!(w.get::<Stunned>(es[3]).unwrap().0, 6);
    // `get` on a query.
    let q = w.query::<Sparse<&Stunned>>();
    assert!(q.get(es[1]).is_err());
    assert_eq!(q.get(es[3]).unwrap().0, 6);
}

#[test]
fn column_terms_of_sparse_types_are_refused() {
    let w = world();
    assert!(matches!(
        QueryState::<&Stunned>::try_new(&w),
        Err(QueryError::SparseTerm(_))
    ));
    assert!(matches!(
        QueryState::<(&Pos, Option<&mut Stunned>)>::try_new(&w),
        Err(QueryError::SparseTerm(_))
    ));
    assert!(QueryState::<(&Pos, Sparse<&mut Stunned>)>::try_new(&w).is_ok());
    // Archetype filters cannot see sparse components either.
    assert!(matches!(
        QueryState::<&Pos, doecs::With<Stunned>>::try_new(&w),
        Err(QueryError::SparseTerm(_))
    ));
    assert!(matches!(
        QueryState::<&Pos, doecs::Without<Stunned>>::try_new(&w),
        Err(QueryError::SparseTerm(_))
    ));
    assert!(matches!(
        QueryState::<&Pos, doecs::Changed<Stunned>>::try_new(&w),
        Err(QueryError::SparseTerm(_))
    ));
    // `Has` and every branch of an `Or` are archetype-level too: a plain
    // `Has<Stunned>` would answer `false` for every entity, and an `Or`
    // branch on it would never pass.
    assert!(matches!(
        QueryState::<(&Pos, Has<Stunned>)>::try_new(&w),
        Err(QueryError::SparseTerm(_))
    ));
    assert!(matches!(
        QueryState::<&Pos, doecs::Or<(doecs::With<Vel>, doecs::With<Stunned>)>>::try_new(&w),
        Err(QueryError::SparseTerm(_))
    ));
    assert!(matches!(
        QueryState::<&Pos, (doecs::With<Vel>, doecs::Or<(doecs::Changed<Stunned>,)>)>::try_new(&w),
        Err(QueryError::SparseTerm(_))
    ));
    assert!(QueryState::<(&Pos, Sparse<Has<Stunned>>)>::try_new(&w).is_ok());
    assert!(
        QueryState::<&Pos, doecs::Or<(doecs::With<Vel>, doecs::Without<Pos>)>>::try_new(&w).is_ok()
    );
    // Aliasing is checked as for column terms.
    assert!(QueryState::<(Sparse<&Stunned>, Sparse<&mut Stunned>)>::try_new(&w).is_err());
}

#[test]
fn systems_whose_queries_the_world_refuses_are_errors_not_panics() {
    use doecs::{Query, Schedule, ScheduleError};
    static RAN: AtomicU32 = AtomicU32::new(0);
    fn column(q: Query<&Stunned>) {
        RAN.fetch_add(1 + q.iter().count() as u32, Ordering::Relaxed);
    }
    fn filtered(mut q: Query<&mut Pos, doecs::With<Tag>>) {
        q.for_each(|p| p.0 += 1.0);
    }
    fn sparse_term(mut q: Query<(&mut Pos, Sparse<&Stunned>)>) {
        q.for_each(|(p, s)| p.0 += s.0 as f32);
    }
    let mut w = world();
    let e = w.spawn((Pos(0.0),));
    w.insert_one(e, Stunned(2)).unwrap();
    w.insert_one(e, Tag).unwrap();
    let (mut a, mut b) = (Schedule::new(), Schedule::new());
    a.add_system(column).unwrap();
    b.add_system(filtered).unwrap();
    for (schedule, name) in [(&mut a, "Stunned"), (&mut b, "Tag")] {
        let tick = w.change_tick();
        match schedule.run(&mut w) {
            Err(ScheduleError::RefusedQuery {
                error: QueryError::SparseTerm(component),
                ..
            }) => assert!(component.ends_with(name), "{component}"),
            other => panic!("not refused: {other:?}"),
        }
        // Refused before anything ran or changed.
        assert_eq!(w.change_tick(), tick);
        assert_eq!(w.get::<Pos>(e), Ok(&Pos(0.0)));
    }
    assert_eq!(RAN.load(Ordering::Relaxed), 0);
    let mut schedule = Schedule::new();
    schedule.add_system(sparse_term).unwrap();
    schedule.run(&mut w).unwrap();
    assert_eq!(w.get::<Pos>(e), Ok(&Pos(2.0)));

    // A type made sparse after the system first ran: the next run is
    // refused as well (the storage is the world's choice, not the
    // system's).
    #[derive(Debug)]
    struct Late;
    fn late(q: Query<&Late>) {
        RAN.fetch_add(1 + q.iter().count() as u32, Ordering::Relaxed);
    }
    let mut schedule = Schedule::new();
    schedule.add_system(late).unwrap();
    schedule.run(&mut w).unwrap();
    assert_eq!(RAN.swap(0, Ordering::Relaxed), 1);
    w.register_sparse::<Late>().unwrap();
    let err = schedule.run(&mut w).unwrap_err();
    assert!(err.to_string().contains("stores it sparse"), "{err}");
    assert_eq!(RAN.load(Ordering::Relaxed), 0);
}

#[test]
fn storage_is_fixed_at_first_use() {
    let mut w = World::new();
    w.spawn((Stunned(1),));
    assert!(matches!(
        w.register_sparse::<Stunned>(),
        Err(RegisterError::StorageFixed(_))
    ));
    // Registered but unused: still free to choose.
    let vel = w.component_id::<Vel>();
    assert_eq!(w.register_sparse::<Vel>(), Ok(vel));
    assert!(w.components().info(vel).is_sparse());
    // Runtime components too.
    let id = w
        .register_component(
            ComponentDescriptor::dynamic("bytes", std::alloc::Layout::new::<u32>()).sparse(),
        )
        .unwrap();
    assert!(w.components().info(id).is_sparse());
    let e = w.spawn((Pos(0.0),));
    w.insert_bytes(e, id, &7u32.to_ne_bytes()).unwrap();
    assert_eq!(w.get_bytes(e, id).unwrap(), &7u32.to_ne_bytes());
    assert!(w.has_id(e, id));
    w.remove_by_id(e, id).unwrap();
    assert!(!w.has_id(e, id));
    w.check_invariants();
}

#[test]
fn hooks_and_observers_fire_for_sparse_components() {
    let mut w = world();
    let log = Arc::new(Mutex::new(Vec::<String>::new()));
    let l = log.clone();
    let l2 = log.clone();
    let l3 = log.clone();
    w.set_hooks::<Stunned>(
        ComponentHooks::new()
            .on_add(move |ctx| {
                l.lock()
                    .unwrap()
                    .push(format!("add {}", ctx.entity.index()))
            })
            .on_replace(move |ctx| {
                let old = ctx.world.get::<Stunned>(ctx.entity).unwrap().0;
                l2.lock().unwrap().push(format!("replace {old}"));
            })
            .on_remove(move |ctx| {
                let v = ctx.world.get::<Stunned>(ctx.entity).unwrap().0;
                l3.lock().unwrap().push(format!("remove {v}"));
            }),
    );
    let l4 = log.clone();
    w.observe(move |t: Trigger<OnAdd, Stunned>| {
        l4.lock()
            .unwrap()
            .push(format!("observe add {}", t.target().unwrap().index()));
    })
    .unwrap();
    let l5 = log.clone();
    w.observe(move |t: Trigger<OnRemove, Stunned>| {
        l5.lock()
            .unwrap()
            .push(format!("observe remove {}", t.target().unwrap().index()));
    })
    .unwrap();
    let e = w.spawn((Pos(0.0),));
    w.insert_one(e, Stunned(1)).unwrap();
    w.insert_one(e, Stunned(2)).unwrap();
    w.remove_one::<Stunned>(e).unwrap();
    w.insert_one(e, Stunned(3)).unwrap();
    w.despawn(e).unwrap();
    let i = e.index();
    assert_eq!(
        *log.lock().unwrap(),
        vec![
            format!("add {i}"),
            format!("observe add {i}"),
            "replace 1".to_string(),
            "replace 2".to_string(),
            "remove 2".to_string(),
            format!("observe remove {i}"),
            format!("add {i}"),
            format!("observe add {i}"),
            "replace 3".to_string(),
            "remove 3".to_string(),
            format!("observe remove {i}"),
        ]
    );
}

#[test]
fn commands_and_removal_logs_cover_sparse_components() {
    let mut w = world();
    w.track_removals::<Stunned>();
    let e = w.spawn((Pos(0.0),));
    let mut commands = doecs::CommandBuffer::new();
    commands.insert(e, (Stunned(4), Vel(1.0)));
    w.apply(&mut commands);
    assert_eq!(w.get::<Stunned>(e), Ok(&Stunned(4)));
    let mut commands = doecs::CommandBuffer::new();
    commands.remove::<(Stunned,)>(e);
    w.apply(&mut commands);
    assert!(!w.contains::<Stunned>(e));
    assert_eq!(
        w.removed::<Stunned>().map(|(e, _)| e).collect::<Vec<_>>(),
        vec![e]
    );
    w.check_invariants();
}

#[test]
fn snapshots_restore_sparse_sets_and_stamp_only_what_differs() {
    let mut w = world();
    w.snapshot_by_clone::<Stunned>();
    w.snapshot_by_clone::<Name>();
    w.snapshot_by_clone::<Pos>();
    let a = w.spawn((Pos(0.0), Stunned(1), Name("a".into())));
    let b = w.spawn((Pos(1.0), Stunned(2)));
    let mut snap = doecs::Snapshot::new();
    w.snapshot_into(&mut snap).unwrap();
    let mut changed = QueryState::<(Entity, Sparse<Ref<Stunned>>)>::new(&w);
    assert_eq!(changed.iter(&w).filter(|(_, r)| r.is_changed()).count(), 2);
    // Changes after the snapshot: a value, a removal, a new entity, a
    // despawn.
    w.get_mut::<Stunned>(a).unwrap().0 = 10;
    w.remove_one::<Name>(a).unwrap();
    let c = w.spawn((Stunned(3),));
    w.despawn(b).unwrap();
    w.restore(&snap).unwrap();
    w.check_invariants();
    assert_eq!(w.get::<Stunned>(a), Ok(&Stunned(1)));
    assert_eq!(w.get::<Name>(a), Ok(&Name("a".into())));
    assert_eq!(w.get::<Stunned>(b), Ok(&Stunned(2)));
    assert!(w.get::<Stunned>(c).is_err());
    // `a`'s value differs from before the restore, `b` came back: both
    // changed; nothing else.
    let mut seen: Vec<Entity> = changed
        .iter(&w)
        .filter(|(_, r)| r.is_changed())
        .map(|(e, _)| e)
        .collect();
    seen.sort();
    assert_eq!(seen, vec![a, b]);
    // Restoring again changes nothing, and stamps nothing.
    w.restore(&snap).unwrap();
    assert_eq!(changed.iter(&w).filter(|(_, r)| r.is_changed()).count(), 0);
    // A sparse component that cannot be copied refuses the snapshot.
    struct Handle;
    w.register_sparse::<Handle>().unwrap();
    w.insert_one(a, Handle).unwrap();
    assert!(matches!(
        w.snapshot_into(&mut snap),
        Err(doecs::SnapshotError::NotCopyable(_))
    ));
}

#[test]
fn sparse_only_queries_walk_the_set_and_respect_filters_and_hidden_tags() {
    use doecs::{Prefab, With, Without};
    let mut w = world();
    let with_pos: Vec<Entity> = (0..10)
        .map(|i| w.spawn((Pos(i as f32), Stunned(i))))
        .collect();
    let bare: Vec<Entity> = (10..15).map(|i| w.spawn((Stunned(i),))).collect();
    let template = w.spawn((Prefab, Stunned(99)));
    let _no_stun = w.spawn((Pos(0.0), Tag));
    let mut all: Vec<u32> = Vec::new();
    w.query_mut::<Sparse<&mut Stunned>>().for_each(|s| {
        s.0 += 1000;
        all.push(s.0);
    });
    all.sort();
    assert_eq!(
        all,
        (1000..1015).collect::<Vec<_>>(),
        "the prefab is hidden"
    );
    assert_eq!(w.get::<Stunned>(template), Ok(&Stunned(99)));
    let mut filtered = Vec::new();
    w.query_filtered_mut::<(Entity, Sparse<&Stunned>), With<Pos>>()
        .for_each(|(e, _)| filtered.push(e));
    filtered.sort();
    assert_eq!(filtered, with_pos);
    let mut without = Vec::new();
    w.query_filtered_mut::<(Entity, Sparse<&Stunned>, Sparse<&Tag>), Without<Pos>>()
        .for_each(|(e, _, _)| without.push(e));
    assert!(without.is_empty());
    w.insert_one(bare[0], Tag).unwrap();
    w.query_filtered_mut::<(Entity, Sparse<&Stunned>, Sparse<&Tag>), Without<Pos>>()
        .for_each(|(e, _, _)| without.push(e));
    assert_eq!(without, vec![bare[0]]);
    // The same through the iterator (archetype walk) agrees.
    let mut iterated: Vec<Entity> = w
        .query::<(Entity, Sparse<&Stunned>)>()
        .iter()
        .map(|(e, _)| e)
        .collect();
    iterated.sort();
    let mut expected: Vec<Entity> = with_pos.iter().chain(&bare).copied().collect();
    expected.sort();
    assert_eq!(iterated, expected);
}

#[test]
fn views_reach_sparse_components() {
    let mut w = world();
    let a = w.spawn((Pos(0.0), Stunned(1)));
    let b = w.spawn((Pos(1.0),));
    {
        let view = w.view::<Stunned>();
        assert_eq!(view.get(a), Ok(&Stunned(1)));
        assert!(view.get(b).is_err());
        assert!(view.contains(a) && !view.contains(b));
    }
    let mut state = QueryState::<(Entity, Sparse<Ref<Stunned>>)>::new(&w);
    assert_eq!(state.iter(&w).filter(|(_, r)| r.is_changed()).count(), 1);
    {
        let mut view = w.view_mut::<Stunned>();
        view.get_mut(a).unwrap().0 = 5;
        assert!(view.get_mut(b).is_err());
    }
    assert_eq!(w.get::<Stunned>(a), Ok(&Stunned(5)));
    assert_eq!(
        state.iter(&w).filter(|(_, r)| r.is_changed()).count(),
        1,
        "stamped"
    );
}

#[test]
fn dropping_the_world_fires_sparse_hooks() {
    let removed = Arc::new(AtomicU32::new(0));
    let seen = removed.clone();
    let mut w = world();
    w.set_hooks::<Stunned>(ComponentHooks::new().on_remove(move |_| {
        seen.fetch_add(1, Ordering::Relaxed);
    }));
    w.spawn((Pos(0.0), Stunned(1)));
    w.spawn((Stunned(2),));
    drop(w);
    assert_eq!(removed.load(Ordering::Relaxed), 2);
}

/// Every typed write by entity reaches a sparse component as it reaches a
/// dense one, stamped changed: `get_many_mut`, and a system's `get_mut`.
#[test]
fn writes_by_entity_reach_sparse_components() {
    let mut w = world();
    let a = w.spawn((Pos(0.0), Stunned(1)));
    let b = w.spawn((Pos(1.0), Stunned(2)));
    let c = w.spawn((Pos(2.0),));
    let mut changed = QueryState::<(Entity, Sparse<Ref<Stunned>>)>::new(&w);
    assert_eq!(changed.iter(&w).filter(|(_, r)| r.is_changed()).count(), 2);
    assert_eq!(changed.iter(&w).filter(|(_, r)| r.is_changed()).count(), 0);

    let [sa, sb] = w.get_many_mut::<Stunned, 2>([a, b]).unwrap();
    sa.0 += 10;
    sb.0 += 20;
    assert_eq!(w.get::<Stunned>(a), Ok(&Stunned(11)));
    assert_eq!(w.get::<Stunned>(b), Ok(&Stunned(22)));
    // One entity lacking it refuses the whole call and stamps nothing.
    assert!(matches!(
        w.get_many_mut::<Stunned, 2>([a, c]),
        Err(EntityError::MissingComponent { .. })
    ));
    let mut seen: Vec<Entity> = changed
        .iter(&w)
        .filter(|(_, r)| r.is_changed())
        .map(|(e, _)| e)
        .collect();
    seen.sort();
    assert_eq!(seen, vec![a, b]);

    let mut schedule = doecs::Schedule::with_threads(2);
    schedule
        .add_system(doecs::system("stun").writes::<Stunned>().run(move |ctx| {
            ctx.get_mut::<Stunned>(a).unwrap().0 = 100;
            assert!(ctx.get_mut::<Stunned>(c).is_err());
        }))
        .unwrap();
    schedule.run(&mut w).unwrap();
    assert_eq!(w.get::<Stunned>(a), Ok(&Stunned(100)));
    let seen: Vec<Entity> = changed
        .iter(&w)
        .filter(|(_, r)| r.is_changed())
        .map(|(e, _)| e)
        .collect();
    assert_eq!(seen, vec![a]);
}

/// An instance inherits its prefab's sparse components as it inherits
/// dense ones: read through `get`, refused for writes, and overridden
/// into the instance's own set.
#[test]
fn instances_inherit_sparse_components() {
    let mut w = world();
    let prefab = w.spawn((doecs::Prefab, Pos(1.0), Stunned(7)));
    let [a, b] = [(), ()].map(|()| w.spawn(()));
    w.add_pair(a, prefab, doecs::IsA).unwrap();
    w.add_pair(b, prefab, doecs::IsA).unwrap();
    assert_eq!(w.get::<Stunned>(a), Ok(&Stunned(7)));
    assert_eq!(w.inherited_from::<Stunned>(a), Some(prefab));
    assert!(matches!(
        w.get_mut::<Stunned>(a),
        Err(EntityError::Inherited { .. })
    ));
    w.override_inherited::<Stunned>(a).unwrap().0 = 8;
    assert_eq!(w.get::<Stunned>(a), Ok(&Stunned(8)));
    assert_eq!(w.get::<Stunned>(b), Ok(&Stunned(7)));
    assert_eq!(w.get::<Stunned>(prefab), Ok(&Stunned(7)));
    assert_eq!(w.inherited_from::<Stunned>(a), None, "owns its copy");
    // Removing the prefab's value leaves `b` with nothing to inherit.
    w.remove_one::<Stunned>(prefab).unwrap();
    assert!(matches!(
        w.get::<Stunned>(b),
        Err(EntityError::MissingComponent { .. })
    ));
    assert_eq!(w.get::<Stunned>(a), Ok(&Stunned(8)));
}
