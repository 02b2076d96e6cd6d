//! What hecs's own test suite expects of an ECS, in doecs: `Or` filters,
//! `get_many_mut`, entity views, `take` and `exchange`, builders and
//! clonable templates, `#[derive(Bundle)]`, and batched iteration.

use doecs::{Bundle, EntityBuilder, EntityError, EntityTemplate, Or, With, Without, World};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq)]
struct A(i32);
#[derive(Clone, Copy, Debug, PartialEq)]
struct B(f32);
#[derive(Clone, Debug, PartialEq)]
struct C(String);

/// Counts its drops.
#[derive(Clone)]
struct Counted(Arc<AtomicUsize>);
impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn or_filters_match_any_branch_and_combine_with_others() {
    let mut world = World::new();
    let a = world.spawn((A(1),));
    let b = world.spawn((B(2.0),));
    let ab = world.spawn((A(3), B(4.0)));
    let c = world.spawn((C("c".into()),));
    let mut got: Vec<_> = world
        .query_filtered::<doecs::Entity, Or<(With<A>, With<B>)>>()
        .iter()
        .collect();
    got.sort();
    assert_eq!(got, vec![a, b, ab]);
    let only_one: Vec<_> = world
        .query_filtered::<doecs::Entity, (Or<(With<A>, With<B>)>, Or<(Without<A>, Without<B>)>)>()
        .iter()
        .collect();
    assert_eq!(only_one.len(), 2);
    assert!(!only_one.contains(&ab) && !only_one.contains(&c));
}

#[test]
fn get_many_mut_hands_out_disjoint_entities_and_refuses_repeats() {
    let mut world = World::new();
    let es: Vec<_> = (0..4).map(|i| world.spawn((A(i),))).collect();
    let [x, y, z] = world.get_many_mut::<A, 3>([es[3], es[0], es[2]]).unwrap();
    std::mem::swap(&mut x.0, &mut y.0);
    z.0 = 20;
    assert_eq!(world.get::<A>(es[0]), Ok(&A(3)));
    assert_eq!(world.get::<A>(es[3]), Ok(&A(0)));
    assert_eq!(
        world.get_many_mut::<A, 2>([es[1], es[1]]).err(),
        Some(EntityError::AliasedEntity(es[1]))
    );
    let ghost = world.spawn((B(0.0),));
    assert!(matches!(
        world.get_many_mut::<A, 2>([es[1], ghost]),
        Err(EntityError::MissingComponent { .. })
    ));
    world.despawn(ghost).unwrap();
    assert_eq!(
        world.get_many_mut::<A, 2>([es[1], ghost]).err(),
        Some(EntityError::NoSuchEntity(ghost))
    );
}

#[test]
fn entity_views_read_write_list_and_despawn() {
    let mut world = World::new();
    let e = world.spawn((A(1), C("name".into())));
    {
        let view = world.entity(e).unwrap();
        assert_eq!(view.id(), e);
        assert_eq!(view.get::<A>(), Some(&A(1)));
        assert!(view.get::<B>().is_none());
        assert_eq!(view.components().count(), 2);
    }
    {
        let mut view = world.entity_mut(e).unwrap();
        view.get_mut::<A>().unwrap().0 = 5;
        view.insert_one(B(2.0)).unwrap();
        assert_eq!(view.remove_one::<C>(), Ok(C("name".into())));
        let mut names: Vec<String> = view.components().map(|c| c.name().to_owned()).collect();
        names.sort();
        assert!(
            names[0].ends_with("::A") && names[1].ends_with("::B"),
            "{names:?}"
        );
        view.despawn();
    }
    assert!(!world.alive(e));
    assert!(world.entity(e).is_err() && world.entity_mut(e).is_err());
    world.check_invariants();
}

#[test]
fn take_despawns_and_returns_the_bundle_dropping_the_rest_once() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut world = World::new();
    let e = world.spawn((A(1), B(2.0), Counted(drops.clone())));
    let other = world.spawn((A(9), Counted(drops.clone())));
    // Missing a component: nothing changes.
    assert!(world.take::<(A, C)>(e).is_err());
    assert!(world.alive(e));
    assert_eq!(world.take::<(B, A)>(e), Ok((B(2.0), A(1))));
    assert!(!world.alive(e));
    assert_eq!(drops.load(Ordering::SeqCst), 1, "the rest dropped once");
    let (counted,): (Counted,) = world.take(other).unwrap();
    assert_eq!(drops.load(Ordering::SeqCst), 1, "the taken value is ours");
    drop(counted);
    assert_eq!(drops.load(Ordering::SeqCst), 2);
    assert!(world.is_empty());
    world.check_invariants();
}

#[test]
fn exchange_swaps_bundles_in_one_move() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut world = World::new();
    let e = world.spawn((A(1), B(2.0), Counted(drops.clone())));
    let keep = world.spawn((A(7), B(8.0)));
    let archetypes = doecs::raw::archetypes(&world).len();
    // A and B out, C and a new A in: A is removed and added back.
    let old: (A, B) = world.exchange(e, (C("c".into()), A(10))).unwrap();
    assert_eq!(old, (A(1), B(2.0)));
    assert_eq!(world.get::<A>(e), Ok(&A(10)));
    assert_eq!(world.get::<C>(e).unwrap().0, "c");
    assert!(world.get::<B>(e).is_err());
    assert_eq!(
        drops.load(Ordering::SeqCst),
        0,
        "the kept component moved, not dropped"
    );
    // One new archetype: (A, C, Counted). No intermediate (Counted) one.
    assert_eq!(doecs::raw::archetypes(&world).len(), archetypes + 1);
    // A kept component named by the new bundle is replaced, its old value dropped.
    let _: (C,) = world.exchange(e, (Counted(drops.clone()),)).unwrap();
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    // Missing an old component: nothing changes.
    assert!(world.exchange::<(B,), (C,)>(e, (C("x".into()),)).is_err());
    assert_eq!(world.get::<A>(keep), Ok(&A(7)));
    world.check_invariants();
}

#[test]
fn builders_assemble_bundles_at_run_time() {
    let mut world = World::new();
    let mut builder = EntityBuilder::new();
    builder.add(A(1)).add(C("x".into())).add(A(2));
    assert_eq!(builder.len(), 2);
    assert!(builder.has::<A>() && !builder.has::<B>());
    let e = world.spawn(&mut builder);
    assert_eq!(world.get::<A>(e), Ok(&A(2)));
    assert!(builder.is_empty());
    builder.add(B(3.0));
    world.insert_built(e, &mut builder).unwrap();
    assert_eq!(world.get::<B>(e), Ok(&B(3.0)));
    // The same components through a tuple land in the same archetype.
    let t = world.spawn((A(0), B(0.0), C(String::new())));
    assert_eq!(
        doecs::raw::location(&world, e).unwrap().archetype,
        doecs::raw::location(&world, t).unwrap().archetype
    );
    world.check_invariants();
}

#[test]
fn templates_clone_their_values_into_every_spawn() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut world = World::new();
    let mut template = EntityTemplate::new();
    template
        .add(C("orc".into()))
        .add(Counted(drops.clone()))
        .add(A(10));
    let orcs = (0..50).map(|_| world.spawn(&template)).collect::<Vec<_>>();
    assert_eq!(orcs.len(), 50);
    for &o in &orcs {
        assert_eq!(world.get::<C>(o).unwrap().0, "orc");
        assert_eq!(world.get::<A>(o), Ok(&A(10)));
    }
    let copy = template.clone();
    drop(template);
    let last = world.spawn(&copy);
    assert!(world.alive(last));
    drop(copy);
    assert_eq!(
        drops.load(Ordering::SeqCst),
        2,
        "the two templates' own values"
    );
    world.despawn_batch(&orcs);
    assert_eq!(drops.load(Ordering::SeqCst), 52);
    world.check_invariants();
}

#[derive(Bundle, Debug, PartialEq)]
struct Named {
    a: A,
    c: C,
}

#[derive(Bundle, Debug, PartialEq)]
struct Tuple(A, B);

#[derive(Bundle, Debug, PartialEq)]
struct Generic<T> {
    value: T,
    b: B,
}

#[derive(Bundle)]
struct Twice {
    first: A,
    second: A,
}

#[test]
fn derived_bundles_spawn_insert_and_remove_like_tuples() {
    let mut world = World::new();
    let e = world.spawn(Named {
        a: A(1),
        c: C("n".into()),
    });
    assert_eq!(world.get::<A>(e), Ok(&A(1)));
    world.insert(e, Tuple(A(2), B(3.0))).unwrap();
    assert_eq!(world.get::<A>(e), Ok(&A(2)));
    assert_eq!(world.remove::<Tuple>(e), Ok(Tuple(A(2), B(3.0))));
    // Tuple took A with it: Named's A is missing, so nothing is removed.
    assert!(world.remove::<Named>(e).is_err());
    world.insert_one(e, A(4)).unwrap();
    assert_eq!(
        world.remove::<Named>(e),
        Ok(Named {
            a: A(4),
            c: C("n".into())
        })
    );
    let g = world.spawn(Generic {
        value: 7u64,
        b: B(1.0),
    });
    assert_eq!(world.get::<u64>(g), Ok(&7));
    let batch = world.spawn_batch((0..10).map(|i| Tuple(A(i), B(i as f32))));
    assert_eq!(world.get::<A>(batch[9]), Ok(&A(9)));
    // A derived bundle naming one type twice is refused, changing nothing.
    let before = world.len();
    assert!(matches!(
        world.try_spawn(Twice {
            first: A(1),
            second: A(2)
        }),
        Err(EntityError::DuplicateInBundle { .. })
    ));
    assert_eq!(world.len(), before);
    world.check_invariants();
}

#[test]
fn batched_iteration_covers_every_row_once_across_threads() {
    use rayon::prelude::*;
    let mut world = World::new();
    world.spawn_batch((0..1000).map(|i| (A(i),)));
    world.spawn_batch((0..500).map(|i| (A(i), B(0.0))));
    let mut query = world.query_mut::<&mut A>();
    let batches: Vec<usize> = query.iter_batched(64).map(|b| b.len()).collect();
    assert!(batches.iter().all(|&n| (1..=64).contains(&n)));
    assert_eq!(batches.iter().sum::<usize>(), 1500);
    query
        .iter_batched(100)
        .par_bridge()
        .for_each(|batch| batch.for_each(|a| a.0 += 1));
    drop(query);
    let sum: i64 = world.query::<&A>().iter().map(|a| a.0 as i64).sum();
    assert_eq!(sum, (0..1000).sum::<i64>() + (0..500).sum::<i64>() + 1500);
}

#[test]
fn the_hecs_spelling_of_get_says_what_to_write() {
    #[derive(Debug)]
    struct Health(#[allow(dead_code)] u32);
    let mut world = World::new();
    let e = world.spawn((Health(3),));
    let message = world.get::<&Health>(e).unwrap_err().to_string();
    assert!(
        message.contains("did you mean `get::<Health>`?"),
        "{message}"
    );
    assert!(world.get::<Health>(e).is_ok());
}
