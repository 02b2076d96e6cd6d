//! Prefabs: the `Prefab` tag hiding entities from queries, `IsA`
//! inheritance through `get` without a copy, typed refusal of writes to
//! inherited values, overrides that change only the instance, chains of
//! prefabs, `instantiate` copying a `ChildOf` subtree, despawn cleanup,
//! every value dropped exactly once, and the query terms that read prefabs:
//! `Up<IsA, ..>` and `OwnOrInherited<T>`.

use doecs::{
    ChildOf, Entity, EntityError, IsA, OwnOrInherited, Prefab, QueryState, RelationError, Up, With,
    World,
};
use std::sync::atomic::{AtomicUsize, Ordering};

#[derive(Clone, Debug, PartialEq)]
struct Hull(u32);

#[derive(Clone, Debug, PartialEq)]
struct Paint(&'static str);

#[test]
fn prefabs_stay_out_of_queries_that_do_not_ask_for_them() {
    let mut w = World::new();
    // A held query made before any prefab exists still hides them later.
    let mut held = QueryState::<&Hull>::new(&w);
    let live = w.spawn((Hull(1),));
    let prefab = w.spawn((Prefab, Hull(2)));
    let hulls: Vec<u32> = held.iter(&w).map(|h| h.0).collect();
    assert_eq!(hulls, [1]);
    assert_eq!(w.query_mut::<(Entity, &Hull)>().iter().count(), 1);
    let asked: Vec<Entity> = w
        .query_filtered_mut::<(Entity, &Hull), With<Prefab>>()
        .iter()
        .map(|(e, _)| e)
        .collect();
    assert_eq!(asked, [prefab]);
    let mut everyone: Vec<(Entity, bool)> = w
        .query_mut::<(Entity, Option<&Prefab>)>()
        .iter()
        .map(|(e, p)| (e, p.is_some()))
        .collect();
    everyone.sort();
    assert_eq!(everyone, [(live, false), (prefab, true)]);
    assert_eq!(w.query_mut::<&Prefab>().iter().count(), 1);
}

#[test]
fn an_instance_reads_its_prefabs_values_without_a_copy() {
    let mut w = World::new();
    let car = w.spawn((Prefab, Hull(100), Paint("red")));
    let mine = w.spawn(());
    w.add_pair(mine, car, IsA).unwrap();
    assert_eq!(w.prefab_of(mine), Some(car));
    assert_eq!(w.inherited_from::<Hull>(mine), Some(car));
    assert!(std::ptr::eq(
        w.get::<Hull>(mine).unwrap(),
        w.get::<Hull>(car).unwrap()
    ));
    // A change to the prefab shows through every instance.
    w.get_mut::<Hull>(car).unwrap().0 = 90;
    assert_eq!(w.get::<Hull>(mine), Ok(&Hull(90)));
    // `Prefab` itself is never inherited.
    assert!(matches!(
        w.get::<Prefab>(mine),
        Err(EntityError::MissingComponent { .. })
    ));
    // Nothing of the prefab's shows up as the instance's in an ordinary
    // query; a traversal up `IsA` reads it beside the instance.
    assert_eq!(w.query_mut::<&Hull>().iter().count(), 0);
    let mut up = QueryState::<(Entity, Up<IsA, &Hull>)>::new(&w);
    let mut seen = Vec::new();
    up.for_each(&mut w, |(e, hull)| seen.push((e, hull.0)));
    assert_eq!(seen, [(mine, 90)], "the target is a prefab, and is seen");
    // Reading `Prefab` up `IsA` does not make the prefabs visible rows.
    let rows: Vec<Entity> = w
        .query::<(Entity, Up<IsA, &Prefab>)>()
        .iter()
        .map(|(e, _)| e)
        .collect();
    assert_eq!(rows, [mine]);
}

#[test]
fn writes_to_inherited_values_are_refused_and_overrides_change_only_the_instance() {
    let mut w = World::new();
    let car = w.spawn((Prefab, Hull(100), Paint("red")));
    let [mine, yours] = [(), ()].map(|()| w.spawn(()));
    for e in [mine, yours] {
        w.add_pair(e, car, IsA).unwrap();
    }
    let refused = w.get_mut::<Paint>(mine).unwrap_err();
    assert_eq!(
        refused,
        EntityError::Inherited {
            entity: mine,
            component: std::any::type_name::<Paint>(),
            prefab: car,
        }
    );
    assert!(refused.to_string().contains("override_inherited"));
    assert!(matches!(
        w.get_many_mut::<Paint, 2>([mine, car]),
        Err(EntityError::Inherited { .. })
    ));
    assert_eq!(w.get::<Paint>(car), Ok(&Paint("red")));
    w.check_invariants();

    // `insert` on the instance is an override...
    w.insert_one(mine, Paint("blue")).unwrap();
    // ...and so is `override_inherited`, which starts from the prefab's value.
    w.override_inherited::<Hull>(yours).unwrap().0 += 1;
    assert_eq!(w.get::<Paint>(mine), Ok(&Paint("blue")));
    assert_eq!(w.get::<Paint>(yours), Ok(&Paint("red")));
    assert_eq!(w.get::<Paint>(car), Ok(&Paint("red")));
    assert_eq!(w.get::<Hull>(yours), Ok(&Hull(101)));
    assert_eq!(w.get::<Hull>(mine), Ok(&Hull(100)));
    assert_eq!(w.get::<Hull>(car), Ok(&Hull(100)));
    w.get_mut::<Paint>(mine).unwrap().0 = "green";
    assert_eq!(w.get::<Paint>(car), Ok(&Paint("red")));
    // An override of something neither owned nor inherited is refused.
    assert!(matches!(
        w.override_inherited::<u64>(mine),
        Err(EntityError::MissingComponent { .. })
    ));
    w.check_invariants();
}

#[test]
fn a_prefab_may_inherit_from_another_and_its_own_values_shadow() {
    let mut w = World::new();
    let vehicle = w.spawn((Prefab, Hull(10), Paint("grey")));
    let tank = w.spawn((Prefab, Hull(500)));
    w.add_pair(tank, vehicle, IsA).unwrap();
    let t = w.spawn(());
    w.add_pair(t, tank, IsA).unwrap();
    assert_eq!(w.get::<Hull>(t), Ok(&Hull(500)), "the nearer prefab wins");
    assert_eq!(w.get::<Paint>(t), Ok(&Paint("grey")), "up the chain");
    assert_eq!(w.inherited_from::<Paint>(t), Some(vehicle));
    assert!(matches!(
        w.add_pair(vehicle, t, IsA),
        Err(RelationError::Cycle { .. })
    ));
}

/// A ship prefab: hull, two parts, each with two sub-parts.
fn ship_prefab(w: &mut World) -> (Entity, Vec<Entity>) {
    let ship = w.spawn((Prefab, Hull(1)));
    let mut nodes = vec![ship];
    for p in 0..2 {
        let part = w.spawn((Prefab, Hull(10 + p)));
        w.set_parent(part, ship).unwrap();
        nodes.push(part);
        for s in 0..2 {
            let sub = w.spawn((Prefab, Hull(100 + 10 * p + s)));
            w.set_parent(sub, part).unwrap();
            nodes.push(sub);
        }
    }
    (ship, nodes)
}

#[test]
fn instantiate_copies_the_prefabs_subtree_for_each_instance() {
    let mut w = World::new();
    let (ship, nodes) = ship_prefab(&mut w);
    let before = w.len();
    let fleet = w.instantiate(ship, 5).unwrap();
    assert_eq!(fleet.len(), 5);
    assert_eq!(w.len(), before + 5 * nodes.len());
    for &root in &fleet {
        assert_eq!(w.prefab_of(root), Some(ship));
        assert_eq!(w.parent(root), None);
        let tree = w.descendants(root);
        assert_eq!(tree.len(), nodes.len());
        // Breadth-first over the copy meets the prefabs breadth-first.
        let prefabs: Vec<Entity> = tree.iter().map(|&e| w.prefab_of(e).unwrap()).collect();
        assert_eq!(prefabs, w.descendants(ship));
        for &e in &tree[1..] {
            let parent = w.parent(e).unwrap();
            assert_eq!(
                w.prefab_of(parent),
                w.parent(w.prefab_of(e).unwrap()),
                "parented like the prefab"
            );
            assert_eq!(w.get::<Hull>(e), w.get::<Hull>(w.prefab_of(e).unwrap()));
        }
    }
    // The prefab's own subtree is untouched, and none of it is visible.
    assert_eq!(w.descendants(ship).len(), nodes.len());
    assert_eq!(w.query_mut::<&Hull>().iter().count(), 0);
    w.check_invariants();
    // A refused call changes nothing.
    let dead = w.spawn(());
    w.despawn(dead).unwrap();
    let count = w.len();
    assert_eq!(
        w.instantiate(dead, 3),
        Err(RelationError::NoSuchEntity(dead))
    );
    assert_eq!(w.len(), count);
    assert_eq!(w.instantiate(ship, 0), Ok(Vec::new()));
}

/// A prefab `n` nodes deep (a chain) or wide (a star), spawned as prefabs.
fn shaped_prefab(w: &mut World, n: usize, deep: bool) -> Vec<Entity> {
    let nodes = w.spawn_batch((0..n as u32).map(|i| (Prefab, Hull(i))));
    let parents: Vec<Option<u32>> = (0..n as u32)
        .map(|k| match k {
            0 => None,
            _ if deep => Some(k - 1),
            _ => Some(0),
        })
        .collect();
    w.set_parents_in_batch(&nodes, &parents).unwrap();
    nodes
}

/// Instantiates `nodes[0]` twice on another thread, failing if that takes
/// over `limit`; returns the world, the instances and the time taken.
fn instantiate_within(
    mut w: World,
    nodes: &[Entity],
    limit: std::time::Duration,
) -> (World, Vec<Entity>, std::time::Duration) {
    let (done, made) = std::sync::mpsc::channel();
    let root = nodes[0];
    std::thread::spawn(move || {
        let start = std::time::Instant::now();
        let fleet = w.instantiate(root, 2).unwrap();
        let _ = done.send((w, fleet, start.elapsed()));
    });
    made.recv_timeout(limit)
        .unwrap_or_else(|_| panic!("instantiate of {} nodes took over {limit:?}", nodes.len()))
}

/// `instantiate` costs time linear in the prefab's nodes whatever its
/// shape: a chain 100,000 deep is copied about as fast as a star 100,000
/// wide (finding each node's parent by a search of the nodes before it
/// made the chain quadratic, over a thousand times the star's time), with
/// every copy parented like the prefab. The bound is the star's time,
/// measured in the same run, times twenty plus a second.
#[test]
#[cfg_attr(miri, ignore = "a timing test at scale")]
fn instantiate_of_a_deep_prefab_is_linear_and_parents_every_copy() {
    const N: usize = 100_000;
    let limit = std::time::Duration::from_secs(600);
    let mut w = World::new();
    let star = shaped_prefab(&mut w, N, false);
    let (w, _, wide) = instantiate_within(w, &star, limit);
    let mut w = w;
    let chain = shaped_prefab(&mut w, N, true);
    let (w, fleet, deep) =
        instantiate_within(w, &chain, wide * 20 + std::time::Duration::from_secs(1));
    eprintln!("instantiate {N} nodes: wide {wide:?}, deep {deep:?}");
    assert_eq!(fleet.len(), 2);
    for &top in &fleet {
        let mut at = Some(top);
        for (k, &node) in chain.iter().enumerate() {
            let e = at.unwrap_or_else(|| panic!("copy ends at depth {k}"));
            assert_eq!(w.prefab_of(e), Some(node), "depth {k}");
            assert_eq!(w.get::<Hull>(e), Ok(&Hull(k as u32)), "inherited");
            let mut children = w.children(e);
            at = children.next();
            assert_eq!(children.next(), None, "one child at depth {k}");
        }
        assert_eq!(at, None, "as deep as the prefab");
    }
    assert_eq!(w.parent(fleet[0]), None);
    w.check_invariants();
}

#[test]
fn despawning_a_prefab_takes_its_instances_and_their_subtrees() {
    let mut w = World::new();
    let (ship, nodes) = ship_prefab(&mut w);
    let fleet = w.instantiate(ship, 3).unwrap();
    let copy = w.descendants(fleet[0]);
    // An instance going leaves the prefab and the other instances.
    w.despawn(fleet[1]).unwrap();
    assert!(w.alive(ship) && w.alive(fleet[0]) && w.alive(fleet[2]));
    w.despawn(ship).unwrap();
    for e in nodes.iter().chain(&copy).chain(&fleet) {
        assert!(!w.alive(*e));
    }
    assert_eq!(w.len(), 0);
    w.check_invariants();
}

static DROPS: AtomicUsize = AtomicUsize::new(0);

struct Counted(#[allow(dead_code)] u32);
impl Drop for Counted {
    fn drop(&mut self) {
        DROPS.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn shared_values_drop_once_and_overrides_drop_their_own() {
    let mut w = World::new();
    let prefab = w.spawn((Prefab, Counted(0)));
    let instances = w.instantiate(prefab, 4).unwrap();
    w.insert_one(instances[0], Counted(1)).unwrap();
    assert_eq!(DROPS.load(Ordering::Relaxed), 0);
    w.despawn(prefab).unwrap();
    assert_eq!(
        DROPS.load(Ordering::Relaxed),
        2,
        "the prefab's and the override"
    );
    assert!(instances.iter().all(|&e| !w.alive(e)));
}

#[test]
fn child_of_and_is_a_agree_with_the_relation_queries() {
    let mut w = World::new();
    let (ship, _) = ship_prefab(&mut w);
    let fleet = w.instantiate(ship, 2).unwrap();
    let kids: Vec<Entity> = w.children(fleet[0]).collect();
    assert_eq!(kids.len(), 2);
    let mut children = QueryState::<Entity>::new(&w);
    let mut with_parent = 0;
    for e in children.iter(&w).collect::<Vec<_>>() {
        if w.pair::<ChildOf>(e, w.parent(e).unwrap_or(e)).is_some() {
            with_parent += 1;
        }
    }
    // Two copies of six children each.
    assert_eq!(with_parent, 12);
}

/// The own-or-inherited term sees, for every non-prefab entity matching the
/// query, exactly what `get` sees: its own value, else its prefab chain's,
/// else nothing (not matched).
#[test]
fn own_or_inherited_sees_what_get_sees() {
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct Armor(u32);
    struct Tick(u32);
    let mut world = World::new();
    let base = world.spawn((Prefab, Armor(1)));
    let elite = world.spawn((Prefab,));
    world.add_pair(elite, base, IsA).unwrap();
    let mut expected = Vec::new();
    let mut all = Vec::new();
    for k in 0..40u32 {
        let e = world.spawn((Tick(0),));
        match k % 4 {
            0 => {}
            1 => world.add_pair(e, base, IsA).map(|_| ()).unwrap(),
            2 => world.add_pair(e, elite, IsA).map(|_| ()).unwrap(),
            _ => {
                world.add_pair(e, elite, IsA).unwrap();
                world.insert(e, (Armor(100 + k),)).unwrap();
            }
        }
        if let Ok(a) = world.get::<Armor>(e) {
            expected.push((e, *a));
        }
        all.push(e);
    }
    // Overriding on the prefab changes what every inheritor sees.
    world.insert(base, (Armor(7),)).unwrap();
    for (e, a) in &mut expected {
        *a = *world.get::<Armor>(*e).unwrap();
    }
    let mut q = QueryState::<(Entity, &mut Tick, OwnOrInherited<Armor>)>::new(&world);
    let mut seen = Vec::new();
    q.for_each(&mut world, |(e, tick, armor)| {
        tick.0 += armor.0;
        seen.push((e, *armor));
    });
    seen.sort_by_key(|(e, _)| e.index());
    expected.sort_by_key(|(e, _)| e.index());
    assert_eq!(seen, expected);
    assert_eq!(seen.len(), 30, "the ten with neither are not matched");
    assert!(
        seen.iter().all(|(e, _)| *e != base && *e != elite),
        "prefabs are not visited"
    );
    for &e in &all {
        let want = world.get::<Armor>(e).map_or(0, |a| a.0);
        assert_eq!(world.get::<Tick>(e).unwrap().0, want);
    }
    // It writes nothing, so its iterator runs and agrees; `count` and `get`
    // agree too; the optional form keeps the ten with `None`.
    let mut iterated: Vec<(Entity, Armor)> = world
        .query::<(Entity, OwnOrInherited<Armor>)>()
        .iter()
        .map(|(e, a)| (e, *a))
        .collect();
    iterated.sort_by_key(|(e, _)| e.index());
    assert_eq!(iterated, expected);
    assert_eq!(world.query::<OwnOrInherited<Armor>>().count(), 30);
    let optional = world.query::<(Entity, Option<OwnOrInherited<Armor>>)>();
    let nones = optional.iter().filter(|(_, a)| a.is_none()).count();
    assert_eq!(nones, 10);
    let by_entity = world.query::<OwnOrInherited<Armor>>();
    for &e in &all {
        assert_eq!(by_entity.get(e).ok(), world.get::<Armor>(e).ok());
    }
    // An override shadows the prefab for that instance only, in the term
    // as in `get`.
    let inheritor = all[1];
    assert_eq!(world.get::<Armor>(inheritor), Ok(&Armor(7)));
    world.override_inherited::<Armor>(inheritor).unwrap().0 = 55;
    let after = world.query::<(Entity, OwnOrInherited<Armor>)>();
    let values: Vec<(Entity, u32)> = after.iter().map(|(e, a)| (e, a.0)).collect();
    assert!(values.contains(&(inheritor, 55)));
    assert!(values.contains(&(all[5], 7)), "another instance of `base`");
}

/// `Prefab` is never inherited, by the term as by `get`.
#[test]
fn own_or_inherited_never_inherits_the_prefab_tag() {
    let mut world = World::new();
    let prefab = world.spawn((Prefab, Hull(1)));
    let instance = world.spawn((Paint("blue"),));
    world.add_pair(instance, prefab, IsA).unwrap();
    let tagged: Vec<Entity> = world
        .query::<(Entity, OwnOrInherited<Prefab>)>()
        .iter()
        .map(|(e, _)| e)
        .collect();
    assert_eq!(tagged, [prefab], "only the prefab owns the tag");
}

/// The term reads `T` on the entity: a query that also writes it is
/// refused when made.
#[test]
#[should_panic(expected = "both mutably and immutably")]
fn own_or_inherited_refuses_writing_the_inherited_component() {
    struct Armor;
    let world = World::new();
    let _ = QueryState::<(&mut Armor, OwnOrInherited<Armor>)>::new(&world);
}
