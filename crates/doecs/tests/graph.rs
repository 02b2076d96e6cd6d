//! The archetype graph: the first insert or remove of a bundle creates the
//! target archetype and caches the edge in both directions; repeated moves
//! follow the cached edges (no new archetypes, no new edges), and
//! `check_invariants` verifies every edge. Moves copy the shared components
//! bitwise and keep every value intact.

use doecs::{Bundle, Entity, World, WorldConfig};

#[derive(Debug, Clone, Copy, PartialEq)]
struct A(u32);
#[derive(Debug, Clone, PartialEq)]
struct B(String);
#[derive(Debug, Clone, Copy, PartialEq)]
struct C(u64);
#[derive(Debug, Clone, Copy, PartialEq)]
struct D;

fn edge_count(world: &World) -> usize {
    doecs::raw::archetypes(world).edge_count()
}

/// The cached targets of inserting and removing bundle `B` from `from`.
fn inserting<B: Bundle>(
    world: &World,
    from: doecs::raw::ArchetypeId,
) -> Option<doecs::raw::ArchetypeId> {
    let b = doecs::raw::bundles(world).id_of::<B>()?;
    doecs::raw::archetypes(world).cached_insert_target(from, b)
}

fn removing<B: Bundle>(
    world: &World,
    from: doecs::raw::ArchetypeId,
) -> Option<doecs::raw::ArchetypeId> {
    let b = doecs::raw::bundles(world).id_of::<B>()?;
    doecs::raw::archetypes(world).cached_remove_target(from, b)
}

#[test]
fn first_move_caches_both_edges() {
    let mut world = World::new();
    let e = world.spawn((A(1), B("b".into())));
    let ab = doecs::raw::location(&world, e).unwrap().archetype;
    assert_eq!(inserting::<(C,)>(&world, ab), None);
    world.insert_one(e, C(3)).unwrap();
    let abc = doecs::raw::location(&world, e).unwrap().archetype;
    assert_ne!(abc, ab);
    assert_eq!(inserting::<(C,)>(&world, ab), Some(abc));
    assert_eq!(removing::<(C,)>(&world, abc), Some(ab), "the way back");
    world.check_invariants();
    // Removing another component creates a third archetype and its edges.
    assert_eq!(world.remove_one::<A>(e), Ok(A(1)));
    let bc = doecs::raw::location(&world, e).unwrap().archetype;
    assert_eq!(removing::<(A,)>(&world, abc), Some(bc));
    assert_eq!(inserting::<(A,)>(&world, bc), Some(abc), "the way back");
    assert_eq!(doecs::raw::archetypes(&world).get(bc).components().len(), 2);
    world.check_invariants();
}

#[test]
fn repeated_moves_follow_cached_edges() {
    // With `sanitize` every move checks the whole world: fewer, smaller
    // rounds (still several chunks of rows).
    let n = if cfg!(miri) {
        20
    } else if cfg!(feature = "sanitize") {
        300
    } else {
        2000
    };
    let rounds = if cfg!(miri) || cfg!(feature = "sanitize") {
        3
    } else {
        20
    };
    let mut world = World::with_config(WorldConfig {
        chunk_bytes: 1024,
        min_free_indices: 0,
    });
    let es: Vec<Entity> = world.spawn_batch((0..n).map(|i| (A(i), B(i.to_string()))));
    // Warm up: one pass creates every archetype and edge the loop uses.
    for &e in &es[..1] {
        world.insert_one(e, C(0)).unwrap();
        world.insert(e, (D,)).unwrap();
        world.remove_one::<C>(e).unwrap();
        world.remove::<(D,)>(e).unwrap();
    }
    let archetypes = doecs::raw::archetypes(&world).len();
    let edges = edge_count(&world);
    for round in 0..rounds {
        for (i, &e) in es.iter().enumerate() {
            world.insert_one(e, C(round as u64 * i as u64)).unwrap();
            world.insert(e, (D,)).unwrap();
        }
        assert_eq!(
            doecs::raw::archetypes(&world).len(),
            archetypes,
            "no new archetype"
        );
        assert_eq!(edge_count(&world), edges, "no new edge");
        world.check_invariants();
        for (i, &e) in es.iter().enumerate().rev() {
            assert_eq!(world.remove_one::<C>(e), Ok(C(round as u64 * i as u64)));
            assert_eq!(world.remove::<(D,)>(e).map(|_| ()), Ok(()));
        }
        assert_eq!(doecs::raw::archetypes(&world).len(), archetypes);
        assert_eq!(edge_count(&world), edges);
        world.check_invariants();
    }
    // Every value survived the moves, bitwise (the String is untouched).
    for (i, &e) in es.iter().enumerate() {
        assert_eq!(world.get::<A>(e), Ok(&A(i as u32)));
        assert_eq!(world.get::<B>(e).unwrap().0, i.to_string());
        assert!(world.get::<C>(e).is_err());
    }
}

#[test]
fn insert_of_present_component_does_not_move() {
    let mut world = World::new();
    let e = world.spawn((A(1), C(2)));
    let before = doecs::raw::location(&world, e).unwrap();
    let archetypes = doecs::raw::archetypes(&world).len();
    world.insert_one(e, A(5)).unwrap();
    world.insert(e, (C(6), A(7))).unwrap();
    assert_eq!(doecs::raw::location(&world, e).unwrap(), before);
    assert_eq!(doecs::raw::archetypes(&world).len(), archetypes);
    assert_eq!(world.get::<A>(e), Ok(&A(7)));
    assert_eq!(world.get::<C>(e), Ok(&C(6)));
    world.check_invariants();
}

#[test]
fn bundle_insert_and_remove_reach_the_same_archetypes_as_single_steps() {
    let mut world = World::new();
    let x = world.spawn((A(1),));
    let y = world.spawn((A(2),));
    world.insert(x, (B("x".into()), C(1), D)).unwrap();
    world.insert_one(y, D).unwrap();
    world.insert_one(y, B("y".into())).unwrap();
    world.insert_one(y, C(2)).unwrap();
    assert_eq!(
        doecs::raw::location(&world, x).unwrap().archetype,
        doecs::raw::location(&world, y).unwrap().archetype
    );
    let (b, d) = world.remove::<(B, D)>(x).unwrap();
    assert_eq!((b.0.as_str(), d), ("x", D));
    world.remove_one::<D>(y).unwrap();
    world.remove_one::<B>(y).unwrap();
    assert_eq!(
        doecs::raw::location(&world, x).unwrap().archetype,
        doecs::raw::location(&world, y).unwrap().archetype
    );
    world.check_invariants();
    // A failed bundle remove (one component missing) changes nothing.
    let before = doecs::raw::location(&world, x).unwrap();
    assert!(world.remove::<(A, B)>(x).is_err());
    assert_eq!(doecs::raw::location(&world, x).unwrap(), before);
    assert_eq!(world.get::<A>(x), Ok(&A(1)));
}

#[test]
fn swap_remove_keeps_rows_dense_and_index_right() {
    // Moving an entity out of a multi-chunk archetype fills its hole with the
    // archetype's last row; the moved entity must still be found.
    let n = if cfg!(miri) { 24 } else { 500 };
    let mut world = World::with_config(WorldConfig {
        chunk_bytes: 128,
        min_free_indices: 0,
    });
    let es: Vec<Entity> = (0..n).map(|i| world.spawn((A(i), C(i as u64)))).collect();
    let arch = doecs::raw::location(&world, es[0]).unwrap().archetype;
    assert!(doecs::raw::archetypes(&world).get(arch).chunk_count() > 2);
    for (k, &e) in es.iter().enumerate().step_by(5) {
        world.insert_one(e, D).unwrap();
        if k % 2 == 0 {
            world.despawn(e).unwrap();
        }
        world.check_invariants();
    }
    for (i, &e) in es.iter().enumerate() {
        if i % 10 == 0 {
            assert!(!world.alive(e));
        } else {
            assert_eq!(world.get::<A>(e), Ok(&A(i as u32)));
            assert_eq!(world.get::<C>(e), Ok(&C(i as u64)));
            assert_eq!(world.get::<D>(e).is_ok(), i % 5 == 0);
        }
    }
    let a = doecs::raw::archetypes(&world).get(arch);
    let cap = a.chunk_rows();
    assert_eq!(a.chunk_count(), a.len().div_ceil(cap));
}
